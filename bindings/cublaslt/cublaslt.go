// Package cublaslt binds cuBLASLt, cuBLAS's lightweight matrix
// multiplication API with descriptors, heuristics and epilogues
// (cublasLt.h).
//
// Every function, enum and struct of cublasLt.h is here, generated from
// the CUDA 13.0 header plus what only the 12.4 one declares (see
// funcs_gen.go): cublasLtMatmul is Matmul, CUBLASLT_EPILOGUE_RELU is
// EpilogueRelu, and every function returns an error last. The header's
// five static inline functions (cublasLtMatmulDescInit, ...) are written
// here by hand, as they are in C: they pass the opaque struct's size to the
// exported _internal function.
//
// cublasLt.h includes cublas_api.h and returns cuBLAS's status: the types
// it shares with cuBLAS are package cublas's (Status is cublas.Status,
// ComputeType cublas.ComputeType, DataType cublas.DataType), so a failed
// call is an *Error and errors.Is(err, cublas.StatusNotSupported) matches
// by code; the message is cublasLtGetStatusString's. A function the loaded
// library lacks returns a *MissingFunctionError naming the cuBLAS version
// that has it.
//
// Pointer parameters stay pointers, as in C: matrices are device memory
// (convert a device address with unsafe.Pointer). Stream is the driver's
// CUstream (cudaStream_t is the same C type): pass a driver.Stream, or a
// core.Stream's Handle().
//
// The library (libcublasLt.so.13 or .so.12) is found and loaded by package
// pathfinder on first use; it is opened with dlopen, never linked.
package cublaslt

//go:generate go run ../../internal/bindgen -lib cublaslt

import (
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed cuBLASLt call; errors.Is(err, cublas.StatusNotSupported)
// matches by code.
type Error = dl.Error[cublas.Status]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, s Status) error {
	return dl.Check("cublasLt", procs.Proc(i).Name, s, cublas.StatusSuccess, GetStatusString)
}

// The header's static inline functions: each initializes a descriptor in
// memory the caller owns (a *XxxOpaque, at least as big as its C struct),
// passing that size.

// MatrixLayoutInit is cublasLtMatrixLayoutInit: it initializes a matrix
// layout descriptor that matLayout points to (a MatrixLayoutOpaque).
func MatrixLayoutInit(matLayout MatrixLayout, type_ DataType, rows, cols uint64, ld int64) error {
	return MatrixLayoutInitInternal(matLayout, uint64(unsafe.Sizeof(MatrixLayoutOpaque{})), type_, rows, cols, ld)
}

// MatmulDescInit is cublasLtMatmulDescInit: it initializes a matmul
// descriptor that matmulDesc points to (a MatmulDescOpaque).
func MatmulDescInit(matmulDesc MatmulDesc, computeType ComputeType, scaleType DataType) error {
	return MatmulDescInitInternal(matmulDesc, uint64(unsafe.Sizeof(MatmulDescOpaque{})), computeType, scaleType)
}

// MatrixTransformDescInit is cublasLtMatrixTransformDescInit: it
// initializes a transform descriptor that transformDesc points to (a
// MatrixTransformDescOpaque).
func MatrixTransformDescInit(transformDesc MatrixTransformDesc, scaleType DataType) error {
	return MatrixTransformDescInitInternal(transformDesc, uint64(unsafe.Sizeof(MatrixTransformDescOpaque{})), scaleType)
}

// EmulationDescInit is cublasLtEmulationDescInit: it initializes an
// emulation descriptor that emulationDesc points to (an
// EmulationDescOpaque). It needs cuBLAS 13.1 or newer.
func EmulationDescInit(emulationDesc EmulationDesc) error {
	return EmulationDescInitInternal(emulationDesc, uint64(unsafe.Sizeof(EmulationDescOpaque{})))
}

// MatmulPreferenceInit is cublasLtMatmulPreferenceInit: it initializes a
// preference descriptor that pref points to (a MatmulPreferenceOpaque).
func MatmulPreferenceInit(pref MatmulPreference) error {
	return MatmulPreferenceInitInternal(pref, uint64(unsafe.Sizeof(MatmulPreferenceOpaque{})))
}
