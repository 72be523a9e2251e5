// Package cusolver binds cuSOLVER's dense and sparse solvers: cusolverDn.h
// (LAPACK-like factorizations, eigen- and singular-value solvers, the
// 64-bit generic API) and cusolverSp.h (sparse QR, Cholesky, LU), with
// cusolver_common.h.
//
// Every function, enum and type of those headers is here, generated from
// the CUDA 13.0 headers plus what only the 12.4 ones declare (see
// funcs_gen.go): cusolverDnSgetrf is DnSgetrf, cusolverSpScsrlsvqr is
// SpScsrlsvqr, and every function returns an error last. A failed call is
// an *Error; errors.Is(err, StatusNotInitialized) matches by code. cuSOLVER
// has no message function and its header does not document the codes: the
// message is the code's name. A function the loaded library lacks returns a
// *MissingFunctionError naming the cuSOLVER version that has it.
//
// Pointer parameters stay pointers, as in C, except the workspace sizes
// that cuSOLVER writes (lwork-style outputs whose names end in Size), which
// are results. Data is device memory: convert a device address with
// unsafe.Pointer. cuComplex is complex64 and cuDoubleComplex complex128.
// Stream is the driver's CUstream (cudaStream_t is the same C type): pass a
// driver.Stream, or a core.Stream's Handle().
//
// The headers include cublas_v2.h and cusparse.h: the types they take from
// them are those packages' (FillMode is cublas.FillMode, MatDescr
// cusparse.MatDescr). library_types.h is part of the package, as the
// headers include it: DataType (R32F is CUDA_R_32F), LibraryPropertyType.
//
// The library (libcusolver.so.12 or .so.11, with cuBLAS, cuBLASLt,
// cuSPARSE and nvJitLink, which it needs) is found and loaded by package
// pathfinder on first use; it is opened with dlopen, never linked.
package cusolver

//go:generate go run ../../internal/bindgen -lib cusolver

import "github.com/cudago/cudago/internal/dl"

// Error is a failed cuSOLVER call; errors.Is(err, StatusNotInitialized)
// matches by code.
type Error = dl.Error[Status]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, s Status) error {
	return dl.Check[Status]("cusolver", procs.Proc(i).Name, s, StatusSuccess, nil) // no error-string call
}
