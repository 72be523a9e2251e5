package core

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvjitlink"
)

// Two translation units: a kernel calling an extern __device__ function,
// and the function.
const (
	unitKernel = `
extern __device__ float helper(float);
extern "C" __global__ void k(float *x) { x[threadIdx.x] = helper(x[threadIdx.x]); }
`
	unitHelper = `
__device__ float helper(float v) { return v * 2.0f + 1.0f; }
`
)

// compileUnit compiles CUDA C++ to target with relocatable device code.
func compileUnit(t *testing.T, src, name, arch, target string) *ObjectCode {
	t.Helper()
	p := mustProgram(t, src, "c++", &ProgramOptions{Name: name, Arch: arch, RelocatableDeviceCode: true})
	return mustCompile(t, p, target)
}

func mustLink(t testing.TB, opts *LinkerOptions, target string, codes ...*ObjectCode) *ObjectCode {
	t.Helper()
	l, err := NewLinker(opts, codes...)
	if err != nil {
		t.Fatalf("NewLinker: %v", err)
	}
	defer l.Close()
	o, err := l.Link(target)
	if err != nil {
		t.Fatalf("Link(%q): %v", target, err)
	}
	if o.CodeType() != target {
		t.Fatalf("Link(%q) gave %q", target, o.CodeType())
	}
	return o
}

func TestLinkerLTO(t *testing.T) {
	a := compileUnit(t, unitKernel, "kernel.cu", "sm_90", "ltoir")
	b := compileUnit(t, unitHelper, "helper.cu", "sm_90", "ltoir")
	l, err := NewLinker(&LinkerOptions{Arch: "sm_90", LTO: true, Verbose: true}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Backend() != "nvJitLink" {
		t.Errorf("Backend = %q", l.Backend())
	}
	o, err := l.Link("cubin")
	if err != nil {
		t.Fatal(err)
	}
	checkCubin(t, o.Code(), 90, "k")
	// nvJitLink 12.4 writes an info log with -verbose; 13.0 writes none.
	t.Logf("info log: %q", l.InfoLog())
	// The helper is inlined by LTO: no call left, no helper symbol.
	if strings.Contains(strings.Join(elfKernels(o.Code()), ","), "helper") {
		t.Error("helper is a kernel")
	}
	// To PTX, with LTO.
	ptx := mustLink(t, &LinkerOptions{Arch: "sm_90", LTO: true}, "ptx", a, b)
	if !strings.Contains(string(ptx.Code()), ".entry k(") {
		t.Errorf("linked PTX lacks k:\n%s", ptx.Code())
	}
	if _, err := FromPTX(ptx.Code()); err != nil {
		t.Errorf("linked PTX does not validate: %v", err)
	}
}

func TestLinkerMissingSymbol(t *testing.T) {
	a := compileUnit(t, unitKernel, "kernel.cu", "sm_90", "ltoir")
	l := try(NewLinker(&LinkerOptions{Arch: "sm_90", LTO: true}, a)).must(t)
	defer l.Close()
	_, err := l.Link("cubin")
	le := wantErrorAs[*LinkError](t, "Link with an undefined function", err)
	const logLine = "Unresolved extern function '_Z6helperf'"
	if !strings.Contains(le.ErrorLog, logLine) {
		t.Errorf("ErrorLog lacks %q: %q", logLine, le.ErrorLog)
	}
	for _, want := range []string{"nvJitLink", "kernel.cu", "cubin", logLine} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if l.ErrorLog() != le.ErrorLog {
		t.Errorf("Linker.ErrorLog = %q, LinkError.ErrorLog = %q", l.ErrorLog(), le.ErrorLog)
	}
	if !errors.Is(err, nvjitlink.ErrorPtxCompile) {
		t.Errorf("errors.Is(err, nvjitlink.ErrorPtxCompile) = false: %v", err)
	}
	var ne *nvjitlink.Error
	if !errors.As(err, &ne) {
		t.Errorf("LinkError does not wrap an *nvjitlink.Error: %v", err)
	}
}

// TestLinkerInputKinds links a kernel with the helper given as every kind
// of input nvJitLink takes.
func TestLinkerInputKinds(t *testing.T) {
	kernelPTX := compileUnit(t, unitKernel, "kernel.cu", "compute_90", "ptx")
	kernelCubin := compileUnit(t, unitKernel, "kernel.cu", "sm_90", "cubin")
	helperPTX := compileUnit(t, unitHelper, "helper.cu", "compute_90", "ptx")
	helperCubin := compileUnit(t, unitHelper, "helper.cu", "sm_90", "cubin")
	helperObj, err := FromObjectFile("testdata/helper.o")
	if err != nil {
		t.Fatal(err)
	}
	helperLib, err := FromLibraryFile("testdata/libhelper.a")
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t, nil)
	if err := b.Add(helperCubin, ""); err != nil {
		t.Fatal(err)
	}
	helperFatbin, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		kernel, help *ObjectCode
	}{
		{"ptx+ptx", kernelPTX, helperPTX},
		{"cubin+cubin", kernelCubin, helperCubin},
		{"ptx+cubin", kernelPTX, helperCubin},
		{"cubin+fatbin", kernelCubin, helperFatbin},
		{"ptx+object", kernelPTX, helperObj},
		{"cubin+library", kernelCubin, helperLib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := mustLink(t, &LinkerOptions{Arch: "sm_90"}, "cubin", tc.kernel, tc.help)
			checkCubin(t, o.Code(), 90, "k")
		})
	}
}

func TestLinkerOptionsRender(t *testing.T) {
	tests := []renderCase[*LinkerOptions]{
		{&LinkerOptions{Arch: "sm_90"}, []string{"-arch=sm_90"}},
		{&LinkerOptions{Arch: "sm_80", MaxRegisters: 64, Optimization: ptrTo(3), Debug: true, LineInfo: true, LTO: true},
			[]string{"-arch=sm_80", "-maxrregcount=64", "-O3", "-g", "-lineinfo", "-lto"}},
		{&LinkerOptions{Arch: "sm_90", FTZ: ptrTo(true), PrecDiv: ptrTo(false), PrecSqrt: ptrTo(true), FMA: ptrTo(false)},
			[]string{"-arch=sm_90", "-ftz=1", "-prec-div=0", "-prec-sqrt=1", "-fma=0"}},
		{&LinkerOptions{Arch: "sm_90", KernelsUsed: []string{"k"}, VariablesUsed: []string{"v"}, PtxasOptions: []string{"-v"}, Verbose: true, Time: true, Extra: []string{"-split-compile=0"}},
			[]string{"-arch=sm_90", "-kernels-used=k", "-variables-used=v", "-Xptxas=-v", "-verbose", "-time", "-split-compile=0"}},
		{&LinkerOptions{Arch: "sm_90", Optimization: ptrTo(0)}, []string{"-arch=sm_90", "-O0"}},
	}
	checkRender(t, "NVJitLinkOptions", (*LinkerOptions).NVJitLinkOptions, tests)
	bad := []struct {
		opts   *LinkerOptions
		option string
	}{
		{nil, "LinkerOptions.Arch"},
		{&LinkerOptions{}, "LinkerOptions.Arch"},
		{&LinkerOptions{Arch: "90"}, "LinkerOptions.Arch"},
		{&LinkerOptions{Arch: "sm90"}, "LinkerOptions.Arch"},
		{&LinkerOptions{Arch: "sm_90", MaxRegisters: -1}, "LinkerOptions.MaxRegisters"},
		{&LinkerOptions{Arch: "sm_90", Optimization: ptrTo(2)}, "LinkerOptions.Optimization"},
		{&LinkerOptions{Arch: "sm_90", KernelsUsed: []string{""}}, "LinkerOptions.KernelsUsed"},
		{&LinkerOptions{Arch: "sm_90", Extra: []string{" "}}, "LinkerOptions.Extra"},
	}
	for _, tt := range bad {
		_, err := tt.opts.NVJitLinkOptions()
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tt.option) {
			t.Errorf("NVJitLinkOptions(%+v) = %v, want an error naming %s", tt.opts, err, tt.option)
		}
		if _, err := NewLinker(tt.opts, &ObjectCode{codeType: CodePTX, code: []byte(".version 8.0")}); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("NewLinker(%+v) = %v, want ErrInvalidOption", tt.opts, err)
		}
	}
}

// TestLinkerOptionsAccepted links with every option set, so nvJitLink
// confirms their spelling.
func TestLinkerOptionsAccepted(t *testing.T) {
	a := compileUnit(t, unitKernel, "kernel.cu", "sm_90", "ltoir")
	b := compileUnit(t, unitHelper, "helper.cu", "sm_90", "ltoir")
	opts := &LinkerOptions{
		Arch: "sm_90", LTO: true, Optimization: ptrTo(3), MaxRegisters: 32, LineInfo: true,
		FTZ: ptrTo(true), PrecDiv: ptrTo(false), PrecSqrt: ptrTo(false), FMA: ptrTo(true),
		KernelsUsed: []string{"k"}, PtxasOptions: []string{"-O3"}, Verbose: true, Time: true,
	}
	checkCubin(t, mustLink(t, opts, "cubin", a, b).Code(), 90, "k")
	checkCubin(t, mustLink(t, &LinkerOptions{Arch: "sm_90", Debug: true, Optimization: ptrTo(0), FTZ: ptrTo(true), PrecDiv: ptrTo(true), PrecSqrt: ptrTo(true), FMA: ptrTo(false)}, "cubin",
		compileUnit(t, unitKernel, "kernel.cu", "compute_90", "ptx"), compileUnit(t, unitHelper, "helper.cu", "compute_90", "ptx")).Code(), 90, "k")
	// nvJitLink rejects what it does not know.
	l, err := NewLinker(&LinkerOptions{Arch: "sm_90", Extra: []string{"-no-such-option"}}, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Link("cubin"); !errors.Is(err, nvjitlink.ErrorUnrecognizedOption) {
		t.Errorf("Link with -no-such-option = %v, want NVJITLINK_ERROR_UNRECOGNIZED_OPTION", err)
	}
}

func TestLinkerErrors(t *testing.T) {
	a := compileUnit(t, unitKernel, "kernel.cu", "compute_90", "ptx")
	if _, err := NewLinker(&LinkerOptions{Arch: "sm_90"}); err == nil {
		t.Error("NewLinker without inputs succeeded")
	}
	if _, err := NewLinker(&LinkerOptions{Arch: "sm_90"}, a, nil); err == nil {
		t.Error("NewLinker with a nil input succeeded")
	}
	l, err := NewLinker(&LinkerOptions{Arch: "sm_90"}, a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Options(), []string{"-arch=sm_90"}) {
		t.Errorf("Options = %q", l.Options())
	}
	if _, err := l.Link("ptx"); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "LinkerOptions.LTO") {
		t.Errorf(`Link("ptx") without LTO = %v`, err)
	}
	if _, err := l.Link("fatbin"); err == nil || !strings.Contains(err.Error(), `"fatbin"`) {
		t.Errorf(`Link("fatbin") = %v`, err)
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Link("cubin"); !errors.Is(err, ErrClosed) {
		t.Errorf("Link after Close = %v, want ErrClosed", err)
	}
}

// TestLinkerSymbolMapping checks that name expressions survive linking.
func TestLinkerSymbolMapping(t *testing.T) {
	p := mustProgram(t, templateSrc, "c++", &ProgramOptions{Arch: "sm_90", LTO: true, NameExpressions: []string{"scale<float>"}})
	o := mustCompile(t, p, "ltoir")
	c := mustLink(t, &LinkerOptions{Arch: "sm_90", LTO: true}, "cubin", o)
	if got := c.SymbolMapping()["scale<float>"]; got != "_Z5scaleIfEvPT_S0_i" {
		t.Errorf("linked SymbolMapping = %v", c.SymbolMapping())
	}
	checkCubin(t, c.Code(), 90, "_Z5scaleIfEvPT_S0_i")
}

func TestJitTarget(t *testing.T) {
	for arch, want := range map[string]uintptr{"sm_90": 90, "sm_80": 80, "sm_90a": 0x10000 + 90, "sm_100f": 0x20000 + 100} {
		if got, ok := jitTarget(arch); !ok || got != want {
			t.Errorf("jitTarget(%q) = %d, %v; want %d", arch, got, ok, want)
		}
	}
}
