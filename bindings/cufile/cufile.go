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

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/dl"
)

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

// Error is a failed cuFile call. errors.Is(err, OpError(...)) matches the
// cuFile code; for CU_FILE_CUDA_DRIVER_ERROR, errors.Is also matches the
// CUDA driver's code (errors.Is(err, driver.ErrorNoDevice)).
type Error struct {
	Func   string
	Code   OpError
	CUCode uint32 // CUresult, when Code is CU_FILE_CUDA_DRIVER_ERROR
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cufile: %s: %s", e.Func, e.Code)
	if e.CUCode != 0 {
		s += fmt.Sprintf(" (%s)", driver.Result(e.CUCode))
	}
	return s
}

// Unwrap returns the cuFile code, and the driver's when there is one.
func (e *Error) Unwrap() []error {
	if e.CUCode != 0 {
		return []error{e.Code, driver.Result(e.CUCode)}
	}
	return []error{e.Code}
}

// Error makes an OpError usable as an error and an errors.Is target.
func (v OpError) Error() string { return v.String() }

func check(i int, s Status) error {
	if s.Err == Success && s.CuErr == 0 {
		return nil
	}
	return &Error{Func: procs.Proc(i).Name, Code: s.Err, CUCode: uint32(s.CuErr)}
}

// PackedStatusError is StatusError for a status packed into 32 bits, as the
// in-context calls that internal/bindgen -calls generates pack it (their
// header's cgx_pack_cufile, since a cg_ret holds 32 bits of status): Err in
// the low 16 bits, CuErr in the 15 above. nil for 0.
func PackedStatusError(name string, code uint32) error {
	return StatusError(name, Status{Err: OpError(code & 0xffff), CuErr: code >> 16})
}
