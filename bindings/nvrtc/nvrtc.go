// Package nvrtc binds NVRTC, NVIDIA's runtime compiler of CUDA C++ to PTX,
// CUBIN, LTO-IR and OptiX IR.
//
// Every function of nvrtc.h is here, generated from the header (see
// funcs_gen.go): nvrtcCompileProgram is CompileProgram, output parameters
// are results, and the error comes last. The library (libnvrtc.so.13 or
// .so.12) is found and loaded by package pathfinder on first use. A failed
// compilation returns an *Error whose Log holds the compiler's log.
package nvrtc

//go:generate go run ../../internal/bindgen -lib nvrtc

import (
	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed NVRTC call; errors.Is(err, ErrorCompilation) matches by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	return dl.Check("nvrtc", procs.Proc(i).Name, r, Success, GetErrorString)
}

// read fetches a size-then-bytes result.
func read(size func(Program) (uint64, error), get func(Program, *byte) error, p Program) ([]byte, error) {
	return dl.ReadSized(size, get, p)
}

// ProgramLog returns the compiler log of p.
func ProgramLog(p Program) (string, error) {
	b, err := dl.ReadText(GetProgramLogSize, GetProgramLog, p)
	return string(b), err
}

// PTX returns the PTX of a compiled program, without the trailing NUL.
func PTX(p Program) ([]byte, error) {
	return dl.ReadText(GetPTXSize, GetPTX, p)
}

// CUBIN returns the CUBIN of a program compiled for a real architecture (sm_XX).
func CUBIN(p Program) ([]byte, error) { return read(GetCUBINSize, GetCUBIN, p) }

// LTOIR returns the LTO-IR of a program compiled with -dlto.
func LTOIR(p Program) ([]byte, error) { return read(GetLTOIRSize, GetLTOIR, p) }

// OptiXIR returns the OptiX IR of a program compiled with --optix-ir.
func OptiXIR(p Program) ([]byte, error) { return read(GetOptiXIRSize, GetOptiXIR, p) }
