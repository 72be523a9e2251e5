// Package cufft binds cuFFT, NVIDIA's fast Fourier transforms, with its
// multi-GPU and extensible API: cufft.h and cufftXt.h (and cudalibxt.h,
// which declares the multi-GPU descriptors).
//
// Every function, enum and struct of those headers is here, generated from
// the CUDA 13.0 headers plus what only the 12.4 ones declare (see
// funcs_gen.go): cufftPlan1d is Plan1d, cufftXtMakePlanMany is
// XtMakePlanMany, CUFFT_R2C is R2C, and every function returns an error
// last. A failed call is an *Error; errors.Is(err, InvalidPlan) matches by
// code. A function the loaded library lacks returns a *MissingFunctionError
// naming the cuFFT version that has it.
//
// Pointer parameters stay pointers, as in C, except the work sizes that
// cuFFT writes (workSize), which are results. Data is device memory:
// convert a device address with unsafe.Pointer. cufftComplex is complex64
// and cufftDoubleComplex complex128, which have its layout. Stream is the
// driver's CUstream (cudaStream_t is the same C type): pass a driver.Stream,
// or a core.Stream's Handle().
//
// library_types.h is part of the package, as the header includes it:
// DataType for XtMakePlanMany, LibraryPropertyType for GetProperty.
//
// The library (libcufft.so.12 or .so.11) is found and loaded by package
// pathfinder on first use; it is opened with dlopen, never linked.
package cufft

//go:generate go run ../../internal/bindgen -lib cufft

import "github.com/cudago/cudago/internal/dl"

// Error is a failed cuFFT call; errors.Is(err, SetupFailed) matches by
// code. cuFFT has no message function and its header does not document
// the codes: the message is the code's name.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	return dl.Check[Result]("cufft", procs.Proc(i).Name, r, Success, nil) // no error-string call
}
