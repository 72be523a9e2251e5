package main

import (
	"sort"
	"strings"

	"github.com/cudago/cudago/internal/cudaheaders"
)

// header is one C header of a library at one CUDA version.
type header struct {
	version string // CUDA version: "12.4", "13.0" (see internal/cudaheaders); for extra: the version that added it
	file    string
	extra   bool // in internal/bindgen/extra: declarations newer than (or beside) the shared headers
}

// needs lists the headers that generating cfg reads, so that a missing one
// is named (with the others missing) before any is parsed.
func (cfg *libConfig) needs() []cudaheaders.Header {
	var hs []cudaheaders.Header
	for _, h := range append(append([]header{cfg.primary}, cfg.also...), cfg.others...) {
		if !h.extra {
			hs = append(hs, cudaheaders.Header{Version: h.version, File: h.file})
		}
	}
	if cfg.localHeaders {
		hs = append(hs, cudaheaders.Header{Version: localVersion, File: localMarker})
	}
	if cfg.procAddr {
		hs = append(hs, cudaheaders.Header{Version: "13.0", File: "cudaTypedefs.h"})
	}
	return hs
}

// libConfig says how one library's header becomes one Go package.
type libConfig struct {
	name    string // Go package name and -lib value
	pathLib string // pathfinder.Lib constant name
	// primary is the header the package is generated from; others only add
	// symbol names (older versions) and functions missing from the primary.
	primary header
	// also are further primary headers of the package (cusolverSp.h beside
	// cusolverDn.h): their types, macros and functions are its own too.
	also   []header
	others []header
	// includes are extra header folders (relative to the headers dir) for
	// headers the primary includes but does not own (cuda.h for cufile).
	includes []string
	// owned reports whether a declaration from this file belongs to the
	// package (the others are foreign and map to plain Go types).
	ownedFiles []string
	funcPrefix []string // C function prefixes to strip: "cu"
	typePrefix []string // C type prefixes to strip, longest first
	constPref  []string // C constant prefixes to strip, longest first
	resultType string   // C typedef of the status every function returns
	procAddr   bool     // resolve through cuGetProcAddress (the driver)
	// symbolCandidates returns the symbols to try, in order, for a function
	// declared as decl (the name after the preprocessor) in a header version.
	symbolCandidates func(decl string) (goName string, syms []string)
	// logFuncs maps a C function to the Go function (of the handle
	// argument) that reads the compiler or linker log after it failed.
	logFuncs map[string]string
	rename   map[string]string // C name -> Go name, for clashes
	skip     map[string]bool   // C names not to generate
	// skipPrefix: C functions whose names start with one of these are not
	// generated (NCCL's pncclX, the profiling alias of every ncclX).
	skipPrefix []string
	// since gives the library version that first declared a function
	// where the headers read skip releases (NCCL 2.22.3 and 2.28.3: those
	// between come from NCCL's history); it must lie between the oldest
	// header's version and the one of the first header that declares it.
	since map[string]string
	// outParams names parameters ("function.parameter") that are outputs
	// although the header's doc does not say so, or says [in] wrongly;
	// false: not an output although the doc says so (the call reads it too).
	outParams map[string]bool
	// sticky lists phrases of the header's doc of a status value that mark
	// it as leaving the context unusable (every later call fails with it);
	// when set, the status type gets a Sticky method true for those values.
	sticky []string
	// localHeaders: the library's 12.4 headers are read from the local CUDA
	// 12.4 install (.cuda/root/usr/include), and so are the headers that
	// the 13.0 ones include but the shared 13.0 folder lacks (cuda_fp16.h,
	// cuda_runtime.h, cudalibxt.h). See mathlibs.go.
	localHeaders bool
	// abiCheck: functions of older headers join only with the primary's
	// ABI (the runtime, see mathlibs.go); resolver is then the package's
	// Resolver, which honours the gated symbols.
	abiCheck bool
	resolver string
	// tagged: the struct, union and enum tags that no typedef names are
	// types too (the runtime's struct cudaDeviceProp, enum cudaMemcpyKind).
	tagged bool
	// sharedFiles are owned files that several packages own (library_types.h):
	// their names yield on a clash with the package's own, keeping the C
	// prefix (CudaEmulationStrategy).
	sharedFiles []string
	// verMacro names the header's own version macros (CURAND_VER gives
	// CURAND_VER_MAJOR, _MINOR, _PATCH): a function's Since is then the
	// library's version, which is what pathfinder reads from the library.
	verMacro string
	// foreign maps C typedefs to Go types that the package declares as
	// aliases: the same C type as another package's (cudaStream_t is the
	// driver's CUstream), or a Go builtin (cuComplex is complex64).
	foreign map[string]*foreignType

	// packedStatus names the bindings' Go function that turns a struct
	// status packed into 32 bits back into the error (cuFile's
	// CUfileError_t: cufile.PackedStatusError); the in-context calls of
	// layer packages (layercalls.go) need one for such a status.
	packedStatus string
	// libVersion is the library version of the headers read (not the
	// extra ones) where the library numbers itself apart from CUDA and
	// the header has no version macros (NVML: the driver's version).
	libVersion string
	// macroRevisions: a _vN function takes the plain API name only where
	// the header's macro selects it (#define nvmlInit nvmlInit_v2); a
	// revision no macro names keeps its own (nvmlDeviceGetMemoryInfo_v2
	// beside nvmlDeviceGetMemoryInfo, another ABI).
	macroRevisions bool
	// groupDocs: a function without a doc comment right above it takes
	// the one above the run of declarations it ends (nvml.h declares
	// nvmlDeviceGetMemoryInfo_v2 on the line after nvmlDeviceGetMemoryInfo),
	// or none: never the comment below, which documents the next function.
	groupDocs bool
}

func libNames() string {
	var n []string
	for k := range configs {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// versioned strips a trailing _vN (the driver's ABI revisions): cuMemAlloc_v2.
func versioned(name string) string {
	i := strings.LastIndex(name, "_v")
	if i < 0 {
		return name
	}
	for _, r := range name[i+2:] {
		if r < '0' || r > '9' {
			return name
		}
	}
	if i+2 == len(name) {
		return name
	}
	return name[:i]
}

var configs = map[string]*libConfig{
	"driver": {
		name: "driver", pathLib: "Driver",
		primary:    header{"13.0", "cuda.h", false},
		others:     []header{{"12.4", "cuda.h", false}, {"13.0", "cuda_extra.h", true}},
		ownedFiles: []string{"cuda.h", "cuda_extra.h"},
		funcPrefix: []string{"cu"},
		typePrefix: []string{"CUDA_", "CU_", "CU", "cu"},
		constPref:  []string{"CUDA_", "CU_"},
		resultType: "CUresult",
		procAddr:   true,
		// cuda.h ends the doc of every such code with one of these (700,
		// 714-719, and also 226, 702, 710, 721, 810, 911).
		sticky: []string{"must be terminated and relaunched", "cannot be used anymore"},
		symbolCandidates: func(decl string) (string, []string) {
			return versioned(decl), []string{decl}
		},
		// cuGetProcAddress is how every other entry point is found; the
		// package resolves it itself and exposes the versioned call.
		rename: map[string]string{"CUmem_advise": "MemAdvice", "CUmem_advise_enum": "MemAdvice"},
	},
	"nvrtc": {
		name: "nvrtc", pathLib: "NVRTC",
		primary:    header{"13.0", "nvrtc.h", false},
		others:     []header{{"12.4", "nvrtc.h", false}},
		ownedFiles: []string{"nvrtc.h"},
		funcPrefix: []string{"nvrtc"},
		typePrefix: []string{"nvrtc"},
		constPref:  []string{"NVRTC_"},
		resultType: "nvrtcResult",
		symbolCandidates: func(decl string) (string, []string) {
			return decl, []string{decl}
		},
		logFuncs: map[string]string{"nvrtcCompileProgram": "ProgramLog"},
	},
	"nvjitlink": {
		name: "nvjitlink", pathLib: "NVJitLink",
		primary:    header{"13.0", "nvJitLink.h", false},
		others:     []header{{"12.4", "nvJitLink.h", false}},
		ownedFiles: []string{"nvJitLink.h"},
		funcPrefix: []string{"nvJitLink"},
		typePrefix: []string{"nvJitLink"},
		constPref:  []string{"NVJITLINK_"},
		resultType: "nvJitLinkResult",
		// The header maps nvJitLinkCreate to __nvJitLinkCreate_13_0 through an
		// inline wrapper; each library exports its own versioned symbols.
		symbolCandidates: func(decl string) (string, []string) {
			if !strings.HasPrefix(decl, "__nvJitLink") {
				return decl, []string{decl}
			}
			base := strings.TrimPrefix(decl, "__")
			i := strings.LastIndex(base, "_")
			j := strings.LastIndex(base[:i], "_")
			base = base[:j]
			syms := []string{"__" + base + "_13_0"}
			for minor := 9; minor >= 0; minor-- {
				syms = append(syms, "__"+base+"_12_"+string(rune('0'+minor)))
			}
			return base, append(syms, base)
		},
		logFuncs: map[string]string{
			"nvJitLinkComplete": "ErrorLog",
			"nvJitLinkAddData":  "ErrorLog",
			"nvJitLinkAddFile":  "ErrorLog",
		},
	},
	"nvfatbin": {
		name: "nvfatbin", pathLib: "NVFatbin",
		primary:    header{"13.0", "nvFatbin.h", false},
		others:     []header{{"12.4", "nvFatbin.h", false}, {"13.1", "nvFatbin_13.1.h", true}},
		ownedFiles: []string{"nvFatbin.h", "nvFatbin_13.1.h"},
		funcPrefix: []string{"nvFatbin"},
		typePrefix: []string{"nvFatbin"},
		constPref:  []string{"NVFATBIN_"},
		resultType: "nvFatbinResult",
		symbolCandidates: func(decl string) (string, []string) {
			return decl, []string{decl}
		},
	},
	"nvvm": {
		name: "nvvm", pathLib: "NVVM",
		primary:    header{"12.4", "nvvm.h", false},
		ownedFiles: []string{"nvvm.h"},
		funcPrefix: []string{"nvvm"},
		typePrefix: []string{"nvvm"},
		constPref:  []string{"NVVM_"},
		resultType: "nvvmResult",
		symbolCandidates: func(decl string) (string, []string) {
			return decl, []string{decl}
		},
		logFuncs: map[string]string{
			"nvvmCompileProgram": "ProgramLog",
			"nvvmVerifyProgram":  "ProgramLog",
		},
		// nvvm.h documents the handle as "[in] prog" although the call
		// sets *prog ("set the value of its handle to *prog").
		outParams: map[string]bool{"nvvmCreateProgram.prog": true},
	},
	"cufile": {
		name: "cufile", pathLib: "CuFile",
		primary:    header{"13.0", "cufile.h", false},
		ownedFiles: []string{"cufile.h"},
		funcPrefix: []string{"cuFile"},
		typePrefix: []string{"CUfile", "CUFile", "cuFile", "CU_FILE_", "CUFILE_"},
		constPref:  []string{"CU_FILE_", "CUFILE_"},
		resultType: "CUfileError_t",
		symbolCandidates: func(decl string) (string, []string) {
			return decl, []string{decl}
		},
		rename:       map[string]string{"CUfileError_t": "Status", "CUfileError": "Status"},
		packedStatus: "PackedStatusError",
	},
}
