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
	"bytes"

	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed NVVM call; errors.Is(err, ErrorCompilation) matches by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	if r == Success {
		return nil
	}
	msg, _ := GetErrorString(r)
	return &Error{Lib: "nvvm", Func: procs.Proc(i).Name, Code: r, Message: msg}
}

func withLog(err error, log string) error {
	if e, ok := err.(*Error); ok {
		e.Log = log
	}
	return err
}

func programLog(p Program) string {
	log, _ := ProgramLog(p)
	return log
}

func text(size func(Program) (uint64, error), get func(Program, *byte) error, p Program) ([]byte, error) {
	n, err := size(p)
	if err != nil || n == 0 {
		return nil, err
	}
	buf := make([]byte, n)
	if err := get(p, &buf[0]); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf, "\x00"), nil
}

// ProgramLog returns the compilation or verification log of p.
func ProgramLog(p Program) (string, error) {
	b, err := text(GetProgramLogSize, GetProgramLog, p)
	return string(b), err
}

// CompiledResult returns the PTX that CompileProgram produced.
func CompiledResult(p Program) ([]byte, error) {
	return text(GetCompiledResultSize, GetCompiledResult, p)
}
