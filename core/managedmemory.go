package core

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

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
	h, err := r.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.release()
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
	h, err := r.dev.primary.acquire()
	if err != nil {
		return err
	}
	defer r.dev.primary.release()
	return cuMemFree(h, ptr)
}

func (r *ManagedMemoryResource) Device() *Device        { return r.dev }
func (r *ManagedMemoryResource) DeviceAccessible() bool { return true }
func (r *ManagedMemoryResource) HostAccessible() bool   { return true }
