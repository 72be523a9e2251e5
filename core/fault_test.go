package core

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// Fault tests: out of device memory, kernels that trap or read out of
// bounds (in a child process: they break the context for good), a missing
// library and a library too old for a function.

// childEnv selects the role of a re-executed test binary.
const childEnv = "CUDAGO_RELIABILITY_CHILD"

// runChild re-runs this test binary with only TestReliabilityChild and
// childEnv=role, and returns its combined output and error.
func runChild(t *testing.T, role string, env ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestReliabilityChild$", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child %s: %v\n%s", role, err, out)
	return string(out), err
}

// TestReliabilityChild is the child side of runChild; it does nothing in
// a normal run.
func TestReliabilityChild(t *testing.T) {
	switch role := os.Getenv(childEnv); role {
	case "":
		t.Skip("only run as a child of the fault tests")
	case "trap", "oob":
		faultChild(t, role)
	case "load-damaged":
		loadDamagedChild(t)
	case "reset-healthy":
		dev := requireGPU(t)
		code := mustCompile(t, mustProgram(t, faultSource, "c++", &ProgramOptions{Arch: "sm_" + dev.Arch()}), "cubin")
		defer code.Close()
		b, err := dev.Allocate(1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		// A staged copy before the reset allocates pinned staging
		// buffers in the primary context, which the reset frees.
		stagedRoundTrip(t, dev)
		if err := dev.Sync(); err != nil {
			t.Fatal(err)
		}
		// A pool block kept for reuse dies with the context: the reset
		// forgets it.
		kept, err := dev.Allocate(1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept.Close()
		if k := dev.PrimaryContext().pool.len(); k != 1 {
			t.Fatalf("%d pool blocks kept before the reset, want 1", k)
		}
		if err := dev.ResetPrimaryContext(); err != nil {
			t.Fatalf("ResetPrimaryContext of a healthy device: %v", err)
		}
		if k := dev.PrimaryContext().pool.len(); k != 0 {
			t.Fatalf("%d pool blocks kept after the reset, want 0", k)
		}
		recoverCheck(t, dev, code)
		stagedRoundTrip(t, dev) // new staging buffers, in the new context
	case "missing-lib":
		_, err := NewProgram(seedNVVMIR, "nvvm", nil)
		fmt.Printf("missing-lib-result: %v\n", err)
		var nf *pathfinder.NotFoundError
		if errors.As(err, &nf) {
			fmt.Printf("not-found: lib=%v tried=%d\n", nf.Lib, len(nf.Tried))
		}
	default:
		t.Fatalf("unknown child role %q", role)
	}
}

const faultSource = `
extern "C" __global__ void trapper(int *p) { if (threadIdx.x == 0) p[0] = 1; __trap(); }
extern "C" __global__ void wild(const int *p, int *out) { out[threadIdx.x] = p[(1LL << 40) + threadIdx.x]; }
extern "C" __global__ void inc(int *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }
`

// faultChild launches a trapping or out-of-bounds kernel, checks that the
// error is reported and sticks, resets the primary context and checks that
// allocation and launches work again. It prints one marker per step.
func faultChild(t *testing.T, role string) {
	dev := requireGPU(t)
	code := mustCompile(t, mustProgram(t, faultSource, "c++", &ProgramOptions{Name: "fault.cu", Arch: "sm_" + dev.Arch()}), "cubin")
	defer code.Close()
	buf, err := NewLegacyMemoryResource(dev).Allocate(1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := dev.DefaultStream()
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(32)}
	var k *Kernel
	if role == "trap" {
		k, _ = code.Kernel("trapper")
		err = Launch(s, cfg, k, buf)
	} else {
		k, _ = code.Kernel("wild")
		err = Launch(s, cfg, k, buf, buf)
	}
	if err == nil {
		err = s.Sync()
	}
	fmt.Printf("fault-error: %v\n", err)
	want := map[string][]error{
		"trap": {driver.ErrorLaunchFailed, driver.ErrorIllegalInstruction, driver.ErrorAssert},
		"oob":  {driver.ErrorIllegalAddress, driver.ErrorLaunchFailed},
	}[role]
	ok := false
	for _, w := range want {
		ok = ok || errors.Is(err, w)
	}
	if !ok {
		t.Fatalf("the fault gave %v, want one of %v", err, want)
	}
	if !IsSticky(err) {
		t.Errorf("IsSticky(%v) = false", err)
	}
	// The error is sticky: the context is unusable.
	_, err2 := NewLegacyMemoryResource(dev).Allocate(1024, nil)
	err3 := dev.Sync()
	fmt.Printf("sticky: alloc=%v sync=%v\n", err2, err3)
	if err2 == nil && err3 == nil {
		t.Error("the context still works after the fault")
	}
	buf.Close() // fails (the context is gone); must not crash

	// Recover: reset the primary context. It either works or says that
	// only a new process can use the device.
	if err := dev.ResetPrimaryContext(); err != nil {
		fmt.Printf("unrecoverable: %v\n", err)
		if !strings.Contains(err.Error(), "new process") {
			t.Errorf("ResetPrimaryContext error %v does not say how to recover", err)
		}
		return
	}
	recoverCheck(t, dev, code)
}

// recoverCheck allocates from both device resources, launches a fresh and
// an old kernel and checks the results, after ResetPrimaryContext.
func recoverCheck(t *testing.T, dev *Device, code *ObjectCode) {
	s := dev.DefaultStream()
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(32)}
	const n = 1000
	for _, mr := range []MemoryResource{NewLegacyMemoryResource(dev), dev.MemoryResource()} {
		b, err := mr.Allocate(n*4, nil)
		if err != nil {
			t.Fatalf("%T.Allocate after the reset: %v", mr, err)
		}
		if err := b.Memset32(41); err != nil {
			t.Fatal(err)
		}
		inc, err := code.Kernel("inc") // the library reloads into the new context
		if err != nil {
			t.Fatal(err)
		}
		if err := Launch(s, LaunchConfig{Grid: Dim(4), Block: Dim(256)}, inc, b, int32(n)); err != nil {
			t.Fatalf("Launch after the reset: %v", err)
		}
		got := make([]int32, n)
		if err := CopyFromDevice(got, b); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != 42 {
				t.Fatalf("after the reset, p[%d] = %d, want 42", i, v)
			}
		}
		b.Close()
	}
	// Kernels loaded before the reset, through a fresh ObjectCode too.
	ks := kernelsFor(t, dev)
	if err := Launch(s, cfg, ks["noargs"]); err != nil {
		t.Fatalf("Launch of an old kernel after the reset: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("recovered: allocations and launches work after ResetPrimaryContext")
}

func testFaultChild(t *testing.T, role string) {
	requireGPU(t)
	out, err := runChild(t, role)
	if err != nil {
		t.Fatalf("child failed: %v", err)
	}
	for _, m := range []string{"fault-error: ", "sticky: "} {
		if !strings.Contains(out, m) {
			t.Errorf("child output lacks %q", m)
		}
	}
	switch {
	case strings.Contains(out, "recovered: "):
		t.Log("ResetPrimaryContext recovered the device")
	case strings.Contains(out, "unrecoverable: "):
		t.Log("KNOWN DRIVER BEHAVIOUR: the error outlives ResetPrimaryContext; ResetPrimaryContext says so and a new process is the recovery")
	default:
		t.Error("child output says neither recovered nor unrecoverable")
	}
	// The parent's context is untouched.
	dev := requireGPU(t)
	b, err := dev.Allocate(64, nil)
	if err != nil {
		t.Fatalf("parent Allocate after the child's fault: %v", err)
	}
	b.Close()
}

// TestGPUResetPrimaryContext resets a healthy device's primary context in
// a child process, then allocates and launches.
func TestGPUResetPrimaryContext(t *testing.T) {
	requireGPU(t)
	out, err := runChild(t, "reset-healthy")
	if err != nil || !strings.Contains(out, "recovered: ") {
		t.Fatalf("child: %v", err)
	}
}

// TestGPUFaultTrap runs a kernel that calls __trap() in a child process.
func TestGPUFaultTrap(t *testing.T) { testFaultChild(t, "trap") }

// TestGPUFaultIllegalAddress runs a kernel that reads 4 TiB past its
// buffer in a child process.
func TestGPUFaultIllegalAddress(t *testing.T) { testFaultChild(t, "oob") }

// TestGPUFaultOutOfMemory allocates 1 GiB chunks of plain device memory
// until the device is full, from cuMemAlloc and from the stream-ordered
// pool, checks the error, frees everything and allocates again.
func TestGPUFaultOutOfMemory(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	dev := requireGPU(t)
	const chunk = 1 << 30
	for _, mr := range []MemoryResource{NewLegacyMemoryResource(dev), NewDeviceMemoryResource(dev)} {
		t.Run(fmt.Sprintf("%T", mr), func(t *testing.T) {
			free0, total, err := dev.MemoryInfo()
			if err != nil {
				t.Fatal(err)
			}
			var bufs []*Buffer
			defer func() {
				for _, b := range bufs {
					b.Close()
				}
			}()
			max := int(total/chunk) + 2
			var oom error
			for range max {
				b, err := mr.Allocate(chunk, nil)
				if err != nil {
					oom = err
					break
				}
				bufs = append(bufs, b)
			}
			t.Logf("allocated %d GiB of %d GiB (free %d GiB) before: %v", len(bufs), total>>30, free0>>30, oom)
			if oom == nil {
				t.Fatalf("%d GiB allocations did not fail", max)
			}
			if !errors.Is(oom, driver.ErrorOutOfMemory) {
				t.Errorf("error %v does not match driver.ErrorOutOfMemory", oom)
			}
			// The process goes on: small allocations and kernels still
			// work while the device is full, up to what is left.
			for _, b := range bufs {
				if err := b.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
			bufs = nil
			if err := dev.Sync(); err != nil {
				t.Fatal(err)
			}
			b, err := mr.Allocate(chunk, nil)
			if err != nil {
				t.Fatalf("Allocate after freeing: %v", err)
			}
			bufs = append(bufs, b)
			if err := b.Memset8(7); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReliabilityMissingLibrary loads NVVM in a child process whose
// search finds nothing: the error is a *pathfinder.NotFoundError listing
// every place tried.
func TestReliabilityMissingLibrary(t *testing.T) {
	out, err := runChild(t, "missing-lib",
		"CUDAGO_LOCAL_CUDA=/nonexistent/cudago-test", "CUDA_HOME=", "CUDA_PATH=", "LD_LIBRARY_PATH=", "CUDAGO_NVVM_PATH=",
		"CUDAGO_PYTHON_SITE=off", "CONDA_PREFIX=", "VIRTUAL_ENV=") // no wheel or conda copy either
	if err != nil {
		t.Fatalf("child failed: %v", err)
	}
	if strings.Contains(out, "missing-lib-result: <nil>") {
		t.Skip("NVVM is installed system-wide here: nothing is missing")
	}
	if !strings.Contains(out, "not-found: lib=") {
		t.Fatalf("the error is not a *pathfinder.NotFoundError:\n%s", out)
	}
	for _, w := range []string{"CUDA_HOME", "local", "/usr/local/cuda"} {
		if !strings.Contains(out, w) {
			t.Errorf("the error does not list the place %q", w)
		}
	}
}

// TestReliabilityMissingFunction calls a function the loaded library is
// too old for (nvFatbinAddReloc needs nvFatbin 13.0; the local install is
// 12.4): the error is a *MissingFunctionError naming the version needed.
func TestReliabilityMissingFunction(t *testing.T) {
	major, _, err := nvfatbin.Version()
	if err != nil {
		t.Skip(err)
	}
	if major >= 13 {
		t.Skipf("nvFatbin %d has every function", major)
	}
	b, err := NewFatbinBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for name, err := range map[string]error{
		"AddReloc":  b.AddReloc(hostELF()),
		"AddTileIR": b.AddTileIR([]byte("tile"), "t", ""),
	} {
		var mf *nvfatbin.MissingFunctionError
		if !errors.As(err, &mf) {
			t.Errorf("%s: error %T %v, want *nvfatbin.MissingFunctionError", name, err, err)
			continue
		}
		if mf.Need == "" || !strings.Contains(err.Error(), mf.Need) {
			t.Errorf("%s: %v does not say which version is needed (%+v)", name, err, mf)
		}
	}
}

// stagedRoundTrip copies 32 MiB of Go memory (the staged path) to the
// device and back and checks it.
func stagedRoundTrip(t *testing.T, dev *Device) {
	t.Helper()
	const n = 32 << 20
	buf := try(dev.Allocate(n, nil)).must(t)
	defer buf.Close()
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>12)
	}
	if err := CopyToDevice(buf, src); err != nil {
		t.Fatal(err)
	}
	wantSlice(t, "staged round trip", readBack[byte](t, buf, n), src)
}
