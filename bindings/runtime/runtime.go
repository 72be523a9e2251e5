// Package runtime binds the CUDA runtime API (cuda_runtime_api.h, with
// driver_types.h, vector_types.h, surface_types.h, texture_types.h and
// device_types.h): libcudart, opened with dlopen like every other library,
// never linked.
//
// Every function, enum and struct of those headers is here, generated from
// the CUDA 13.0 headers plus what only the 12.4 ones declare (see
// funcs_gen.go): cudaMemcpy is Memcpy, struct cudaDeviceProp is DeviceProp,
// cudaMemcpyHostToDevice is MemcpyHostToDevice, and every function returns
// an error last. A failed call is an *Error whose message is
// cudaGetErrorString's; errors.Is(err, ErrorNoDevice) matches by code, and
// Error.Sticky (Result.Sticky) tells the codes after which the process must
// be restarted, as driver_types.h documents them.
//
// The runtime's handles that are the driver's in C (cudaStream_t and
// CUstream are both struct CUstream_st *) are the driver package's types:
// Stream is driver.Stream, Event driver.Event, Graph driver.Graph, and so on,
// so handles pass between the two APIs (and from package core) as they are.
//
// Revisions. The runtime has no cuGetProcAddress: a symbol's ABI is the
// one its library was built with. CUDA 13.0 gave some names the signature
// their _v2 or _v3 had in CUDA 12 (cudaMemAdvise, cudaGraphAddDependencies,
// cudaStreamGetCaptureInfo) and changed some structs' layouts
// (struct cudaDeviceProp). A function whose CUDA 12 symbol of the same name
// has another ABI is therefore called through that symbol only from runtime
// 13.0 on; before, it calls the CUDA 12 revision of the same ABI (MemAdvise
// calls cudaMemAdvise_v2 in libcudart.so.12), or returns a
// *MissingFunctionError where none exists (GetDeviceProperties: CUDA 12's
// struct cudaDeviceProp is 24 bytes larger). CUDA 12 revisions with another
// ABI are bound under their own names where this package's types fit them
// (StreamGetCaptureInfoV2); the two that take CUDA 12's struct layouts
// (cudaGetDeviceProperties_v2, cudaGraphAddNode_v2) are not bound.
//
// Pointer parameters stay pointers, as in C, unless the header documents
// them as outputs. Device memory is passed as unsafe.Pointer.
//
// The library (libcudart.so.13 or .so.12) is found and loaded by package
// pathfinder on first use.
package runtime

//go:generate go run ../../internal/bindgen -lib runtime

import (
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/internal/version"
	"github.com/cudago/cudago/pathfinder"
)

// Error is a failed runtime call; errors.Is(err, ErrorNoDevice) matches
// by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	message := GetErrorString
	if i == getErrorStringIndex {
		message = nil // its own failure has no message to ask for
	}
	return dl.Check("cudart", procs.Proc(i).Name, r, Success, message)
}

var getErrorStringIndex = procs.Index("cudaGetErrorString")

// resolve finds an entry point by its symbols. A Version on the entry point
// is the runtime version from which its first symbol has the binding's ABI
// (see the package doc): an older runtime skips that symbol.
func resolve(lib *pathfinder.Library, p *dl.Proc) (unsafe.Pointer, error) {
	if p.Version == 0 || len(p.Symbols) == 0 {
		return dl.Dlsym(lib, p)
	}
	need := dl.CUDAVersion(p.Version)
	have, err := lib.Version()
	if err == nil && !version.Less(have, need) {
		return dl.Dlsym(lib, p)
	}
	if len(p.Symbols) == 1 {
		return nil, &MissingFunctionError{Func: p.Name, Lib: lib.Path, Have: have, Need: need, Symbols: p.Symbols}
	}
	q := *p
	q.Symbols = p.Symbols[1:]
	return dl.Dlsym(lib, &q)
}
