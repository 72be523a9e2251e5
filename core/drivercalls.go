package core

//go:generate go run ../internal/bindgen -lib driver -core .

// #include "drivercalls_gen.h"
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Package core reaches the driver only through its C layer: the calls
// generated from internal/bindgen/config.go's driverCore
// (drivercalls_gen.go: cuStreamSynchronize(ctx, s) and so on, each making
// its context current within the C call), and the few hand-written ones
// of fastpath.h. TestNoDirectDriverCalls keeps it so.

// The table's entry points, resolved once (initDriver).
var procs struct {
	once sync.Once
	errs [C.CGX_N]error
}

func loadProcs() { procs.once.Do(func() { loadDriverCalls(&procs.errs) }) }

// loadDriverCalls fills cgx_fn from driverCalls (generated); errs[i] says
// why entry i could not be resolved, and the shims report it missing.
func loadDriverCalls(errs *[C.CGX_N]error) {
	for i := range driverCalls {
		c := &driverCalls[i]
		p, err := driver.Proc(c.name)
		if err != nil && c.fallback != 0 {
			var q unsafe.Pointer
			var st driver.DriverProcAddressQueryResult
			if driver.GetProcAddress(c.name, &q, c.fallback, 0, &st) == nil && q != nil {
				p, err = q, nil
			}
		}
		if err != nil {
			errs[i] = err
			continue
		}
		C.cgx_fn[i] = p
	}
}

// cgMissing is the CUresult part of a cg_ret for an entry point that could
// not be resolved.
const cgMissing = uint32(C.CG_MISSING)

// cerr turns a cg_ret into the driver's typed error.
func cerr(r C.cg_ret) error {
	if r == 0 {
		return nil
	}
	return makeErr(uint64(r))
}

// makeErr is out of line so that cerr inlines into every call.
//
//go:noinline
func makeErr(r uint64) error {
	i := int(r >> 32)
	code := uint32(r)
	name := "?"
	if i >= 0 && i < len(driverCalls) {
		name = driverCalls[i].name
	}
	if code == cgMissing {
		if i >= 0 && i < len(procs.errs) && procs.errs[i] != nil {
			return procs.errs[i]
		}
		return &driver.MissingFunctionError{Func: name, Lib: "libcuda"}
	}
	res := driver.Result(code)
	e := &driver.Error{Lib: "driver", Func: name, Code: res}
	if i != C.CGX_cuGetErrorString { // its own failure has no message
		e.Message, _ = cuGetErrorString(res)
	}
	return e
}

// isNotReady reports whether err is CUDA_ERROR_NOT_READY.
func isNotReady(err error) bool { return errors.Is(err, driver.ErrorNotReady) }

// cu passes a handle to C.
func cu(h uintptr) C.uintptr_t { return C.uintptr_t(h) }
