//go:build !linux || !cgo

package pathfinder

import (
	"errors"
	"unsafe"
)

// pathfinder needs dlopen, so it supports Linux built with cgo only.
const supported = false

var errUnsupported = errors.New("pathfinder: loading NVIDIA libraries needs Linux and cgo (CGO_ENABLED=1)")

func dlopen(string, bool) (unsafe.Pointer, error) { return nil, errUnsupported }

func dlnoload(string) unsafe.Pointer { return nil }

func dlsym(unsafe.Pointer, string) (unsafe.Pointer, error) { return nil, errUnsupported }

func dlpath(unsafe.Pointer) string { return "" }

func libcVersion() string { return "" }

// Version returns the library's own version; unsupported on this platform.
func (l *Library) Version() (string, error) { return "", errUnsupported }

func nvrtcVersion(*Library) (int, int, error) { return 0, 0, errUnsupported }

func nvvmIRVersion(*Library) (string, error) { return "", errUnsupported }

func nvrtcCompileCheck(*Library) error { return errUnsupported }

func cudnnOpens(unsafe.Pointer) []string { return nil }

func cudartVersion(unsafe.Pointer, Lib) int { return 0 }
