// Package cublas binds cuBLAS, NVIDIA's BLAS: cublas_api.h through
// cublas_v2.h, the handle-based API.
//
// Every function, enum and type of the headers is here, generated from the
// CUDA 13.0 headers plus what only the 12.4 ones declare (see
// funcs_gen.go), and every function returns an error last. A failed call
// is an *Error whose message is cublasGetStatusString's;
// errors.Is(err, StatusNotInitialized) matches by code. A function the
// loaded library lacks returns a *MissingFunctionError naming the cuBLAS
// version that has it.
//
// Names: cublas_v2.h maps the BLAS names to the _v2 symbols (#define
// cublasSgemm cublasSgemm_v2); the binding has the API name, Sgemm, which
// calls cublasSgemm_v2, and SgemmV2 is the same function under its
// explicit name, as the driver's revisions are. The ILP64 variants, with
// 64-bit sizes and strides (cublasSgemm_64, the symbol cublasSgemm_v2_64),
// are separate functions named with a 64 suffix: Sgemm64 (SgemmV264 the
// same). The half-precision functions that cublas_api.h declares for C++
// only (Hgemm, HSHgemvBatched, ...) are bound too: Half and BFloat16 are
// the 16 bits of an element.
//
// Pointer parameters stay pointers, as in C: matrices and vectors are
// device memory (convert a device address with unsafe.Pointer), alpha and
// beta are host or device memory as the handle's pointer mode says.
// cuComplex is complex64 and cuDoubleComplex complex128, which have their
// layout. Stream is the driver's CUstream (cudaStream_t is the same C
// type): pass a driver.Stream, or a core.Stream's Handle().
//
// library_types.h is part of the package, as the header includes it:
// DataType (R32F is CUDA_R_32F), LibraryPropertyType; where its names
// clash with cuBLAS's own they keep their prefix (CudaEmulationStrategy).
//
// The library (libcublas.so.13 or .so.12, with cuBLASLt, which it needs)
// is found and loaded by package pathfinder on first use; it is opened
// with dlopen, never linked.
package cublas

//go:generate go run ../../internal/bindgen -lib cublas

import "github.com/cudago/cudago/internal/dl"

// Error is a failed cuBLAS call; errors.Is(err, StatusNotInitialized)
// matches by code.
type Error = dl.Error[Status]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, s Status) error {
	return dl.Check("cublas", procs.Proc(i).Name, s, StatusSuccess, GetStatusString)
}
