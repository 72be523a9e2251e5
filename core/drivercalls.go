package core

//go:generate go run ../internal/bindgen -lib driver -core .

// #include "drivercalls_gen.h"
import "C"

import (
	"errors"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/cgx"
)

// Package core reaches the driver only through its C layer: the calls
// generated from the //cudago: lines of calls.go (drivercalls_gen.go:
// cuStreamSynchronize(ctx, s) and so on, each making its context current
// within the C call), and the few hand-written ones of fastpath.h. TestNoDirectDriverCalls keeps it so.

// driverTable fills cgx_fn from driverCalls (generated), through
// driver.Proc with the older cuGetProcAddress version as fallback, and
// makes the errors of the shims (internal/cgx).
var driverTable = func() *cgx.Table {
	lib := cgx.NewLib("libcuda", driver.Proc, driver.StatusError)
	var entries [C.CGX_N]cgx.Entry
	for i, c := range driverCalls {
		entries[i] = cgx.Entry{Name: c.name, Lib: lib}
		if v := c.fallback; v != 0 {
			entries[i].Fallback = func(name string) unsafe.Pointer {
				var q unsafe.Pointer
				var st driver.DriverProcAddressQueryResult
				if driver.GetProcAddress(name, &q, v, 0, &st) != nil {
					return nil
				}
				return q
			}
		}
	}
	return cgx.NewTable(unsafe.Slice(&C.cgx_fn[0], C.CGX_N), entries[:])
}()

// The table's entry points are resolved once (initDriver).
func loadProcs() { driverTable.Load() }

// cgMissing is the CUresult part of a cg_ret for an entry point that could
// not be resolved.
const cgMissing = uint32(C.CG_MISSING)

// cgx.Missing is CG_MISSING.
var _ = [1]struct{}{}[cgMissing-cgx.Missing]

// cerr turns a cg_ret into the driver's typed error.
func cerr(r C.cg_ret) error {
	if r == 0 {
		return nil
	}
	return makeErr(uint64(r))
}

// makeErr is out of line so that cerr inlines into every call: the
// *driver.Error that bindings/driver's function returns for the failing
// entry point (driver.StatusError), or why it could not be resolved.
//
//go:noinline
func makeErr(r uint64) error { return driverTable.Err(r) }

// isNotReady reports whether err is CUDA_ERROR_NOT_READY.
func isNotReady(err error) bool { return errors.Is(err, driver.ErrorNotReady) }

// cu passes a handle to C.
func cu(h uintptr) C.uintptr_t { return C.uintptr_t(h) }
