package core

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

// MemoryResource allocates and frees Buffers. The package has six:
//
//   - DeviceMemoryResource: device memory from the device's stream-ordered
//     pool (cuMemAllocAsync / cuMemFreeAsync); every Device's default.
//   - PinnedMemoryResource: page-locked host memory the device can reach
//     (cuMemHostAlloc); Buffer.Bytes views it.
//   - ManagedMemoryResource: unified memory (cuMemAllocManaged), reachable
//     from host and device.
//   - LegacyMemoryResource: plain device memory (cuMemAlloc / cuMemFree).
//   - IPCMemoryResource: a stream-ordered pool of its own whose Buffers
//     other processes can import (see ListenIPC).
//   - VirtualMemoryResource: device memory mapped into a reserved address
//     range (cuMemCreate / cuMemMap), which Grow extends in place.
//
// Other implementations wrap their memory with NewBuffer; their Deallocate
// must be safe for concurrent use (finalizers of forgotten Buffers call it
// from cleanup goroutines). Resources own no driver object themselves and
// need no Close, but for IPCMemoryResource, which owns its pool.
type MemoryResource interface {
	// Allocate allocates size bytes, ordered on stream where the resource
	// is stream-ordered (nil: the device's legacy default stream).
	Allocate(size int, stream *Stream) (*Buffer, error)
	// Deallocate frees what Allocate returned, ordered on stream (nil:
	// the legacy default stream). Buffer.Close calls it.
	Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error
	// Device returns the device the memory belongs to (or, for host
	// memory, whose context allocates it).
	Device() *Device
	// DeviceAccessible reports whether kernels can use the memory.
	DeviceAccessible() bool
	// HostAccessible reports whether the host can use the memory.
	HostAccessible() bool
}

// checkAlloc validates an allocation request and returns the context and
// stream handle to allocate in.
func checkAlloc(what string, dev *Device, size int, stream *Stream) (*Stream, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: %s.Allocate: negative size %d", what, size)
	}
	if stream == nil {
		return dev.DefaultStream(), nil
	}
	if stream.ctx.dev != dev {
		return nil, fmt.Errorf("core: %s.Allocate: stream is on %v, the resource on %v", what, stream.ctx.dev, dev)
	}
	return stream, nil
}

// syncBeforeFree waits for the work on stream, if any, before memory that
// is not stream-ordered is freed.
func syncBeforeFree(stream *Stream) error {
	if stream == nil || !stream.owned && stream.handle == streamLegacy {
		return nil // the free below synchronizes with the legacy stream
	}
	err := stream.Sync()
	if err == ErrClosed {
		err = nil
	}
	return err
}

// allocPrimary is the Allocate of the resources that are not
// stream-ordered: alloc gets size bytes in the device's primary context,
// and stream is only remembered, as the stream Close waits for before
// freeing.
func allocPrimary(what string, r MemoryResource, size int, stream *Stream, alloc func(h driver.Context) (driver.Deviceptr, error)) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: %s.Allocate: negative size %d", what, size)
	}
	if size == 0 {
		return NewBuffer(0, 0, r, stream), nil
	}
	c := r.Device().primary
	h, err := c.acquire()
	if err != nil {
		return nil, err
	}
	defer c.release()
	p, err := alloc(h)
	if err != nil {
		return nil, err
	}
	return NewBuffer(p, size, r, stream), nil
}

// freePrimary is their Deallocate: it waits for stream (if any), then
// frees in the device's primary context.
func freePrimary(dev *Device, ptr driver.Deviceptr, stream *Stream, free func(h driver.Context) error) error {
	if ptr == 0 {
		return nil
	}
	if err := syncBeforeFree(stream); err != nil {
		return err
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return err
	}
	defer dev.primary.release()
	return free(h)
}
