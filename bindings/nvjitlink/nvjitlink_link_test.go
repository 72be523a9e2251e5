package nvjitlink_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
)

const moduleA = `
extern __device__ float helper(float);
extern "C" __global__ void k(float* x){ x[threadIdx.x] = helper(x[threadIdx.x]); }
`

const moduleB = `
__device__ float helper(float v){ return v*2.0f+1.0f; }
`

// ltoir compiles CUDA C++ to LTO-IR with NVRTC.
func ltoir(t *testing.T, src, name string) []byte {
	t.Helper()
	p, err := nvrtc.CreateProgram(src, name, 0, nil, nil)
	if err != nil {
		t.Fatalf("nvrtc.CreateProgram: %v", err)
	}
	defer nvrtc.DestroyProgram(&p)
	opts := []string{"-dlto", "-rdc=true", "-arch=sm_90"}
	if err := nvrtc.CompileProgram(p, int32(len(opts)), opts); err != nil {
		t.Fatalf("nvrtc.CompileProgram(%s): %v", name, err)
	}
	b, err := nvrtc.LTOIR(p)
	if err != nil || len(b) == 0 {
		t.Fatalf("nvrtc.LTOIR(%s) = %d bytes, %v", name, len(b), err)
	}
	return b
}

type input struct {
	typ  nvjitlink.InputType
	data []byte
	name string
}

// link runs one nvJitLink session and returns the linked CUBIN, or the
// error of Complete.
func link(t *testing.T, opts []string, inputs ...input) ([]byte, error) {
	t.Helper()
	// nvJitLink 12.4 handles are bound to their OS thread: a session whose
	// calls hop between threads (as goroutines do between cgo calls)
	// corrupts the library's heap (SIGSEGV, SIGABRT in pthread_mutex_lock,
	// or NVJITLINK_ERROR_INVALID_INPUT in a later session). Hold the
	// thread for the whole session.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := nvjitlink.Create(uint32(len(opts)), opts)
	if err != nil {
		t.Fatalf("Create(%v): %v", opts, err)
	}
	defer func() {
		if err := nvjitlink.Destroy(&h); err != nil {
			t.Errorf("Destroy: %v", err)
		}
		if h != 0 {
			t.Errorf("Destroy left the handle %#x", h)
		}
	}()
	for _, in := range inputs {
		if err := nvjitlink.AddData(h, in.typ, unsafe.Pointer(&in.data[0]), uint64(len(in.data)), in.name); err != nil {
			t.Fatalf("AddData(%s): %v", in.name, err)
		}
	}
	if err := nvjitlink.Complete(h); err != nil {
		return nil, err
	}
	cubin, err := nvjitlink.LinkedCubin(h)
	if err != nil {
		t.Fatalf("LinkedCubin: %v", err)
	}
	return cubin, nil
}

func TestLinkLTOIR(t *testing.T) {
	a, b := ltoir(t, moduleA, "a.cu"), ltoir(t, moduleB, "b.cu")
	cubin, err := link(t, []string{"-arch=sm_90", "-lto"},
		input{nvjitlink.InputLtoir, a, "a.ltoir"}, input{nvjitlink.InputLtoir, b, "b.ltoir"})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	f, sm := testenv.CubinELF(t, cubin)
	if sm != 90 {
		t.Errorf("linked CUBIN is for sm_%d, want sm_90", sm)
	}
	if !testenv.HasFunc(t, f, "k") {
		t.Error("linked CUBIN has no function symbol k")
	}
	if f.Section(".text.k") == nil {
		t.Error("linked CUBIN has no .text.k")
	}
}

func TestLinkUnresolvedHelper(t *testing.T) {
	a := ltoir(t, moduleA, "a.cu")
	_, err := link(t, []string{"-arch=sm_90", "-lto"}, input{nvjitlink.InputLtoir, a, "a.ltoir"})
	if err == nil {
		t.Fatal("module A linked alone, with helper undefined")
	}
	var e *nvjitlink.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not *nvjitlink.Error: %v", err, err)
	}
	// LTO turns module A into PTX, and ptxas then finds helper undefined.
	if !errors.Is(err, nvjitlink.ErrorPtxCompile) || e.Code != nvjitlink.ErrorPtxCompile {
		t.Errorf("code %v, want NVJITLINK_ERROR_PTX_COMPILE", e.Code)
	}
	if e.Func != "nvJitLinkComplete" {
		t.Errorf("Func = %q, want nvJitLinkComplete", e.Func)
	}
	// helper is a C++ function: the log names it mangled, _Z6helperf.
	if !strings.Contains(e.Log, "Unresolved extern function '_Z6helperf'") {
		t.Errorf("Log does not report helper unresolved: %q", e.Log)
	}
	if !strings.Contains(err.Error(), e.Log) {
		t.Errorf("message %q lacks the log", err.Error())
	}
}

// seedPTX returns a PTX module of the seed's "NVJitLink Module Linking"
// example, linked for sm_80: its two modules differ only in the kernel's
// name, kernel_part1 and kernel_part2.
func seedPTX(kernel string) []byte {
	return []byte(strings.ReplaceAll(`
.version 7.0
.target sm_70
.address_size 64
.visible .entry KERNEL(.param .u64 KERNEL_param_0) {
.reg .u64 %rd<2>;
ld.param.u64 %rd1, [KERNEL_param_0];
// Kernel implementation...
ret;
}
`, "KERNEL", kernel))
}

func TestLinkSeedPTX(t *testing.T) {
	// The seed also passes "-optimize", which nvJitLink does not know.
	h, err := nvjitlink.Create(2, []string{"-arch=sm_80", "-optimize"})
	if !errors.Is(err, nvjitlink.ErrorUnrecognizedOption) {
		t.Errorf("Create with -optimize: %v, want NVJITLINK_ERROR_UNRECOGNIZED_OPTION", err)
	}
	if err == nil {
		nvjitlink.Destroy(&h)
	}
	cubin, err := link(t, []string{"-arch=sm_80"},
		input{nvjitlink.InputPtx, seedPTX("kernel_part1"), "module1.ptx"},
		input{nvjitlink.InputPtx, seedPTX("kernel_part2"), "module2.ptx"})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	f, sm := testenv.CubinELF(t, cubin)
	if sm != 80 {
		t.Errorf("linked CUBIN is for sm_%d, want sm_80", sm)
	}
	for _, k := range []string{"kernel_part1", "kernel_part2"} {
		if !testenv.HasFunc(t, f, k) {
			t.Errorf("linked CUBIN has no function symbol %s", k)
		}
	}
}

func TestVersion(t *testing.T) {
	bindtest.AtLeast(t, "nvJitLink", nvjitlink.Version, 12, 0)
}
