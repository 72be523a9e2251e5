package core

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Buffer is memory from a MemoryResource: a device address, a size, the
// resource that frees it and the stream it was allocated on. Close frees
// it on that stream (stream-ordered for a DeviceMemoryResource); a
// finalizer frees a forgotten one.
//
// The synchronous methods (CopyToDevice, CopyFromDevice, CopyFrom,
// Memset8/32) run on the buffer's stream (its context's legacy default
// stream when it has none) and wait for it: they see the work queued
// there before them.
type Buffer struct {
	ptr     driver.Deviceptr
	size    int
	mr      MemoryResource
	stream  *Stream // allocation stream; may be nil
	life    life
	parent  *Buffer // for a View: the buffer that owns the memory
	noReuse bool    // a graph's allocation (made while capturing): never kept for reuse
	hooks   *freeHooks
	// promoted: the Buffer left the young list, with a finalizer unless
	// it was closed (bufferguard.go).
	promoted atomic.Bool
}

// NewBuffer wraps memory of resource mr, to be freed by mr.Deallocate on
// stream (which may be nil) when the Buffer is closed or collected.
func NewBuffer(ptr driver.Deviceptr, size int, mr MemoryResource, stream *Stream) *Buffer {
	b := &Buffer{ptr: ptr, size: size, mr: mr, stream: stream}
	if ptr != 0 {
		addYoung(b) // the finalizer comes later, if still open (bufferguard.go)
	}
	return b
}

// finalize frees a forgotten Buffer. It uses a finalizer rather than
// runtime.AddCleanup, which every other resource uses, because a Buffer
// is made and closed on the allocation hot path: AddCleanup + Stop cost
// about three times as much (two more allocations, the argument's copy and
// a closure, and more work under the runtime's locks). What a cleanup
// guards against does not arise here: nothing a Buffer points to (its
// resource, stream, context) points back to it, so it is never in a
// cycle, and nothing is lost by the finalizer seeing the Buffer.
//
// One goroutine runs all of a program's finalizers, one after the other,
// so only a free that never waits (a DeviceMemoryResource's
// cuMemFreeAsync) is made on it; the others (which wait for the stream
// first, or belong to other resources) get a goroutine of their own.
func (b *Buffer) finalize() {
	if b.life.closed() {
		return // closed while its finalizer was being set (bufferguard.go)
	}
	if _, ok := b.mr.(*DeviceMemoryResource); ok {
		b.free()
		return
	}
	go b.free()
}

// free is the finalizer's free. Its error is recorded for the next Sync of
// the buffer's context.
func (b *Buffer) free() {
	b.hooks.run()
	if err := b.mr.Deallocate(b.ptr, b.size, b.stream); err != nil {
		if c := freeContext(b.mr, b.stream); c != nil {
			c.record(fmt.Sprintf("freeing a forgotten Buffer (%d bytes at %#x)", b.size, uint64(b.ptr)), err)
		}
	}
}

// freeContext is where an error of freeing a Buffer of mr on stream is
// recorded: its stream's context, or its device's primary context when it
// has no stream or that context is closed.
func freeContext(mr MemoryResource, stream *Stream) *Context {
	if stream != nil && !stream.ctx.life.closed() {
		return stream.ctx
	}
	if d := mr.Device(); d != nil {
		return d.primary
	}
	return nil
}

// View returns a Buffer for the n bytes of b at offset off, sharing b's
// memory: copies, memsets, launches and HostSlice then work on that part
// only. A view owns nothing: closing it only ends the view, and closing b
// ends every view of it, whose later uses return ErrClosed (a view keeps
// b reachable, so b's finalizer waits for its views). Views of views are
// views of b. Copies between overlapping parts of one buffer are refused.
func (b *Buffer) View(off, n int) (*Buffer, error) {
	if b == nil {
		return nil, errors.New("core: Buffer.View: nil *Buffer")
	}
	if b.closed() {
		return nil, ErrClosed
	}
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		return nil, fmt.Errorf("core: Buffer.View: %d bytes at offset %d do not fit in a buffer of %d bytes", n, off, b.size)
	}
	root := b
	if b.parent != nil {
		root = b.parent
	}
	return &Buffer{ptr: b.ptr + driver.Deviceptr(off), size: n, mr: b.mr, stream: b.stream, parent: root}, nil
}

// acquire holds b, and the buffer it views, for a driver call.
func (b *Buffer) acquire() bool {
	if !b.life.acquire() {
		return false
	}
	if b.parent != nil && !b.parent.life.acquire() {
		b.life.release()
		return false
	}
	return true
}

func (b *Buffer) release() {
	if b.parent != nil {
		b.parent.life.release()
	}
	b.life.release()
}

// root is the buffer that owns b's memory.
func (b *Buffer) root() *Buffer {
	if b.parent != nil {
		return b.parent
	}
	return b
}

// closed reports whether b, or the buffer it views, is closed.
func (b *Buffer) closed() bool {
	return b.life.closed() || b.parent != nil && b.parent.life.closed()
}

// Ptr returns the buffer's device address (0 after Close).
func (b *Buffer) Ptr() driver.Deviceptr {
	if b.closed() {
		return 0
	}
	return b.ptr
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int { return b.size }

// MemoryResource returns the resource the buffer came from.
func (b *Buffer) MemoryResource() MemoryResource { return b.mr }

// Device returns the device of the buffer's resource.
func (b *Buffer) Device() *Device { return b.mr.Device() }

// Stream returns the stream the buffer was allocated on, or nil.
func (b *Buffer) Stream() *Stream { return b.stream }

// Close frees the buffer on the stream it was allocated on; CloseOn frees
// it on another. Later uses return ErrClosed; closing twice is not an
// error.
func (b *Buffer) Close() error {
	if b == nil {
		return nil
	}
	return b.CloseOn(b.stream)
}

// CloseOn frees the buffer ordered on stream: for a stream-ordered
// resource the memory is released once the work queued on stream so far
// is done; the others wait for stream first. A DeviceMemoryResource may
// instead keep the block for the next Allocate of its size on stream (see
// DeviceMemoryResource), which is ordered after that work too.
func (b *Buffer) CloseOn(stream *Stream) error {
	if !b.life.close() {
		return nil
	}
	if b.ptr == 0 || b.parent != nil { // a view frees nothing
		return nil
	}
	if b.promoted.Load() {
		runtime.SetFinalizer(b, nil) // b is reachable here: it cannot have run
	}
	b.hooks.run() // set before b was closed: OnFree held b
	if r, ok := b.mr.(*DeviceMemoryResource); ok {
		return r.release(b.ptr, b.size, stream, b.noReuse)
	}
	return b.mr.Deallocate(b.ptr, b.size, stream)
}

// Bytes returns the memory of a host-accessible buffer (pinned or
// managed) as a slice, valid until Close. Wait for the GPU work that
// writes it before reading it.
func (b *Buffer) Bytes() ([]byte, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	if !b.mr.HostAccessible() {
		return nil, fmt.Errorf("core: Buffer.Bytes: %T memory is not host-accessible", b.mr)
	}
	if b.size == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(hostPtr(b.ptr)), b.size), nil
}

// HostSlice returns the memory of a host-accessible buffer (pinned or
// managed) as a []T of Size()/sizeof(T) elements, valid until Close: the
// typed form of Bytes. T must hold no Go pointers, and the buffer's size
// must be a multiple of T's size. Wait for the GPU work that writes the
// buffer before reading the slice.
func HostSlice[T any](b *Buffer) ([]T, error) {
	if err := checkElem[T]("HostSlice"); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("core: HostSlice: nil *Buffer")
	}
	raw, err := b.Bytes()
	if err != nil {
		return nil, err
	}
	var zero T
	sz := int(unsafe.Sizeof(zero))
	if sz == 0 || len(raw)%sz != 0 {
		return nil, fmt.Errorf("core: HostSlice: a %d-byte buffer is not a whole number of %d-byte %T", len(raw), sz, zero)
	}
	if len(raw) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&raw[0]))%unsafe.Alignof(zero) != 0 {
		return nil, fmt.Errorf("core: HostSlice: buffer is not aligned for %T", zero)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&raw[0])), len(raw)/sz), nil
}

// opStream returns the stream the synchronous operations of b run on.
func (b *Buffer) opStream() *Stream {
	if b.stream != nil && !b.stream.life.closed() && !b.stream.ctx.life.closed() {
		return b.stream
	}
	if b.stream != nil {
		return b.stream.ctx.fallbackStream()
	}
	return b.mr.Device().primary.DefaultStream()
}

// acquireWith acquires b and the stream s (b's own when nil) for a driver
// call; every successful acquireWith needs a releaseWith.
func (b *Buffer) acquireWith(s *Stream) (driver.Context, *Stream, error) {
	if !b.acquire() {
		return 0, nil, ErrClosed
	}
	if s == nil {
		s = b.opStream()
	}
	h, err := s.acquire()
	if err != nil {
		b.release()
		return 0, nil, err
	}
	return h, s, nil
}

func (b *Buffer) releaseWith(s *Stream) {
	s.release()
	b.release()
}

// ---- typed copies ----

var pointerFree sync.Map // reflect.Type -> bool: no Go pointers

// checkElem refuses element types that hold Go pointers, which cgo may not
// pass and a GPU cannot use. The answer is cached per type; the error
// names the function fn that asked.
func checkElem[T any](fn string) error {
	t := reflect.TypeFor[T]()
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	}
	free, ok := pointerFree.Load(t)
	if !ok {
		free = !hasPointers(t)
		pointerFree.Store(t, free)
	}
	if !free.(bool) {
		return fmt.Errorf("core: %s: element type %v holds Go pointers", fn, t)
	}
	return nil
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Slice, reflect.String,
		reflect.Chan, reflect.Func, reflect.Interface:
		return true
	}
	return false
}

func sliceBytes[T any](s []T) (unsafe.Pointer, int) {
	if len(s) == 0 {
		return nil, 0
	}
	var z T
	return unsafe.Pointer(unsafe.SliceData(s)), len(s) * int(unsafe.Sizeof(z))
}

func boundsErr(fn string, n, size int) error {
	return fmt.Errorf("core: %s: %d bytes do not fit in a buffer of %d bytes", fn, n, size)
}

// CopyToDevice copies src into the start of dst and waits for the copy.
// It fails, before any driver call, when src holds more bytes than dst.
func CopyToDevice[T any](dst *Buffer, src []T) error {
	return hostTransfer("CopyToDevice", nil, dst, src, func(h driver.Context, s *Stream, p unsafe.Pointer, n int) error {
		return copyHtoD(s.ctx.dev, h, dst.ptr, p, n, s.handle) // staging.go
	})
}

// CopyFromDevice fills dst from the start of src and waits for the copy.
// It fails, before any driver call, when dst wants more bytes than src
// holds.
func CopyFromDevice[T any](dst []T, src *Buffer) error {
	return hostTransfer("CopyFromDevice", nil, src, dst, func(h driver.Context, s *Stream, p unsafe.Pointer, n int) error {
		return copyDtoH(s.ctx.dev, h, p, src.ptr, n, s.handle) // staging.go
	})
}

// hostTransfer is the frame of the copies fn between host and the start of
// b on stream (nil: b's own): it checks the element type and that the n
// bytes of host fit in b, and unless n is 0 calls do with b and the
// stream acquired and p, n the host side.
func hostTransfer[T any](fn string, stream *Stream, b *Buffer, host []T, do func(h driver.Context, s *Stream, p unsafe.Pointer, n int) error) error {
	if err := checkElem[T](fn); err != nil {
		return err
	}
	if b == nil {
		return fmt.Errorf("core: %s: nil *Buffer", fn)
	}
	p, n := sliceBytes(host)
	if n > b.size {
		return boundsErr(fn, n, b.size)
	}
	h, s, err := b.acquireWith(stream)
	if err != nil {
		return err
	}
	defer b.releaseWith(s)
	if n == 0 {
		return nil
	}
	return do(h, s, p, n)
}

// CopyToDeviceAsync queues a copy of src into the start of dst on stream
// and returns. src is pinned (runtime.Pinner) until the copy completes;
// the caller must not modify it before then (Stream.Sync, Done...). It
// cannot be captured into a graph.
func CopyToDeviceAsync[T any](stream *Stream, dst *Buffer, src []T) error {
	return hostTransfer("CopyToDeviceAsync", stream, dst, src, func(h driver.Context, s *Stream, p unsafe.Pointer, n int) error {
		return pinnedUntilDone(p, func(hd uintptr) error { return cMemcpyHtoDAsync(h, dst.ptr, p, uint64(n), s.handle, hd) })
	})
}

// CopyFromDeviceAsync queues a copy from the start of src into dst on
// stream and returns; dst is pinned until the copy completes and must not
// be read before then. It cannot be captured into a graph.
func CopyFromDeviceAsync[T any](stream *Stream, dst []T, src *Buffer) error {
	return hostTransfer("CopyFromDeviceAsync", stream, src, dst, func(h driver.Context, s *Stream, p unsafe.Pointer, n int) error {
		return pinnedUntilDone(p, func(hd uintptr) error { return cMemcpyDtoHAsync(h, p, src.ptr, uint64(n), s.handle, hd) })
	})
}

// pinnedUntilDone pins host memory p for the asynchronous copy that queue
// queues with completion callback hd, which unpins it.
func pinnedUntilDone(p unsafe.Pointer, queue func(hd uintptr) error) error {
	pin := new(runtime.Pinner)
	pin.Pin(p)
	hd := registerCallback(hostCallback(pinCallback{pin}))
	if err := queue(hd); err != nil {
		deleteCallback(hd)
		pin.Unpin()
		return err
	}
	return nil
}

// ---- device-to-device ----

// CopyFrom copies all of src into the start of b and waits for the copy.
// It runs on b's stream (see Buffer), after the work queued there.
//
// Buffers of different devices are copied peer to peer (cuMemcpyPeer).
// That works between any two devices, staged through host memory; once
// the destination's device may access the source's memory, it goes
// directly over NVLink or PCIe (Device.EnablePeerAccess, which covers the
// default pool's Buffers; SetPeerAccessibleBy on other pools). Enable it
// both ways for copies in both directions. b's stream cannot see the
// work of src's device, so CopyFrom first waits for src's stream as well:
// a synchronous peer copy sees the work queued on both buffers' streams
// before it.
func (b *Buffer) CopyFrom(src *Buffer) error { return b.copyFrom(nil, src, true) }

// CopyFromAsync queues a copy of all of src into the start of b on stream
// and returns.
//
// Between devices (as cuda.core's Buffer.copy_from), stream may belong to
// either buffer's device (any other is refused), and the copy is ordered
// on it only: work queued on the other device that writes src or reads b
// must be ordered with the copy by the caller, with an Event recorded on
// one stream and waited for on the other (Stream.Record, Stream.Wait),
// which works across devices. Neither buffer may be closed, nor src
// rewritten, before the copy is done.
func (b *Buffer) CopyFromAsync(stream *Stream, src *Buffer) error {
	if stream == nil {
		return errors.New("core: Buffer.CopyFromAsync: nil stream")
	}
	return b.copyFrom(stream, src, false)
}

func (b *Buffer) copyFrom(stream *Stream, src *Buffer, sync bool) error {
	if b == nil {
		return errors.New("core: Buffer.CopyFrom: nil destination *Buffer")
	}
	if src == nil {
		return errors.New("core: Buffer.CopyFrom: nil source *Buffer")
	}
	// A closed buffer is ErrClosed whatever its size (checked again,
	// race-free, when both are held below).
	if b.closed() || src.closed() {
		return ErrClosed
	}
	if src.size > b.size {
		return boundsErr("Buffer.CopyFrom", src.size, b.size)
	}
	if b.root() == src.root() && b.ptr < src.ptr+driver.Deviceptr(src.size) && src.ptr < b.ptr+driver.Deviceptr(src.size) {
		// cuMemcpyDtoD of overlapping ranges is undefined.
		return fmt.Errorf("core: Buffer.CopyFrom: source and destination overlap (%d bytes at %#x and %#x)", src.size, src.ptr, b.ptr)
	}
	sd, dd := src.mr.Device(), b.mr.Device()
	if sd != dd && stream != nil && stream.ctx.dev != sd && stream.ctx.dev != dd {
		return fmt.Errorf("core: Buffer.CopyFromAsync: a copy from %v to %v cannot be ordered on a stream of %v", sd, dd, stream.ctx.dev)
	}
	h, s, err := b.acquireWith(stream)
	if err != nil {
		return err
	}
	defer b.releaseWith(s)
	if !src.acquire() {
		return ErrClosed
	}
	defer src.release()
	if src.size == 0 {
		return nil
	}
	if sd == dd {
		if err := cuMemcpyDtoDAsync(h, b.ptr, src.ptr, uint64(src.size), s.handle); err != nil {
			return err
		}
		return syncIf(sync, h, s)
	}
	if sync {
		// b's stream does not order with src's device: wait for src's
		// stream here, on the host.
		ss := src.opStream()
		sh, err := ss.acquire()
		if err != nil {
			return err
		}
		err = cuStreamSynchronize(sh, ss.handle)
		ss.release()
		if err != nil {
			return err
		}
	}
	err = dd.primary.callWith(sd.primary, func(dh, sh driver.Context) error {
		return cuMemcpyPeerAsync(h, b.ptr, dh, src.ptr, sh, uint64(src.size), s.handle)
	})
	if err != nil {
		return err
	}
	return syncIf(sync, h, s)
}

// syncIf waits for s when sync is set: the end of a synchronous copy or set.
func syncIf(sync bool, h driver.Context, s *Stream) error {
	if !sync {
		return nil
	}
	return cuStreamSynchronize(h, s.handle)
}

// ---- memset ----

// Memset8 sets every byte of b to v and waits.
func (b *Buffer) Memset8(v uint8) error { return b.memset(nil, uint32(v), 1, true) }

// Memset32 sets every 32-bit word of b to v and waits; b's size must be a
// multiple of 4.
func (b *Buffer) Memset32(v uint32) error { return b.memset(nil, v, 4, true) }

// Memset8Async queues setting every byte of b to v on stream.
func (b *Buffer) Memset8Async(stream *Stream, v uint8) error {
	if stream == nil {
		return errors.New("core: Buffer.Memset8Async: nil stream")
	}
	return b.memset(stream, uint32(v), 1, false)
}

// Memset32Async queues setting every 32-bit word of b to v on stream.
func (b *Buffer) Memset32Async(stream *Stream, v uint32) error {
	if stream == nil {
		return errors.New("core: Buffer.Memset32Async: nil stream")
	}
	return b.memset(stream, v, 4, false)
}

func (b *Buffer) memset(stream *Stream, v uint32, elem int, sync bool) error {
	if b.size%elem != 0 {
		return fmt.Errorf("core: Buffer.Memset32: size %d is not a multiple of 4", b.size)
	}
	h, s, err := b.acquireWith(stream)
	if err != nil {
		return err
	}
	defer b.releaseWith(s)
	if b.size == 0 {
		return nil
	}
	if elem == 1 {
		err = cuMemsetD8Async(h, b.ptr, uint8(v), uint64(b.size), s.handle)
	} else {
		err = cuMemsetD32Async(h, b.ptr, v, uint64(b.size/elem), s.handle)
	}
	if err != nil {
		return err
	}
	return syncIf(sync, h, s)
}
