package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cudago/cudago/internal/testing/testenv"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/bindings/nvvm"
)

// saxpySrc is the runtime-fatbin blog's kernel.
const saxpySrc = testenv.SeedSaxpy

// seedNVVMIR is the NVVM IR of the JIT-compilation seed, plus the
// annotation that makes simple_kernel a kernel and the IR version.
const seedNVVMIR = testenv.SeedNVVMKernel + testenv.SeedNVVMAnnotations

func ptrTo[T any](v T) *T { return &v }

func mustProgram(t testing.TB, src, codeType string, opts *ProgramOptions) *Program {
	t.Helper()
	p, err := NewProgram(src, codeType, opts)
	if err != nil {
		t.Fatalf("NewProgram(%s, %+v): %v", codeType, opts, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func mustCompile(t testing.TB, p *Program, target string) *ObjectCode {
	t.Helper()
	o, err := p.Compile(target)
	if err != nil {
		t.Fatalf("Compile(%q): %v", target, err)
	}
	if o.CodeType() != target {
		t.Fatalf("Compile(%q) gave code type %q", target, o.CodeType())
	}
	if len(o.Code()) == 0 {
		t.Fatalf("Compile(%q) gave no code", target)
	}
	return o
}

// checkCubin asserts that b is a CUDA ELF for sm_<sm> with the given
// kernels.
func checkCubin(t *testing.T, b []byte, sm int, kernels ...string) {
	t.Helper()
	// debug/elf rejects CUDA's e_version (the ELF ABI version): parse a
	// copy with e_version 1.
	hdr := bytes.Clone(b)
	binary.LittleEndian.PutUint32(hdr[0x14:], 1)
	f, err := elf.NewFile(bytes.NewReader(hdr))
	if err != nil {
		t.Fatalf("cubin is not an ELF: %v", err)
	}
	if f.Machine != elf.EM_CUDA || uint16(f.Machine) != 190 {
		t.Fatalf("ELF machine %v, want EM_CUDA (190)", f.Machine)
	}
	if f.Class != elf.ELFCLASS64 {
		t.Errorf("ELF class %v, want ELFCLASS64", f.Class)
	}
	flags := binary.LittleEndian.Uint32(b[0x30:])
	if abi := b[elf.EI_ABIVERSION]; abi < 8 {
		// ELF ABI v7 (CUDA 12.4): SM in the low byte of e_flags, the
		// virtual SM in bits 16-23 (sm_90: 0x5a055a).
		if got := int(flags & 0xff); got != sm {
			t.Errorf("e_flags %#x: SM %d, want %d", flags, got, sm)
		}
		if got := int(flags >> 16 & 0xff); got != sm {
			t.Errorf("e_flags %#x: virtual SM %d, want %d", flags, got, sm)
		}
	}
	arch, err := cubinArch(b)
	if err != nil || arch != fmt.Sprintf("sm_%d", sm) {
		t.Errorf("cubinArch = %q, %v; want sm_%d", arch, err, sm)
	}
	got := elfKernels(b)
	for _, k := range kernels {
		if !slices.Contains(got, k) {
			t.Errorf("cubin kernels %q lack %q", got, k)
		}
	}
}

func TestProgramCompilePTX(t *testing.T) {
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Name: "saxpy.cu", Arch: "compute_80"})
	if p.Backend() != "NVRTC" || p.CodeType() != "c++" {
		t.Errorf("Backend, CodeType = %q, %q", p.Backend(), p.CodeType())
	}
	o := mustCompile(t, p, "ptx")
	ptx := string(o.Code())
	for _, want := range []string{".version ", ".target sm_80", ".address_size 64", ".entry saxpy("} {
		if !strings.Contains(ptx, want) {
			t.Errorf("PTX lacks %q:\n%s", want, ptx)
		}
	}
	if strings.Contains(ptx, "\x00") {
		t.Error("PTX holds a NUL")
	}
	if o.Name() != "saxpy.cu" {
		t.Errorf("Name = %q, want saxpy.cu", o.Name())
	}
}

func TestProgramCompileCubin(t *testing.T) {
	for _, sm := range []int{80, 90} {
		t.Run(fmt.Sprint(sm), func(t *testing.T) {
			p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: fmt.Sprintf("sm_%d", sm)})
			o := mustCompile(t, p, "cubin")
			checkCubin(t, o.Code(), sm, "saxpy")
			// The ObjectCode passes its own validation.
			if _, err := FromCubin(o.Code()); err != nil {
				t.Errorf("FromCubin of compiled cubin: %v", err)
			}
		})
	}
	// compute_90 as Arch: Compile("cubin") uses sm_90.
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "compute_90"})
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 90, "saxpy")
}

func TestProgramCompileLTOIR(t *testing.T) {
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_90"})
	o := mustCompile(t, p, "ltoir")
	b := o.Code()
	// NVRTC's LTO-IR starts with the magic ed 43 4e 7f.
	if !bytes.HasPrefix(b, []byte{0xed, 0x43, 0x4e, 0x7f}) {
		t.Errorf("LTO-IR starts % x, want ed 43 4e 7f", b[:4])
	}
	// It links: nvJitLink with -lto makes a CUBIN of it.
	l, err := NewLinker(&LinkerOptions{Arch: "sm_90", LTO: true}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := l.Link("cubin")
	if err != nil {
		t.Fatalf("linking the LTO-IR: %v", err)
	}
	checkCubin(t, c.Code(), 90, "saxpy")
	// One Program compiles to several targets in turn.
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 90, "saxpy")
	if !strings.Contains(string(mustCompile(t, p, "ptx").Code()), ".entry saxpy") {
		t.Error("PTX after LTO-IR lacks saxpy")
	}
}

func TestProgramCompileError(t *testing.T) {
	src := "extern \"C\" __global__ void broken(float *x) {\n  x[0] = undefined_thing;\n}\n"
	p := mustProgram(t, src, "c++", &ProgramOptions{Name: "broken.cu", Arch: "sm_90"})
	_, err := p.Compile("cubin")
	ce := wantErrorAs[*CompileError](t, "Compile of broken code", err)
	if !errors.Is(err, nvrtc.ErrorCompilation) {
		t.Errorf("errors.Is(err, nvrtc.ErrorCompilation) = false: %v", err)
	}
	const logLine = `broken.cu(2): error: identifier "undefined_thing" is undefined`
	msg := err.Error()
	for _, want := range []string{"NVRTC", `"broken.cu"`, "cubin", "NVRTC_ERROR_COMPILATION", logLine} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, logLine) != 1 {
		t.Errorf("error holds the log %d times:\n%s", strings.Count(msg, logLine), msg)
	}
	if !strings.Contains(ce.Log, logLine) || !strings.Contains(p.Log(), logLine) {
		t.Errorf("CompileError.Log / Program.Log lack the log line: %q / %q", ce.Log, p.Log())
	}
	if ce.Program != "broken.cu" || ce.Backend != "NVRTC" || ce.Target != "cubin" {
		t.Errorf("CompileError = %+v", ce)
	}
}

func TestProgramLogWarnings(t *testing.T) {
	src := `extern "C" __global__ void w(int *x) { int unused = 1; x[0] = 2; }`
	p := mustProgram(t, src, "c++", &ProgramOptions{Arch: "compute_80"})
	mustCompile(t, p, "ptx")
	if !strings.Contains(p.Log(), "unused") {
		t.Errorf("Log after a successful compile lacks the warning: %q", p.Log())
	}
}

func TestProgramOptionsRender(t *testing.T) {
	tests := []struct {
		name string
		opts *ProgramOptions
		want []string
	}{
		{"nil", nil, nil},
		{"zero", &ProgramOptions{}, nil},
		{"arch", &ProgramOptions{Arch: "sm_90"}, []string{"-arch=sm_90"}},
		{"arch a", &ProgramOptions{Arch: "sm_90a"}, []string{"-arch=sm_90a"}},
		{"virtual", &ProgramOptions{Arch: "compute_80"}, []string{"-arch=compute_80"}},
		{"std", &ProgramOptions{Std: "c++17"}, []string{"--std=c++17"}},
		{"defines sorted", &ProgramOptions{Defines: map[string]string{"N": "4", "A": "", "F(x)": "x"}},
			[]string{"-DA", "-DF(x)=x", "-DN=4"}},
		{"undefines", &ProgramOptions{Undefines: []string{"X"}}, []string{"-UX"}},
		{"includes", &ProgramOptions{IncludePaths: []string{"/a", "b c"}}, []string{"-I/a", "-Ib c"}},
		{"pre-include", &ProgramOptions{PreIncludes: []string{"h.h"}}, []string{"--pre-include=h.h"}},
		{"headers render nothing", &ProgramOptions{Headers: map[string]string{"h.h": "int x;"}}, nil},
		{"debug", &ProgramOptions{Debug: true, LineInfo: true}, []string{"--device-debug", "--generate-line-info"}},
		{"fast math", &ProgramOptions{FastMath: true}, []string{"--use_fast_math"}},
		{"fp modes", &ProgramOptions{FMAD: ptrTo(false), FTZ: ptrTo(true), PrecDiv: ptrTo(false), PrecSqrt: ptrTo(true)},
			[]string{"--fmad=false", "--ftz=true", "--prec-div=false", "--prec-sqrt=true"}},
		{"registers", &ProgramOptions{MaxRegisters: 32}, []string{"--maxrregcount=32"}},
		{"rdc lto", &ProgramOptions{RelocatableDeviceCode: true, LTO: true}, []string{"--relocatable-device-code=true", "-dlto"}},
		{"name expressions render nothing", &ProgramOptions{NameExpressions: []string{"k<int>"}}, nil},
		{"misc", &ProgramOptions{DisableWarnings: true, DeviceAsDefaultExecutionSpace: true, PtxasOptions: []string{"-v"}},
			[]string{"--disable-warnings", "--device-as-default-execution-space", "--ptxas-options=-v"}},
		{"pch", &ProgramOptions{PCH: true, PCHDir: "/tmp/p", PCHVerbose: ptrTo(true), PCHMessages: ptrTo(false), InstantiateTemplatesInPCH: ptrTo(true)},
			[]string{"--pch", "--pch-dir=/tmp/p", "--pch-verbose=true", "--pch-messages=false", "--instantiate-templates-in-pch=true"}},
		{"create pch", &ProgramOptions{CreatePCH: "a.pch"}, []string{"--create-pch=a.pch"}},
		{"use pch", &ProgramOptions{UsePCH: "a.pch"}, []string{"--use-pch=a.pch"}},
		{"extra last", &ProgramOptions{Arch: "sm_80", Extra: []string{"--extra-device-vectorization"}},
			[]string{"-arch=sm_80", "--extra-device-vectorization"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opts.NVRTCOptions()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NVRTCOptions() = %q, want %q", got, tt.want)
			}
		})
	}
}

// renderCase is an option set and the flags it renders to.
type renderCase[O any] struct {
	opts O
	want []string
}

// checkRender checks that render, the method called name, gives each
// case's flags.
func checkRender[O any](t *testing.T, name string, render func(O) ([]string, error), cases []renderCase[O]) {
	t.Helper()
	for _, c := range cases {
		got, err := render(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s(%+v) = %q, want %q", name, c.opts, got, c.want)
		}
	}
}

func TestProgramOptionsNVVMRender(t *testing.T) {
	tests := []renderCase[*ProgramOptions]{
		{nil, nil},
		{&ProgramOptions{Arch: "sm_90"}, []string{"-arch=compute_90"}},
		{&ProgramOptions{Arch: "compute_80", Debug: true}, []string{"-arch=compute_80", "-g", "-opt=0"}},
		{&ProgramOptions{FastMath: true}, []string{"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"}},
		{&ProgramOptions{FTZ: ptrTo(true), PrecDiv: ptrTo(true), PrecSqrt: ptrTo(false), FMAD: ptrTo(false)},
			[]string{"-ftz=1", "-prec-div=1", "-prec-sqrt=0", "-fma=0"}},
		{&ProgramOptions{LTO: true, Extra: []string{"-jump-table-density=50"}}, []string{"-gen-lto", "-jump-table-density=50"}},
	}
	checkRender(t, "NVVMOptions", (*ProgramOptions).NVVMOptions, tests)
}

func TestProgramOptionsValidation(t *testing.T) {
	tests := []struct {
		opts     ProgramOptions
		codeType string
		option   string // the field the error must name
	}{
		{ProgramOptions{Arch: "sm90"}, "c++", "ProgramOptions.Arch"},
		{ProgramOptions{Arch: "gfx90a"}, "c++", "ProgramOptions.Arch"},
		{ProgramOptions{Arch: "sm_9"}, "c++", "ProgramOptions.Arch"},
		{ProgramOptions{Arch: "90"}, "c++", "ProgramOptions.Arch"},
		{ProgramOptions{Arch: "sm_90x"}, "nvvm", "ProgramOptions.Arch"},
		{ProgramOptions{MaxRegisters: -1}, "c++", "ProgramOptions.MaxRegisters"},
		{ProgramOptions{MaxRegisters: -8}, "ptx", "ProgramOptions.MaxRegisters"},
		{ProgramOptions{Std: "c++99"}, "c++", "ProgramOptions.Std"},
		{ProgramOptions{Std: "gnu++17"}, "c++", "ProgramOptions.Std"},
		{ProgramOptions{Defines: map[string]string{"1X": "2"}}, "c++", "ProgramOptions.Defines"},
		{ProgramOptions{Defines: map[string]string{"A B": ""}}, "c++", "ProgramOptions.Defines"},
		{ProgramOptions{Undefines: []string{""}}, "c++", "ProgramOptions.Undefines"},
		{ProgramOptions{IncludePaths: []string{""}}, "c++", "ProgramOptions.IncludePaths"},
		{ProgramOptions{Headers: map[string]string{"": "x"}}, "c++", "ProgramOptions.Headers"},
		{ProgramOptions{NameExpressions: []string{" "}}, "c++", "ProgramOptions.NameExpressions"},
		{ProgramOptions{CreatePCH: "a", UsePCH: "b"}, "c++", "ProgramOptions.UsePCH"},
		{ProgramOptions{Extra: []string{""}}, "c++", "ProgramOptions.Extra"},
		{ProgramOptions{Std: "c++17"}, "nvvm", "ProgramOptions.Std"},
		{ProgramOptions{Headers: map[string]string{"a.h": ""}}, "nvvm", "ProgramOptions.Headers"},
		{ProgramOptions{NameExpressions: []string{"k"}}, "ptx", "ProgramOptions.NameExpressions"},
		{ProgramOptions{LTO: true}, "ptx", "ProgramOptions.LTO"},
	}
	for _, tt := range tests {
		code := saxpySrc
		switch tt.codeType {
		case "nvvm":
			code = seedNVVMIR
		case "ptx":
			code = ".version 8.4\n.target sm_90\n.address_size 64\n"
		}
		_, err := NewProgram(code, tt.codeType, &tt.opts)
		if err == nil {
			t.Errorf("NewProgram(%s, %+v) succeeded", tt.codeType, tt.opts)
			continue
		}
		if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("NewProgram(%s, %+v): error %v does not match ErrInvalidOption", tt.codeType, tt.opts, err)
		}
		if !strings.Contains(err.Error(), tt.option) {
			t.Errorf("NewProgram(%s, %+v): error %q does not name %s", tt.codeType, tt.opts, err, tt.option)
		}
	}
	// Bad code types and empty code.
	if _, err := NewProgram(saxpySrc, "fortran", nil); err == nil || !strings.Contains(err.Error(), `"fortran"`) {
		t.Errorf("NewProgram(fortran) = %v", err)
	}
	if _, err := NewProgram("", "c++", nil); err == nil {
		t.Error("NewProgram of empty code succeeded")
	}
	if _, err := NewProgram([]byte("not ptx"), "PTX", nil); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("NewProgram of PTX without .version = %v, want ErrInvalidCode", err)
	}
	// Unknown targets.
	p := mustProgram(t, saxpySrc, "c++", nil)
	if _, err := p.Compile("spirv"); err == nil || !strings.Contains(err.Error(), `"spirv"`) {
		t.Errorf(`Compile("spirv") = %v`, err)
	}
}

// TestProgramOptionsAccepted compiles with every option set, so NVRTC
// confirms their spelling, and checks that headers, include paths and
// defines reach the code.
func TestProgramOptionsAccepted(t *testing.T) {
	src := `
#include "local.h"
#include "twice.h"
extern "C" __global__ void k(int *x) { x[0] = TWICE(LOCAL) + VALUE; }
`
	opts := &ProgramOptions{
		Name:                          "opts.cu",
		Arch:                          "sm_80",
		Std:                           "c++17",
		Defines:                       map[string]string{"VALUE": "1234567", "FLAG": ""},
		Undefines:                     []string{"NOT_DEFINED"},
		IncludePaths:                  []string{"testdata/include"},
		PreIncludes:                   []string{"pre.h"},
		Headers:                       map[string]string{"local.h": "#define LOCAL 21\n", "pre.h": "#ifndef FLAG\n#error FLAG\n#endif\n"},
		LineInfo:                      true,
		FMAD:                          ptrTo(true),
		FTZ:                           ptrTo(false),
		PrecDiv:                       ptrTo(true),
		PrecSqrt:                      ptrTo(true),
		MaxRegisters:                  64,
		RelocatableDeviceCode:         true,
		DisableWarnings:               true,
		DeviceAsDefaultExecutionSpace: true,
		PtxasOptions:                  []string{"-O3"},
		Extra:                         []string{"--extra-device-vectorization"},
	}
	p := mustProgram(t, src, "c++", opts)
	ptx := string(mustCompile(t, p, "ptx").Code())
	// 42 + 1234567 = 1234609, folded to one constant.
	if !strings.Contains(ptx, "1234609") {
		t.Errorf("PTX lacks the folded constant 1234609:\n%s", ptx)
	}
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 80, "k")
	// Debug and fast math, on their own.
	p = mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_90", Debug: true, FastMath: true})
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 90, "saxpy")
	// NVRTC rejects what it does not know, with the option in the log.
	p = mustProgram(t, saxpySrc, "c++", &ProgramOptions{Extra: []string{"--no-such-option"}})
	_, err := p.Compile("ptx")
	if !errors.Is(err, nvrtc.ErrorInvalidOption) {
		t.Errorf("Compile with --no-such-option = %v, want NVRTC_ERROR_INVALID_OPTION", err)
	}
}

const templateSrc = `
template <typename T>
__global__ void scale(T *x, T a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}
__device__ int counter;
`

func TestProgramNameExpressions(t *testing.T) {
	exprs := []string{"scale<float>", "scale<double>", "&counter"}
	p := mustProgram(t, templateSrc, "c++", &ProgramOptions{Arch: "sm_90", NameExpressions: exprs})
	if _, err := p.LoweredName("scale<float>"); err == nil {
		t.Error("LoweredName before Compile succeeded")
	}
	o := mustCompile(t, p, "cubin")
	want := map[string]string{
		"scale<float>":  "_Z5scaleIfEvPT_S0_i",
		"scale<double>": "_Z5scaleIdEvPT_S0_i",
		"&counter":      "counter",
	}
	for e, w := range want {
		got, err := p.LoweredName(e)
		if err != nil || got != w {
			t.Errorf("LoweredName(%q) = %q, %v; want %q", e, got, err, w)
		}
	}
	if _, err := p.LoweredName("scale<int>"); err == nil || !strings.Contains(err.Error(), "scale<int>") {
		t.Errorf("LoweredName of an unknown expression = %v", err)
	}
	if got := o.SymbolMapping(); !reflect.DeepEqual(got, want) {
		t.Errorf("SymbolMapping = %v, want %v", got, want)
	}
	kernels := elfKernels(o.Code())
	for _, k := range []string{"_Z5scaleIfEvPT_S0_i", "_Z5scaleIdEvPT_S0_i"} {
		if !slices.Contains(kernels, k) {
			t.Errorf("cubin kernels %q lack %q", kernels, k)
		}
	}
	// A second compile keeps the lowered names (fresh NVRTC program).
	mustCompile(t, p, "ptx")
	if got, _ := p.LoweredName("scale<double>"); got != want["scale<double>"] {
		t.Errorf("LoweredName after recompile = %q", got)
	}
}

func TestProgramPTXToCubin(t *testing.T) {
	// PTX for compute_90 from NVRTC, then a "ptx" Program.
	src := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "compute_90"}), "ptx")
	p := mustProgram(t, string(src.Code()), "ptx", &ProgramOptions{Name: "saxpy.ptx", Arch: "sm_90"})
	if p.Backend() != "nvJitLink" {
		t.Errorf("Backend = %q", p.Backend())
	}
	o := mustCompile(t, p, "cubin")
	checkCubin(t, o.Code(), 90, "saxpy")
	if o.Name() != "saxpy.ptx" {
		t.Errorf("Name = %q", o.Name())
	}
	// Without Arch, the PTX's .target decides.
	p = mustProgram(t, string(src.Code()), "ptx", nil)
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 90, "saxpy")
	// "ptx" gives the PTX back; "ltoir" is impossible.
	if got := mustCompile(t, p, "ptx").Code(); !bytes.Equal(got, src.Code()) {
		t.Error(`Compile("ptx") of a PTX program changed the PTX`)
	}
	if _, err := p.Compile("ltoir"); err == nil {
		t.Error(`Compile("ltoir") of a PTX program succeeded`)
	}
	// Broken PTX: the error is a LinkError with ptxas' message.
	bad := ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus.instruction; ret; }\n"
	p = mustProgram(t, bad, "ptx", &ProgramOptions{Name: "bad.ptx"})
	_, err := p.Compile("cubin")
	var le *LinkError
	if !errors.As(err, &le) {
		t.Fatalf("Compile of broken PTX = %v, want a *LinkError", err)
	}
	if !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "bad.ptx") || !strings.Contains(p.Log(), "bogus") {
		t.Errorf("error / log lack the ptxas message:\n%v\nlog: %s", err, p.Log())
	}
}

func TestProgramNVVM(t *testing.T) {
	major, minor, err := nvvm.Version()
	if err != nil {
		t.Fatalf("nvvm.Version: %v", err)
	}
	t.Logf("libNVVM %d.%d", major, minor)
	p := mustProgram(t, seedNVVMIR, "nvvm", &ProgramOptions{Name: "simple_kernel.ll", Arch: "compute_80"})
	if p.Backend() != "NVVM" {
		t.Errorf("Backend = %q", p.Backend())
	}
	ptx := string(mustCompile(t, p, "ptx").Code())
	for _, want := range []string{".entry simple_kernel(", ".target sm_80", ".version"} {
		if !strings.Contains(ptx, want) {
			t.Errorf("PTX lacks %q:\n%s", want, ptx)
		}
	}
	// NVVM -> PTX -> nvJitLink.
	p = mustProgram(t, seedNVVMIR, "nvvm", &ProgramOptions{Arch: "sm_90", LineInfo: true})
	checkCubin(t, mustCompile(t, p, "cubin").Code(), 90, "simple_kernel")
	// NVVM -> LTO-IR: the same container as NVRTC's -dlto output.
	// (nvJitLink -lto of it gives a CUBIN without the kernel with CUDA
	// 12.4, so the test stops at the IR.)
	lto := mustCompile(t, p, "ltoir")
	if !bytes.HasPrefix(lto.Code(), []byte{0xed, 0x43, 0x4e, 0x7f}) {
		t.Errorf("NVVM LTO-IR starts % x, want ed 43 4e 7f", lto.Code()[:4])
	}
	// Broken IR: a CompileError with NVVM's log.
	p = mustProgram(t, "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @f() {\n  ret i32 0\n}\n", "nvvm", &ProgramOptions{Name: "bad.ll"})
	_, err = p.Compile("ptx")
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Backend != "NVVM" || ce.Log == "" {
		t.Fatalf("Compile of broken IR = %v, want a *CompileError from NVVM with a log", err)
	}
	if !strings.Contains(err.Error(), ce.Log) || !strings.Contains(err.Error(), "bad.ll") {
		t.Errorf("error lacks the log or the name:\n%v", err)
	}
}

func TestProgramClose(t *testing.T) {
	for _, tc := range []struct{ code, typ string }{{saxpySrc, "c++"}, {seedNVVMIR, "nvvm"}, {".version 8.0\n.target sm_90\n", "ptx"}} {
		p, err := NewProgram(tc.code, tc.typ, &ProgramOptions{Arch: "compute_90"})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("%s: Close: %v", tc.typ, err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("%s: second Close: %v", tc.typ, err)
		}
		if _, err := p.Compile("ptx"); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Compile after Close = %v, want ErrClosed", tc.typ, err)
		}
		if _, err := p.LoweredName("x"); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: LoweredName after Close = %v, want ErrClosed", tc.typ, err)
		}
	}
}

// TestProgramConcurrent shares one Program between goroutines (run with
// -race).
func TestProgramConcurrent(t *testing.T) {
	p := mustProgram(t, templateSrc, "c++", &ProgramOptions{Arch: "sm_80", NameExpressions: []string{"scale<float>"}})
	inParallel(t, 8, func(i int) error {
		target := []string{"ptx", "cubin"}[i%2]
		o, err := p.Compile(target)
		if err == nil && o.CodeType() != target {
			err = fmt.Errorf("got %s", o.CodeType())
		}
		if err == nil {
			_, err = p.LoweredName("scale<float>")
		}
		_ = p.Log()
		return err
	})
}
