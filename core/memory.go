package core

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

// MemoryResource allocates and frees Buffers. The package has four:
//
//   - DeviceMemoryResource: device memory from the device's stream-ordered
//     pool (cuMemAllocAsync / cuMemFreeAsync); every Device's default.
//   - PinnedMemoryResource: page-locked host memory the device can reach
//     (cuMemHostAlloc); Buffer.Bytes views it.
//   - ManagedMemoryResource: unified memory (cuMemAllocManaged), reachable
//     from host and device.
//   - LegacyMemoryResource: plain device memory (cuMemAlloc / cuMemFree).
//
// Other implementations wrap their memory with NewBuffer; their Deallocate
// must be safe for concurrent use (finalizers of forgotten Buffers call it
// from cleanup goroutines). Resources own no driver object themselves and
// need no Close.
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

// DeviceMemoryResource allocates device memory from the device's current
// memory pool, ordered on a stream (cuMemAllocAsync); a Buffer from it is
// freed on its stream (cuMemFreeAsync), so it may be closed while kernels
// that use it are still queued there.
//
// A Buffer closed on a stream keeps its block for the next Allocate of
// the same size on that stream, which then needs no allocation from the
// driver (stream-ordered reuse, as the pool itself does); Stream.Sync,
// Context.Sync, Device.Sync and Stream.Close give such blocks back to the
// pool. At most 16 blocks and 1 GiB are kept per context. NoReuse, or
// CUDAGO_POOL_REUSE=off in the environment, turns this off.
type DeviceMemoryResource struct {
	dev *Device
	// NoReuse makes every Close free with cuMemFreeAsync and every
	// Allocate call cuMemAllocAsync. Set it before the first Allocate.
	NoReuse bool
}

// NewDeviceMemoryResource returns dev's stream-ordered resource.
func NewDeviceMemoryResource(dev *Device) *DeviceMemoryResource {
	return &DeviceMemoryResource{dev: dev}
}

// Allocate allocates size bytes ordered on stream (nil: the legacy
// default stream). The memory may be used by work queued on stream after
// this call, or on other streams once they wait for stream.
func (r *DeviceMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	s, err := checkAlloc("DeviceMemoryResource", r.dev, size, stream)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return NewBuffer(0, 0, r, s), nil
	}
	h, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer s.exit()
	return r.allocate(h, s, size)
}

// Deallocate frees ptr ordered on stream (nil or closed: the legacy
// default stream) with cuMemFreeAsync. Buffer.Close may keep the block
// for reuse instead; Deallocate never does.
func (r *DeviceMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	return r.release(ptr, size, stream, true)
}

func (r *DeviceMemoryResource) Device() *Device        { return r.dev }
func (r *DeviceMemoryResource) DeviceAccessible() bool { return true }
func (r *DeviceMemoryResource) HostAccessible() bool   { return false }

// PinnedMemoryResource allocates page-locked host memory, mapped for the
// device (cuMemHostAlloc, portable and device-mapped): Buffer.Bytes views
// it, kernels use its address, and copies from it are truly asynchronous.
type PinnedMemoryResource struct{ dev *Device }

// NewPinnedMemoryResource returns a pinned-memory resource allocating
// through dev's primary context.
func NewPinnedMemoryResource(dev *Device) *PinnedMemoryResource {
	return &PinnedMemoryResource{dev: dev}
}

// The CU_MEMHOSTALLOC_* flags.
const (
	memHostAllocPortable  = 1
	memHostAllocDeviceMap = 2
)

// Allocate allocates size bytes of pinned host memory; stream is only
// remembered, as the stream Close waits for before freeing.
func (r *PinnedMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: PinnedMemoryResource.Allocate: negative size %d", size)
	}
	if size == 0 {
		return NewBuffer(0, 0, r, stream), nil
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.exit()
	p, err := cuMemHostAlloc(h, uint64(size), memHostAllocPortable|memHostAllocDeviceMap)
	if err != nil {
		return nil, err
	}
	return NewBuffer(driver.Deviceptr(uintptr(p)), size, r, stream), nil
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *PinnedMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	if ptr == 0 {
		return nil
	}
	if err := syncBeforeFree(stream); err != nil {
		return err
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return err
	}
	defer r.dev.primary.exit()
	return cuMemFreeHost(h, hostPtr(ptr))
}

func (r *PinnedMemoryResource) Device() *Device        { return r.dev }
func (r *PinnedMemoryResource) DeviceAccessible() bool { return true }
func (r *PinnedMemoryResource) HostAccessible() bool   { return true }

// ManagedMemoryResource allocates unified memory (cuMemAllocManaged,
// attached globally), which migrates between host and device on demand.
// Touch it from the host only when no kernel that uses it is running.
type ManagedMemoryResource struct{ dev *Device }

// NewManagedMemoryResource returns a managed-memory resource of dev.
func NewManagedMemoryResource(dev *Device) *ManagedMemoryResource {
	return &ManagedMemoryResource{dev: dev}
}

// Allocate allocates size bytes of managed memory; stream is only
// remembered, as the stream Close waits for before freeing.
func (r *ManagedMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: ManagedMemoryResource.Allocate: negative size %d", size)
	}
	if size == 0 {
		return NewBuffer(0, 0, r, stream), nil
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.exit()
	p, err := cuMemAllocManaged(h, uint64(size), uint32(driver.MemAttachGlobal))
	if err != nil {
		return nil, err
	}
	return NewBuffer(p, size, r, stream), nil
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *ManagedMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	if ptr == 0 {
		return nil
	}
	if err := syncBeforeFree(stream); err != nil {
		return err
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return err
	}
	defer r.dev.primary.exit()
	return cuMemFree(h, ptr)
}

func (r *ManagedMemoryResource) Device() *Device        { return r.dev }
func (r *ManagedMemoryResource) DeviceAccessible() bool { return true }
func (r *ManagedMemoryResource) HostAccessible() bool   { return true }

// LegacyMemoryResource allocates device memory with cuMemAlloc and frees
// it with cuMemFree, which are not stream-ordered.
type LegacyMemoryResource struct{ dev *Device }

// NewLegacyMemoryResource returns a cuMemAlloc resource of dev.
func NewLegacyMemoryResource(dev *Device) *LegacyMemoryResource {
	return &LegacyMemoryResource{dev: dev}
}

// Allocate allocates size bytes; stream is only remembered, as the stream
// Close waits for before freeing.
func (r *LegacyMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: LegacyMemoryResource.Allocate: negative size %d", size)
	}
	if size == 0 {
		return NewBuffer(0, 0, r, stream), nil
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.exit()
	p, err := cuMemAlloc(h, uint64(size))
	if err != nil {
		return nil, err
	}
	return NewBuffer(p, size, r, stream), nil
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *LegacyMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	if ptr == 0 {
		return nil
	}
	if err := syncBeforeFree(stream); err != nil {
		return err
	}
	h, err := r.dev.primary.enter()
	if err != nil {
		return err
	}
	defer r.dev.primary.exit()
	return cuMemFree(h, ptr)
}

func (r *LegacyMemoryResource) Device() *Device        { return r.dev }
func (r *LegacyMemoryResource) DeviceAccessible() bool { return true }
func (r *LegacyMemoryResource) HostAccessible() bool   { return false }
