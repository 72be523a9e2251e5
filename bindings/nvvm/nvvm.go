// Package nvvm binds libNVVM, NVIDIA's compiler of NVVM IR (LLVM IR for
// GPUs, as text or bitcode) to PTX.
//
// Every function of nvvm.h is here, generated from the header (see
// funcs_gen.go): nvvmCompileProgram is CompileProgram, output parameters
// are results and the error comes last. A failed compilation or
// verification returns an *Error whose Log holds the program log.
package nvvm

//go:generate go run ../../internal/bindgen -lib nvvm

import (
	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed NVVM call; errors.Is(err, ErrorCompilation) matches by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	return dl.Check("nvvm", procs.Proc(i).Name, r, Success, GetErrorString)
}

// ProgramLog returns the compilation or verification log of p.
func ProgramLog(p Program) (string, error) {
	b, err := dl.ReadText(GetProgramLogSize, GetProgramLog, p)
	return string(b), err
}

// CompiledResult returns the PTX that CompileProgram produced.
func CompiledResult(p Program) ([]byte, error) {
	return dl.ReadText(GetCompiledResultSize, GetCompiledResult, p)
}
