package core

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
)

// VirtualMemoryOptions configure NewVirtualMemoryResource.
type VirtualMemoryOptions struct {
	// Reserve is the address range each allocation reserves, in bytes:
	// the most its Buffer can grow to (VirtualMemoryResource.Grow),
	// rounded up to the granularity. 0 reserves the device's total
	// memory, so that a buffer can grow as far as memory allows; address
	// space is plentiful (2^47 bytes and more), but set it smaller to make
	// many allocations.
	Reserve int
	// Peers are other devices whose kernels may use the memory too, read-
	// write or read-only; each must be able to reach the device
	// (Device.CanAccessPeer). The memory's own device always has
	// read-write access. Peer access to VMM memory is per mapping:
	// Device.EnablePeerAccess is not needed.
	Peers []PeerAccess
	// MinimumGranularity rounds sizes to the driver's minimum granularity
	// instead of its recommended one (cuMemGetAllocationGranularity).
	MinimumGranularity bool
}

// PeerAccess gives a device access to a VirtualMemoryResource's memory.
type PeerAccess struct {
	Device   *Device
	ReadOnly bool
}

// VirtualMemoryResource allocates device memory through the driver's
// virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap,
// cuMemSetAccess), as cuda.core's VirtualMemoryResource: each allocation
// reserves an address range up front (VirtualMemoryOptions.Reserve) and
// maps physical memory at its start, so that Grow can map more at its end
// without moving it. Kernels that use the first part, even while they
// run, are not disturbed, and the address they were given stays valid.
//
// Sizes are rounded up to the allocation granularity (Granularity; 2 MiB
// on current GPUs), and Buffer.Size reports the rounded size. Mapping is
// synchronous: Allocate's stream is only remembered, as the stream that
// Close waits for before it unmaps (with none, Close waits for the whole
// device's primary context). Close unmaps the memory, which frees it, and
// frees the address range.
type VirtualMemoryResource struct {
	dev     *Device
	prop    driver.MemAllocationProp
	access  []driver.MemAccessDesc
	gran    int
	reserve int

	mu     sync.Mutex
	allocs map[driver.Deviceptr]*vmAlloc
}

// vmAlloc is one allocation: its reserved range, and the bytes mapped at
// its start, chunk by chunk (each cuMemMap is unmapped on its own).
type vmAlloc struct {
	mu      sync.Mutex
	reserve int
	chunks  []int
	mapped  int
}

// NewVirtualMemoryResource returns a resource allocating dev's memory
// through virtual memory management, which dev must support.
func NewVirtualMemoryResource(dev *Device, options *VirtualMemoryOptions) (*VirtualMemoryResource, error) {
	opts := optsOf(options)
	if dev == nil {
		return nil, errors.New("core: NewVirtualMemoryResource: nil *Device")
	}
	if opts.Reserve < 0 {
		return nil, fmt.Errorf("core: NewVirtualMemoryResource: negative Reserve %d", opts.Reserve)
	}
	r := &VirtualMemoryResource{
		dev: dev,
		prop: driver.MemAllocationProp{
			Type:     driver.MemAllocationTypePinned,
			Location: driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(dev.handle)},
		},
		access: []driver.MemAccessDesc{{
			Location: driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(dev.handle)},
			Flags:    driver.MemAccessFlagsProtReadwrite,
		}},
		allocs: map[driver.Deviceptr]*vmAlloc{},
	}
	seen := map[*Device]bool{dev: true}
	for i, p := range opts.Peers {
		switch {
		case p.Device == nil:
			return nil, fmt.Errorf("core: NewVirtualMemoryResource: Peers[%d] has no Device", i)
		case p.Device == dev:
			return nil, fmt.Errorf("core: NewVirtualMemoryResource: Peers[%d] is %v, the memory's own device", i, dev)
		case seen[p.Device]:
			return nil, fmt.Errorf("core: NewVirtualMemoryResource: Peers[%d]: %v is listed twice", i, p.Device)
		}
		seen[p.Device] = true
		flags := driver.MemAccessFlagsProtReadwrite
		if p.ReadOnly {
			flags = driver.MemAccessFlagsProtRead
		}
		r.access = append(r.access, driver.MemAccessDesc{
			Location: driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(p.Device.handle)},
			Flags:    flags,
		})
	}
	ok, err := dev.Attribute(driver.DeviceAttributeVirtualMemoryManagementSupported)
	if err != nil {
		return nil, err
	}
	if ok == 0 {
		return nil, fmt.Errorf("core: NewVirtualMemoryResource: %v does not support virtual memory management", dev)
	}
	for i, p := range opts.Peers {
		can, err := p.Device.CanAccessPeer(dev)
		if err != nil {
			return nil, err
		}
		if !can {
			return nil, fmt.Errorf("core: NewVirtualMemoryResource: Peers[%d]: %v cannot access %v's memory (Device.CanAccessPeer)", i, p.Device, dev)
		}
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	which := driver.MemAllocGranularityRecommended
	if opts.MinimumGranularity {
		which = driver.MemAllocGranularityMinimum
	}
	// A copy: cgo refuses a pointer into r, which holds Go pointers.
	prop := r.prop
	g, err := cuMemGetAllocationGranularity(h, &prop, which)
	if err != nil {
		return nil, err
	}
	if g == 0 || g > 1<<40 {
		return nil, fmt.Errorf("core: NewVirtualMemoryResource: the driver gives a granularity of %d bytes", g)
	}
	r.gran = int(g)
	reserve := opts.Reserve
	if reserve == 0 {
		reserve = int(min(dev.TotalMemory(), uint64(maxInt/2)))
	}
	if r.reserve, err = r.roundUp("NewVirtualMemoryResource", reserve); err != nil {
		return nil, err
	}
	if r.reserve == 0 {
		r.reserve = r.gran
	}
	return r, nil
}

// roundUp rounds n up to the granularity.
func (r *VirtualMemoryResource) roundUp(fn string, n int) (int, error) {
	if n > maxInt-r.gran {
		return 0, fmt.Errorf("core: %s: %d bytes is too large", fn, n)
	}
	return (n + r.gran - 1) / r.gran * r.gran, nil
}

// Granularity returns the size that allocations are rounded up to.
func (r *VirtualMemoryResource) Granularity() int { return r.gran }

// Reserve returns the address range each allocation reserves: the most a
// Buffer of r can grow to.
func (r *VirtualMemoryResource) Reserve() int { return r.reserve }

// Allocate reserves an address range (Reserve bytes) and maps size bytes,
// rounded up to the granularity, at its start, accessible from the device
// and the peers of the options. size may be 0: the range is reserved, and
// Grow maps the memory. stream (nil or of the resource's device) is only
// remembered, as the stream Close waits for.
func (r *VirtualMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("core: VirtualMemoryResource.Allocate: negative size %d", size)
	}
	if stream != nil && stream.ctx.dev != r.dev {
		return nil, fmt.Errorf("core: VirtualMemoryResource.Allocate: stream is on %v, the resource on %v", stream.ctx.dev, r.dev)
	}
	n, err := r.roundUp("VirtualMemoryResource.Allocate", size)
	if err != nil {
		return nil, err
	}
	if n > r.reserve {
		return nil, fmt.Errorf("core: VirtualMemoryResource.Allocate: %d bytes are more than the %d reserved for each allocation (VirtualMemoryOptions.Reserve)", size, r.reserve)
	}
	h, err := r.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.release()
	base, err := cuMemAddressReserve(h, uint64(r.reserve), 0, 0, 0)
	if err != nil {
		return nil, err
	}
	a := &vmAlloc{reserve: r.reserve}
	if n > 0 {
		if err := r.mapChunk(h, base, a, n); err != nil {
			return nil, errors.Join(err, cuMemAddressFree(h, base, uint64(a.reserve)))
		}
	}
	r.mu.Lock()
	r.allocs[base] = a
	r.mu.Unlock()
	return NewBuffer(base, n, r, stream), nil
}

// mapChunk maps n more bytes at the end of a's mapped part and grants the
// access of the options on them. The physical memory's handle is released
// at once: the mapping keeps the memory, and unmapping it frees it.
func (r *VirtualMemoryResource) mapChunk(h driver.Context, base driver.Deviceptr, a *vmAlloc, n int) error {
	prop := r.prop // a copy: cgo refuses a pointer into r
	mem, err := cuMemCreate(h, uint64(n), &prop, 0)
	if err != nil {
		return err
	}
	at := base + driver.Deviceptr(a.mapped)
	if err := cuMemMap(h, at, uint64(n), 0, mem, 0); err != nil {
		return errors.Join(err, cuMemRelease(h, mem))
	}
	if err := cuMemRelease(h, mem); err != nil {
		return errors.Join(err, cuMemUnmap(h, at, uint64(n)))
	}
	if err := cuMemSetAccess(h, at, uint64(n), &r.access[0], uint64(len(r.access))); err != nil {
		return errors.Join(err, cuMemUnmap(h, at, uint64(n)))
	}
	a.chunks = append(a.chunks, n)
	a.mapped += n
	return nil
}

// Grow maps more memory at the end of b, a Buffer of r, so that it holds
// newSize bytes (rounded up to the granularity), at the same address, and
// returns the larger Buffer, which takes b's place: b is closed without
// freeing anything (its later uses, and those of its views, return
// ErrClosed), and the new Buffer's Close frees all of it. Kernels queued
// or running on b's memory are not disturbed: the memory they use stays
// mapped, with its contents. The new part's contents are undefined.
//
// newSize may not be smaller than b's size, nor round up to more than the
// range reserved (Reserve). On an error b is unchanged and still open.
func (r *VirtualMemoryResource) Grow(b *Buffer, newSize int) (*Buffer, error) {
	switch {
	case b == nil:
		return nil, errors.New("core: VirtualMemoryResource.Grow: nil *Buffer")
	case b.mr != MemoryResource(r):
		if _, ok := b.mr.(*VirtualMemoryResource); ok {
			return nil, errors.New("core: VirtualMemoryResource.Grow: the buffer is of another VirtualMemoryResource")
		}
		return nil, fmt.Errorf("core: VirtualMemoryResource.Grow: the buffer is %T memory, not of this VirtualMemoryResource", b.mr)
	case b.parent != nil:
		return nil, errors.New("core: VirtualMemoryResource.Grow: a view cannot grow; grow its buffer")
	case newSize < b.size:
		return nil, fmt.Errorf("core: VirtualMemoryResource.Grow: cannot shrink a buffer of %d bytes to %d", b.size, newSize)
	}
	n, err := r.roundUp("VirtualMemoryResource.Grow", newSize)
	if err != nil {
		return nil, err
	}
	// Hold b while mapping, so that a concurrent Close waits for it.
	if !b.acquire() {
		return nil, ErrClosed
	}
	r.mu.Lock()
	a := r.allocs[b.ptr]
	r.mu.Unlock()
	if a == nil {
		b.release()
		return nil, fmt.Errorf("core: VirtualMemoryResource.Grow: no allocation at %#x", uint64(b.ptr))
	}
	if err := r.grow(b.ptr, a, n); err != nil {
		b.release()
		return nil, err
	}
	b.release()
	// Take b's place. If b was closed meanwhile, its Close freed what was
	// just mapped too.
	if !b.life.close() {
		return nil, ErrClosed
	}
	// b's finalizer, if it has one, sees it closed and frees nothing; its
	// OnFree functions move to the Buffer that now owns the memory.
	nb := NewBuffer(b.ptr, n, r, b.stream)
	hooksMu.Lock()
	nb.hooks, b.hooks = b.hooks, nil
	hooksMu.Unlock()
	return nb, nil
}

func (r *VirtualMemoryResource) grow(base driver.Deviceptr, a *vmAlloc, n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > a.reserve {
		return fmt.Errorf("core: VirtualMemoryResource.Grow: %d bytes are more than the %d reserved for the buffer (VirtualMemoryOptions.Reserve)", n, a.reserve)
	}
	if n <= a.mapped {
		return nil
	}
	h, err := r.dev.primary.acquire()
	if err != nil {
		return err
	}
	defer r.dev.primary.release()
	return r.mapChunk(h, base, a, n-a.mapped)
}

// Deallocate waits for stream (with none, for the device's primary
// context), then unmaps the allocation at ptr, which frees its memory,
// and frees its address range. Buffer.Close calls it.
func (r *VirtualMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	if ptr == 0 {
		return nil
	}
	r.mu.Lock()
	a := r.allocs[ptr]
	delete(r.allocs, ptr)
	r.mu.Unlock()
	if a == nil {
		return fmt.Errorf("core: VirtualMemoryResource.Deallocate: no allocation at %#x", uint64(ptr))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	h, err := r.dev.primary.acquire()
	if err != nil {
		return err
	}
	defer r.dev.primary.release()
	// Unmapping does not wait for the kernels that use the memory. A
	// failed wait means a failed context, whose work is over: unmap still.
	errs := []error{r.waitIdle(h, stream)}
	at := ptr
	for _, n := range a.chunks {
		errs = append(errs, cuMemUnmap(h, at, uint64(n)))
		at += driver.Deviceptr(n)
	}
	errs = append(errs, cuMemAddressFree(h, ptr, uint64(a.reserve)))
	return errors.Join(errs...)
}

// waitIdle waits for stream, or for the primary context h when there is
// no stream or it is closed.
func (r *VirtualMemoryResource) waitIdle(h driver.Context, stream *Stream) error {
	if stream != nil {
		err := stream.Sync()
		if err != ErrClosed {
			return err
		}
	}
	return cuCtxSynchronize(h)
}

func (r *VirtualMemoryResource) Device() *Device        { return r.dev }
func (r *VirtualMemoryResource) DeviceAccessible() bool { return true }
func (r *VirtualMemoryResource) HostAccessible() bool   { return false }
