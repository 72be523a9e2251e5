package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cudago/cudago/internal/version"
	"modernc.org/cc/v4"
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
			":\na driver." + drv + " is passed as it is" + coreNote[drv] + "."}
}

// coreNote says where package core hands out a driver handle.
var coreNote = map[string]string{
	"Stream": " (a core.Stream's Handle(), for example)", "Event": " (a core.Event's Handle())",
	"Graph": " (a core.Graph's Handle())", "GraphExec": " (a core.GraphExec's Handle())", "Kernel": " (a core.Kernel's Handle())",
}

// runtimeHandles are the runtime's handles that are driver handles in C:
// pointers to the same struct tag (struct CUstream_st for both cudaStream_t
// and CUstream). cudaExternalMemory_t (struct CUexternalMemory_st, where
// the driver has CUextMemory_st), cudaArray_t and cudaGraphicsResource_t
// are not: the runtime package has its own types for them.
var runtimeHandles = map[string]*foreignType{
	"cudaStream_t":           driverAlias("Stream", "Stream", "cudaStream_t", "CUstream"),
	"cudaEvent_t":            driverAlias("Event", "Event", "cudaEvent_t", "CUevent"),
	"cudaGraph_t":            driverAlias("Graph", "Graph", "cudaGraph_t", "CUgraph"),
	"cudaGraphExec_t":        driverAlias("GraphExec", "GraphExec", "cudaGraphExec_t", "CUgraphExec"),
	"cudaGraphNode_t":        driverAlias("GraphNode", "GraphNode", "cudaGraphNode_t", "CUgraphNode"),
	"cudaUserObject_t":       driverAlias("UserObject", "UserObject", "cudaUserObject_t", "CUuserObject"),
	"cudaFunction_t":         driverAlias("Function", "Function", "cudaFunction_t", "CUfunction"),
	"cudaKernel_t":           driverAlias("Kernel", "Kernel", "cudaKernel_t", "CUkernel"),
	"cudaLibrary_t":          driverAlias("Library", "Library", "cudaLibrary_t", "CUlibrary"),
	"cudaMemPool_t":          driverAlias("MemPool", "MemoryPool", "cudaMemPool_t", "CUmemoryPool"),
	"cudaGraphDeviceNode_t":  driverAlias("GraphDeviceNode", "GraphDeviceNode", "cudaGraphDeviceNode_t", "CUgraphDeviceNode"),
	"cudaLogsCallbackHandle": driverAlias("LogsCallbackHandle", "LogsCallbackHandle", "cudaLogsCallbackHandle", "CUlogsCallbackHandle"),
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

// localMarker is a header that only a full include folder of localVersion
// has (shared/cuda-headers/12.4 holds six headers): a library with
// localHeaders reads its 12.4 headers, and the 13.0 ones' missing includes,
// from the first 12.4 folder holding it, normally the local install of
// scripts/setup-cuda.sh.
const localMarker = "cuda_runtime_api.h"

// localPredefined is defined before a math library's header is parsed.
// cuda_fp16.h and cuda_bf16.h declare nothing for C (__half and
// __nv_bfloat16 are C++ classes), but include libcu++'s <nv/target>, which
// Debian's 12.4 headers lack: their include guards are defined instead.
// internal/testing/layoutcheck does the same.
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

// collectTagged claims the names of the owned struct, union and enum
// definitions that no typedef names (C code writes struct cudaDeviceProp),
// named by tag, and returns a function that defines them. It runs before
// the typedefs are defined, so that those types are named before any
// constant (cudaJit_CacheMode is JitCacheMode, the cudaJitOption value
// cudaJitCacheMode JitOption_JitCacheMode).
func (m *model) collectTagged(u *unit) (define func()) {
	type tagDef struct {
		t                    cc.Type
		tag, file, doc, name string
	}
	named := map[string]bool{} // tags a typedef names
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr != nil && dr.IsTypename() && plainDeclarator(dr) {
			named[tagName(dr.Type())] = true
		}
	})
	var defs []*tagDef
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr != nil || !m.owned(d.Position().Filename) {
			return
		}
		for ds := d.DeclarationSpecifiers; ds != nil; ds = ds.DeclarationSpecifiers {
			if ds.Case != cc.DeclarationSpecifiersTypeSpec {
				continue
			}
			ts := ds.TypeSpecifier
			var t cc.Type
			switch {
			case ts.StructOrUnionSpecifier != nil && ts.StructOrUnionSpecifier.StructDeclarationList != nil:
				t = ts.StructOrUnionSpecifier.Type()
			case ts.EnumSpecifier != nil && ts.EnumSpecifier.EnumeratorList != nil:
				t = ts.EnumSpecifier.Type()
			default:
				continue
			}
			tag := tagName(t)
			if tag == "" || named[tag] || m.goTypeOf[tag] != "" || m.cfg.foreign[tag] != nil {
				continue
			}
			def := &tagDef{t: t, tag: tag, file: d.Position().Filename, doc: docAbove(u, d.Position())}
			def.name = m.claim(m.goTypeName(tag), "type "+tag)
			m.goTypeOf[tag] = def.name
			defs = append(defs, def)
		}
	})
	return func() {
		for _, def := range defs {
			cname := def.tag
			if def.t.Kind() != cc.Enum {
				cname = def.t.Kind().String() + " " + def.tag // struct cudaDeviceProp, for the layout test
			}
			m.defineTypeOf(u, def.t, cname, def.file, def.name, def.doc)
		}
	}
}

// tagName is the tag of a struct, union or enum type ("" if none).
func tagName(t cc.Type) string {
	type tagged interface{ Tag() cc.Token }
	if tt, ok := t.(tagged); ok {
		tok := tt.Tag()
		return tok.SrcStr()
	}
	return ""
}

// taggedGoType is the Go type of a tagged type that no typedef names, where
// the package collects those (tagged), or "".
func (m *model) taggedGoType(t cc.Type) string {
	if !m.cfg.tagged || t.Typedef() != nil {
		return ""
	}
	switch t.Kind() {
	case cc.Struct, cc.Union, cc.Enum:
		return m.goTypeOf[tagName(t)]
	}
	return ""
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
		// Not in 12.4's header, but in cuBLAS since 12.5 (CUDA 12.5), not
		// since 13.0's header: the missing-function error names 12.5.
		since: map[string]string{"cublasGemmGroupedBatchedEx": "12.5.0", "cublasGemmGroupedBatchedEx_64": "12.5.0"},
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

func init() {
	configs["runtime"] = &libConfig{
		name: "runtime", pathLib: "CUDART",
		primary:      header{"13.0", "cuda_runtime_api.h", false},
		others:       []header{{localVersion, "cuda_runtime_api.h", false}},
		localHeaders: true,
		tagged:       true,
		abiCheck:     true,
		resolver:     "resolve",
		ownedFiles: []string{"cuda_runtime_api.h", "driver_types.h", "vector_types.h", "surface_types.h",
			"texture_types.h", "device_types.h"},
		funcPrefix: []string{"cuda"},
		typePrefix: []string{"cuda"},
		constPref:  []string{"cuda"},
		resultType: "cudaError_t",
		foreign:    runtimeHandles,
		// driver_types.h ends the doc of every such code with this, as
		// cuda.h does (cudaErrorIllegalAddress, cudaErrorLaunchFailure, ...).
		sticky: []string{"must be terminated and relaunched"},
		rename: map[string]string{"cudaError_t": "Result", "cudaError": "Result"},
		symbolCandidates: func(decl string) (string, []string) {
			return versioned(decl), []string{decl}
		},
	}
}

// abiDoc says what a gated function (abiCheck) does before its version.
func (f *funcDef) abiDoc() string {
	v := fmt.Sprintf("%d.%d", f.procVersion/1000, f.procVersion%1000/10)
	if len(f.syms) > 1 {
		return fmt.Sprintf("Go: before CUDA %s the library exports %s with another ABI; there this calls %s, the revision with this one.",
			v, f.syms[0], strings.Join(f.syms[1:], " or "))
	}
	return fmt.Sprintf("Go: before CUDA %s the library exports %s with another ABI (another signature, or structs laid out differently), and no revision with this one: there this returns a *MissingFunctionError.", v, f.syms[0])
}

// ---- the runtime's ABI revisions ----
//
// The runtime has no cuGetProcAddress: a symbol's ABI is its library's.
// CUDA 13.0 gave some plain names the signature their _v2 revision had in
// CUDA 12 (cudaGraphAddDependencies takes edge data, cudaMemAdvise a
// cudaMemLocation), and changed struct layouts (struct cudaDeviceProp is
// 1008 bytes, 1032 in 12.4). With abiCheck, a function of an older header
// is compared with the primary's by its ABI (parameter classes, and the
// layouts of the structs they point to):
//
//   - the same ABI under another symbol (cudaGraphAddDependencies_v2):
//     that symbol is tried after the primary's;
//   - another ABI under the primary's symbol, or a macro in the older header
//     that sends the name elsewhere (cudaGetDeviceProperties to _v2): the
//     primary's symbol is valid only from the primary's version on (Version;
//     the package's resolver skips it before), and the older declaration
//     is not bound;
//   - a function only older headers declare is bound only when the Go types
//     (the primary's) have its ABI.

// abiKey describes how a value of type t is passed: its class and size.
func abiKey(t cc.Type) string {
	switch t.Kind() {
	case cc.Ptr:
		return "p"
	case cc.Array:
		return fmt.Sprintf("a%d%s", t.(*cc.ArrayType).Len(), abiKey(t.(*cc.ArrayType).Elem()))
	case cc.Struct, cc.Union:
		return fmt.Sprintf("s%d.%d", t.Size(), t.Align())
	case cc.Float, cc.Double, cc.LongDouble:
		return fmt.Sprintf("f%d", t.Size())
	case cc.Void:
		return "v"
	}
	return fmt.Sprintf("i%d", t.Size())
}

type fielder interface {
	NumFields() int
	FieldByIndex(int) *cc.Field
}

// layoutCompatible reports whether a library built for the struct (or
// union) old reads and writes a value laid out as cur correctly: cur has
// every field of old, by name, at the same offset and with a compatible
// type, and is at least as big (CUDA 13.0 appended members to some).
func layoutCompatible(old, cur cc.Type) bool {
	if old.Kind() != cur.Kind() || old.IsIncomplete() || cur.IsIncomplete() {
		return old.IsIncomplete() && cur.IsIncomplete()
	}
	if old.Size() > cur.Size() {
		return false
	}
	fo, fc := old.(fielder), cur.(fielder)
	byName := map[string]*cc.Field{}
	for i := 0; i < fc.NumFields(); i++ {
		f := fc.FieldByIndex(i)
		byName[fieldKey(f, i)] = f
	}
	for i := 0; i < fo.NumFields(); i++ {
		o := fo.FieldByIndex(i)
		c, ok := byName[fieldKey(o, i)]
		if !ok || c.Offset() != o.Offset() || !valueCompatible(o.Type(), c.Type()) {
			return false
		}
	}
	return true
}

func fieldKey(f *cc.Field, i int) string {
	if f.Name() != "" {
		return f.Name()
	}
	return fmt.Sprintf("#%d", i)
}

// valueCompatible reports whether a value of type cur is what a library
// built for old expects in its place: the same class and size, a struct
// of the same size with a compatible layout.
func valueCompatible(old, cur cc.Type) bool {
	if abiKey(old) != abiKey(cur) {
		return false
	}
	switch old.Kind() {
	case cc.Struct, cc.Union:
		return layoutCompatible(old, cur)
	case cc.Array:
		return valueCompatible(old.(*cc.ArrayType).Elem(), cur.(*cc.ArrayType).Elem())
	}
	return true
}

// paramCompatible is valueCompatible, except that a pointer to a struct
// may point to a larger, compatible one.
func paramCompatible(old, cur cc.Type) bool {
	if old.Kind() == cc.Ptr && cur.Kind() == cc.Ptr {
		eo, ec := old.(*cc.PointerType).Elem(), cur.(*cc.PointerType).Elem()
		if eo.Kind() == cc.Struct || eo.Kind() == cc.Union {
			return layoutCompatible(eo, ec)
		}
		return true
	}
	return valueCompatible(old, cur)
}

// funcCompatible reports whether calling a library function declared as
// old with the arguments of cur is correct.
func funcCompatible(old, cur []cc.Type) bool {
	if len(old) != len(cur) {
		return false
	}
	for i := range old {
		if !paramCompatible(old[i], cur[i]) {
			return false
		}
	}
	return true
}

// signature is the result and parameter types of ft.
func signature(ft *cc.FunctionType) []cc.Type {
	out := []cc.Type{ft.Result()}
	for _, p := range ft.Parameters() {
		out = append(out, p.Type())
	}
	return out
}

// primaryTypes maps the primary's struct, union and enum names (typedefs
// and tags) to their types, for boundSignature.
func primaryTypes(u *unit) map[string]cc.Type {
	m := map[string]cc.Type{}
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr != nil && dr.IsTypename() {
			m[dr.Name()] = dr.Type()
		}
		for ds := d.DeclarationSpecifiers; ds != nil; ds = ds.DeclarationSpecifiers {
			if ds.Case != cc.DeclarationSpecifiersTypeSpec || ds.TypeSpecifier.StructOrUnionSpecifier == nil {
				continue
			}
			if t := ds.TypeSpecifier.StructOrUnionSpecifier.Type(); tagName(t) != "" && !t.IsIncomplete() {
				m["tag "+tagName(t)] = t
			}
		}
	})
	return m
}

// boundType is the primary's type of the same name as t (what the Go
// binding passes for t), or t itself.
func boundType(t cc.Type, prim map[string]cc.Type) cc.Type {
	if td := t.Typedef(); td != nil {
		if p, ok := prim[td.Name()]; ok {
			return p
		}
	}
	if tag := tagName(t); tag != "" {
		if p, ok := prim["tag "+tag]; ok {
			return p
		}
	}
	return t
}

// boundSignature is the signature of ft as the Go binding, built from the
// primary's types, passes it: every struct is the primary's of its name.
func boundSignature(ft *cc.FunctionType, prim map[string]cc.Type) []cc.Type {
	var out []cc.Type
	for _, t := range signature(ft) {
		if t.Kind() == cc.Ptr {
			if el := t.(*cc.PointerType).Elem(); el.Kind() == cc.Struct || el.Kind() == cc.Union {
				out = append(out, boundType(el, prim).Pointer())
				continue
			}
		}
		out = append(out, boundType(t, prim))
	}
	return out
}

// abiAccept decides whether f, declared by the older header u, may join
// the model (see above); it gates a primary function's symbol where u's
// library has another ABI under it.
func (m *model) abiAccept(u *unit, f *funcDef, byName, byDecl map[string]*funcDef, prim map[string]cc.Type, primVersion int) bool {
	prev := byName[f.cname]
	if prev == nil {
		prev = byDecl[f.decl]
	}
	if prev == nil {
		if p := byName[versioned(f.decl)]; p != nil && funcCompatible(signature(f.ft), signature(p.ft)) {
			// An explicit revision with the primary's ABI
			// (cudaStreamGetCaptureInfo_v3 of 12.4): a symbol to try.
			if !contains(p.syms, f.decl) {
				p.syms = append(p.syms, f.decl)
			}
			if version.Less(u.since, p.since) {
				p.since = u.since
			}
			return false
		}
		// Only older headers declare it: the Go types must fit its ABI.
		if !funcCompatible(signature(f.ft), boundSignature(f.ft, prim)) {
			m.abiSkipped = append(m.abiSkipped, f.decl)
			return false
		}
		return true
	}
	gate := func() { prev.procVersion = primVersion }
	if cur := currentDecl(u, prev.cname); cur != "" && cur != prev.decl {
		gate() // the older header sends the name to a revision: its plain symbol is the legacy ABI
	}
	if !funcCompatible(signature(f.ft), signature(prev.ft)) {
		if f.decl == prev.decl {
			gate()
		} else if funcCompatible(signature(f.ft), boundSignature(f.ft, prim)) && byName[f.decl] == nil {
			// Another revision under its own symbol, which the Go types
			// fit (cudaStreamGetCaptureInfo_v2): bound by that name.
			f.cname = f.decl
			f.goName = exportName(stripPrefix(f.decl, m.cfg.funcPrefix))
			return true
		}
		m.abiSkipped = append(m.abiSkipped, f.decl)
		return false
	}
	return true
}
