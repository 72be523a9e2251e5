package core

import (
	"fmt"

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
	if size < 0 {
		return nil, fmt.Errorf("core: PinnedMemoryResource.Allocate: negative size %d", size)
	}
	if size == 0 {
		return NewBuffer(0, 0, r, stream), nil
	}
	h, err := r.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.release()
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
	h, err := r.dev.primary.acquire()
	if err != nil {
		return err
	}
	defer r.dev.primary.release()
	return cuMemFreeHost(h, hostPtr(ptr))
}

func (r *PinnedMemoryResource) Device() *Device        { return r.dev }
func (r *PinnedMemoryResource) DeviceAccessible() bool { return true }
func (r *PinnedMemoryResource) HostAccessible() bool   { return true }
