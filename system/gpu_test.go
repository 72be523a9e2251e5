package system

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// gpu0 returns GPU 0, skipping the test without a driver and a GPU (and
// failing it instead when CUDAGO_REQUIRE_GPU=1). It asks NVML only.
func gpu0(t *testing.T) *Device {
	t.Helper()
	n, err := DeviceCount()
	if err == nil && n == 0 {
		err = errors.New("NVML sees no GPU")
	}
	if err != nil {
		if testenv.OnGPUMachine() {
			t.Fatalf("CUDAGO_REQUIRE_GPU=1 but: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	d, err := GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGPUQueries: every query on GPU 0 returns sane values.
func TestGPUQueries(t *testing.T) {
	d := gpu0(t)
	dv, err := DriverVersion()
	if err != nil || !regexp.MustCompile(`^\d{3}\.\d+(\.\d+)?$`).MatchString(dv) {
		t.Errorf("DriverVersion() = %q, %v", dv, err)
	}
	// pathfinder reads the same version from NVML's file name.
	if lib, err := pathfinder.Load(pathfinder.NVML); err != nil {
		t.Error(err)
	} else if v, err := lib.Version(); err != nil || v != dv {
		t.Errorf("pathfinder says NVML %q (%v), NVML says driver %q", v, err, dv)
	}
	if nv, err := NVMLVersion(); err != nil || !strings.HasSuffix(nv, "."+dv) {
		t.Errorf("NVMLVersion() = %q, %v; want <API>.%s", nv, err, dv)
	}
	if cv, err := CUDADriverVersion(); err != nil || !regexp.MustCompile(`^1\d\.\d+$`).MatchString(cv) {
		t.Errorf("CUDADriverVersion() = %q, %v", cv, err)
	}
	branch, err := DriverBranch()
	if err != nil && !errors.Is(err, ErrNotSupported) || err == nil && branch == "" {
		t.Errorf("DriverBranch() = %q, %v", branch, err)
	}
	t.Logf("driver %s, branch %q (%v)", dv, branch, err)

	name, err := d.Name()
	if err != nil || name == "" {
		t.Errorf("Name() = %q, %v", name, err)
	}
	if !regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(d.UUID()) {
		t.Errorf("UUID() = %q", d.UUID())
	}
	bus, err := d.PCIBusID()
	if err != nil || !regexp.MustCompile(`^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$`).MatchString(bus) {
		t.Errorf("PCIBusID() = %q, %v", bus, err)
	}
	m, err := d.MemoryInfo()
	if err != nil || m.Total < 1<<30 || m.Free > m.Total || m.Used > m.Total || m.Reserved >= m.Total {
		t.Errorf("MemoryInfo() = %+v, %v", m, err)
	}
	temp, err := d.Temperature()
	if err != nil || temp < 1 || temp > 120 {
		t.Errorf("Temperature() = %d C, %v", temp, err)
	}
	limit, err := d.PowerLimit()
	if err != nil || limit == 0 {
		t.Errorf("PowerLimit() = %d mW, %v", limit, err)
	}
	usage, err := d.PowerUsage()
	if err != nil && !errors.Is(err, ErrNotSupported) || err == nil && (usage == 0 || usage > 2*limit) {
		t.Errorf("PowerUsage() = %d mW, %v (limit %d mW)", usage, err, limit)
	}
	for _, c := range []ClockDomain{ClockSM, ClockMemory} {
		cur, err1 := d.Clock(c)
		max, err2 := d.MaxClock(c)
		if err1 != nil || err2 != nil || max <= 0 || cur > max {
			t.Errorf("%s clock %d MHz (%v), max %d MHz (%v)", c, cur, err1, max, err2)
		}
	}
	u, err := d.Utilization()
	if err != nil || u.GPU < 0 || u.GPU > 100 || u.Memory < 0 || u.Memory > 100 {
		t.Errorf("Utilization() = %+v, %v", u, err)
	}
	s, err := d.Status()
	if err != nil || s.Name != name || s.UUID != d.UUID() || s.PCIBusID != bus || s.Memory.Total != m.Total || s.PowerLimit != limit {
		t.Errorf("Status() = %+v, %v", s, err)
	}
	for field, err := range s.Errs {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("Status: %s: %v", field, err)
		}
	}
	t.Logf("%s %s %s: %d C, %.0f/%.0f W, %d/%d MiB (%d MiB reserved), SM %d/%d MHz, mem %d/%d MHz, %d%%",
		name, d.UUID(), bus, s.Temperature, s.PowerUsage.Watts(), s.PowerLimit.Watts(), s.Memory.Used>>20, s.Memory.Total>>20,
		s.Memory.Reserved>>20, s.SMClock, s.MaxSMClock, s.MemoryClock, s.MaxMemoryClock, s.Utilization.GPU)

	// The same GPU by its UUID and by its bus id.
	for _, get := range []func() (*Device, error){
		func() (*Device, error) { return DeviceByUUID(d.UUID()) },
		func() (*Device, error) { return DeviceByUUID(strings.TrimPrefix(d.UUID(), "GPU-")) },
		func() (*Device, error) { return DeviceByPCIBusID(bus) },
		func() (*Device, error) { return DeviceByPCIBusID(bus[4:]) }, // CUDA's 4-digit domain
	} {
		if e, err := get(); err != nil || e.UUID() != d.UUID() || e.Index() != 0 {
			t.Errorf("lookup of GPU 0 = %v, %v", e, err)
		}
	}
}

// TestGPUP2PAndTopology: P2P and the topology of GPU 0 with itself, and
// with GPU 1 where there is one (the common ancestor is symmetric).
func TestGPUP2PAndTopology(t *testing.T) {
	d := gpu0(t)
	for _, c := range []P2PCapability{P2PRead, P2PWrite, P2PNVLink, P2PAtomics} {
		st, err := P2P(d, d, c)
		if err != nil || strings.HasPrefix(st.String(), "P2PStatus(") {
			t.Errorf("P2P(0, 0, %s) = %v, %v", c, st, err)
		}
		t.Logf("P2P %s with itself: %s", c, st)
	}
	l, err := TopologyCommonAncestor(d, d)
	switch {
	case errors.Is(err, ErrNotSupported):
		// The 580 driver's NVML answers NOT_SUPPORTED for a GPU with itself.
		t.Logf("TopologyCommonAncestor(0, 0): %v", err)
	case err != nil || strings.HasPrefix(l.String(), "TopologyLevel("):
		t.Errorf("TopologyCommonAncestor(0, 0) = %v, %v", l, err)
	}
	t.Logf("common ancestor of GPU 0 and itself: %s", l)
	if n, _ := DeviceCount(); n > 1 {
		e, err := GetDevice(1)
		if err != nil {
			t.Fatal(err)
		}
		ab, err1 := TopologyCommonAncestor(d, e)
		ba, err2 := TopologyCommonAncestor(e, d)
		if err1 != nil || err2 != nil || ab != ba || ab < l {
			t.Errorf("TopologyCommonAncestor(0, 1) = %v (%v), (1, 0) = %v (%v), (0, 0) = %v", ab, err1, ba, err2, l)
		}
		for _, c := range []P2PCapability{P2PRead, P2PWrite, P2PNVLink, P2PAtomics} {
			st, err := P2P(d, e, c)
			t.Logf("P2P %s GPU 0 -> 1: %s (%v); topology %s", c, st, err, ab)
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// TestGPUInitShutdown: references count, the last Shutdown shuts NVML
// down, and a Device got before works in the next initialization.
func TestGPUInitShutdown(t *testing.T) {
	d := gpu0(t)
	for range 2 {
		if err := Init(); err != nil {
			t.Fatal(err)
		}
	}
	if err := Shutdown(); err != nil {
		t.Fatal(err)
	}
	state.mu.RLock()
	up, gen := state.up, state.gen
	state.mu.RUnlock()
	if !up {
		t.Fatal("NVML shut down with a reference left")
	}
	if err := Shutdown(); err != nil {
		t.Fatal(err)
	}
	state.mu.RLock()
	up, gen2 := state.up, state.gen
	state.mu.RUnlock()
	if up || gen2 != gen+1 {
		t.Fatalf("after the last Shutdown: up %v, generation %d -> %d", up, gen, gen2)
	}
	if name, err := d.Name(); err != nil || name == "" {
		t.Errorf("Name() after Shutdown = %q, %v", name, err)
	}
	if d.gen != gen2 {
		t.Errorf("the device's handle is of generation %d, want %d", d.gen, gen2)
	}
}

// TestGPUMatchesCore compares NVML's view with package core's for each
// CUDA device, found by UUID and by PCI bus id. It uses core, so cuInit,
// in this process: the no-context check runs in a child process of its
// own (TestGPUNoContext).
func TestGPUMatchesCore(t *testing.T) {
	gpu0(t)
	n, err := core.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cd, err := core.GetDevice(i)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DeviceByUUID(cd.UUID())
		if err != nil {
			t.Fatalf("core device %d (%s): %v", i, cd.UUID(), err)
		}
		if strings.TrimPrefix(d.UUID(), "GPU-") != cd.UUID() {
			t.Errorf("core device %d: UUID %s, NVML %s", i, cd.UUID(), d.UUID())
		}
		if e, err := DeviceByPCIBusID(cd.PCIBusID()); err != nil || e.UUID() != d.UUID() {
			t.Errorf("core device %d at %s: NVML finds %v, %v", i, cd.PCIBusID(), e, err)
		}
		name, err := d.Name()
		if err != nil || name != cd.Name() {
			t.Errorf("core device %d: name %q, NVML %q (%v)", i, cd.Name(), name, err)
		}
		// NVML counts the memory on the board; cuDeviceTotalMem leaves out
		// what the driver and firmware reserve (some hundred MiB).
		m, err := d.MemoryInfo()
		total := cd.TotalMemory()
		if err != nil || total > m.Total || m.Total-total > m.Total/20 {
			t.Errorf("core device %d: cuDeviceTotalMem %d, NVML total %d (%v)", i, total, m.Total, err)
		}
		t.Logf("GPU %d = core device %d (%s): cuDeviceTotalMem %d, NVML total %d, reserved %d, total-reserved %d",
			d.Index(), i, name, total, m.Total, m.Reserved, m.Total-m.Reserved)
	}
}
