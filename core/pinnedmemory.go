package core

import (
	"github.com/cudago/cudago/bindings/driver"
)

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
	return allocPrimary("PinnedMemoryResource", r, size, stream, func(h driver.Context) (driver.Deviceptr, error) {
		p, err := cuMemHostAlloc(h, uint64(size), memHostAllocPortable|memHostAllocDeviceMap)
		return driver.Deviceptr(uintptr(p)), err
	})
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *PinnedMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	return freePrimary(r.dev, ptr, stream, func(h driver.Context) error { return cuMemFreeHost(h, hostPtr(ptr)) })
}

func (r *PinnedMemoryResource) Device() *Device        { return r.dev }
func (r *PinnedMemoryResource) DeviceAccessible() bool { return true }
func (r *PinnedMemoryResource) HostAccessible() bool   { return true }
