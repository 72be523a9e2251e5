package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// fakeManaged returns a buffer of a ManagedMemoryResource of a device that
// is not there (ordinal 7), with a stream of its own (not the legacy one),
// for the checks made before any driver call. Its primary context can be
// asked for (it fails without a GPU), so closing the buffer is harmless.
func fakeManaged(t *testing.T, sizes ...int) ([]*Buffer, *Stream) {
	t.Helper()
	d := &Device{ordinal: 7, handle: 7, name: "fake"}
	d.primary = newPrimaryContext(d)
	mr := NewManagedMemoryResource(d)
	var bufs []*Buffer
	for i, n := range sizes {
		b := NewBuffer(driver.Deviceptr(0x10000*(i+1)), n, mr, nil)
		bufs = append(bufs, b)
		t.Cleanup(func() { b.Close() }) // fails to free (no such device): not checked
	}
	return bufs, &Stream{handle: 0x5150, ctx: d.primary}
}

func TestLocation(t *testing.T) {
	d := &Device{ordinal: 3, handle: 3, name: "X", major: 9}
	for _, c := range []struct {
		l    Location
		kind LocationKind
		dev  *Device
		numa int
		str  string
	}{
		{Location{}, LocationNone, nil, -1, "none"},
		{DeviceLocation(d), LocationDevice, d, -1, "device 3 (X, sm_90)"},
		{HostLocation(), LocationHost, nil, -1, "host"},
		{HostNUMALocation(1), LocationHostNUMA, nil, 1, "host NUMA node 1"},
		{HostNUMACurrentLocation(), LocationHostNUMACurrent, nil, -1, "host NUMA node of the calling thread"},
	} {
		if c.l.Kind() != c.kind || c.l.Device() != c.dev || c.l.NUMANode() != c.numa || c.l.String() != c.str {
			t.Errorf("%v: Kind %v Device %v NUMANode %d String %q; want %v %v %d %q",
				c.l, c.l.Kind(), c.l.Device(), c.l.NUMANode(), c.l.String(), c.kind, c.dev, c.numa, c.str)
		}
	}
	if DeviceLocation(d) != DeviceLocation(d) || HostNUMALocation(0) == HostNUMALocation(1) || HostLocation() == (Location{}) {
		t.Error("Locations do not compare as values")
	}
	for _, c := range []struct {
		l    Location
		want driver.MemLocation
	}{
		{DeviceLocation(d), driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: 3}},
		{HostLocation(), driver.MemLocation{Type: driver.MemLocationTypeHost}},
		{HostNUMALocation(2), driver.MemLocation{Type: driver.MemLocationTypeHostNuma, Id: 2}},
		{HostNUMACurrentLocation(), driver.MemLocation{Type: driver.MemLocationTypeHostNumaCurrent}},
	} {
		got, err := c.l.driverLoc("op", locAny)
		if err != nil || got != c.want {
			t.Errorf("%v as a CUmemLocation = %+v, %v; want %+v", c.l, got, err, c.want)
		}
		back, err := locationOf(got.Type, got.Id)
		if c.l.kind != LocationDevice && (err != nil || back != c.l) {
			t.Errorf("%v back from the driver's form = %v, %v", c.l, back, err)
		}
	}
	if l, err := locationOf(driver.MemLocationTypeInvalid, 5); err != nil || l != (Location{}) {
		t.Errorf("CU_MEM_LOCATION_TYPE_INVALID = %v, %v; want the zero Location", l, err)
	}
}

// Every bad argument is refused before the driver is called: without a
// GPU, a driver call would fail with CUDA_ERROR_NO_DEVICE instead of the
// message checked here.
func TestManagedChecks(t *testing.T) {
	bufs, s := fakeManaged(t, 4096, 8192, 0)
	b := bufs[0]
	legacy := &Stream{handle: streamLegacy, ctx: s.ctx}
	dev := b.Device()
	var nilBuf *Buffer
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil buffer", nilBuf.SetReadMostly(true), "Buffer.SetReadMostly: nil *Buffer"},
		{"nil buffer query", func() error { _, err := nilBuf.LastPrefetchLocation(); return err }(), "Buffer.LastPrefetchLocation: nil *Buffer"},
		{"nil stream", b.PrefetchAsync(nil, HostLocation()), "Buffer.PrefetchAsync: nil stream"},
		{"prefetch nowhere", b.PrefetchAsync(s, Location{}), `Buffer.PrefetchAsync: a location of kind none cannot be used here (want ["device" "host" "host NUMA node" "host NUMA node of the calling thread"])`},
		{"nil device", b.PrefetchAsync(s, DeviceLocation(nil)), "Buffer.PrefetchAsync: DeviceLocation(nil)"},
		{"negative NUMA node", b.SetPreferredLocation(HostNUMALocation(-1)), "Buffer.SetPreferredLocation: HostNUMALocation(-1): not a NUMA node number"},
		{"accessed by a NUMA node", b.SetAccessedBy(HostNUMALocation(0), true), `Buffer.SetAccessedBy: a location of kind host NUMA node cannot be used here (want ["device" "host"])`},
		{"accessed by nobody", b.SetAccessedBy(Location{}, false), "Buffer.SetAccessedBy: a location of kind none"},
		{"discard on the legacy stream", b.DiscardAsync(legacy), "Buffer.DiscardAsync: cuMemDiscardBatchAsync refuses the legacy default stream"},
		{"discard without a stream", b.DiscardAsync(nil), "Buffer.DiscardAsync: nil stream"},
		{"discard-prefetch nowhere", b.DiscardPrefetchAsync(s, Location{}), "Buffer.DiscardPrefetchAsync: a location of kind none"},
		{"batch of none", PrefetchBatchAsync(s, nil, []Location{HostLocation()}), "PrefetchBatchAsync: no buffers"},
		{"batch: locations", PrefetchBatchAsync(s, bufs, []Location{HostLocation(), HostLocation()}), "PrefetchBatchAsync: 2 locations for 3 buffers (want one for all, or one each)"},
		{"batch: no location", PrefetchBatchAsync(s, bufs, nil), "PrefetchBatchAsync: 0 locations for 3 buffers"},
		{"batch: bad location", DiscardPrefetchBatchAsync(s, bufs, []Location{HostLocation(), DeviceLocation(dev), HostNUMALocation(-2)}), "DiscardPrefetchBatchAsync: location 2: HostNUMALocation(-2)"},
		{"batch: nil buffer", DiscardBatchAsync(s, []*Buffer{b, nil}), "DiscardBatchAsync: buffer 1: nil *Buffer"},
		{"batch: legacy stream", PrefetchBatchAsync(legacy, bufs, []Location{HostLocation()}), "PrefetchBatchAsync: cuMemPrefetchBatchAsync refuses the legacy default stream; use a stream of your own (NewStream)"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), "core: "+c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, c.err, "core: "+c.want)
		}
	}

	// An empty buffer has nothing to advise, prefetch or report.
	empty := bufs[2]
	if err := errors.Join(empty.SetReadMostly(true), empty.PrefetchAsync(s, HostLocation()), empty.SetAccessedBy(HostLocation(), true)); err != nil {
		t.Errorf("advice and prefetch of an empty buffer: %v", err)
	}
	if l, err := empty.LastPrefetchLocation(); err != nil || l != (Location{}) {
		t.Errorf("LastPrefetchLocation of an empty buffer = %v, %v", l, err)
	}

	// A closed buffer: ErrClosed, before the driver.
	c, _ := fakeManaged(t, 64)
	c[0].Close()
	for name, err := range map[string]error{
		"SetReadMostly": c[0].SetReadMostly(true),
		"PrefetchAsync": c[0].PrefetchAsync(s, HostLocation()),
		"ReadMostly":    func() error { _, err := c[0].ReadMostly(); return err }(),
	} {
		if err != ErrClosed {
			t.Errorf("%s of a closed buffer: %v, want ErrClosed", name, err)
		}
	}
}

// The batched calls came with CUDA 13.0. With an older libcuda (CI's 12.4
// userland) they fail with a *driver.MissingFunctionError naming the call
// and both versions, before anything else is asked of the driver; with a
// newer one they are resolved. Either way no GPU is needed.
func TestManagedBatchNeeds130(t *testing.T) {
	v, err := driver.DriverGetVersion()
	if err != nil {
		t.Skipf("no libcuda to load: %v", err)
	}
	bufs, s := fakeManaged(t, 4096, 4096)
	calls := []struct {
		fn  string
		run func() error
	}{
		{"cuMemPrefetchBatchAsync", func() error { return PrefetchBatchAsync(s, bufs, []Location{HostLocation()}) }},
		{"cuMemDiscardBatchAsync", func() error { return DiscardBatchAsync(s, bufs) }},
		{"cuMemDiscardAndPrefetchBatchAsync", func() error { return bufs[0].DiscardPrefetchAsync(s, HostLocation()) }},
		{"cuMemDiscardBatchAsync", func() error { return bufs[1].DiscardAsync(s) }},
	}
	if v >= 13000 {
		for _, c := range calls {
			if err := managedEntry(c.fn); err != nil {
				t.Errorf("a CUDA %d driver lacks %s: %v", v, c.fn, err)
			}
		}
		t.Skipf("the driver (CUDA %d) has the batched calls: the GPU tests use them", v)
	}
	have := fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	for _, c := range calls {
		err := c.run()
		var m *driver.MissingFunctionError
		if !errors.As(err, &m) {
			t.Errorf("%s on a CUDA %s driver: %v (%T), want a *driver.MissingFunctionError", c.fn, have, err, err)
			continue
		}
		if m.Func != c.fn || m.Need != "13.0" || m.Have != have {
			t.Errorf("%s: MissingFunctionError Func %q Need %q Have %q; want %s, 13.0, %s", c.fn, m.Func, m.Need, m.Have, c.fn, have)
		}
		t.Log(err)
	}
	// The single-range calls are older and resolved.
	for _, fn := range []string{"cuMemAdvise", "cuMemPrefetchAsync", "cuMemRangeGetAttribute"} {
		if err := managedEntry(fn); err != nil {
			t.Errorf("%s on a CUDA %s driver: %v", fn, have, err)
		}
	}
}
