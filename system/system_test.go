package system

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvml"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// haveDriver reports whether NVML initializes here (an NVIDIA driver is
// loaded), asking NVML only: testenv.GPUError would call cuInit.
func haveDriver(t *testing.T) bool {
	t.Helper()
	if _, err := pathfinder.Load(pathfinder.NVML); err != nil {
		if testenv.OnGPUMachine() {
			t.Fatalf("no NVML on the GPU machine: %v", err)
		}
		t.Fatalf("NVML: %v (run scripts/setup-cuda.sh, which installs Debian's libnvidia-ml1)", err)
	}
	_, err := DeviceCount()
	return err == nil
}

// TestWithoutDriver: without an NVIDIA driver (CI: Debian's libnvidia-ml1
// and no kernel module) every query fails cleanly with
// NVML_ERROR_DRIVER_NOT_LOADED and NVML's message, Init takes no
// reference, and Shutdown does nothing.
func TestWithoutDriver(t *testing.T) {
	if haveDriver(t) {
		t.Skip("an NVIDIA driver is loaded here")
	}
	if testenv.OnGPUMachine() {
		t.Fatal("CUDAGO_REQUIRE_GPU=1 but NVML sees no driver")
	}
	const cause = "initializing NVML: nvml: nvmlInit: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded)"
	_, err := DeviceCount()
	if err == nil || err.Error() != "system: DeviceCount: "+cause {
		t.Fatalf("DeviceCount() error = %v", err)
	}
	var e *nvml.Error
	if !errors.Is(err, ErrDriverNotLoaded) || !errors.As(err, &e) || e.Message != "Driver Not Loaded" || e.Func != "nvmlInit" {
		t.Errorf("DeviceCount() error %v does not match ErrDriverNotLoaded with NVML's message", err)
	}
	if errors.Is(err, ErrNotSupported) {
		t.Error("a missing driver matches ErrNotSupported")
	}
	for name, f := range map[string]func() error{
		"DriverVersion":     func() error { _, err := DriverVersion(); return err },
		"NVMLVersion":       func() error { _, err := NVMLVersion(); return err },
		"CUDADriverVersion": func() error { _, err := CUDADriverVersion(); return err },
		"GetDevice(0)":      func() error { _, err := GetDevice(0); return err },
		"Devices":           func() error { _, err := Devices(); return err },
		"DeviceByUUID(GPU-00000000-0000-0000-0000-000000000000)": func() error {
			_, err := DeviceByUUID("GPU-00000000-0000-0000-0000-000000000000")
			return err
		},
		"DeviceByPCIBusID(0000:01:00.0)": func() error { _, err := DeviceByPCIBusID("0000:01:00.0"); return err },
		"Init":                           Init,
	} {
		err := f()
		want := "system: " + name + ": " + cause
		if name == "Devices" {
			want = "system: DeviceCount: " + cause
		}
		if err == nil || err.Error() != want || !errors.Is(err, ErrDriverNotLoaded) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// Debian's 550 NVML has no branch query: not supported, driver or not.
	branch, err := DriverBranch()
	var missing *nvml.MissingFunctionError
	if lib, _ := pathfinder.Load(pathfinder.NVML); lib != nil && lib.Found == "local install" &&
		(!errors.Is(err, ErrNotSupported) || !errors.As(err, &missing) || missing.Need != "560" || branch != "") {
		t.Errorf("DriverBranch() with the local 550 NVML = %q, %v; want ErrNotSupported naming 560", branch, err)
	} else if err != nil && !errors.Is(err, ErrNotSupported) && !errors.Is(err, ErrDriverNotLoaded) {
		t.Errorf("DriverBranch() = %q, %v", branch, err)
	}
	t.Logf("DriverBranch: %v", err)
	state.mu.Lock()
	refs, up := state.refs, state.up
	state.mu.Unlock()
	if refs != 0 || up {
		t.Errorf("after failed Inits: refs %d, up %v", refs, up)
	}
	if err := Shutdown(); err != nil {
		t.Errorf("Shutdown without NVML: %v", err)
	}
	// A Device from elsewhere fails the same way, per query.
	d := &Device{index: 3, uuid: "GPU-x"}
	if _, err := d.Temperature(); err == nil || err.Error() != "system: GPU 3: Temperature: "+cause {
		t.Errorf("Temperature: %v", err)
	}
	if _, err := d.Status(); err == nil || err.Error() != "system: GPU 3: Status: "+cause {
		t.Errorf("Status: %v", err)
	}
	if _, err := TopologyCommonAncestor(d, d); err == nil || err.Error() != "system: TopologyCommonAncestor(GPU 3, GPU 3): "+cause {
		t.Errorf("TopologyCommonAncestor: %v", err)
	}
}

// TestBadArguments: what is refused before NVML is asked.
func TestBadArguments(t *testing.T) {
	d := &Device{index: 0, uuid: "GPU-x"}
	for name, err := range map[string]error{
		"P2P(nil)":         func() error { _, err := P2P(nil, d, P2PRead); return err }(),
		"P2P(capability)":  func() error { _, err := P2P(d, d, P2PCapability(9)); return err }(),
		"Topology(nil)":    func() error { _, err := TopologyCommonAncestor(d, nil); return err }(),
		"Clock(9)":         func() error { _, err := d.Clock(ClockDomain(9)); return err }(),
		"MaxClock(-1)":     func() error { _, err := d.MaxClock(ClockDomain(-1)); return err }(),
		"DeviceByUUID()":   func() error { _, err := DeviceByUUID(""); return err }(),
		"DeviceByPCIBusID": func() error { _, err := DeviceByPCIBusID(""); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "system: ") || errors.Is(err, ErrDriverNotLoaded) {
			t.Errorf("%s: %v, want a system: error without asking NVML", name, err)
		}
	}
	if haveDriver(t) {
		n, _ := DeviceCount()
		for _, i := range []int{-1, n} {
			if _, err := GetDevice(i); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("no GPU %d: NVML sees %d", i, n)) {
				t.Errorf("GetDevice(%d) = %v", i, err)
			}
		}
	}
}

// TestValues checks the package's constants against NVML's and its names.
func TestValues(t *testing.T) {
	if branchInfoVersion != 0x1000054 { // nvmlSystemDriverBranchInfo_v1 in NVIDIA's nvml.h of 560
		t.Errorf("branchInfoVersion = %#x", branchInfoVersion)
	}
	if nvml.NvmlMemoryV2 != 0x2000028 {
		t.Errorf("nvmlMemory_v2 = %#x", nvml.NvmlMemoryV2)
	}
	got := fmt.Sprint(TopologyInternal, TopologySingle, TopologyMultiple, TopologyHostBridge, TopologyNode, TopologySystem, TopologyLevel(60))
	if got != "BOARD PIX PXB PHB NODE SYS TopologyLevel(60)" || TopologySystem != 50 {
		t.Errorf("topology levels: %s", got)
	}
	got = fmt.Sprint(P2POK, P2PNotSupported, P2PStatus(7), P2PRead, P2PAtomics, ClockSM, ClockMemory)
	if got != "OK not supported P2PStatus(7) read atomics SM memory" || !P2POK.OK() || P2PUnknown.OK() || P2PAtomics != 3 {
		t.Errorf("names: %s", got)
	}
	if w := Milliwatts(70500).Watts(); w != 70.5 {
		t.Errorf("Watts = %v", w)
	}
	if !errors.Is(&nvml.Error{Code: nvml.ErrorNotSupported}, ErrNotSupported) {
		t.Error("NVML_ERROR_NOT_SUPPORTED does not match ErrNotSupported")
	}
}

// TestConcurrent runs queries, Init and Shutdown from many goroutines at
// once (for -race), and checks that balanced Init and Shutdown leave no
// reference behind.
func TestConcurrent(t *testing.T) {
	driverHere := haveDriver(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				switch (g + i) % 3 {
				case 0:
					if _, err := DeviceCount(); (err == nil) != driverHere {
						errs <- fmt.Errorf("DeviceCount: %v", err)
					}
				case 1:
					if err := Init(); err == nil {
						if err := Shutdown(); err != nil {
							errs <- err
						}
					} else if driverHere {
						errs <- err
					}
				case 2:
					if err := Shutdown(); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.refs != 0 {
		t.Errorf("%d references left", state.refs)
	}
}

const childEnv = "CUDAGO_SYSTEM_NOCONTEXT_CHILD"

// TestGPUNoContext proves that package system takes no CUDA context: in a
// fresh process (this test binary again, running only
// TestNoContextChild), every query but CUDADriverVersion leaves libcuda
// unmapped, and after CUDADriverVersion (for which NVML may load it)
// cuInit has not been called: cuDeviceGetCount says
// CUDA_ERROR_NOT_INITIALIZED. It runs without a GPU too (every query then
// fails); its name puts it in the GPU runs (-test.run GPU).
func TestGPUNoContext(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoContextChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "nocontext: ok") {
		t.Fatalf("child process: %v", err)
	}
}

// TestNoContextChild is TestGPUNoContext's child process.
func TestNoContextChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs as TestGPUNoContext's child process")
	}
	if lib := libcudaMapped(t); lib != "" {
		t.Fatalf("libcuda is mapped before any query (%s): the check would prove nothing", lib)
	}
	gpus, first := queryAll(t)
	v, err := CUDADriverVersion()
	fmt.Printf("nocontext: %d GPUs queried; CUDADriverVersion = %q, %v\n", gpus, v, err)
	if lib := libcudaMapped(t); lib != "" {
		// NVML itself may load libcuda (the 580 driver's does, in
		// nvmlInit): what must not happen is cuInit, which is what takes
		// a context. Uninitialized, the driver says so to any call.
		l, err := pathfinder.Load(pathfinder.Driver)
		if err != nil {
			t.Fatal(err)
		}
		_, err = driver.DeviceGetCount()
		fmt.Printf("nocontext: libcuda mapped (%s, %s) after %s; cuDeviceGetCount: %v\n", lib, l.Found, first, err)
		if !errors.Is(err, driver.ErrorNotInitialized) {
			t.Fatalf("cuDeviceGetCount after the queries = %v, want CUDA_ERROR_NOT_INITIALIZED: cuInit was called", err)
		}
	} else {
		fmt.Println("nocontext: libcuda not mapped")
	}
	if !t.Failed() {
		fmt.Println("nocontext: ok")
	}
}

// queryAll calls every query of the package on every GPU (and their
// pairs), checking that they succeed where a driver is loaded; it returns
// the number of GPUs and the first query after which libcuda was mapped.
func queryAll(t *testing.T) (int, string) {
	first := ""
	must := func(what string, err error) {
		if err != nil && !errors.Is(err, ErrNotSupported) && (haveDriverNoInit() || testenv.OnGPUMachine()) {
			t.Errorf("%s: %v", what, err)
		}
		if first == "" && libcudaMapped(t) != "" {
			first = what
		}
	}
	_, err := DriverVersion()
	must("DriverVersion", err)
	_, err = NVMLVersion()
	must("NVMLVersion", err)
	_, err = DriverBranch()
	must("DriverBranch", err)
	devs, err := Devices()
	must("Devices", err)
	for _, d := range devs {
		_, err = d.Name()
		must("Name", err)
		id, err := d.PCIBusID()
		must("PCIBusID", err)
		_, err = d.MemoryInfo()
		must("MemoryInfo", err)
		_, err = d.Temperature()
		must("Temperature", err)
		_, err = d.PowerUsage()
		must("PowerUsage", err)
		_, err = d.PowerLimit()
		must("PowerLimit", err)
		for _, c := range []ClockDomain{ClockSM, ClockMemory} {
			_, err = d.Clock(c)
			must("Clock", err)
			_, err = d.MaxClock(c)
			must("MaxClock", err)
		}
		_, err = d.Utilization()
		must("Utilization", err)
		_, err = d.Status()
		must("Status", err)
		_, err = DeviceByUUID(d.UUID())
		must("DeviceByUUID", err)
		_, err = DeviceByPCIBusID(id)
		must("DeviceByPCIBusID", err)
		for _, e := range devs {
			for _, c := range []P2PCapability{P2PRead, P2PWrite, P2PNVLink, P2PAtomics} {
				_, err = P2P(d, e, c)
				must("P2P", err)
			}
			_, err = TopologyCommonAncestor(d, e)
			must("TopologyCommonAncestor", err)
		}
	}
	// A Shutdown and a new initialization in between.
	must("Shutdown", Shutdown())
	if len(devs) > 0 {
		_, err = devs[0].Name()
		must("Name after Shutdown", err)
	}
	if (haveDriverNoInit() || testenv.OnGPUMachine()) && len(devs) == 0 {
		t.Error("a driver, but no GPU")
	}
	return len(devs), first
}

// haveDriverNoInit is haveDriver for queryAll, which has no *testing.T to fail.
func haveDriverNoInit() bool {
	_, err := DeviceCount()
	return err == nil
}

// TestLibcudaMapped checks the check: once libcuda is loaded (here, in
// this process, without cuInit), libcudaMapped sees it.
func TestLibcudaMapped(t *testing.T) {
	lib, err := pathfinder.Load(pathfinder.Driver)
	if err != nil {
		t.Fatalf("libcuda: %v (run scripts/setup-cuda.sh)", err)
	}
	if got := libcudaMapped(t); got == "" {
		t.Fatalf("%s is loaded, but not found in /proc/self/maps", lib.Path)
	}
}

// libcudaMapped returns the file of /proc/self/maps that is libcuda, or "".
func libcudaMapped(t *testing.T) string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "/libcuda.so") {
			fields := strings.Fields(sc.Text())
			return fields[len(fields)-1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ""
}
