package core

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/enum"
)

// Managed memory: advice, prefetches and discards of a Buffer of managed
// (unified) memory, as cuda.core's ManagedBuffer has them. The methods
// act on the buffer's range (a View's part only; the driver rounds it out
// to whole pages, so advice on a view may reach its neighbours' pages).
// They work on Buffers of a ManagedMemoryResource and on any other Buffer
// the driver says is managed (CU_POINTER_ATTRIBUTE_IS_MANAGED); on other
// memory they fail before the driver is asked to act.
//
// Advice (SetReadMostly, SetPreferredLocation, SetAccessedBy) and the
// queries (ReadMostly, PreferredLocation, AccessedBy,
// LastPrefetchLocation) run in the primary context of the buffer's
// device; prefetches and discards are queued on the stream they are given,
// in its context, whatever context is current on the calling thread.

// LocationKind says what a Location names.
type LocationKind uint8

const (
	// LocationNone is no location: the zero Location. It unsets a
	// preferred location, and is what the queries return when the range
	// has none, or its pages disagree.
	LocationNone LocationKind = iota
	// LocationDevice is a GPU's memory.
	LocationDevice
	// LocationHost is host memory, no NUMA node in particular.
	LocationHost
	// LocationHostNUMA is the memory of one host NUMA node.
	LocationHostNUMA
	// LocationHostNUMACurrent is the host NUMA node closest to the CPU of
	// the OS thread making the driver call. Go moves goroutines between
	// threads, so pin the goroutine (runtime.LockOSThread, with the
	// thread's CPU affinity set) for it to mean a particular node.
	LocationHostNUMACurrent
)

// String returns the kind's name: "device", "host", ...
func (k LocationKind) String() string {
	return enum.Name(k, "LocationKind", "none", "device", "host", "host NUMA node", "host NUMA node of the calling thread")
}

// Location is where managed memory is advised to live, is prefetched to
// or was last prefetched to: a device, the host, or a host NUMA node (the
// CUmemLocation of the driver). Make one with DeviceLocation,
// HostLocation, HostNUMALocation or HostNUMACurrentLocation; the zero
// Location is none. Locations compare with ==.
type Location struct {
	kind LocationKind
	dev  *Device
	numa int
}

// DeviceLocation is the memory of device d.
func DeviceLocation(d *Device) Location { return Location{kind: LocationDevice, dev: d} }

// HostLocation is host memory.
func HostLocation() Location { return Location{kind: LocationHost} }

// HostNUMALocation is the memory of host NUMA node node (as numactl -H
// numbers them; Device.Attribute(driver.DeviceAttributeHostNumaId) is the
// node closest to a device).
func HostNUMALocation(node int) Location { return Location{kind: LocationHostNUMA, numa: node} }

// HostNUMACurrentLocation is the host NUMA node closest to the calling
// thread's CPU (see LocationHostNUMACurrent).
func HostNUMACurrentLocation() Location { return Location{kind: LocationHostNUMACurrent} }

// Kind returns what l names.
func (l Location) Kind() LocationKind { return l.kind }

// Device returns the device of a device Location, else nil.
func (l Location) Device() *Device {
	if l.kind != LocationDevice {
		return nil
	}
	return l.dev
}

// NUMANode returns the node of a host NUMA node Location, else -1.
func (l Location) NUMANode() int {
	if l.kind != LocationHostNUMA {
		return -1
	}
	return l.numa
}

// String returns "device 0 (NVIDIA H100 80GB HBM3, sm_90)", "host",
// "host NUMA node 1", ...
func (l Location) String() string {
	switch l.kind {
	case LocationDevice:
		if l.dev == nil {
			return "device <nil>"
		}
		return l.dev.String()
	case LocationHostNUMA:
		return fmt.Sprintf("host NUMA node %d", l.numa)
	}
	return l.kind.String()
}

// Which kinds of Location an operation takes.
const (
	locAny    = 1<<LocationDevice | 1<<LocationHost | 1<<LocationHostNUMA | 1<<LocationHostNUMACurrent
	locAccess = 1<<LocationDevice | 1<<LocationHost // SET_ACCESSED_BY takes no NUMA node
)

// driverLoc checks l for operation op, which takes the kinds in the bit
// set kinds, and returns it as the driver's CUmemLocation.
func (l Location) driverLoc(op string, kinds int) (driver.MemLocation, error) {
	if kinds&(1<<l.kind) == 0 {
		var want []string
		for k := LocationNone; k <= LocationHostNUMACurrent; k++ {
			if kinds&(1<<k) != 0 {
				want = append(want, k.String())
			}
		}
		return driver.MemLocation{}, fmt.Errorf("core: %s: a location of kind %v cannot be used here (want %q)", op, l.kind, want)
	}
	switch l.kind {
	case LocationNone:
		return driver.MemLocation{Type: driver.MemLocationTypeInvalid}, nil
	case LocationDevice:
		if l.dev == nil {
			return driver.MemLocation{}, fmt.Errorf("core: %s: DeviceLocation(nil)", op)
		}
		return driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(l.dev.handle)}, nil
	case LocationHost:
		return driver.MemLocation{Type: driver.MemLocationTypeHost}, nil
	case LocationHostNUMA:
		if l.numa < 0 || l.numa > math.MaxInt32 {
			return driver.MemLocation{}, fmt.Errorf("core: %s: HostNUMALocation(%d): not a NUMA node number", op, l.numa)
		}
		return driver.MemLocation{Type: driver.MemLocationTypeHostNuma, Id: int32(l.numa)}, nil
	}
	return driver.MemLocation{Type: driver.MemLocationTypeHostNumaCurrent}, nil
}

// locationOf turns what the driver reports (a CUmemLocationType and an
// id) into a Location.
func locationOf(typ driver.MemLocationType, id int32) (Location, error) {
	switch typ {
	case driver.MemLocationTypeDevice:
		d, err := GetDevice(int(id))
		if err != nil {
			return Location{}, fmt.Errorf("core: the driver reported a location on device %d: %w", id, err)
		}
		return DeviceLocation(d), nil
	case driver.MemLocationTypeHost:
		return HostLocation(), nil
	case driver.MemLocationTypeHostNuma:
		return HostNUMALocation(int(id)), nil
	case driver.MemLocationTypeHostNumaCurrent:
		return HostNUMACurrentLocation(), nil
	}
	return Location{}, nil // CU_MEM_LOCATION_TYPE_INVALID: none, or pages that disagree
}

// deviceCPU is the host in CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY's list of
// device ids (CU_DEVICE_CPU); CU_DEVICE_INVALID (-2) fills the rest.
const deviceCPU = -1

// managedEntry returns why the driver lacks entry point name, a
// *driver.MissingFunctionError on a driver older than the call, or nil.
// It loads the table of entry points, which needs no device.
func managedEntry(name string) error {
	loadProcs()
	return driverTable.LoadErr(driverTable.Index(name))
}

// checkDevice refuses a nil or zero Buffer (no memory resource or device)
// before b.mr.Device() is used; checkManaged, which advise runs, asks the
// driver the rest, once.
func (b *Buffer) checkDevice(op string) error {
	if b == nil {
		return fmt.Errorf("core: %s: nil *Buffer", op)
	}
	if b.mr == nil || b.mr.Device() == nil {
		return fmt.Errorf("core: %s: a zero Buffer (no memory resource or device): allocate one from a ManagedMemoryResource", op)
	}
	return nil
}

// checkManaged returns an error unless b is an open buffer of managed
// memory. Buffers of a ManagedMemoryResource are; of another resource,
// the driver is asked (CU_POINTER_ATTRIBUTE_IS_MANAGED).
func (b *Buffer) checkManaged(op string) error {
	if b == nil {
		return fmt.Errorf("core: %s: nil *Buffer", op)
	}
	if b.closed() {
		return ErrClosed
	}
	if err := b.checkDevice(op); err != nil {
		return err
	}
	if _, ok := b.mr.(*ManagedMemoryResource); ok || b.size == 0 {
		return nil
	}
	dev := b.mr.Device()
	if dev == nil {
		return fmt.Errorf("core: %s: the buffer's %T has no device", op, b.mr)
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return err
	}
	defer dev.primary.release()
	var managed uint32
	if err := cuPointerGetAttribute(h, unsafe.Pointer(&managed), driver.PointerAttributeIsManaged, b.ptr); err != nil {
		return fmt.Errorf("core: %s: asking whether the buffer is managed memory: %w", op, err)
	}
	if managed == 0 {
		return fmt.Errorf("core: %s: the buffer's memory (%T) is not managed memory (allocate it from a ManagedMemoryResource)", op, b.mr)
	}
	return nil
}

// advise gives the driver one advice on b's range, in the primary context
// of b's device.
func (b *Buffer) advise(op string, advice driver.MemAdvice, loc Location, kinds int) error {
	ml, empty, err := b.managedTarget(op, loc, kinds)
	if err != nil || empty {
		return err
	}
	return b.inPrimary(func(h driver.Context) error {
		return cuMemAdvise(h, b.ptr, uint64(b.size), advice, ml)
	})
}

// managedTarget checks operation op on managed buffer b towards loc (one
// of kinds) and returns loc as the driver takes it; empty means that b
// has no bytes, and nothing is to be done.
func (b *Buffer) managedTarget(op string, loc Location, kinds int) (ml driver.MemLocation, empty bool, err error) {
	if ml, err = loc.driverLoc(op, kinds); err != nil {
		return ml, false, err
	}
	if err := b.checkManaged(op); err != nil {
		return ml, false, err
	}
	return ml, b.size == 0, nil
}

// inPrimary runs f with b held and the primary context of b's device.
func (b *Buffer) inPrimary(f func(h driver.Context) error) error {
	if !b.acquire() {
		return ErrClosed
	}
	defer b.release()
	if b.mr == nil || b.mr.Device() == nil {
		return errors.New("core: a zero Buffer (no memory resource or device)")
	}
	return b.mr.Device().primary.call(f)
}

// SetReadMostly advises the driver that b is mostly read
// (CU_MEM_ADVISE_SET_READ_MOSTLY): each processor that reads it gets a
// read-only copy of the pages it reads, and a write invalidates the other
// copies. SetReadMostly(false) undoes it (UNSET_READ_MOSTLY) and also
// stops the driver from read-duplicating on its own.
func (b *Buffer) SetReadMostly(on bool) error {
	if err := b.checkDevice("Buffer.SetReadMostly"); err != nil {
		return err
	}
	// The driver ignores the location of this advice, but driver 580
	// refuses an invalid one (CUDA_ERROR_INVALID_VALUE, seen on the
	// H100): pass b's device.
	loc := DeviceLocation(b.mr.Device())
	if on {
		return b.advise("Buffer.SetReadMostly", driver.MemAdviseSetReadMostly, loc, locAny)
	}
	return b.advise("Buffer.SetReadMostly", driver.MemAdviseUnsetReadMostly, loc, locAny)
}

// SetPreferredLocation advises the driver where b's pages should live
// (CU_MEM_ADVISE_SET_PREFERRED_LOCATION): a device, the host or a host
// NUMA node. It moves nothing by itself; it steers where faults migrate
// pages. The zero Location unsets it (UNSET_PREFERRED_LOCATION). A device
// must have Device.Attribute(driver.DeviceAttributeConcurrentManagedAccess)
// set, or the driver refuses.
func (b *Buffer) SetPreferredLocation(loc Location) error {
	if loc.kind == LocationNone {
		if err := b.checkDevice("Buffer.SetPreferredLocation"); err != nil {
			return err
		}
		// As SetReadMostly: a valid location the driver then ignores.
		return b.advise("Buffer.SetPreferredLocation", driver.MemAdviseUnsetPreferredLocation, DeviceLocation(b.mr.Device()), locAny)
	}
	return b.advise("Buffer.SetPreferredLocation", driver.MemAdviseSetPreferredLocation, loc, locAny)
}

// SetAccessedBy advises the driver that the device or the host at loc
// accesses b (CU_MEM_ADVISE_SET_ACCESSED_BY): its page tables keep a
// mapping of b's pages wherever they live, so its accesses do not fault;
// the data does not move. on false undoes it (UNSET_ACCESSED_BY). loc is
// a device or the host, not a NUMA node.
func (b *Buffer) SetAccessedBy(loc Location, on bool) error {
	if on {
		return b.advise("Buffer.SetAccessedBy", driver.MemAdviseSetAccessedBy, loc, locAccess)
	}
	return b.advise("Buffer.SetAccessedBy", driver.MemAdviseUnsetAccessedBy, loc, locAccess)
}

// rangeAttr reads one range attribute of b into data (size bytes).
func (b *Buffer) rangeAttr(op string, attr driver.MemRangeAttribute, data unsafe.Pointer, size int) error {
	if err := b.checkManaged(op); err != nil {
		return err
	}
	return b.inPrimary(func(h driver.Context) error {
		return cuMemRangeGetAttribute(h, data, uint64(size), attr, b.ptr, uint64(b.size))
	})
}

// rangeLocation reads a pair of range attributes, a location's type and
// id, into a Location.
func (b *Buffer) rangeLocation(op string, typeAttr, idAttr driver.MemRangeAttribute) (Location, error) {
	if b != nil && b.size == 0 && !b.closed() {
		return Location{}, nil
	}
	var typ driver.MemLocationType
	var id int32
	if err := b.rangeAttr(op, typeAttr, unsafe.Pointer(&typ), int(unsafe.Sizeof(typ))); err != nil {
		return Location{}, err
	}
	if typ == driver.MemLocationTypeDevice || typ == driver.MemLocationTypeHostNuma {
		if err := b.rangeAttr(op, idAttr, unsafe.Pointer(&id), 4); err != nil {
			return Location{}, err
		}
	}
	return locationOf(typ, id)
}

// ReadMostly reports whether every page of b has read duplication on
// (SetReadMostly), as the driver says (CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY).
func (b *Buffer) ReadMostly() (bool, error) {
	if b != nil && b.size == 0 && !b.closed() {
		return false, nil
	}
	var v int32
	if err := b.rangeAttr("Buffer.ReadMostly", driver.MemRangeAttributeReadMostly, unsafe.Pointer(&v), 4); err != nil {
		return false, err
	}
	return v != 0, nil
}

// PreferredLocation returns the preferred location of b's pages
// (CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE and _ID): the zero
// Location when they have none, or not all the same one. It is advice,
// not where the pages are now.
func (b *Buffer) PreferredLocation() (Location, error) {
	return b.rangeLocation("Buffer.PreferredLocation", driver.MemRangeAttributePreferredLocationType, driver.MemRangeAttributePreferredLocationId)
}

// LastPrefetchLocation returns where b was last prefetched to
// (CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE and _ID), as
// cuda.core's ManagedBuffer.last_prefetch_location: the zero Location when
// a page of b was never prefetched, or its pages were last prefetched to
// different places. It is the location asked for, not a sign that the
// prefetch has started or finished.
func (b *Buffer) LastPrefetchLocation() (Location, error) {
	return b.rangeLocation("Buffer.LastPrefetchLocation", driver.MemRangeAttributeLastPrefetchLocationType, driver.MemRangeAttributeLastPrefetchLocationId)
}

// AccessedBy returns the devices, and the host, that have SetAccessedBy
// on the whole of b (CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY), devices in
// ordinal order, the host last.
func (b *Buffer) AccessedBy() ([]Location, error) {
	if b != nil && b.size == 0 && !b.closed() {
		return nil, nil
	}
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	ids := make([]int32, n+1) // every device and the CPU
	if err := b.rangeAttr("Buffer.AccessedBy", driver.MemRangeAttributeAccessedBy, unsafe.Pointer(&ids[0]), 4*len(ids)); err != nil {
		return nil, err
	}
	var devs []Location
	host := false
	for _, id := range ids {
		switch {
		case id == deviceCPU:
			host = true
		case id >= 0:
			d, err := GetDevice(int(id))
			if err != nil {
				return nil, fmt.Errorf("core: Buffer.AccessedBy: the driver reported device %d: %w", id, err)
			}
			devs = append(devs, DeviceLocation(d))
		}
	}
	sortLocations(devs)
	if host {
		devs = append(devs, HostLocation())
	}
	return devs, nil
}

// sortLocations sorts device locations by ordinal (a few: insertion).
func sortLocations(l []Location) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].dev.ordinal < l[j-1].dev.ordinal; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// PrefetchAsync queues a prefetch of b to loc on stream
// (cuMemPrefetchAsync): its pages migrate there (or, for a read-mostly
// range, get a read-only copy there) in stream order, so a kernel queued
// after it on stream finds them in place instead of faulting them in.
// loc is a device, the host or a host NUMA node. A device must have
// Device.Attribute(driver.DeviceAttributeConcurrentManagedAccess) set, as
// must stream's device. The prefetch only moves data: every access is
// correct without it.
func (b *Buffer) PrefetchAsync(stream *Stream, loc Location) error {
	const op = "Buffer.PrefetchAsync"
	if stream == nil {
		return fmt.Errorf("core: %s: nil stream", op)
	}
	ml, empty, err := b.managedTarget(op, loc, locAny)
	if err != nil || empty {
		return err
	}
	if !b.acquire() {
		return ErrClosed
	}
	defer b.release()
	h, err := stream.acquire()
	if err != nil {
		return err
	}
	defer stream.release()
	return cuMemPrefetchAsync(h, b.ptr, uint64(b.size), ml, 0, stream.handle)
}

// DiscardAsync queues a discard of b on stream (cuMemDiscardBatchAsync):
// the driver may drop b's contents instead of migrating them, which saves
// the copies and frees memory under pressure. b reads back indeterminate
// until written or prefetched again. Nothing may read, write or prefetch
// b while the discard runs. It needs a CUDA 13.0 driver (an older one
// gives a *driver.MissingFunctionError) and a stream other than the
// legacy default stream, which the driver refuses.
func (b *Buffer) DiscardAsync(stream *Stream) error {
	return batch("Buffer.DiscardAsync", "cuMemDiscardBatchAsync", stream, []*Buffer{b}, nil, false)
}

// DiscardPrefetchAsync queues a discard of b followed by a prefetch to loc
// on stream (cuMemDiscardAndPrefetchBatchAsync): b's pages are made
// resident at loc without their old contents being moved, for memory about
// to be overwritten there. As DiscardAsync, it needs a CUDA 13.0 driver
// and a stream other than the legacy default stream.
func (b *Buffer) DiscardPrefetchAsync(stream *Stream, loc Location) error {
	return batch("Buffer.DiscardPrefetchAsync", "cuMemDiscardAndPrefetchBatchAsync", stream, []*Buffer{b}, []Location{loc}, true)
}

// PrefetchBatchAsync queues prefetches of managed buffers bufs on stream
// in one driver call (cuMemPrefetchBatchAsync, CUDA 13.0): to[i] is where
// bufs[i] goes, or to holds one location for all of them. The batch runs in
// stream order; its prefetches in any order among themselves. On a driver
// older than 13.0 it returns a *driver.MissingFunctionError (errors.As)
// and queues nothing: prefetch one by one with Buffer.PrefetchAsync
// there. The driver refuses the legacy default stream, and a batch where
// some device lacks DeviceAttributeConcurrentManagedAccess.
func PrefetchBatchAsync(stream *Stream, bufs []*Buffer, to []Location) error {
	return batch("PrefetchBatchAsync", "cuMemPrefetchBatchAsync", stream, bufs, to, true)
}

// DiscardBatchAsync queues discards of managed buffers bufs on stream in
// one driver call (cuMemDiscardBatchAsync, CUDA 13.0); see
// Buffer.DiscardAsync for what a discard is.
func DiscardBatchAsync(stream *Stream, bufs []*Buffer) error {
	return batch("DiscardBatchAsync", "cuMemDiscardBatchAsync", stream, bufs, nil, false)
}

// DiscardPrefetchBatchAsync queues, in one driver call
// (cuMemDiscardAndPrefetchBatchAsync, CUDA 13.0), a discard of each of
// bufs followed by its prefetch to to[i] (or to[0] for all); see
// Buffer.DiscardPrefetchAsync.
func DiscardPrefetchBatchAsync(stream *Stream, bufs []*Buffer, to []Location) error {
	return batch("DiscardPrefetchBatchAsync", "cuMemDiscardAndPrefetchBatchAsync", stream, bufs, to, true)
}

// batch checks and makes one of the batched calls: fn names it, and
// prefetch says whether it takes locations. A Buffer method (op
// "Buffer.X") passes one buffer and one location, which the errors do not
// number.
func batch(op, fn string, stream *Stream, bufs []*Buffer, to []Location, prefetch bool) error {
	what := func(thing string, i int) string {
		if strings.HasPrefix(op, "Buffer.") {
			return op
		}
		return fmt.Sprintf("%s: %s %d", op, thing, i)
	}
	if stream == nil {
		return fmt.Errorf("core: %s: nil stream", op)
	}
	if stream.handle == streamLegacy {
		return fmt.Errorf("core: %s: %s refuses the legacy default stream; use a stream of your own (NewStream)", op, fn)
	}
	if len(bufs) == 0 {
		return fmt.Errorf("core: %s: no buffers", op)
	}
	if prefetch && len(to) != 1 && len(to) != len(bufs) {
		return fmt.Errorf("core: %s: %d locations for %d buffers (want one for all, or one each)", op, len(to), len(bufs))
	}
	mls := make([]driver.MemLocation, len(to))
	for i, l := range to {
		var err error
		if mls[i], err = l.driverLoc(what("location", i), locAny); err != nil {
			return err
		}
	}
	for i, b := range bufs {
		if b == nil {
			return fmt.Errorf("core: %s: nil *Buffer", what("buffer", i))
		}
	}
	// An older driver lacks the call: say so before asking the driver
	// anything else.
	if err := managedEntry(fn); err != nil {
		return fmt.Errorf("core: %s: %w", op, err)
	}
	// The non-empty buffers, and their locations run-length encoded as
	// the driver takes them: locs[k] applies from range idxs[k] on.
	ptrs := make([]driver.Deviceptr, 0, len(bufs))
	sizes := make([]uint64, 0, len(bufs))
	var locs []driver.MemLocation
	var idxs []uint64
	for i, b := range bufs {
		if err := b.checkManaged(what("buffer", i)); err != nil {
			return err
		}
		if !b.acquire() {
			return ErrClosed
		}
		defer b.release()
		if b.size == 0 {
			continue
		}
		if prefetch {
			ml := mls[0]
			if len(mls) > 1 {
				ml = mls[i]
			}
			if len(locs) == 0 || ml != locs[len(locs)-1] {
				locs = append(locs, ml)
				idxs = append(idxs, uint64(len(ptrs)))
			}
		}
		ptrs = append(ptrs, b.ptr)
		sizes = append(sizes, uint64(b.size))
	}
	if len(ptrs) == 0 {
		return nil
	}
	h, err := stream.acquire()
	if err != nil {
		return err
	}
	defer stream.release()
	n := uint64(len(ptrs))
	switch fn {
	case "cuMemPrefetchBatchAsync":
		return cuMemPrefetchBatchAsync(h, &ptrs[0], &sizes[0], n, &locs[0], &idxs[0], uint64(len(locs)), 0, stream.handle)
	case "cuMemDiscardBatchAsync":
		return cuMemDiscardBatchAsync(h, &ptrs[0], &sizes[0], n, 0, stream.handle)
	case "cuMemDiscardAndPrefetchBatchAsync":
		return cuMemDiscardAndPrefetchBatchAsync(h, &ptrs[0], &sizes[0], n, &locs[0], &idxs[0], uint64(len(locs)), 0, stream.handle)
	}
	return errors.New("core: batch: unknown call " + fn)
}
