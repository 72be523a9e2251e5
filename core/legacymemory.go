package core

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

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
	h, err := r.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.release()
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
	h, err := r.dev.primary.acquire()
	if err != nil {
		return err
	}
	defer r.dev.primary.release()
	return cuMemFree(h, ptr)
}

func (r *LegacyMemoryResource) Device() *Device        { return r.dev }
func (r *LegacyMemoryResource) DeviceAccessible() bool { return true }
func (r *LegacyMemoryResource) HostAccessible() bool   { return false }
