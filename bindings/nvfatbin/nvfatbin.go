// Package nvfatbin binds nvFatbin, NVIDIA's library that builds fat
// binaries (fatbins) from CUBIN, PTX, LTO-IR and relocatable objects.
//
// Every function of nvFatbin.h is here, generated from the header (see
// funcs_gen.go): nvFatbinAddPTX is AddPTX, output parameters are results
// and the error comes last. AddTileIR needs nvFatbin 13.1: with an older
// library it returns a *MissingFunctionError saying so.
package nvfatbin

//go:generate go run ../../internal/bindgen -lib nvfatbin

import "github.com/cudago/cudago/internal/dl"

// Error is a failed nvFatbin call; errors.Is(err, ErrorInvalidArch) matches by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	return dl.Check("nvFatbin", procs.Proc(i).Name, r, Success, GetErrorString)
}

// Bytes returns the finished fat binary of h.
func Bytes(h Handle) ([]byte, error) { return dl.ReadSized(Size, Get, h) }
