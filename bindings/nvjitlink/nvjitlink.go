// Package nvjitlink binds nvJitLink, NVIDIA's JIT linker of LTO-IR, PTX,
// CUBIN, fatbins and object files into a CUBIN or PTX.
//
// Every function of nvJitLink.h is here, generated from the header (see
// funcs_gen.go): nvJitLinkCreate is Create, output parameters are results
// and the error comes last. The versioned symbols each library exports
// (__nvJitLinkCreate_13_0, __nvJitLinkCreate_12_4, ...) are tried newest
// first, so one binary works with nvJitLink 12 and 13. A failed link returns
// an *Error whose Log holds the linker's error log.
//
// A Handle must be used from one OS thread, from Create to Destroy:
// nvJitLink 12.4 keeps per-thread state and corrupts its heap when the calls
// of one session move between threads, which goroutines do freely. Call
// runtime.LockOSThread before Create and runtime.UnlockOSThread only after
// Destroy, around the whole session, as core.Linker does.
package nvjitlink

//go:generate go run ../../internal/bindgen -lib nvjitlink

import (
	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed nvJitLink call; errors.Is(err, ErrorPtxCompile) matches by code.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	// nvJitLink has no error-string call: the name says what happened.
	return dl.Check[Result]("nvJitLink", procs.Proc(i).Name, r, Success, nil)
}

func text(size func(Handle) (uint64, error), get func(Handle, *byte) error, h Handle) (string, error) {
	b, err := dl.ReadText(size, get, h)
	return string(b), err
}

// ErrorLog returns the linker's error log.
func ErrorLog(h Handle) (string, error) { return text(GetErrorLogSize, GetErrorLog, h) }

// InfoLog returns the linker's information log.
func InfoLog(h Handle) (string, error) { return text(GetInfoLogSize, GetInfoLog, h) }

// LinkedPTX returns the linked PTX (when linking with -ptx).
func LinkedPTX(h Handle) (string, error) { return text(GetLinkedPtxSize, GetLinkedPtx, h) }

// LinkedCubin returns the linked CUBIN.
func LinkedCubin(h Handle) ([]byte, error) {
	return dl.ReadSized(GetLinkedCubinSize, GetLinkedCubin, h)
}
