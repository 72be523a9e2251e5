package core

import (
	"github.com/cudago/cudago/bindings/driver"
)

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
	h, err := s.acquire()
	if err != nil {
		return nil, err
	}
	c := s.ctx
	defer releaseAfter(s, c, c.primary)
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
