package core

import (
	"github.com/cudago/cudago/bindings/driver"
)

// ManagedMemoryResource allocates unified memory (cuMemAllocManaged,
// attached globally), which migrates between host and device on demand.
// Touch it from the host only when no kernel that uses it is running,
// unless the device has DeviceAttributeConcurrentManagedAccess. Its
// Buffers take advice and prefetches, as cuda.core's ManagedBuffer
// (managed.go: SetReadMostly, SetPreferredLocation, SetAccessedBy,
// PrefetchAsync, DiscardAsync, LastPrefetchLocation, PrefetchBatchAsync),
// and on Linux may be larger than the device's memory: pages the device
// has no room for are evicted to the host.
type ManagedMemoryResource struct{ dev *Device }

// NewManagedMemoryResource returns a managed-memory resource of dev.
func NewManagedMemoryResource(dev *Device) *ManagedMemoryResource {
	return &ManagedMemoryResource{dev: dev}
}

// Allocate allocates size bytes of managed memory; stream is only
// remembered, as the stream Close waits for before freeing.
func (r *ManagedMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	return allocPrimary("ManagedMemoryResource", r, size, stream, func(h driver.Context) (driver.Deviceptr, error) {
		return cuMemAllocManaged(h, uint64(size), uint32(driver.MemAttachGlobal))
	})
}

// Deallocate waits for stream (if any), then frees the memory.
func (r *ManagedMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	return freePrimary(r.dev, ptr, stream, func(h driver.Context) error { return cuMemFree(h, ptr) })
}

func (r *ManagedMemoryResource) Device() *Device        { return r.dev }
func (r *ManagedMemoryResource) DeviceAccessible() bool { return true }
func (r *ManagedMemoryResource) HostAccessible() bool   { return true }
