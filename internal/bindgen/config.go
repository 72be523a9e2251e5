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
	// logFuncs maps a C function to a Go expression that fetches the
	// compiler or linker log after it failed (with the handle argument).
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
	// core lists the calls package core makes to this library through its
	// own C layer (-core; see corecalls.go). Only the driver has it.
	core *coreConfig
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
		core:   &driverCore,
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
		logFuncs: map[string]string{"nvrtcCompileProgram": "programLog"},
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
			"nvJitLinkComplete": "linkErrorLog",
			"nvJitLinkAddData":  "linkErrorLog",
			"nvJitLinkAddFile":  "linkErrorLog",
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
			"nvvmCompileProgram": "programLog",
			"nvvmVerifyProgram":  "programLog",
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

// driverCore is what package core calls in the driver (go generate in core
// runs bindgen -lib driver -core .). Every other driver call of core's
// non-test code is refused by core's TestNoDirectDriverCalls.
//
// Each call is generated as a C shim (cgx_<name>) that makes the context
// current first when it has inCtx, and an unexported Go function of the
// same name as the C API (cuStreamSynchronize(ctx, hStream)); cOnly entries
// are only table entries for core's hand-written C (fastpath.h).
var driverCore = coreConfig{
	calls: []coreCall{
		// Making a context current (CGX_ENTER, Context.SetCurrent).
		{name: "cuCtxGetCurrent", flags: cOnly},
		{name: "cuCtxSetCurrent", flags: noCallback},

		// Contexts. cuCtxCreate_v2 is cg_ctx_create's fallback for drivers
		// before 12.5.
		{name: "cuCtxCreate", flags: cOnly},
		{name: "cuCtxCreate_v2", flags: cOnly},
		{name: "cuCtxPopCurrent", flags: cOnly},
		{name: "cuCtxDestroy"},
		{name: "cuCtxSynchronize", flags: inCtx},
		{name: "cuCtxGetStreamPriorityRange", flags: inCtx | noEscape | noCallback, outs: []string{"leastPriority", "greatestPriority"}},
		{name: "cuCtxEnablePeerAccess", flags: inCtx},
		{name: "cuMemGetInfo", flags: inCtx | noEscape | noCallback},

		// The driver and devices: no context.
		{name: "cuInit"},
		{name: "cuDriverGetVersion", flags: noEscape | noCallback},
		{name: "cuGetErrorString", flags: noEscape | noCallback},
		{name: "cuDeviceGetCount", flags: noEscape | noCallback},
		{name: "cuDeviceGet", flags: noEscape | noCallback},
		{name: "cuDeviceGetName", flags: noEscape | noCallback},
		{name: "cuDeviceGetUuid", flags: noEscape | noCallback},
		{name: "cuDeviceGetPCIBusId", flags: noEscape | noCallback},
		{name: "cuDeviceTotalMem", flags: noEscape | noCallback},
		{name: "cuDeviceGetAttribute", flags: noEscape | noCallback},
		{name: "cuDeviceCanAccessPeer", flags: noEscape | noCallback},
		{name: "cuDevicePrimaryCtxRetain", flags: noEscape | noCallback},
		{name: "cuDevicePrimaryCtxRelease"},
		{name: "cuDevicePrimaryCtxReset"},

		// Streams.
		{name: "cuStreamCreateWithPriority", flags: inCtx | noEscape | noCallback},
		{name: "cuStreamDestroy", flags: inCtx},
		{name: "cuStreamSynchronize", flags: inCtx | noCallback},
		{name: "cuStreamQuery", flags: inCtx | noCallback},
		{name: "cuStreamWaitEvent", flags: inCtx | noCallback},
		{name: "cuStreamAddCallback", flags: cOnly},
		{name: "cuLaunchHostFunc", flags: cOnly},
		{name: "cuStreamIsCapturing", flags: inCtx | noEscape | noCallback}, // and cg_capturing
		{name: "cuStreamBeginCapture", flags: inCtx},
		{name: "cuStreamEndCapture", flags: inCtx | noEscape | noCallback, outs: []string{"phGraph"}},

		// Events. cuEventElapsedTime is _v2 (12.8) in the headers; older
		// drivers have the first revision, with the same C signature.
		{name: "cuEventCreate", flags: inCtx | noEscape | noCallback},
		{name: "cuEventDestroy", flags: inCtx},
		{name: "cuEventRecord", flags: inCtx | noCallback},
		{name: "cuEventSynchronize", flags: inCtx | noCallback},
		{name: "cuEventQuery", flags: inCtx | noCallback},
		{name: "cuEventElapsedTime", flags: inCtx | noEscape | noCallback, outs: []string{"pMilliseconds"}, fallback: 2000},
		{name: "cuIpcGetEventHandle", flags: inCtx | noEscape | noCallback, outs: []string{"pHandle"}},
		{name: "cuIpcOpenEventHandle", flags: inCtx | noEscape | noCallback},

		// Memory.
		{name: "cuMemAlloc", flags: inCtx | noEscape | noCallback},
		{name: "cuMemFree", flags: inCtx},
		{name: "cuMemAllocAsync", flags: inCtx | noEscape | noCallback},
		{name: "cuMemFreeAsync", flags: inCtx | noCallback},
		{name: "cuMemHostAlloc", flags: inCtx | noEscape | noCallback},
		{name: "cuMemFreeHost", flags: inCtx},
		{name: "cuMemAllocManaged", flags: inCtx | noEscape | noCallback},
		{name: "cuPointerGetAttribute", flags: inCtx | noEscape | noCallback},

		// Pools of their own, shared between processes (IPCMemoryResource).
		// The pool is an output the header does not mark as one.
		{name: "cuMemPoolCreate", flags: inCtx | noEscape | noCallback, outs: []string{"pool"}},
		{name: "cuMemPoolDestroy", flags: inCtx},
		{name: "cuMemAllocFromPoolAsync", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolExportToShareableHandle", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolImportFromShareableHandle", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolExportPointer", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolImportPointer", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolGetAccess", flags: inCtx | noEscape | noCallback},
		{name: "cuMemPoolSetAccess", flags: inCtx | noEscape | noCallback},

		// Virtual memory (VirtualMemoryResource).
		{name: "cuMemGetAllocationGranularity", flags: inCtx | noEscape | noCallback},
		{name: "cuMemAddressReserve", flags: inCtx | noEscape | noCallback},
		{name: "cuMemAddressFree", flags: inCtx},
		{name: "cuMemCreate", flags: inCtx | noEscape | noCallback},
		{name: "cuMemRelease", flags: inCtx},
		{name: "cuMemMap", flags: inCtx},
		{name: "cuMemUnmap", flags: inCtx},
		{name: "cuMemSetAccess", flags: inCtx | noEscape | noCallback},

		// Copies and sets.
		{name: "cuMemcpyHtoDAsync", flags: cOnly},
		{name: "cuMemcpyDtoHAsync", flags: cOnly},
		{name: "cuMemcpyDtoDAsync", flags: inCtx | noCallback},
		{name: "cuMemcpyPeerAsync", flags: inCtx},
		{name: "cuMemsetD8Async", flags: inCtx | noCallback},
		{name: "cuMemsetD32Async", flags: inCtx | noCallback},

		// Strided copies (strided.go): cg_memcpy3d in fastpath.c queues
		// one or more 3-D copies and waits in the same C call. One
		// descriptor covers views of rank 1 to 3, and cuMemcpy3D, unlike
		// cuMemcpy2D, documents no pitch restriction on intra-device copies.
		{name: "cuMemcpy3DAsync", flags: cOnly},

		// Kernels.
		{name: "cuLaunchKernel", flags: cOnly},
		{name: "cuLaunchKernelEx", flags: cOnly},
		{name: "cuKernelGetFunction", flags: inCtx | noEscape | noCallback},
		{name: "cuKernelGetParamInfo", flags: inCtx | noEscape | noCallback, outs: []string{"paramSize"}},
		{name: "cuKernelGetAttribute", flags: inCtx | noEscape | noCallback},
		{name: "cuKernelSetAttribute", flags: inCtx},
		{name: "cuOccupancyMaxActiveBlocksPerMultiprocessor", flags: inCtx | noEscape | noCallback},
		{name: "cuOccupancyMaxPotentialBlockSize", flags: inCtx | noEscape | noCallback},

		// Graphs.
		{name: "cuGraphInstantiateWithFlags", flags: inCtx | noEscape | noCallback},
		{name: "cuGraphLaunch", flags: inCtx | noCallback},
		{name: "cuGraphUpload", flags: inCtx},
		{name: "cuGraphExecUpdate", flags: inCtx | noEscape | noCallback, outs: []string{"resultInfo"}},
		{name: "cuGraphDestroy", flags: inCtx},
		{name: "cuGraphExecDestroy", flags: inCtx},

		// Graphs built node by node (graphdef.go). cuGraphAddNode is _v2
		// (12.3, with edge data) in the 13.0 header; the first revision has
		// another signature, so there is no fallback.
		{name: "cuGraphCreate", flags: inCtx | noEscape | noCallback},
		{name: "cuGraphAddNode", flags: inCtx | noEscape | noCallback},
		{name: "cuGraphExecNodeSetParams", flags: inCtx | noEscape | noCallback},
		{name: "cuGraphConditionalHandleCreate", flags: inCtx | noEscape | noCallback, outs: []string{"pHandle_out"}},
		{name: "cuGraphGetNodes", flags: inCtx | noEscape | noCallback},
		{name: "cuGraphDebugDotPrint", flags: inCtx | noEscape | noCallback},

		// The device's graph memory pool (GraphMemoryResource).
		{name: "cuDeviceGraphMemTrim", flags: inCtx},
		{name: "cuDeviceGetGraphMemAttribute", flags: inCtx | noEscape | noCallback},
		{name: "cuDeviceSetGraphMemAttribute", flags: inCtx | noEscape | noCallback},

		// Libraries: context-independent.
		{name: "cuLibraryLoadData", flags: noEscape | noCallback},
		{name: "cuLibraryGetKernel", flags: noEscape | noCallback},
		{name: "cuLibraryUnload"},

		// The driver's JIT linker (Linker's fallback), in a context.
		{name: "cuLinkCreate", flags: inCtx, outs: []string{"stateOut"}},
		{name: "cuLinkAddData", flags: inCtx},
		{name: "cuLinkComplete", flags: inCtx | noEscape | noCallback, outs: []string{"cubinOut", "sizeOut"}},
		{name: "cuLinkDestroy", flags: inCtx},

		// Green contexts (greencontext.go): SM resources, their split, the
		// descriptor and the green context, its CUcontext and its streams.
		// None needs a current context: each names its device, resource or
		// green context. The descriptor and the green context are outputs
		// the header does not mark as such.
		{name: "cuDeviceGetDevResource", flags: noEscape | noCallback},
		{name: "cuGreenCtxGetDevResource", flags: noEscape | noCallback},
		{name: "cuDevSmResourceSplitByCount", flags: noEscape | noCallback},
		{name: "cuDevResourceGenerateDesc", flags: noEscape | noCallback, outs: []string{"phDesc"}},
		{name: "cuGreenCtxCreate", flags: noEscape | noCallback, outs: []string{"phCtx"}},
		{name: "cuGreenCtxDestroy"},
		{name: "cuCtxFromGreenCtx", flags: noEscape | noCallback},
		{name: "cuGreenCtxStreamCreate", flags: noEscape | noCallback},

		// Tensor maps for TMA (tensormap.go): encoded in the buffer's
		// device's primary context (the header lists
		// CUDA_ERROR_INVALID_CONTEXT among their errors).
		{name: "cuTensorMapEncodeTiled", flags: inCtx | noEscape | noCallback},
		{name: "cuTensorMapEncodeIm2col", flags: inCtx | noEscape | noCallback},
		{name: "cuTensorMapReplaceAddress", flags: inCtx | noEscape | noCallback},
	},
	// What fastpath.c takes from the header instead of spelling it.
	consts: []string{
		"CU_LAUNCH_ATTRIBUTE_COOPERATIVE",
		"CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION",
		"CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT",
		"CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT",
		"CU_LAUNCH_PARAM_END_AS_INT",
		"CU_STREAM_CAPTURE_STATUS_NONE",
		// cg_memcpy3d's memory types (strided copies).
		"CU_MEMORYTYPE_HOST",
		"CU_MEMORYTYPE_UNIFIED",
	},
	structs: []string{"CUlaunchConfig", "CUlaunchAttribute",
		"CUDA_MEMCPY3D", // cg_memcpy3d (strided copies)
	},
}

// layerCalls lists, per package folder (from the module root), the library
// functions the package calls: go generate there runs
// `go run ../internal/bindgen -calls .`, which writes calls_gen.go, .h and
// .c into it (layercalls.go says what they hold). Each call becomes an
// unexported Go function named <C prefix><GoName> (cublasSgemm for
// cublas.Sgemm) that takes ctx driver.Context and then the bindings
// function's own parameters, and makes ctx current within the cgo call
// that calls the library. To add a package: an entry here with its
// libraries and calls, the go:generate line in the package, go generate.
var layerCalls = map[string]*callList{
	"blas": {
		libs: []string{"cublas", "cublaslt"},
		calls: []string{
			"cublasCaxpy", "cublasCdotc", "cublasCdotu", "cublasCgemm", "cublasCgemmBatched",
			"cublasCgemmStridedBatched", "cublasCgemv", "cublasCreate", "cublasDaxpy", "cublasDdot",
			"cublasDestroy", "cublasDgemm", "cublasDgemmBatched", "cublasDgemmStridedBatched", "cublasDgemv",
			"cublasDnrm2", "cublasDznrm2", "cublasLtCreate", "cublasLtDestroy", "cublasLtMatmul",
			"cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy", "cublasLtMatmulDescSetAttribute", "cublasLtMatmulPreferenceCreate",
			"cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute", "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy", "cublasSaxpy",
			"cublasScnrm2", "cublasSdot", "cublasSetMathMode", "cublasSetPointerMode", "cublasSetStream",
			"cublasSetWorkspace", "cublasSgemm", "cublasSgemmBatched", "cublasSgemmStridedBatched", "cublasSgemv",
			"cublasSnrm2", "cublasZaxpy", "cublasZdotc", "cublasZdotu", "cublasZgemm",
			"cublasZgemmBatched", "cublasZgemmStridedBatched", "cublasZgemv",
		},
	},
	"fft": {
		libs: []string{"cufft"},
		calls: []string{
			"cufftCreate", "cufftDestroy", "cufftExecC2C", "cufftExecC2R", "cufftExecD2Z",
			"cufftExecR2C", "cufftExecZ2D", "cufftExecZ2Z", "cufftMakePlanMany64", "cufftSetAutoAllocation",
			"cufftSetStream", "cufftSetWorkArea",
		},
	},
	"rng": {
		libs: []string{"curand"},
		calls: []string{
			"curandCreateGenerator", "curandDestroyGenerator", "curandGenerate", "curandGenerateLogNormal", "curandGenerateLogNormalDouble",
			"curandGenerateLongLong", "curandGenerateNormal", "curandGenerateNormalDouble", "curandGeneratePoisson", "curandGenerateUniform",
			"curandGenerateUniformDouble", "curandSetGeneratorOffset", "curandSetGeneratorOrdering", "curandSetPseudoRandomGeneratorSeed", "curandSetQuasiRandomGeneratorDimensions",
			"curandSetStream",
		},
	},
	"solver": {
		libs: []string{"cusolver"},
		calls: []string{
			"cusolverDnCreate", "cusolverDnDestroy", "cusolverDnDgetrf", "cusolverDnDgetrf_bufferSize", "cusolverDnDgetrs",
			"cusolverDnDpotrf", "cusolverDnDpotrf_bufferSize", "cusolverDnDpotrs", "cusolverDnDsyevd", "cusolverDnDsyevd_bufferSize",
			"cusolverDnSetStream", "cusolverDnSgetrf", "cusolverDnSgetrf_bufferSize", "cusolverDnSgetrs", "cusolverDnSpotrf",
			"cusolverDnSpotrf_bufferSize", "cusolverDnSpotrs", "cusolverDnSsyevd", "cusolverDnSsyevd_bufferSize",
		},
	},
	"sparse": {
		libs: []string{"cusparse"},
		calls: []string{
			"cusparseCreate", "cusparseCreateCoo", "cusparseCreateCsr", "cusparseCreateDnMat", "cusparseCreateDnVec",
			"cusparseDestroy", "cusparseDestroyDnMat", "cusparseDestroyDnVec", "cusparseDestroySpMat", "cusparseSetStream",
			"cusparseSpMM", "cusparseSpMM_bufferSize", "cusparseSpMV", "cusparseSpMV_bufferSize",
		},
	},
	"gds": {
		libs: []string{"cufile"},
		calls: []string{
			"cuFileBufDeregister", "cuFileBufRegister", "cuFileDriverClose_v2", "cuFileDriverGetProperties", "cuFileDriverOpen",
			"cuFileGetVersion", "cuFileHandleDeregister", "cuFileHandleRegister", "cuFileRead", "cuFileReadAsync",
			"cuFileStreamDeregister", "cuFileWrite", "cuFileWriteAsync",
		},
		errno: []string{"cuFileRead", "cuFileWrite"},
	},
	// NCCL: communicators, the collectives and point-to-point calls, groups.
	"nccl": {
		libs: []string{"nccl"},
		calls: []string{
			"ncclAllGather", "ncclAllReduce", "ncclBroadcast", "ncclCommAbort", "ncclCommCount",
			"ncclCommCuDevice", "ncclCommDestroy", "ncclCommGetAsyncError", "ncclCommInitAll", "ncclCommInitRankConfig",
			"ncclCommShrink", "ncclCommSplit", "ncclCommUserRank", "ncclGetUniqueId", "ncclGetVersion",
			"ncclGroupEnd", "ncclGroupStart", "ncclRecv", "ncclReduce", "ncclReduceScatter",
			"ncclSend",
		},
		noEscape: []string{"ncclCommCount", "ncclCommCuDevice", "ncclCommGetAsyncError", "ncclCommUserRank", "ncclGetUniqueId", "ncclGetVersion"},
	},
	// A few calls of every math library (and a count-checked one of NVVM),
	// for the generator's tests: internal/calltest calls them without a GPU
	// and compares them with the bindings.
	"internal/calltest": {
		libs: []string{"cublas", "cublaslt", "curand", "cufft", "cusparse", "cusolver", "nvvm", "cufile"},
		calls: []string{
			"cublasCreate", "cublasDestroy", "cublasGetVersion", "cublasSetStream", "cublasSgemm", "cublasSgemm_64", "cublasLoggerConfigure",
			"cublasLtCreate", "cublasLtDestroy", "cublasLtMatmulDescCreate", "cublasLtMatmul",
			"curandCreateGenerator", "curandCreateGeneratorHost", "curandDestroyGenerator", "curandSetPseudoRandomGeneratorSeed", "curandGenerateUniform", "curandGenerateBinomial", "curandGetVersion",
			"cufftCreate", "cufftDestroy", "cufftMakePlan1d", "cufftExecC2C", "cufftEstimate1d",
			"cusparseCreate", "cusparseDestroy", "cusparseCreateMatDescr", "cusparseDestroyMatDescr", "cusparseCcsr2csr_compress",
			"cusolverDnCreate", "cusolverDnDestroy", "cusolverDnSgetrf_bufferSize", "cusolverDnSgetrf",
			"nvvmCreateProgram", "nvvmAddModuleToProgram", "nvvmDestroyProgram",
			"cuFileGetVersion", "cuFileDriverOpen", "cuFileUseCount", "cuFileHandleDeregister", "cuFileRead",
		},
		noEscape: []string{"cublasGetVersion", "curandGetVersion", "cufftEstimate1d", "nvvmCreateProgram"},
		errno:    []string{"cuFileRead"},
	},
}
