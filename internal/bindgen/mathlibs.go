package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The math libraries and the CUDA runtime. Their headers include the
// runtime's types (driver_types.h: cudaStream_t), library_types.h
// (cudaDataType, libraryPropertyType) and cuComplex.h:
//
//   - library_types.h is owned by every package whose header includes it,
//     as C does: cublas.R32F and cusparse.R32F are both CUDA_R_32F;
//   - handles that are the same C type as the driver's (cudaStream_t and
//     CUstream are both struct CUstream_st *) are aliases of the driver
//     package's types, so a driver.Stream, or a core.Stream's Handle(),
//     is passed as it is;
//   - cuComplex and cuDoubleComplex are complex64 and complex128, which
//     have their memory layout; __half and __nv_bfloat16 are their bits;
//   - the other runtime types map to plain Go types (an enum to its
//     integer, a pointer handle to uintptr).

// foreignType is a C typedef of another header that the package declares
// as an alias (goName = target), or, with goName "", uses as target itself.
type foreignType struct {
	goName, target, doc string
	importPath          string // of the package target names, or ""
}

const driverImport = "github.com/cudago/cudago/bindings/driver"

func driverAlias(goName, drv, c, cu string) *foreignType {
	return &foreignType{goName: goName, target: "driver." + drv, importPath: driverImport,
		doc: goName + " is the C type " + c + ", the same C type as the driver's " + cu +
			": a driver." + drv + " is passed as it is (a core." + drv + "'s Handle(), for example)."}
}

// runtimeHandles are the runtime's handles that are driver handles in C.
var runtimeHandles = map[string]*foreignType{
	"cudaStream_t":    driverAlias("Stream", "Stream", "cudaStream_t", "CUstream"),
	"cudaEvent_t":     driverAlias("Event", "Event", "cudaEvent_t", "CUevent"),
	"cudaGraph_t":     driverAlias("Graph", "Graph", "cudaGraph_t", "CUgraph"),
	"cudaGraphExec_t": driverAlias("GraphExec", "GraphExec", "cudaGraphExec_t", "CUgraphExec"),
	"cudaGraphNode_t": driverAlias("GraphNode", "GraphNode", "cudaGraphNode_t", "CUgraphNode"),
}

// mathForeign is the foreign map of the math libraries.
var mathForeign = func() map[string]*foreignType {
	m := map[string]*foreignType{
		"cuFloatComplex":  {target: "complex64"},
		"cuComplex":       {target: "complex64"},
		"cuDoubleComplex": {target: "complex128"},
		"__half": {goName: "Half", target: "uint16",
			doc: "Half is the C type __half: the bits of an IEEE 754 half-precision number."},
		"__nv_bfloat16": {goName: "BFloat16", target: "uint16",
			doc: "BFloat16 is the C type __nv_bfloat16: the bits of a bfloat16 number."},
	}
	for k, v := range runtimeHandles {
		m[k] = v
	}
	return m
}()

// localVersion is the CUDA version of the local install's headers.
const localVersion = "12.4"

// localPredefined is defined before a math library's header is parsed.
// cuda_fp16.h and cuda_bf16.h declare nothing for C (__half and
// __nv_bfloat16 are C++ classes), but include libcu++'s <nv/target>, which
// Debian's 12.4 headers lack: their include guards are defined instead.
// internal/layoutcheck does the same.
const localPredefined = "#define __CUDA_FP16_H__\n#define __CUDA_BF16_H__\n"

// foreignGoType returns the Go type of a foreign C typedef, or "" when the
// package has no mapping for it, and records that the package uses it.
func (m *model) foreignGoType(cname string) string {
	f, ok := m.cfg.foreign[cname]
	if !ok {
		return ""
	}
	if m.usedForeign == nil {
		m.usedForeign = map[string]*foreignType{}
	}
	m.usedForeign[cname] = f
	if f.goName != "" {
		return f.goName
	}
	return f.target
}

// foreignAliases returns the used foreign types that the package declares,
// by Go name.
func (m *model) foreignAliases() []*foreignType {
	var out []*foreignType
	seen := map[string]bool{}
	var cnames []string
	for c := range m.usedForeign {
		cnames = append(cnames, c)
	}
	// By C name first: cudaDataType and cudaDataType_t are both DataType,
	// and the doc of the first one is kept.
	sort.Strings(cnames)
	for _, c := range cnames {
		f := m.usedForeign[c]
		if f.goName != "" && !seen[f.goName] {
			seen[f.goName] = true
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].goName < out[j].goName })
	return out
}

// shared reports whether file is one of the configured shared files.
func (m *model) shared(file string) bool {
	return slices.Contains(m.cfg.sharedFiles, filepath.Base(file))
}

// fullTypeName is the Go name of a C type with its prefix kept.
func fullTypeName(cname string) string {
	return exportName(strings.TrimSuffix(cname, "_t"))
}

// localInclude returns the include folder of the local CUDA 12.4 install
// (scripts/setup-cuda.sh): $CUDAGO_LOCAL_CUDA/usr/include, or the first
// .cuda/root/usr/include above the working directory.
func localInclude() (string, error) {
	if r := os.Getenv("CUDAGO_LOCAL_CUDA"); r != "" {
		return filepath.Join(r, "usr", "include"), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, ".cuda", "root", "usr", "include")
		if _, err := os.Stat(filepath.Join(c, "cuda_runtime_api.h")); err == nil {
			return c, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no local CUDA 12.4 install (.cuda/root/usr/include) above " + wd + ": run scripts/setup-cuda.sh")
		}
	}
}

// versionFromMacros reads the library version a header declares through
// PREFIX_MAJOR, PREFIX_MINOR and PREFIX_PATCH: "10.4.0".
func (u *unit) versionFromMacros(prefix string) string {
	var parts []string
	for _, s := range []string{"_MAJOR", "_MINOR", "_PATCH"} {
		mac, ok := u.ast.Macros[prefix+s]
		if !ok {
			return ""
		}
		rl := mac.ReplacementList()
		if len(rl) != 1 {
			return ""
		}
		parts = append(parts, rl[0].SrcStr())
	}
	return strings.Join(parts, ".")
}

func plainSymbol(decl string) (string, []string) { return decl, []string{decl} }

func init() {
	configs["curand"] = &libConfig{
		name: "curand", pathLib: "CuRAND",
		primary:          header{"13.0", "curand.h", false},
		others:           []header{{localVersion, "curand.h", false}},
		localHeaders:     true,
		verMacro:         "CURAND_VER",
		ownedFiles:       []string{"curand.h", "library_types.h"},
		funcPrefix:       []string{"curand"},
		typePrefix:       []string{"curand", "cuda"},
		constPref:        []string{"CURAND_", "CUDA_"},
		resultType:       "curandStatus_t",
		foreign:          mathForeign,
		rename:           map[string]string{"curandStatus_t": "Status", "curandStatus": "Status"},
		symbolCandidates: plainSymbol,
	}
}

func init() {
	configs["cufft"] = &libConfig{
		name: "cufft", pathLib: "CuFFT",
		primary:          header{"13.0", "cufftXt.h", false},
		others:           []header{{localVersion, "cufftXt.h", false}},
		localHeaders:     true,
		verMacro:         "CUFFT_VER",
		ownedFiles:       []string{"cufft.h", "cufftXt.h", "cudalibxt.h", "library_types.h"},
		funcPrefix:       []string{"cufft"},
		typePrefix:       []string{"cufft", "cuda"},
		constPref:        []string{"CUFFT_", "CUDA_"},
		resultType:       "cufftResult",
		foreign:          mathForeign,
		rename:           map[string]string{"cufftResult": "Result", "cufftResult_t": "Result"},
		symbolCandidates: plainSymbol,
	}
}

// cublasAPI is the API name of a cuBLAS symbol: cublas_v2.h maps
// cublasSgemm to cublasSgemm_v2 and cublasSgemm_64 to cublasSgemm_v2_64 (the
// ILP64 variant, with 64-bit sizes), which bind as Sgemm and Sgemm64.
func cublasAPI(decl string) (string, []string) {
	base, ilp := strings.CutSuffix(decl, "_64")
	api := versioned(base)
	if ilp {
		api += "_64"
	}
	return api, []string{decl}
}

func init() {
	configs["cublas"] = &libConfig{
		name: "cublas", pathLib: "CuBLAS",
		primary: header{"13.0", "cublas_v2.h", false},
		// cublas_half.h: the __half and __nv_bfloat16 functions that
		// cublas_api.h declares for C++ only; cuBLAS 12.4.5 has them all.
		others:           []header{{localVersion, "cublas_v2.h", false}, {"12.4.5", "cublas_half.h", true}},
		localHeaders:     true,
		verMacro:         "CUBLAS_VER",
		ownedFiles:       []string{"cublas_api.h", "cublas_v2.h", "cublas_half.h", "library_types.h"},
		sharedFiles:      []string{"library_types.h"},
		funcPrefix:       []string{"cublas"},
		typePrefix:       []string{"cublas", "cuda"},
		constPref:        []string{"CUBLAS_", "CUDA_"},
		resultType:       "cublasStatus_t",
		foreign:          mathForeign,
		rename:           map[string]string{"cublasStatus_t": "Status"},
		symbolCandidates: cublasAPI,
	}
}

const cublasImport = "github.com/cudago/cudago/bindings/cublas"

// cublasForeign maps the types that cublasLt.h shares with cuBLAS (from
// cublas_api.h and library_types.h, which it includes) to package cublas's.
func cublasForeign() map[string]*foreignType {
	m := map[string]*foreignType{}
	for k, v := range mathForeign {
		m[k] = v
	}
	for c, g := range map[string]string{
		"cublasStatus_t": "Status", "cublasComputeType_t": "ComputeType", "cublasOperation_t": "Operation",
		"cublasFillMode_t": "FillMode", "cublasEmulationStrategy_t": "EmulationStrategy",
		"cudaDataType": "DataType", "cudaDataType_t": "DataType", "libraryPropertyType": "LibraryPropertyType",
		"libraryPropertyType_t": "LibraryPropertyType", "cudaEmulationMantissaControl": "EmulationMantissaControl",
		"cudaEmulationMantissaControl_t": "EmulationMantissaControl", "cudaEmulationSpecialValuesSupport": "EmulationSpecialValuesSupport",
		"cudaEmulationSpecialValuesSupport_t": "EmulationSpecialValuesSupport",
	} {
		m[c] = &foreignType{goName: g, target: "cublas." + g, importPath: cublasImport,
			doc: g + " is cuBLAS's " + c + " (cublasLt.h includes cublas_api.h): cublas." + g + ", with its constants."}
	}
	return m
}

func init() {
	configs["cublaslt"] = &libConfig{
		name: "cublaslt", pathLib: "CuBLASLt",
		primary:          header{"13.0", "cublasLt.h", false},
		others:           []header{{localVersion, "cublasLt.h", false}},
		localHeaders:     true,
		verMacro:         "CUBLAS_VER",
		ownedFiles:       []string{"cublasLt.h"},
		funcPrefix:       []string{"cublasLt"},
		typePrefix:       []string{"cublasLt"},
		constPref:        []string{"CUBLASLT_"},
		resultType:       "cublasStatus_t",
		foreign:          cublasForeign(),
		symbolCandidates: plainSymbol,
	}
}

func init() {
	configs["cusparse"] = &libConfig{
		name: "cusparse", pathLib: "CuSPARSE",
		primary: header{"13.0", "cusparse.h", false},
		// cusparse_half.h: the __half functions that cusparse.h declares
		// for C++ only; cuSPARSE 12.3.1 (CUDA 12.4) has them all.
		others:           []header{{localVersion, "cusparse.h", false}, {"12.3.1", "cusparse_half.h", true}},
		localHeaders:     true,
		verMacro:         "CUSPARSE_VER",
		ownedFiles:       []string{"cusparse.h", "cusparse_half.h", "library_types.h"},
		sharedFiles:      []string{"library_types.h"},
		funcPrefix:       []string{"cusparse"},
		typePrefix:       []string{"cusparse", "cuda"},
		constPref:        []string{"CUSPARSE_", "CUDA_"},
		resultType:       "cusparseStatus_t",
		foreign:          mathForeign,
		rename:           map[string]string{"cusparseStatus_t": "Status"},
		symbolCandidates: plainSymbol,
	}
}

const cusparseImport = "github.com/cudago/cudago/bindings/cusparse"

// cusolverForeign maps the cuBLAS and cuSPARSE types that cuSOLVER's
// headers use (cusolverDn.h includes cublas_v2.h, cusolverSp.h
// cusparse.h) to those packages' types.
func cusolverForeign() map[string]*foreignType {
	m := map[string]*foreignType{}
	for k, v := range mathForeign {
		m[k] = v
	}
	for c, g := range map[string]string{
		"cublasFillMode_t": "FillMode", "cublasOperation_t": "Operation", "cublasSideMode_t": "SideMode", "cublasDiagType_t": "DiagType",
	} {
		m[c] = &foreignType{goName: g, target: "cublas." + g, importPath: cublasImport,
			doc: g + " is cuBLAS's " + c + " (cusolverDn.h includes cublas_v2.h): cublas." + g + ", with its constants."}
	}
	m["cusparseMatDescr_t"] = &foreignType{goName: "MatDescr", target: "cusparse.MatDescr", importPath: cusparseImport,
		doc: "MatDescr is cuSPARSE's cusparseMatDescr_t (cusolverSp.h includes cusparse.h): a cusparse.MatDescr."}
	return m
}

func init() {
	configs["cusolver"] = &libConfig{
		name: "cusolver", pathLib: "CuSOLVER",
		primary:          header{"13.0", "cusolverDn.h", false},
		also:             []header{{"13.0", "cusolverSp.h", false}},
		others:           []header{{localVersion, "cusolverDn.h", false}, {localVersion, "cusolverSp.h", false}},
		localHeaders:     true,
		verMacro:         "CUSOLVER_VER",
		ownedFiles:       []string{"cusolverDn.h", "cusolverSp.h", "cusolver_common.h", "library_types.h"},
		sharedFiles:      []string{"library_types.h"},
		funcPrefix:       []string{"cusolver"},
		typePrefix:       []string{"cusolver", "cuda"},
		constPref:        []string{"CUSOLVER_", "CUDA_"},
		resultType:       "cusolverStatus_t",
		foreign:          cusolverForeign(),
		rename:           map[string]string{"cusolverStatus_t": "Status"},
		symbolCandidates: plainSymbol,
	}
}
