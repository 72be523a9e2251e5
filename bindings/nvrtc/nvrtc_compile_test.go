package nvrtc_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"

	"github.com/cudago/cudago/bindings/nvrtc"
)

// templatedSource has a C++ (mangled) kernel template, reached through a
// name expression.
const templatedSource = `
template <typename T>
__global__ void saxpyT(T a, T *x, T *y, T *out, size_t n)
{
size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
if (tid < n) {
out[tid] = a * x[tid] + y[tid];
}
}
`

// compile builds src with opts; the program is destroyed when the test ends.
func compile(t *testing.T, src, name string, opts []string, nameExprs ...string) nvrtc.Program {
	t.Helper()
	p, err := nvrtc.CreateProgram(src, name, 0, nil, nil)
	if err != nil {
		t.Fatalf("CreateProgram: %v", err)
	}
	t.Cleanup(func() {
		if err := nvrtc.DestroyProgram(&p); err != nil {
			t.Errorf("DestroyProgram: %v", err)
		}
	})
	for _, e := range nameExprs {
		if err := nvrtc.AddNameExpression(p, e); err != nil {
			t.Fatalf("AddNameExpression(%q): %v", e, err)
		}
	}
	if err := nvrtc.CompileProgram(p, int32(len(opts)), opts); err != nil {
		t.Fatalf("CompileProgram(%v): %v", opts, err)
	}
	return p
}

func TestCompileSaxpyPTX(t *testing.T) {
	p := compile(t, testenv.SeedSaxpy, "fatbin_saxpy.cu", []string{"-arch=compute_80"}, "saxpy")
	ptx, err := nvrtc.PTX(p)
	if err != nil {
		t.Fatalf("PTX: %v", err)
	}
	for _, want := range []string{".visible .entry saxpy(", ".target sm_80", ".address_size 64"} {
		if !bytes.Contains(ptx, []byte(want)) {
			t.Errorf("PTX lacks %q:\n%s", want, ptx)
		}
	}
	if bytes.IndexByte(ptx, 0) >= 0 {
		t.Error("PTX holds a NUL byte")
	}
	// extern "C": the lowered name is the plain name.
	lowered, err := nvrtc.GetLoweredName(p, "saxpy")
	if err != nil {
		t.Fatalf("GetLoweredName(saxpy): %v", err)
	}
	if lowered != "saxpy" {
		t.Errorf("lowered name of extern \"C\" saxpy = %q, want saxpy", lowered)
	}
	// compute_XX gives no CUBIN.
	if cubin, err := nvrtc.CUBIN(p); err != nil || len(cubin) != 0 {
		t.Errorf("CUBIN after -arch=compute_80 = %d bytes, %v; want none", len(cubin), err)
	}
}

func TestCompileTemplateNameExpressions(t *testing.T) {
	exprs := map[string]string{
		"saxpyT<float>":  "_Z6saxpyTIfEvT_PS0_S1_S1_m",
		"saxpyT<double>": "_Z6saxpyTIdEvT_PS0_S1_S1_m",
	}
	names := make([]string, 0, len(exprs))
	for e := range exprs {
		names = append(names, e)
	}
	slices.Sort(names)
	p := compile(t, templatedSource, "saxpyT.cu", []string{"-arch=compute_90"}, names...)
	ptx, err := nvrtc.PTX(p)
	if err != nil {
		t.Fatalf("PTX: %v", err)
	}
	for _, e := range names {
		lowered, err := nvrtc.GetLoweredName(p, e)
		if err != nil {
			t.Fatalf("GetLoweredName(%q): %v", e, err)
		}
		if lowered != exprs[e] {
			t.Errorf("GetLoweredName(%q) = %q, want %q", e, lowered, exprs[e])
		}
		// Template instances are weak entries (".weak .entry").
		if !bytes.Contains(ptx, []byte(".entry "+lowered+"(")) {
			t.Errorf("PTX has no entry %s:\n%s", lowered, ptx)
		}
	}
	// A name expression that was never added is an error with its code.
	_, err = nvrtc.GetLoweredName(p, "saxpyT<int>")
	if !errors.Is(err, nvrtc.ErrorNameExpressionNotValid) {
		t.Errorf("GetLoweredName of an unregistered expression: %v, want NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", err)
	}
}

func TestCompileSaxpyCUBIN(t *testing.T) {
	for _, sm := range []int{80, 90} {
		t.Run(fmt.Sprintf("sm_%d", sm), func(t *testing.T) {
			p := compile(t, testenv.SeedSaxpy, "fatbin_saxpy.cu", []string{fmt.Sprintf("-arch=sm_%d", sm)})
			cubin, err := nvrtc.CUBIN(p)
			if err != nil {
				t.Fatalf("CUBIN: %v", err)
			}
			if !bytes.HasPrefix(cubin, []byte("\x7fELF")) {
				t.Fatalf("CUBIN does not start with the ELF magic: % x", cubin[:min(16, len(cubin))])
			}
			f, got := testenv.CubinELF(t, cubin)
			if got != sm {
				t.Errorf("ELF e_flags say sm_%d, want sm_%d", got, sm)
			}
			if f.Section(".nv.info") == nil {
				t.Error("CUBIN has no .nv.info section")
			}
			if f.Section(".text.saxpy") == nil {
				t.Error("CUBIN has no .text.saxpy section")
			}
			if !testenv.HasFunc(t, f, "saxpy") {
				t.Error("CUBIN has no function symbol saxpy")
			}
			// A real architecture also leaves no LTO-IR behind.
			if lto, err := nvrtc.LTOIR(p); err != nil || len(lto) != 0 {
				t.Errorf("LTOIR after -arch=sm_%d = %d bytes, %v; want none", sm, len(lto), err)
			}
		})
	}
}

func TestCompileSaxpyLTOIR(t *testing.T) {
	p := compile(t, testenv.SeedSaxpy, "fatbin_saxpy.cu", []string{"-dlto", "-arch=sm_90"})
	lto, err := nvrtc.LTOIR(p)
	if err != nil {
		t.Fatalf("LTOIR: %v", err)
	}
	if len(lto) == 0 {
		t.Fatal("LTOIR is empty after -dlto")
	}
	if bytes.HasPrefix(lto, []byte("\x7fELF")) {
		t.Error("LTO-IR looks like an ELF")
	}
	if cubin, err := nvrtc.CUBIN(p); err != nil || len(cubin) != 0 {
		t.Errorf("CUBIN after -dlto = %d bytes, %v; want none", len(cubin), err)
	}
	if ptx, err := nvrtc.PTX(p); err != nil || len(ptx) != 0 {
		t.Errorf("PTX after -dlto = %d bytes, %v; want none", len(ptx), err)
	}
}

func TestCompileErrorCarriesLog(t *testing.T) {
	const src = "__global__ void broken(float *x)\n{\n  x[0] = ;\n}\n"
	p, err := nvrtc.CreateProgram(src, "broken.cu", 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nvrtc.DestroyProgram(&p)
	err = nvrtc.CompileProgram(p, 1, []string{"-arch=sm_80"})
	if err == nil {
		t.Fatal("a syntax error compiled")
	}
	if !errors.Is(err, nvrtc.ErrorCompilation) {
		t.Fatalf("errors.Is(err, ErrorCompilation) is false for %v", err)
	}
	var e *nvrtc.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not *nvrtc.Error", err)
	}
	if e.Code != nvrtc.ErrorCompilation || e.Func != "nvrtcCompileProgram" {
		t.Errorf("Code %v Func %q, want NVRTC_ERROR_COMPILATION nvrtcCompileProgram", e.Code, e.Func)
	}
	// The log names the file and line 3 of the error, and the message holds the log.
	const where = "broken.cu(3): error"
	if !strings.Contains(e.Log, where) {
		t.Errorf("Log lacks %q:\n%s", where, e.Log)
	}
	if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION") {
		t.Errorf("message lacks the log or the code: %q", err.Error())
	}
	log, lerr := nvrtc.ProgramLog(p)
	if lerr != nil || log != e.Log {
		t.Errorf("ProgramLog = %q, %v; want the error's Log %q", log, lerr, e.Log)
	}
}

func TestSupportedArchs(t *testing.T) {
	n, err := nvrtc.GetNumSupportedArchs()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Fatalf("GetNumSupportedArchs = %d", n)
	}
	archs := make([]int32, n)
	if err := nvrtc.GetSupportedArchs(&archs[0]); err != nil {
		t.Fatal(err)
	}
	t.Logf("supported: %v", archs)
	for _, want := range []int32{80, 90} {
		if !slices.Contains(archs, want) {
			t.Errorf("supported archs %v lack %d", archs, want)
		}
	}
	if !slices.IsSorted(archs) {
		t.Errorf("supported archs %v are not ascending", archs)
	}
}

func TestVersion(t *testing.T) {
	if _, minor := bindtest.AtLeast(t, "NVRTC", nvrtc.Version, 12, 0); minor < 0 {
		t.Errorf("Version's minor = %d", minor)
	}
}
