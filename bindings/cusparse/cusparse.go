// Package cusparse binds cuSPARSE, NVIDIA's sparse linear algebra
// (cusparse.h): the generic API (SpMV, SpMM, SpGEMM, SpSV, ... on
// descriptors) and the legacy one.
//
// Every function, enum and type of cusparse.h is here, generated from the
// CUDA 13.0 header plus what only the 12.4 one declares (see
// funcs_gen.go): cusparseSpMV is SpMV, CUSPARSE_SPMV_CSR_ALG1 is
// SpmvCsrAlg1, and every function returns an error last. The
// half-precision prune functions that cusparse.h declares for C++ only
// (HpruneDense2csr, ...) are bound too: Half is the 16 bits of an element.
// A failed call is an *Error whose message is cusparseGetErrorString's;
// errors.Is(err, StatusNotInitialized) matches by code. A function the
// loaded library lacks returns a *MissingFunctionError naming the cuSPARSE
// version that has it.
//
// Pointer parameters stay pointers, as in C, except the buffer sizes that
// cuSPARSE writes (bufferSize), which are results. Data is device memory:
// convert a device address with unsafe.Pointer. cuComplex is complex64 and
// cuDoubleComplex complex128, which have their layout. Stream is the
// driver's CUstream (cudaStream_t is the same C type): pass a
// driver.Stream, or a core.Stream's Handle().
//
// library_types.h is part of the package, as the header includes it:
// DataType (R32F is CUDA_R_32F), LibraryPropertyType.
//
// The library (libcusparse.so.12, with nvJitLink, which it needs) is found
// and loaded by package pathfinder on first use; it is opened with dlopen,
// never linked.
package cusparse

//go:generate go run ../../internal/bindgen -lib cusparse

import "github.com/cudago/cudago/internal/dl"

// Error is a failed cuSPARSE call; errors.Is(err, StatusNotInitialized)
// matches by code.
type Error = dl.Error[Status]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, s Status) error {
	return dl.Check("cusparse", procs.Proc(i).Name, s, StatusSuccess, GetErrorString)
}
