// Package driver binds the CUDA driver API (libcuda): every function, enum
// and struct of cuda.h, generated from the header (see funcs_gen.go and
// types_gen.go).
//
// Names drop the C prefix: cuMemAlloc is MemAlloc, CUdevice_attribute is
// DeviceAttribute, CU_DEVICE_ATTRIBUTE_WARP_SIZE is DeviceAttributeWarpSize.
// Output parameters are results and every function returns an error last;
// errors.Is(err, ErrorOutOfMemory) matches by status code. Result.Explanation
// is cuda.h's text for a code, and Result.Sticky (Error.Sticky) tells the
// codes after which the context is unusable: a kernel that faulted.
//
// Entry points are resolved on first use through cuGetProcAddress at the
// CUDA version the header declared them for, so the _v2/_v3 revisions are
// the right ones. A function the installed driver lacks returns a
// *MissingFunctionError naming the driver version it needs; it never crashes.
//
// The current context is per OS thread. These bindings do not manage it:
// package core sets it and acts within one call. Users of this package who
// call CtxSetCurrent must hold the thread (runtime.LockOSThread).
package driver

//go:generate go run ../../internal/bindgen -lib driver

/*
typedef int (*cg_getproc_t)(const char*, void**, int, unsigned long long, int*);
typedef int (*cg_version_t)(int*);
static int cg_getproc(void *fn, const char *name, void **out, int version, int *status) {
	return ((cg_getproc_t)fn)(name, out, version, 0, status);
}
static int cg_driver_version(void *fn, int *v) { return ((cg_version_t)fn)(v); }
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/pathfinder"
)

// Error is a failed driver call: code, name and the driver's message; its
// Sticky method reports a code that leaves the context unusable.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the installed driver lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	message := GetErrorString
	if i == getErrorStringIndex {
		message = nil // its own failure has no message to ask for
	}
	return dl.Check("driver", procs.Proc(i).Name, r, Success, message)
}

var getErrorStringIndex = procs.Index("cuGetErrorString")

var getProc struct {
	once    sync.Once
	fn      unsafe.Pointer
	version int // the driver's CUDA version, 0 if unknown
}

// resolve finds an entry point through cuGetProcAddress at the version its
// header revision needs, and falls back to dlsym for the few functions the
// driver does not list there.
func resolve(lib *pathfinder.Library, p *dl.Proc) (unsafe.Pointer, error) {
	getProc.once.Do(func() {
		if fn, err := lib.Symbol("cuGetProcAddress_v2"); err == nil {
			getProc.fn = fn
		}
		if fn, err := lib.Symbol("cuDriverGetVersion"); err == nil {
			var v C.int
			if C.cg_driver_version(fn, &v) == 0 {
				getProc.version = int(v)
			}
		}
	})
	if p.Version > 0 && getProc.version > 0 && getProc.version < p.Version {
		return nil, &MissingFunctionError{Func: p.Name, Lib: lib.Path,
			Have: dl.CUDAVersion(getProc.version), Need: dl.CUDAVersion(p.Version), Symbols: p.Symbols}
	}
	if p.Version > 0 && getProc.fn != nil {
		name := dl.CString(baseName(p.Name))
		var fn unsafe.Pointer
		var status C.int
		r := C.cg_getproc(getProc.fn, (*C.char)(unsafe.Pointer(&name[0])), &fn, C.int(p.Version), &status)
		if r == 0 && status == 0 && fn != nil {
			return fn, nil
		}
	}
	fn, err := dl.Dlsym(lib, p)
	if err != nil && getProc.version > 0 {
		if e, ok := err.(*MissingFunctionError); ok {
			e.Have = dl.CUDAVersion(getProc.version)
		}
	}
	return fn, err
}

// baseName strips the ABI revision: cuCtxCreate_v3 -> cuCtxCreate, the name
// cuGetProcAddress knows.
func baseName(s string) string {
	for i := len(s) - 1; i > 0; i-- {
		c := s[i]
		if c >= '0' && c <= '9' {
			continue
		}
		if c == 'v' && s[i-1] == '_' && i < len(s)-1 {
			return s[:i-1]
		}
		break
	}
	return s
}

// Proc returns the address of the entry point with C API name name (such as
// "cuLaunchKernel"), resolved as this package resolves it, for C code that
// must call the driver itself (package core sets the current context and
// acts within one cgo call). It fails like the Go function would.
func Proc(name string) (unsafe.Pointer, error) {
	i := procs.Index(name)
	if i < 0 {
		return nil, &MissingFunctionError{Func: name, Lib: "bindings/driver", Need: "a newer cudago: the function is not in its headers"}
	}
	return procs.Get(i)
}
