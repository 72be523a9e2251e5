package core

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The options of the toolchain (ProgramOptions, LinkerOptions and
// FatbinOptions) live here, each with its translation to the library's own
// flags, since they share the validation and the architecture forms. The
// small options of runtime objects (StreamOptions, EventOptions) stay beside
// their types.

// optionError reports a bad option by its Go field name and its flag.
type optionError struct {
	Option string // e.g. "ProgramOptions.MaxRegisters"
	Reason string
}

func (e *optionError) Error() string {
	return "core: " + e.Option + ": " + e.Reason
}

func (e *optionError) Unwrap() error { return ErrInvalidOption }

func badOption(option, format string, args ...any) error {
	return &optionError{Option: option, Reason: fmt.Sprintf(format, args...)}
}

// parseArch splits "sm_90a" into ("sm", 90, "a"), for the driver
// linker's jitTarget. It takes the exact, lower-case forms (see
// parseArchForm): kind is "sm", "compute", "lto", "" for a bare number
// ("90", as nvFatbin takes it) or "cc" for a compute capability ("9.0").
func parseArch(s string) (kind string, num int, suffix string, ok bool) {
	kind, a, ok := parseArchForm(s)
	return kind, a.Number, a.Suffix, ok
}

// exactArch reads the architecture of ProgramOptions.Arch and
// LinkerOptions.Arch, which go to the compiler as given: sm_NN or
// compute_NN only.
func exactArch(s string) (Arch, bool) {
	form, a, ok := parseArchForm(s)
	return a, ok && (form == "sm" || form == "compute")
}

// nvrtcStds are the dialects NVRTC's --std accepts.
var nvrtcStds = []string{"c++03", "c++11", "c++14", "c++17", "c++20"}

// ProgramOptions are the options of a Program. The zero value (or a nil
// pointer) compiles with the compiler's defaults. For a "c++" program they
// become NVRTC's options (see NVRTCOptions); for "nvvm" NVVM's (NVVMOptions);
// for "ptx" nvJitLink's, which turns the PTX into a CUBIN.
//
// Fields that a program's code type cannot honour (Std or Headers for an
// "nvvm" program, say) make NewProgram fail, naming the field, rather than
// being silently dropped.
type ProgramOptions struct {
	// Name is the program's name, used in compiler messages and as the
	// name of the ObjectCode it compiles to. Default "default_program".
	Name string

	// Arch is the target architecture: "sm_90" (real: needed for a CUBIN),
	// "compute_90" (virtual: PTX or LTO-IR only), with an optional "a" or
	// "f" suffix. Empty uses the compiler's default, except that Compile
	// of a CUBIN needs a real architecture.
	Arch string

	// Std is the C++ dialect: "c++03", "c++11", "c++14", "c++17" or
	// "c++20" (--std). NVRTC only.
	Std string

	// Defines are preprocessor macros (-D NAME=VALUE; an empty value gives
	// -DNAME, which defines NAME as 1). Rendered in sorted order. NVRTC only.
	Defines map[string]string
	// DefineList are macro definitions as a command line gives them, in
	// order after Defines: "NAME" or "NAME=VALUE" becomes -DNAME or
	// -DNAME=VALUE as is. "NAME=" defines NAME as empty, which Defines
	// cannot say, and a later definition of a name wins. NVRTC only.
	DefineList []string
	// Undefines are macros to undefine (-U NAME). NVRTC only.
	Undefines []string
	// IncludePaths are directories searched for #include (-I). NVRTC only.
	IncludePaths []string
	// PreIncludes are headers included before the source (--pre-include).
	// NVRTC only.
	PreIncludes []string
	// Headers are in-memory headers, by include name ("util.h") to
	// source. NVRTC only.
	Headers map[string]string

	// Debug generates debug information (-G for NVRTC, -g for NVVM and
	// nvJitLink; NVVM also gets -opt=0, which -g requires).
	Debug bool
	// LineInfo generates line-number information (-lineinfo).
	LineInfo bool
	// FastMath enables fast math (--use_fast_math): FTZ, approximate
	// division and square root, FMA contraction.
	FastMath bool
	// FMAD, FTZ, PrecDiv and PrecSqrt set one floating-point mode each
	// when not nil (--fmad, --ftz, --prec-div, --prec-sqrt).
	FMAD, FTZ, PrecDiv, PrecSqrt *bool
	// MaxRegisters caps the registers per thread (--maxrregcount); 0
	// leaves the compiler's choice.
	MaxRegisters int

	// RelocatableDeviceCode generates relocatable device code (-rdc=true),
	// needed to link with other code that calls it or that it calls.
	// NVRTC only.
	RelocatableDeviceCode bool
	// LTO generates LTO-IR for link-time optimization (-dlto for NVRTC,
	// -gen-lto for NVVM). Compile("ltoir") sets it itself.
	LTO bool

	// NameExpressions are expressions naming __global__ functions or
	// __device__/__constant__ variables, such as "saxpy<float>", whose
	// mangled (lowered) names LoweredName returns after Compile and
	// which the compiled ObjectCode's Kernel accepts. NVRTC only.
	NameExpressions []string

	// DisableWarnings suppresses all warnings (-w). NVRTC only.
	DisableWarnings bool
	// DeviceAsDefaultExecutionSpace treats functions without an execution
	// space annotation as __device__ (-default-device). NVRTC only.
	DeviceAsDefaultExecutionSpace bool
	// PtxasOptions are passed to ptxas (--ptxas-options). NVRTC only.
	PtxasOptions []string

	// PCH enables automatic precompiled headers (--pch): NVRTC saves the
	// parsed leading #includes and reuses them in later compilations
	// (pch.go). Its files go to PCHDir, by default pch/nvrtc-M.N under
	// the compile cache's root (CacheDir). NVRTC only, as are all PCH
	// options, which need NVRTC 12.8 or newer: NewProgram refuses them
	// on an older one, naming the version. Program.PCHStatus tells
	// whether a compilation created a header.
	PCH bool
	// CreatePCH creates a precompiled header file of this name
	// (--create-pch).
	CreatePCH string
	// UsePCH uses the precompiled header file of this name (--use-pch).
	UsePCH string
	// PCHDir is the directory for automatic PCH files (--pch-dir).
	PCHDir string
	// PCHVerbose, when not nil, sets --pch-verbose.
	PCHVerbose *bool
	// PCHMessages, when not nil, sets --pch-messages.
	PCHMessages *bool
	// InstantiateTemplatesInPCH, when not nil, sets
	// --instantiate-templates-in-pch.
	InstantiateTemplatesInPCH *bool

	// NoCache compiles this program without the on-disk compile cache
	// (see CacheDir), as CUDAGO_CACHE=off does for the whole process.
	NoCache bool

	// Extra options are appended verbatim, for anything not above; they
	// go to the backend of the program's code type (NVRTC, NVVM or
	// nvJitLink).
	Extra []string
}

func (o *ProgramOptions) name() string {
	if o == nil || o.Name == "" {
		return "default_program"
	}
	return o.Name
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// flagList builds a library's option list in a fixed order; each method
// adds its flags only when the field it is given is set.
type flagList []string

// on adds flags when set is true.
func (l *flagList) on(set bool, flags ...string) {
	if set {
		*l = append(*l, flags...)
	}
}

// value adds flag+v when v is not empty.
func (l *flagList) value(flag, v string) {
	l.on(v != "", flag+v)
}

// tri adds flag+render(*b) when b is not nil (nil keeps the library's
// default).
func (l *flagList) tri(flag string, b *bool, render func(bool) string) {
	if b != nil {
		*l = append(*l, flag+render(*b))
	}
}

// each adds flag+v for every v of vs, refusing an empty v as a bad option
// with the reason given.
func (l *flagList) each(flag string, vs []string, option, reason string) error {
	for _, v := range vs {
		if v == "" {
			return badOption(option, "%s", reason)
		}
		*l = append(*l, flag+v)
	}
	return nil
}

// validateCommon checks the fields every backend reads.
func (o *ProgramOptions) validateCommon() error {
	if o.Arch != "" {
		if _, ok := exactArch(o.Arch); !ok {
			return badOption("ProgramOptions.Arch", "unknown architecture %q (want sm_NN or compute_NN, e.g. sm_90; ParseArch reads other forms)", o.Arch)
		}
	}
	if o.MaxRegisters < 0 {
		return badOption("ProgramOptions.MaxRegisters", "negative register count %d", o.MaxRegisters)
	}
	for _, e := range o.Extra {
		if strings.TrimSpace(e) == "" {
			return badOption("ProgramOptions.Extra", "empty option")
		}
	}
	return nil
}

// NVRTCOptions validates o and renders it as NVRTC's option list, in a
// fixed order. A nil o gives no options.
func (o *ProgramOptions) NVRTCOptions() ([]string, error) {
	if o == nil {
		return nil, nil
	}
	if err := o.validateCommon(); err != nil {
		return nil, err
	}
	var out flagList
	out.value("-arch=", o.Arch)
	if o.Std != "" {
		if !slices.Contains(nvrtcStds, o.Std) {
			return nil, badOption("ProgramOptions.Std", "unknown C++ dialect %q (want one of %s)", o.Std, strings.Join(nvrtcStds, ", "))
		}
		out = append(out, "--std="+o.Std)
	}
	keys := make([]string, 0, len(o.Defines))
	for k := range o.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !macroRE.MatchString(k) {
			return nil, badOption("ProgramOptions.Defines", "bad macro name %q", k)
		}
		if v := o.Defines[k]; v != "" {
			out = append(out, "-D"+k+"="+v)
		} else {
			out = append(out, "-D"+k)
		}
	}
	for _, d := range o.DefineList {
		if name, _, _ := strings.Cut(d, "="); !macroRE.MatchString(name) {
			return nil, badOption("ProgramOptions.DefineList", "bad macro name %q in %q", name, d)
		}
		out = append(out, "-D"+d)
	}
	for _, k := range o.Undefines {
		if !macroRE.MatchString(k) {
			return nil, badOption("ProgramOptions.Undefines", "bad macro name %q", k)
		}
		out = append(out, "-U"+k)
	}
	if err := out.each("-I", o.IncludePaths, "ProgramOptions.IncludePaths", "empty path"); err != nil {
		return nil, err
	}
	if err := out.each("--pre-include=", o.PreIncludes, "ProgramOptions.PreIncludes", "empty header name"); err != nil {
		return nil, err
	}
	for name := range o.Headers {
		if name == "" {
			return nil, badOption("ProgramOptions.Headers", "header with an empty name")
		}
	}
	out.on(o.Debug, "--device-debug")
	out.on(o.LineInfo, "--generate-line-info")
	out.on(o.FastMath, "--use_fast_math")
	out.tri("--fmad=", o.FMAD, boolStr)
	out.tri("--ftz=", o.FTZ, boolStr)
	out.tri("--prec-div=", o.PrecDiv, boolStr)
	out.tri("--prec-sqrt=", o.PrecSqrt, boolStr)
	out.on(o.MaxRegisters > 0, "--maxrregcount="+strconv.Itoa(o.MaxRegisters))
	out.on(o.RelocatableDeviceCode, "--relocatable-device-code=true")
	out.on(o.LTO, "-dlto")
	out.on(o.DisableWarnings, "--disable-warnings")
	out.on(o.DeviceAsDefaultExecutionSpace, "--device-as-default-execution-space")
	if err := out.each("--ptxas-options=", o.PtxasOptions, "ProgramOptions.PtxasOptions", "empty option"); err != nil {
		return nil, err
	}
	out.on(o.PCH, "--pch")
	out.value("--create-pch=", o.CreatePCH)
	if o.UsePCH != "" && o.CreatePCH != "" {
		return nil, badOption("ProgramOptions.UsePCH", "cannot be combined with CreatePCH")
	}
	out.value("--use-pch=", o.UsePCH)
	out.value("--pch-dir=", o.PCHDir)
	out.tri("--pch-verbose=", o.PCHVerbose, boolStr)
	out.tri("--pch-messages=", o.PCHMessages, boolStr)
	out.tri("--instantiate-templates-in-pch=", o.InstantiateTemplatesInPCH, boolStr)
	for _, e := range o.NameExpressions {
		if strings.TrimSpace(e) == "" {
			return nil, badOption("ProgramOptions.NameExpressions", "empty name expression")
		}
	}
	out = append(out, o.Extra...)
	return out, nil
}

var macroRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, .]*\))?$`)

// onlyNVRTC names the set fields that only NVRTC understands.
func (o *ProgramOptions) onlyNVRTC() []string {
	var f []string
	add := func(set bool, name string) {
		if set {
			f = append(f, name)
		}
	}
	add(o.Std != "", "Std")
	add(len(o.Defines) > 0, "Defines")
	add(len(o.DefineList) > 0, "DefineList")
	add(len(o.Undefines) > 0, "Undefines")
	add(len(o.IncludePaths) > 0, "IncludePaths")
	add(len(o.PreIncludes) > 0, "PreIncludes")
	add(len(o.Headers) > 0, "Headers")
	add(o.RelocatableDeviceCode, "RelocatableDeviceCode")
	add(len(o.NameExpressions) > 0, "NameExpressions")
	add(o.DisableWarnings, "DisableWarnings")
	add(o.DeviceAsDefaultExecutionSpace, "DeviceAsDefaultExecutionSpace")
	add(len(o.PtxasOptions) > 0, "PtxasOptions")
	add(o.PCH, "PCH")
	add(o.CreatePCH != "", "CreatePCH")
	add(o.UsePCH != "", "UsePCH")
	add(o.PCHDir != "", "PCHDir")
	add(o.PCHVerbose != nil, "PCHVerbose")
	add(o.PCHMessages != nil, "PCHMessages")
	add(o.InstantiateTemplatesInPCH != nil, "InstantiateTemplatesInPCH")
	return f
}

// checkFor reports the first set field that a program of codeType cannot
// honour.
func (o *ProgramOptions) checkFor(codeType string) error {
	if o == nil || codeType == "c++" {
		return nil
	}
	if f := o.onlyNVRTC(); len(f) > 0 {
		return badOption("ProgramOptions."+f[0], "not supported for code type %q (NVRTC only)", codeType)
	}
	if codeType == "ptx" && o.LTO {
		return badOption("ProgramOptions.LTO", "not supported for code type \"ptx\"")
	}
	return nil
}

// NVVMOptions validates o and renders it as libNVVM's option list (for a
// program of code type "nvvm" compiled to PTX or LTO-IR). Arch must be
// given as sm_NN or compute_NN and becomes -arch=compute_NN. A nil o gives
// no options.
func (o *ProgramOptions) NVVMOptions() ([]string, error) {
	if o == nil {
		return nil, nil
	}
	if err := o.validateCommon(); err != nil {
		return nil, err
	}
	if err := o.checkFor("nvvm"); err != nil {
		return nil, err
	}
	var out flagList
	if o.Arch != "" {
		a, _ := exactArch(o.Arch)
		out = append(out, "-arch="+a.Compute())
	}
	out.on(o.Debug, "-g", "-opt=0")
	out.on(o.FastMath, "-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1")
	out.tri("-ftz=", o.FTZ, bool01)
	out.tri("-prec-div=", o.PrecDiv, bool01)
	out.tri("-prec-sqrt=", o.PrecSqrt, bool01)
	out.tri("-fma=", o.FMAD, bool01)
	out.on(o.LTO, "-gen-lto")
	// LineInfo and MaxRegisters act when PTX becomes a CUBIN (nvJitLink).
	out = append(out, o.Extra...)
	return out, nil
}

// linkerOptions turns the options of a "ptx" or "nvvm" program into those
// of the nvJitLink step that makes a CUBIN. extra says whether Extra goes
// there (it does for "ptx", whose backend is nvJitLink).
func (o *ProgramOptions) linkerOptions(arch string, extra bool) *LinkerOptions {
	lo := &LinkerOptions{Arch: arch}
	if o == nil {
		return lo
	}
	lo.Debug = o.Debug
	lo.LineInfo = o.LineInfo
	lo.MaxRegisters = o.MaxRegisters
	if o.FastMath {
		t, f := true, false
		lo.FTZ, lo.PrecDiv, lo.PrecSqrt, lo.FMA = &t, &f, &f, &t
	}
	if o.FTZ != nil {
		lo.FTZ = o.FTZ
	}
	if o.PrecDiv != nil {
		lo.PrecDiv = o.PrecDiv
	}
	if o.PrecSqrt != nil {
		lo.PrecSqrt = o.PrecSqrt
	}
	if o.FMAD != nil {
		lo.FMA = o.FMAD
	}
	if extra {
		lo.Extra = o.Extra
	}
	return lo
}

// LinkerOptions are the options of a Linker, rendered to nvJitLink's
// options by NVJitLinkOptions. Arch is required.
type LinkerOptions struct {
	// Arch is the target: "sm_90" (or "compute_90" when linking to PTX).
	Arch string
	// Debug generates debug information (-g).
	Debug bool
	// LineInfo generates line information (-lineinfo).
	LineInfo bool
	// LTO performs link-time optimization (-lto); needed for LTO-IR
	// inputs and for Link("ptx").
	LTO bool
	// Optimization, when not nil, is the optimization level (-O0 or -O3;
	// nvJitLink accepts only 0 and 3).
	Optimization *int
	// MaxRegisters caps the registers per thread (-maxrregcount); 0
	// leaves the linker's choice.
	MaxRegisters int
	// FTZ, PrecDiv, PrecSqrt and FMA set one floating-point mode each
	// when not nil (-ftz, -prec-div, -prec-sqrt, -fma).
	FTZ, PrecDiv, PrecSqrt, FMA *bool
	// KernelsUsed and VariablesUsed list what the host uses; the rest may
	// be removed (-kernels-used, -variables-used).
	KernelsUsed, VariablesUsed []string
	// PtxasOptions are passed to ptxas (-Xptxas).
	PtxasOptions []string
	// Verbose writes verbose messages to the info log (-verbose).
	Verbose bool
	// Time writes timing information to the info log (-time).
	Time bool
	// Extra options are appended verbatim.
	Extra []string
	// NoCache links without the on-disk compile cache (see CacheDir).
	NoCache bool
}

// NVJitLinkOptions validates o and renders it as nvJitLink's option list.
func (o *LinkerOptions) NVJitLinkOptions() ([]string, error) {
	if o == nil || o.Arch == "" {
		return nil, badOption("LinkerOptions.Arch", "required (e.g. sm_90)")
	}
	if _, ok := exactArch(o.Arch); !ok {
		return nil, badOption("LinkerOptions.Arch", "unknown architecture %q (want sm_NN or compute_NN, e.g. sm_90; ParseArch reads other forms)", o.Arch)
	}
	out := flagList{"-arch=" + o.Arch}
	if o.MaxRegisters < 0 {
		return nil, badOption("LinkerOptions.MaxRegisters", "negative register count %d", o.MaxRegisters)
	}
	out.on(o.MaxRegisters > 0, "-maxrregcount="+strconv.Itoa(o.MaxRegisters))
	if o.Optimization != nil {
		if n := *o.Optimization; n != 0 && n != 3 {
			return nil, badOption("LinkerOptions.Optimization", "level %d: nvJitLink accepts only 0 and 3", n)
		}
		out = append(out, "-O"+strconv.Itoa(*o.Optimization))
	}
	out.on(o.Debug, "-g")
	out.on(o.LineInfo, "-lineinfo")
	out.on(o.LTO, "-lto")
	// 0/1, not true/false: with LTO nvJitLink hands these to libNVVM,
	// which rejects -ftz=true.
	out.tri("-ftz=", o.FTZ, bool01)
	out.tri("-prec-div=", o.PrecDiv, bool01)
	out.tri("-prec-sqrt=", o.PrecSqrt, bool01)
	out.tri("-fma=", o.FMA, bool01)
	if err := out.each("-kernels-used=", o.KernelsUsed, "LinkerOptions.KernelsUsed", "empty name"); err != nil {
		return nil, err
	}
	if err := out.each("-variables-used=", o.VariablesUsed, "LinkerOptions.VariablesUsed", "empty name"); err != nil {
		return nil, err
	}
	if err := out.each("-Xptxas=", o.PtxasOptions, "LinkerOptions.PtxasOptions", "empty option"); err != nil {
		return nil, err
	}
	out.on(o.Verbose, "-verbose")
	out.on(o.Time, "-time")
	for _, e := range o.Extra {
		if strings.TrimSpace(e) == "" {
			return nil, badOption("LinkerOptions.Extra", "empty option")
		}
	}
	out = append(out, o.Extra...)
	return out, nil
}

// FatbinOptions are the options of a FatbinBuilder (nvFatbinCreate's). A
// nil *FatbinOptions uses nvFatbin's defaults.
type FatbinOptions struct {
	// Name names the fatbin ObjectCode that Build returns.
	Name string
	// Compress, when not nil, enables or disables compression of the
	// entries (-compress=true|false).
	Compress *bool
	// CompressAll compresses every entry, even where it does not make it
	// smaller (-compress-all).
	CompressAll bool
	// Host names the host the fatbin is for (-host=linux|windows).
	Host string
	// Debug marks the fatbin as holding debug information (-g), as
	// nvcc -G makes it.
	Debug bool
	// Extra options are appended verbatim.
	Extra []string
}

// NVFatbinOptions validates o and renders it as nvFatbin's option list.
func (o *FatbinOptions) NVFatbinOptions() ([]string, error) {
	out := flagList{"-64"}
	if o == nil {
		return out, nil
	}
	out.tri("-compress=", o.Compress, boolStr)
	out.on(o.CompressAll, "-compress-all")
	out.on(o.Debug, "-g")
	switch o.Host {
	case "":
	case "linux", "windows":
		out = append(out, "-host="+o.Host)
	default:
		return nil, badOption("FatbinOptions.Host", "unknown host %q (want linux or windows)", o.Host)
	}
	for _, e := range o.Extra {
		if e == "" {
			return nil, badOption("FatbinOptions.Extra", "empty option")
		}
	}
	return append(out, o.Extra...), nil
}
