// Package curand binds cuRAND's host API (curand.h): pseudo- and
// quasirandom number generators that fill device (or, with
// CreateGeneratorHost, host) memory.
//
// Every function, enum and type of curand.h is here, generated from the
// CUDA 13.0 header plus what only the 12.4 one declares (see funcs_gen.go):
// curandCreateGenerator is CreateGenerator, CURAND_RNG_PSEUDO_DEFAULT is
// RngPseudoDefault, and every function returns an error last. A failed call
// is an *Error; errors.Is(err, StatusInitializationFailed) matches by code.
// A function the loaded library lacks returns a *MissingFunctionError
// naming the cuRAND version that has it.
//
// Pointer parameters stay pointers, as in C, unless the header documents
// them as outputs: CreateGenerator(&g, RngPseudoDefault). Output buffers
// are device memory for a device generator: convert a device address with
// unsafe.Pointer. Stream is the driver's CUstream (cudaStream_t is the same
// C type): pass a driver.Stream, or a core.Stream's Handle().
//
// library_types.h is part of the package, as the header includes it:
// LibraryPropertyType for GetProperty, DataType.
//
// The library (libcurand.so.10) is found and loaded by package pathfinder
// on first use; it is opened with dlopen, never linked.
package curand

//go:generate go run ../../internal/bindgen -lib curand

import "github.com/cudago/cudago/internal/dl"

// Error is a failed cuRAND call; errors.Is(err, StatusAllocationFailed)
// matches by code. cuRAND has no message function: the message is the
// header's documentation of the code.
type Error = dl.Error[Status]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, s Status) error {
	return dl.Check[Status]("curand", procs.Proc(i).Name, s, StatusSuccess, nil) // no error-string call
}
