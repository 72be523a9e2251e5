// Package cufile binds cuFile (GPUDirect Storage): reads and writes between
// files and GPU memory that bypass host bounce buffers.
//
// Every function of cufile.h is here, generated from the header (see
// funcs_gen.go): cuFileRead is Read, and the error comes last. cuFile
// returns a two-part status (a cuFile code and a driver code); a failure is
// an *Error holding both.
package cufile

//go:generate go run ../../internal/bindgen -lib cufile

import (
	"fmt"

	"github.com/cudago/cudago/internal/dl"
)

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

// Error is a failed cuFile call. errors.Is(err, OpError(...)) matches the
// cuFile code.
type Error struct {
	Func   string
	Code   OpError
	CUCode uint32 // CUresult, when Code is CU_FILE_CUDA_DRIVER_ERROR
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cufile: %s: %s", e.Func, e.Code)
	if e.CUCode != 0 {
		s += fmt.Sprintf(" (CUresult %d)", e.CUCode)
	}
	return s
}

// Unwrap returns the cuFile code.
func (e *Error) Unwrap() error { return e.Code }

// Error makes an OpError usable as an error and an errors.Is target.
func (v OpError) Error() string { return v.String() }

func check(i int, s Status) error {
	if s.Err == Success && s.CuErr == 0 {
		return nil
	}
	return &Error{Func: procs.Proc(i).Name, Code: s.Err, CUCode: uint32(s.CuErr)}
}
