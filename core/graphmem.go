package core

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// GraphMemoryResource allocates graph memory: memory that belongs to the
// launches of a graph, from the device's graph memory pool, which CUDA
// keeps apart from the stream-ordered pools (cuda.core's
// GraphMemoryResource). Allocate works only on a stream that is capturing
// a graph, where cuMemAllocAsync becomes an allocation node: the memory
// exists from that point of each launch of the graph on, at the same
// address every time. Close a Buffer of it during the capture to free it
// in the graph (a free node); otherwise the graph leaves it allocated,
// for stream work after the launch, until its Close (cuMemFreeAsync on its
// stream, after the launch), a Free node of another graph, or the next
// launch of an executable graph made with AutoFreeOnLaunch. A graph that
// leaves memory allocated cannot be launched again before it is freed.
//
// Unlike other Buffers, a forgotten one is not freed by a finalizer: the
// memory may be in use by a launch, or not exist yet. (A
// DeviceMemoryResource allocation during a capture is an allocation node
// too, from the same pool; GraphMemoryResource makes the intent explicit
// and refuses streams that are not capturing.) Graph.Alloc nodes give
// Buffers of this resource as well.
//
// Trim gives the pool's unused memory back to the system, and Info reads
// how much is used and reserved. A GraphMemoryResource holds no driver
// object and needs no Close.
type GraphMemoryResource struct{ dev *Device }

var errNoGraphDevice = errors.New("core: GraphMemoryResource: nil, or made with a nil *Device")

// NewGraphMemoryResource returns the graph memory resource of dev.
func NewGraphMemoryResource(dev *Device) *GraphMemoryResource {
	return &GraphMemoryResource{dev: dev}
}

// Allocate allocates size bytes of graph memory in the graph that stream
// is capturing; a stream that is not capturing is an error.
func (r *GraphMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if r == nil || r.dev == nil {
		return nil, errNoGraphDevice
	}
	if stream == nil {
		return nil, fmt.Errorf("core: GraphMemoryResource.Allocate: nil stream: graph memory is allocated on a stream that captures a graph")
	}
	s, err := checkAlloc("GraphMemoryResource", r.dev, size, stream)
	if err != nil {
		return nil, err
	}
	h, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.release()
	st, err := cuStreamIsCapturing(h, s.handle)
	if err != nil {
		return nil, err
	}
	if st != driver.StreamCaptureStatusActive {
		return nil, fmt.Errorf("core: GraphMemoryResource.Allocate: %v is not capturing a graph (%v): graph memory is allocated on a stream that captures one, or with Graph.Alloc", s, st)
	}
	if size == 0 {
		return &Buffer{mr: r, stream: s}, nil
	}
	p, err := cuMemAllocAsync(h, uint64(size), s.handle)
	if err != nil {
		return nil, err
	}
	return &Buffer{ptr: p, size: size, mr: r, stream: s}, nil // no finalizer, see above
}

// Deallocate frees graph memory ordered on stream (nil or closed: the
// legacy default stream) with cuMemFreeAsync: a free node while stream
// captures, otherwise a free of what a launch left allocated.
func (r *GraphMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	if r == nil || r.dev == nil {
		return errNoGraphDevice
	}
	return freeAsync(r.dev, ptr, stream, false)
}

func (r *GraphMemoryResource) Device() *Device        { return r.dev }
func (r *GraphMemoryResource) DeviceAccessible() bool { return true }
func (r *GraphMemoryResource) HostAccessible() bool   { return false }

// Trim gives the memory of the device's graph pool that no graph uses now
// (launched or queued) back to the system (cuDeviceGraphMemTrim).
func (r *GraphMemoryResource) Trim() error {
	return r.inPrimary(func(h driver.Context) error {
		return cuDeviceGraphMemTrim(h, r.dev.handle)
	})
}

// inPrimary calls f in the primary context of r's device.
func (r *GraphMemoryResource) inPrimary(f func(h driver.Context) error) error {
	if r == nil || r.dev == nil {
		return errNoGraphDevice
	}
	return r.dev.primary.call(f)
}

// GraphMemoryInfo is the state of a device's graph memory pool
// (cuDeviceGetGraphMemAttribute), in bytes.
type GraphMemoryInfo struct {
	Used         uint64 // in use by graphs now
	UsedHigh     uint64 // the most in use since the last ResetHigh
	Reserved     uint64 // held by the pool now
	ReservedHigh uint64 // the most held since the last ResetHigh
}

// Info reads the state of the device's graph memory pool.
func (r *GraphMemoryResource) Info() (GraphMemoryInfo, error) {
	var info GraphMemoryInfo
	err := r.inPrimary(func(h driver.Context) error {
		for _, a := range []struct {
			attr driver.GraphMemAttribute
			v    *uint64
		}{
			{driver.GraphMemAttrUsedMemCurrent, &info.Used},
			{driver.GraphMemAttrUsedMemHigh, &info.UsedHigh},
			{driver.GraphMemAttrReservedMemCurrent, &info.Reserved},
			{driver.GraphMemAttrReservedMemHigh, &info.ReservedHigh},
		} {
			if err := cuDeviceGetGraphMemAttribute(h, r.dev.handle, a.attr, unsafe.Pointer(a.v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return GraphMemoryInfo{}, err
	}
	return info, nil
}

// ResetHigh resets the high watermarks of Info to the current values.
func (r *GraphMemoryResource) ResetHigh() error {
	return r.inPrimary(func(h driver.Context) error {
		for _, attr := range []driver.GraphMemAttribute{driver.GraphMemAttrUsedMemHigh, driver.GraphMemAttrReservedMemHigh} {
			var zero uint64 // the only value CUDA accepts
			if err := cuDeviceSetGraphMemAttribute(h, r.dev.handle, attr, unsafe.Pointer(&zero)); err != nil {
				return err
			}
		}
		return nil
	})
}
