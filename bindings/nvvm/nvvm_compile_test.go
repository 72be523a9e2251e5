package nvvm_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// program creates an NVVM program holding ir, on a held OS thread, and
// destroys it when the test ends.
func program(t *testing.T, ir, name string) nvvm.Program {
	t.Helper()
	runtime.LockOSThread()
	p, err := nvvm.CreateProgram()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("CreateProgram: %v", err)
	}
	if p == 0 {
		t.Fatal("CreateProgram gave a nil program")
	}
	t.Cleanup(func() {
		defer runtime.UnlockOSThread()
		if err := nvvm.DestroyProgram(&p); err != nil {
			t.Errorf("DestroyProgram: %v", err)
		}
	})
	if err := nvvm.AddModuleToProgram(p, ir, uint64(len(ir)), name); err != nil {
		t.Fatalf("AddModuleToProgram: %v", err)
	}
	return p
}

// seedMetadata returns what the seed's IR lacks for NVVM: the IR version
// (!nvvmir.version, from IRVersion) and the kernel annotation, without
// which simple_kernel would be a device function (.func), not an entry.
func seedMetadata(t *testing.T) string {
	t.Helper()
	major, minor, _, _, err := nvvm.IRVersion()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
!nvvmir.version = !{!0}
!0 = !{i32 %d, i32 %d}
!nvvm.annotations = !{!1}
!1 = !{void (float*, float*, i32)* @simple_kernel, !"kernel", i32 1}
`, major, minor)
}

func TestCompileSimpleKernel(t *testing.T) {
	p := program(t, testenv.SeedNVVMKernel+seedMetadata(t), "simple_kernel.ll")
	// The seed's options. libNVVM 13 dropped compute_70 (its oldest is
	// compute_75): there, and only when it says so, use that instead.
	opts, target := []string{"-arch=compute_70", "-opt=3"}, ".target sm_70"
	err := nvvm.CompileProgram(p, int32(len(opts)), opts)
	var e *nvvm.Error
	if errors.Is(err, nvvm.ErrorInvalidOption) && errors.As(err, &e) && strings.Contains(e.Log, "-arch=compute_70 is an unsupported option") {
		t.Logf("this libNVVM lacks compute_70 (%q): compiling for compute_75", e.Log)
		p = program(t, testenv.SeedNVVMKernel+seedMetadata(t), "simple_kernel.ll")
		opts, target = []string{"-arch=compute_75", "-opt=3"}, ".target sm_75"
		err = nvvm.CompileProgram(p, int32(len(opts)), opts)
	}
	if err != nil {
		t.Fatalf("CompileProgram(%v): %v", opts, err)
	}
	ptx, err := nvvm.CompiledResult(p)
	if err != nil {
		t.Fatalf("CompiledResult: %v", err)
	}
	for _, want := range []string{".visible .entry simple_kernel(", target, ".address_size 64", "st.global.f32"} {
		if !bytes.Contains(ptx, []byte(want)) {
			t.Errorf("PTX lacks %q:\n%s", want, ptx)
		}
	}
	if bytes.IndexByte(ptx, 0) >= 0 {
		t.Error("PTX holds a NUL byte")
	}
}

// The seed's IR, verbatim, has no !nvvmir.version: NVVM takes it for IR 1.0
// and refuses it.
func TestSeedIRWithoutVersion(t *testing.T) {
	p := program(t, testenv.SeedNVVMKernel, "simple_kernel.ll")
	err := nvvm.CompileProgram(p, 2, []string{"-arch=compute_75", "-opt=3"})
	if !errors.Is(err, nvvm.ErrorIrVersionMismatch) {
		t.Fatalf("CompileProgram of the seed IR: %v, want NVVM_ERROR_IR_VERSION_MISMATCH", err)
	}
	var e *nvvm.Error
	if errors.As(err, &e) && !strings.Contains(e.Log, "incompatible") {
		t.Errorf("Log %q does not explain the mismatch", e.Log)
	}
	// With the version added, it compiles (TestCompileSimpleKernel), yet
	// the verifier refuses its datalayout, which lacks i128:128:128.
	p = program(t, testenv.SeedNVVMKernel+seedMetadata(t), "simple_kernel.ll")
	err = nvvm.VerifyProgram(p, 1, []string{"-arch=compute_75"})
	if !errors.Is(err, nvvm.ErrorInvalidIr) || !errors.As(err, &e) || !dataLayoutError(e.Log) {
		t.Errorf("VerifyProgram of the seed IR: %v, want NVVM_ERROR_INVALID_IR for its data layout", err)
	}
}

// dataLayoutError says whether log reports a bad datalayout: NVVM 12 says
// "Invalid data layout", NVVM 13 "DataLayoutError".
func dataLayoutError(log string) bool {
	l := strings.ToLower(log)
	return strings.Contains(l, "invalid data layout") || strings.Contains(l, "datalayouterror")
}

func TestIRVersion(t *testing.T) {
	majorIR, minorIR, majorDbg, minorDbg, err := nvvm.IRVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVVM IR %d.%d, debug %d.%d", majorIR, minorIR, majorDbg, minorDbg)
	if majorIR < 1 || majorDbg < 1 {
		t.Errorf("IRVersion = %d.%d (debug %d.%d), want majors >= 1", majorIR, minorIR, majorDbg, minorDbg)
	}
	bindtest.AtLeast(t, "NVVM", nvvm.Version, 1, 0)
}

func TestInvalidIR(t *testing.T) {
	const bad = "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @broken( {\n  ret void\n"
	for _, c := range []struct {
		verify bool
		code   nvvm.Result
		fn     string
	}{
		// nvvmVerifyProgram reports bad IR as such; nvvmCompileProgram
		// reports the same failure as a compilation error.
		{true, nvvm.ErrorInvalidIr, "nvvmVerifyProgram"},
		{false, nvvm.ErrorCompilation, "nvvmCompileProgram"},
	} {
		p := program(t, bad, "broken.ll")
		var err error
		if c.verify {
			err = nvvm.VerifyProgram(p, 1, []string{"-arch=compute_75"})
		} else {
			err = nvvm.CompileProgram(p, 1, []string{"-arch=compute_75"})
		}
		if err == nil {
			t.Fatalf("%s accepted invalid IR", c.fn)
		}
		var e *nvvm.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T is not *nvvm.Error: %v", err, err)
		}
		if !errors.Is(err, c.code) || e.Code != c.code {
			t.Errorf("%s: code %v, want %v", c.fn, e.Code, c.code)
		}
		if e.Func != c.fn || e.Message == "" {
			t.Errorf("Func %q Message %q: want %s and a message", e.Func, e.Message, c.fn)
		}
		// The log names the module, line and column: broken.ll (3, 2).
		if !strings.Contains(e.Log, "broken.ll (3, 2)") {
			t.Errorf("%s: Log %q does not locate the error", c.fn, e.Log)
		}
	}
}
