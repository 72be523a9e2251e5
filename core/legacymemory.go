package core

import (
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
	return allocPrimary("LegacyMemoryResource", r, size, stream, func(h driver.Context) (driver.Deviceptr, error) {
		return cuMemAlloc(h, uint64(size))
	})
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *LegacyMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	return freePrimary(r.dev, ptr, stream, func(h driver.Context) error { return cuMemFree(h, ptr) })
}

func (r *LegacyMemoryResource) Device() *Device        { return r.dev }
func (r *LegacyMemoryResource) DeviceAccessible() bool { return true }
func (r *LegacyMemoryResource) HostAccessible() bool   { return false }
