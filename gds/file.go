package gds

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// File is an open file registered with cuFile (cuFileHandleRegister), for
// transfers between its bytes and GPU memory. Several goroutines may use
// one File at once. Close deregisters and closes it; a forgotten File is
// closed when it is collected.
type File struct {
	*fileState
	cleanup runtime.Cleanup
}

// fileState is what a File owns, apart from it so that a cleanup can
// close it. A zero File has none and acts as a closed one.
type fileState struct {
	mu     sync.RWMutex // read: a call in flight; write: Close
	closed bool
	f      *os.File
	name   string
	fh     cufile.Handle
	direct bool
	read   bool // opened for reading
	write  bool // opened for writing

	pending opSet // transfers queued on streams, not yet done
}

// Options change how Open opens a file. A nil *Options, or the zero
// value, is the default: O_DIRECT where the file system takes it.
type Options struct {
	// Buffered opens the file without O_DIRECT: cuFile's POSIX path then
	// goes through the page cache (a file read again is read from memory),
	// and GPUDirect, which needs O_DIRECT, makes its own descriptor.
	Buffered bool
}

// Open opens the named file for transfers to and from GPU memory, with
// the flags and permissions of os.OpenFile (O_APPEND excepted: WriteAt
// writes at offsets). It opens the cuFile driver on first use, then the
// file, then asks for O_DIRECT (which GPUDirect needs, and which keeps
// the page cache out of the way) unless opts.Buffered, and registers the
// descriptor. Where the file system refuses O_DIRECT (tmpfs before Linux
// 6.6) the file stays buffered: cuFile (1.7 and newer) takes such
// descriptors, and Direct reports which it is. Where cuFile refuses the
// file because the udev database lacks the record of its volume (a
// machine without udev), the error is a *UdevError naming the file to
// write and its two lines. opts may be nil.
func Open(name string, flag int, perm os.FileMode, opts *Options) (*File, error) {
	if flag&os.O_APPEND != 0 {
		return nil, libhandle.ArgErr("gds", "Open", "flag", "%s: O_APPEND is not supported: WriteAt writes at offsets", name)
	}
	if err := OpenDriver(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, flag&^syscall.O_DIRECT, perm)
	if err != nil {
		return nil, fmt.Errorf("gds: %w", err)
	}
	st := &fileState{f: f, name: name}
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		st.read = true
	case os.O_WRONLY:
		st.write = true
	case os.O_RDWR:
		st.read, st.write = true, true
	}
	if opts == nil || !opts.Buffered {
		st.direct = setDirect(f) == nil
	}
	var descr cufile.Descr
	descr.Type = handleTypeOpaqueFD
	*descr.Handle.Fd() = int32(f.Fd())
	// Into a local: cgo refuses a pointer into st, which holds Go pointers.
	var fh cufile.Handle
	if err := cuFileHandleRegister(driverCtx(), &fh, &descr); err != nil {
		f.Close()
		return nil, fmt.Errorf("gds: open %s: %w", name, registerError(name, err))
	}
	st.fh = fh
	openFiles.Add(1)
	file := &File{fileState: st}
	file.cleanup = runtime.AddCleanup(file, func(st *fileState) { st.close() }, st)
	return file, nil
}

// OpenFile is Open.
//
// Deprecated: use Open, which takes the options.
func OpenFile(name string, flag int, perm os.FileMode, opts *Options) (*File, error) {
	return Open(name, flag, perm, opts)
}

// handleTypeOpaqueFD is CU_FILE_HANDLE_TYPE_OPAQUE_FD, a Linux descriptor
// (cufile.h's enum CUfileFileHandleType has no typedef the bindings name).
const handleTypeOpaqueFD = 1

// setDirect turns O_DIRECT on for an open file (fcntl F_SETFL), which
// fails where the file system does not support it.
func setDirect(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if e != 0 {
			serr = e
			return
		}
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, fl|syscall.O_DIRECT); e != 0 {
			serr = e
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// registerError explains cuFileHandleRegister's usual refusals: a
// *UdevError where the udev database lacks the record of the file's
// volume, which cuFile needs for every file.
func registerError(name string, err error) error {
	if errors.Is(err, cufile.InvalidFileOpenFlag) {
		return fmt.Errorf("%w (this libcufile needs O_DIRECT, which the file system refuses; libcufile 1.7 (CUDA 12.2) and newer take buffered files)", err)
	}
	if dev, serr := statDev(name); serr == nil {
		if u := udevEntry(udevRoot, name, dev); !u.OK {
			return &UdevError{Entry: u, Err: err}
		}
	}
	if errors.Is(err, cufile.IoNotSupported) || errors.Is(err, cufile.InvalidFileType) {
		return fmt.Errorf("%w (cuFile does not support this file or file system: allow its compatibility mode to use it anyway, see the package documentation)", err)
	}
	return err
}

// NoUdev reports whether the machine lacks the udev database
// (/run/udev/data) altogether; CheckUdev tells, for a given file, whether
// the record cuFile reads is there.
func NoUdev() bool {
	_, err := os.Stat(udevRoot + udevData)
	return err != nil
}

// Name returns the name the file was opened with.
func (f *File) Name() string {
	if f == nil || f.fileState == nil {
		return ""
	}
	return f.name
}

// Direct reports whether the file was opened with O_DIRECT.
func (f *File) Direct() bool { return f != nil && f.fileState != nil && f.direct }

// Close waits for the transfers queued on streams, deregisters the file
// from cuFile and closes it. Closing twice is not an error.
func (f *File) Close() error {
	if f == nil || f.fileState == nil {
		return nil
	}
	f.cleanup.Stop()
	return f.fileState.close()
}

func (st *fileState) close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	st.pending.waitAll() // the handle must outlive them
	err := cuFileHandleDeregister(driverCtx(), st.fh)
	openFiles.Add(-1)
	return errors.Join(err, st.f.Close())
}

// ReadAt reads len(dst) bytes (dst.Size()) of the file, from offset off,
// into dst: device memory, or pinned or managed host memory, a whole
// Buffer or a View of one. As io.ReaderAt does, it returns the number of
// bytes read and, when that is fewer, the reason: io.EOF at the end of
// the file. Offsets and sizes need no alignment (see the package
// documentation). It returns when the data is in dst; work queued on
// streams is not waited for, so order it before (Stream.Sync, events).
func (f *File) ReadAt(dst *core.Buffer, off int64) (int, error) {
	return f.transfer(opRead, dst, off)
}

// WriteAt writes src's bytes to the file at offset off, as io.WriterAt,
// and returns when they are written (to the page cache for a buffered
// file, to the storage for O_DIRECT). Work queued on streams that writes
// src is not waited for: order it before.
func (f *File) WriteAt(src *core.Buffer, off int64) (int, error) {
	return f.transfer(opWrite, src, off)
}

type opKind int

const (
	opRead opKind = iota
	opWrite
)

// buffer names the Buffer argument of the transfer.
func (k opKind) buffer() string { return [...]string{"dst", "src"}[k] }

func (k opKind) method(async bool) string {
	m := [...]string{"ReadAt", "WriteAt"}[k]
	if async {
		m += "Async"
	}
	return m
}

// check validates a transfer's arguments, before anything is touched: a
// nil File, Buffer or Stream, a negative offset, an end past the largest
// file offset.
func (f *File) check(k opKind, async bool, s *core.Stream, b *core.Buffer, off int64) error {
	m, arg := k.method(async), k.buffer()
	switch {
	case f == nil:
		return libhandle.ArgErr("gds", m, "f", "nil *File")
	case async && s == nil:
		return libhandle.ArgErr("gds", m, "s", "nil *core.Stream")
	case b == nil:
		return libhandle.ArgErr("gds", m, arg, "nil *core.Buffer")
	case off < 0:
		return libhandle.ArgErr("gds", m, "off", "negative offset %d", off)
	case int64(b.Size()) > math.MaxInt64-off:
		return libhandle.ArgErr("gds", m, "off", "%d bytes at offset %d end past the largest file offset", b.Size(), off)
	}
	return nil
}

// begin holds the file open for a transfer; every successful begin needs
// an end (st.mu.RUnlock).
func (f *File) begin(k opKind, async bool) error {
	st := f.fileState
	if st == nil {
		return fmt.Errorf("gds: %s: %w", k.method(async), os.ErrClosed)
	}
	st.mu.RLock()
	if st.closed {
		st.mu.RUnlock()
		return fmt.Errorf("gds: %s %s: %w", k.method(async), st.name, os.ErrClosed)
	}
	if k == opRead && !st.read || k == opWrite && !st.write {
		st.mu.RUnlock()
		how := "write-only"
		if k == opWrite {
			how = "read-only"
		}
		return libhandle.ArgErr("gds", k.method(async), "f", "%s is open %s", st.name, how)
	}
	return nil
}

func (f *File) transfer(k opKind, b *core.Buffer, off int64) (int, error) {
	if err := f.check(k, false, nil, b, off); err != nil {
		return 0, err
	}
	if err := f.begin(k, false); err != nil {
		return 0, err
	}
	defer f.mu.RUnlock()
	return f.xfer(k, b, off)
}

// xfer is transfer for a File held open (begin).
func (f *File) xfer(k opKind, b *core.Buffer, off int64) (int, error) {
	ops := libhandle.Operands{Package: "gds", Func: k.method(false)}
	defer ops.Release()
	ptr, err := ops.Add(k.buffer(), b, 1, "")
	if err != nil {
		return 0, err
	}
	p := libhandle.Addr(ptr)
	size := b.Size()
	if size == 0 {
		return 0, nil
	}
	ctx, err := bufferContext(b)
	if err != nil {
		return 0, fmt.Errorf("gds: %s %s: %w", k.method(false), f.name, err)
	}
	base, bufOff := p, int64(0)
	if e := useRegistration(b, p, ctx); e != nil {
		defer e.mu.RUnlock()
		// cuFile finds a registration by the address it was given.
		base, bufOff = e.base, int64(p-e.base)
	}
	done := 0
	for done < size {
		var n int64
		var err error
		fn := "cuFileRead"
		if k == opRead {
			n, err = cuFileRead(ctx, f.fh, devicePtr(base), uint64(size-done), off+int64(done), bufOff+int64(done))
		} else {
			fn = "cuFileWrite"
			n, err = cuFileWrite(ctx, f.fh, devicePtr(base), uint64(size-done), off+int64(done), bufOff+int64(done))
		}
		if err == nil && n < 0 {
			err = resultError(fn, n)
		}
		if err != nil {
			return done, fmt.Errorf("gds: %s %s: %d bytes at offset %d: %w", k.method(false), f.name, size-done, off+int64(done), err)
		}
		if n == 0 {
			if k == opRead {
				return done, io.EOF
			}
			return done, fmt.Errorf("gds: WriteAt %s: %w", f.name, io.ErrShortWrite)
		}
		done += int(n)
	}
	return done, nil
}

// resultError is the error of fn's negative byte count: cuFile returns
// -CUfileOpError for its own failures and, besides -1 with errno (which
// the generated calls return as the error), the negated errno for the
// file system's, as KvikIO reads them.
func resultError(fn string, n int64) error {
	switch {
	case -n > cufile.CufileopBaseErr:
		return &cufile.Error{Func: fn, Code: cufile.OpError(-n)}
	case n == -1:
		return fmt.Errorf("%s returned -1 without an errno", fn)
	}
	return syscall.Errno(-n)
}

// bufferContext is the context a transfer of b runs in: its stream's, or
// its device's primary context, or the driver's for memory of no device.
func bufferContext(b *core.Buffer) (driver.Context, error) {
	if s := b.Stream(); s != nil {
		return s.Context().Handle()
	}
	if mr := b.MemoryResource(); mr != nil {
		if d := mr.Device(); d != nil {
			return d.PrimaryContext().Handle()
		}
	}
	return driverCtx(), nil
}
