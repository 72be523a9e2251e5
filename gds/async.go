package gds

/*
#include <stdlib.h>

// gds_args are an asynchronous transfer's arguments, which cuFile reads
// (and, for the byte count, writes) when the stream reaches the transfer,
// long after the call that queued it returned: C memory, freed once the
// stream has passed the transfer. The types are cufile.h's size_t, off_t,
// off_t and ssize_t on Linux.
typedef struct {
	unsigned long size;
	long file_offset;
	long buf_offset;
	long bytes;
} gds_args;
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/lib"
)

// alignment is the unit of O_DIRECT transfers that cuFile's stream API
// needs with GPUDirect.
const alignment = 4096

// ErrUnaligned is returned by ReadAtAsync and WriteAtAsync, before
// anything is queued, for a file offset, size or registered-buffer offset
// that is not a multiple of 4096 bytes, on a file opened with O_DIRECT
// while cuFile runs GPUDirect (nvidia-fs): its stream API does not do
// unaligned transfers there (libcufile logs "async IO work failed io is
// unaligned(NOT SUPPORTED)"), and would say so only when the stream got
// there. ReadAt and WriteAt take any offset and size, and so does the
// stream API in compatibility mode.
var ErrUnaligned = errors.New("offsets and sizes must be multiples of 4096 bytes for GPUDirect transfers on a stream")

// unaligned is the *lib.ArgError of function fn for argument arg that
// matches ErrUnaligned.
func unaligned(fn, arg, format string, args ...any) error {
	return &lib.ArgError{Package: "gds", Func: fn, Arg: arg, Msg: fmt.Sprintf(format, args...) + ": " + ErrUnaligned.Error(), Err: ErrUnaligned}
}

// ReadAtAsync queues on stream s a read of dst.Size() bytes of the file,
// from offset off, into dst (cuFileReadAsync): it runs after the work
// queued on s before it, and the work queued after it waits for it. It
// returns at once; Pending.Wait reports the bytes read. dst must stay
// open until then; its own stream orders its Close after the read only
// if that is s. It cannot be captured into a graph.
//
// Where cuFile's stream API cannot be used (a libcufile before 1.7, or no
// cufile.json, which it needs), ReadAtAsync waits for s and reads
// synchronously, and the Pending it returns is already done.
func (f *File) ReadAtAsync(s *core.Stream, dst *core.Buffer, off int64) (*Pending, error) {
	return f.transferAsync(opRead, s, dst, off)
}

// WriteAtAsync queues on stream s a write of src's bytes to the file at
// offset off (cuFileWriteAsync), after the work queued on s before it,
// which may be what writes src; see ReadAtAsync.
func (f *File) WriteAtAsync(s *core.Stream, src *core.Buffer, off int64) (*Pending, error) {
	return f.transferAsync(opWrite, s, src, off)
}

// Pending is a transfer queued on a stream by ReadAtAsync or WriteAtAsync.
type Pending struct{ op *opState }

// Wait waits until the stream has passed the transfer (it synchronizes
// the stream, and so waits for the work queued there before) and returns
// its byte count: for a read that reached the end of the file, fewer than
// the buffer's size, with io.EOF; for a short write, io.ErrShortWrite. A
// transfer that failed returns cuFile's error or the file system's errno.
// If the stream failed, Wait returns its error: the transfer may not have
// run. Wait may be called again, and from several goroutines.
func (p *Pending) Wait() (int, error) {
	if p == nil || p.op == nil {
		return 0, libhandle.ArgErr("gds", "Pending.Wait", "p", "nil *Pending")
	}
	op := p.op
	if err := op.wait(); err != nil {
		return 0, fmt.Errorf("gds: %s %s: %w", op.kind.method(true), op.name, err)
	}
	return op.result()
}

// Done reports, without waiting, whether the stream has passed the
// transfer (Wait then returns at once).
func (p *Pending) Done() bool {
	if p == nil || p.op == nil {
		return false
	}
	select {
	case <-p.op.done:
		return true
	default:
		return false
	}
}

// opState is a transfer queued on a stream. It keeps its File, Buffer and
// registration in use until the stream has passed it: then a host
// function on the stream (complete) takes the byte count, frees the C
// arguments and lets them go.
type opState struct {
	kind   opKind
	name   string
	file   *File        // keeps the File, and so its cuFile handle
	buf    *core.Buffer // keeps the memory from the finalizer
	stream *core.Stream
	reg    *registration
	size   int
	args   *C.gds_args
	// noCallback: the host function could not be queued; wait completes
	// the transfer after synchronizing the stream.
	noCallback bool

	once sync.Once
	done chan struct{}
	n    int64 // the byte count, or a negative status
	err  error // a transfer done synchronously: its error
}

func (f *File) transferAsync(k opKind, s *core.Stream, b *core.Buffer, off int64) (*Pending, error) {
	m := k.method(true)
	if err := f.check(k, true, s, b, off); err != nil {
		return nil, err
	}
	if err := f.begin(k, true); err != nil {
		return nil, err
	}
	defer f.mu.RUnlock()
	size := b.Size()
	if !drv.async {
		if err := s.Sync(); err != nil {
			return nil, fmt.Errorf("gds: %s %s: %w", m, f.name, err)
		}
		n, err := f.xfer(k, b, off)
		return donePending(k, f.name, n, err), nil
	}
	if drv.info.Mode == ModeGPUDirect && f.direct && (off%alignment != 0 || size%alignment != 0) {
		return nil, unaligned(m, "off", "%s: %d bytes at offset %d", f.name, size, off)
	}
	ctx, sh, err := s.Acquire()
	if err != nil {
		return nil, fmt.Errorf("gds: %s %s: %w", m, f.name, err)
	}
	defer s.Release()
	ops := libhandle.Operands{Package: "gds", Func: m, Device: s.Device()}
	defer ops.Release()
	ptr, err := ops.Add(k.buffer(), b, 1, "")
	if err != nil {
		return nil, err
	}
	p := libhandle.Addr(ptr)
	if size == 0 {
		return donePending(k, f.name, 0, nil), nil
	}
	base, bufOff := p, int64(0)
	e := useRegistration(b, p, ctx)
	if e != nil {
		defer e.mu.RUnlock()
		base, bufOff = e.base, int64(p-e.base)
		if drv.info.Mode == ModeGPUDirect && f.direct && bufOff%alignment != 0 {
			return nil, unaligned(m, k.buffer(), "%s: offset %d in the registered buffer", f.name, bufOff)
		}
	}
	a := (*C.gds_args)(C.calloc(1, C.sizeof_gds_args))
	if a == nil {
		return nil, fmt.Errorf("gds: %s %s: out of memory for the transfer's arguments", m, f.name)
	}
	a.size, a.file_offset, a.buf_offset = C.ulong(size), C.long(off), C.long(bufOff)
	op := &opState{kind: k, name: f.name, file: f, buf: b, stream: s, reg: e, size: size, args: a, done: make(chan struct{})}
	f.pending.add(op)
	if e != nil {
		e.ops.add(op)
	}
	sizeP := (*uint64)(unsafe.Pointer(&a.size))
	offP := (*int64)(unsafe.Pointer(&a.file_offset))
	bufOffP := (*int64)(unsafe.Pointer(&a.buf_offset))
	bytesP := (*int64)(unsafe.Pointer(&a.bytes))
	if k == opRead {
		err = cuFileReadAsync(ctx, f.fh, devicePtr(base), sizeP, offP, bufOffP, bytesP, streamPtr(sh))
	} else {
		err = cuFileWriteAsync(ctx, f.fh, devicePtr(base), sizeP, offP, bufOffP, bytesP, streamPtr(sh))
	}
	if err != nil {
		op.complete() // nothing was queued: the arguments go now
		return nil, fmt.Errorf("gds: %s %s: %w", m, f.name, err)
	}
	if err := s.LaunchHostFunc(op.complete); err != nil {
		op.noCallback = true
	}
	return &Pending{op: op}, nil
}

// opSet is the transfers queued on streams and not yet done that use a
// file or a registered range, which closing it waits for.
type opSet struct {
	mu  sync.Mutex
	ops map[*opState]struct{}
}

func (s *opSet) add(op *opState) {
	s.mu.Lock()
	if s.ops == nil {
		s.ops = map[*opState]struct{}{}
	}
	s.ops[op] = struct{}{}
	s.mu.Unlock()
}

func (s *opSet) remove(op *opState) {
	s.mu.Lock()
	delete(s.ops, op)
	s.mu.Unlock()
}

// waitAll waits for the transfers in the set now; their errors are their
// Waits'.
func (s *opSet) waitAll() {
	s.mu.Lock()
	ops := make([]*opState, 0, len(s.ops))
	for op := range s.ops {
		ops = append(ops, op)
	}
	s.mu.Unlock()
	for _, op := range ops {
		op.wait()
	}
}

// donePending is a Pending for a transfer already done.
func donePending(k opKind, name string, n int, err error) *Pending {
	op := &opState{kind: k, name: name, size: n, n: int64(n), err: err, done: make(chan struct{})}
	op.once.Do(func() { close(op.done) })
	return &Pending{op: op}
}

// complete ends the transfer once the stream has passed it: from a host
// function on the stream (which must not call CUDA, and this does not), or
// from wait. It runs once.
func (op *opState) complete() {
	op.once.Do(func() {
		if op.args != nil {
			op.n = int64(op.args.bytes)
			C.free(unsafe.Pointer(op.args))
			op.args = nil
		}
		if op.file != nil {
			op.file.pending.remove(op)
		}
		if op.reg != nil {
			op.reg.ops.remove(op)
		}
		op.file, op.buf, op.reg = nil, nil, nil
		close(op.done)
	})
}

// wait waits until the stream has passed the transfer. It returns the
// stream's error when the stream failed: the transfer may then never
// complete, and its arguments stay allocated rather than be freed under
// cuFile's feet.
func (op *opState) wait() error {
	select {
	case <-op.done:
		return nil
	default:
	}
	err := op.stream.Sync()
	closed := errors.Is(err, core.ErrClosed)
	if err != nil && !closed {
		op.releaseStream()
		return err
	}
	if op.noCallback {
		if closed {
			return err // no telling when its work ends
		}
		op.complete()
		return nil
	}
	// The host function ran before the synchronization returned; on a
	// closed stream it runs when the stream's last work is done.
	<-op.done
	return nil
}

// releaseStream gives back what cuFile holds for a failed stream, as its
// documentation asks (cuFileStreamDeregister).
func (op *opState) releaseStream() {
	ctx, sh, err := op.stream.Acquire()
	if err != nil {
		return
	}
	defer op.stream.Release()
	cuFileStreamDeregister(ctx, streamPtr(sh))
}

func (op *opState) result() (int, error) {
	if op.err != nil { // done synchronously
		return int(op.n), op.err
	}
	fn := "cuFileReadAsync"
	if op.kind == opWrite {
		fn = "cuFileWriteAsync"
	}
	n := op.n
	switch {
	case n < 0:
		return 0, fmt.Errorf("gds: %s %s: %w", op.kind.method(true), op.name, resultError(fn, n))
	case int(n) < op.size && op.kind == opRead:
		return int(n), io.EOF
	case int(n) < op.size:
		return int(n), fmt.Errorf("gds: WriteAtAsync %s: %w", op.name, io.ErrShortWrite)
	}
	return int(n), nil
}
