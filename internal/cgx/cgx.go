// Package cgx is the Go side of the in-context calls that internal/bindgen
// generates: package core's driver calls (core/drivercalls_gen.go) and the
// library calls of the packages over the math libraries (blas, rng, ...:
// calls_gen.go). Each such package has a C table of entry points, which its
// generated shims call after making the context current (cgx.h); a Table
// fills that C table once, through the bindings packages' Proc, so the
// shims call the very pointers the bindings would, and turns what a shim
// returns (a cg_ret) into the error the bindings function would return,
// through their StatusError. The package has no cgo: the C table is given
// to it as a slice.
package cgx

import (
	"sync"
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
)

// Missing is the status part of a cg_ret for an entry point that could not
// be resolved: CG_MISSING in cgx.h, which each generated file checks
// against this at compile time.
const Missing = 0x7fffffff

// CountError and CString are package dl's, for the generated calls: they
// name no other package, which a parameter might be called (cuSPARSE's
// gtsv calls take dl, d and du).
type CountError = dl.CountError

// CString returns s as a NUL-terminated byte slice for a C call.
func CString(s string) []byte { return dl.CString(s) }

// Lib is a bindings package, as the entries of a Table see it.
type Lib struct {
	name string // the library, in the error for an entry point never resolved: "libcuda"
	proc func(name string) (unsafe.Pointer, error)
	err  func(name string, code uint32) error
}

// NewLib describes a bindings package by its Proc and StatusError
// (driver.Proc and driver.StatusError, cublas.Proc and cublas.StatusError,
// ...); name names the library in errors: "libcuda", "cublas".
func NewLib[S ~int32 | ~uint32](name string, proc func(name string) (unsafe.Pointer, error), statusError func(name string, s S) error) *Lib {
	return &Lib{name: name, proc: proc, err: func(fn string, code uint32) error { return statusError(fn, S(code)) }}
}

// Entry is one entry point of a C table.
type Entry struct {
	Name string // the C API name, as the bindings package lists it
	Lib  *Lib
	// Fallback, when set, is tried where Lib's Proc fails: core resolves
	// cuEventElapsedTime at an older cuGetProcAddress version there. A
	// nil result keeps Proc's error.
	Fallback func(name string) unsafe.Pointer
}

// Table fills a C table of entry points and makes the errors of the shims
// that call them.
type Table struct {
	fn      []unsafe.Pointer // the C table: fn[i] is entries[i]'s address
	entries []Entry
	once    sync.Once
	errs    []error
}

// NewTable returns the table for the C table fn (a slice over the C array,
// one element per entry; its length is the C CGX_N) and its entries, in
// CGX_ index order. An entry beyond fn's length is never resolved.
func NewTable(fn []unsafe.Pointer, entries []Entry) *Table {
	return &Table{fn: fn, entries: entries, errs: make([]error, len(entries))}
}

// Load resolves every entry point once, on first use. An entry point that
// cannot be resolved stays NULL in the C table, its shim returns
// CG_MISSING, and Err returns the error that resolving it gave: the one
// the bindings function returns. pathfinder remembers a library that
// failed to load, so trying again later would fail the same way.
func (t *Table) Load() { t.once.Do(t.load) }

func (t *Table) load() {
	for i := range t.entries {
		e := &t.entries[i]
		if i >= len(t.fn) {
			t.errs[i] = &dl.MissingFunctionError{Func: e.Name, Lib: "the C table (shorter than its entries)"}
			continue
		}
		if e.Lib == nil {
			t.errs[i] = &dl.MissingFunctionError{Func: e.Name, Lib: "no library"}
			continue
		}
		p, err := e.Lib.proc(e.Name)
		if err != nil && e.Fallback != nil {
			if q := e.Fallback(e.Name); q != nil {
				p, err = q, nil
			}
		}
		if err == nil && p == nil {
			err = &dl.MissingFunctionError{Func: e.Name, Lib: e.Lib.name}
		}
		if err != nil {
			t.errs[i] = err
			continue
		}
		t.fn[i] = p
	}
}

// Replace puts p in the C table in place of the entry point named name
// and returns the one it replaces; ok is false when there is no such
// entry. It is for tests, which put fakes there (internal/testing/fakecuda) and
// restore what they replaced; Load first, or Load would overwrite them.
func (t *Table) Replace(name string, p unsafe.Pointer) (old unsafe.Pointer, ok bool) {
	i := t.Index(name)
	if i < 0 || i >= len(t.fn) {
		return nil, false
	}
	old, t.fn[i] = t.fn[i], p
	return old, true
}

// LoadErr returns why entry i could not be resolved, or nil (also before
// Load).
func (t *Table) LoadErr(i int) error {
	if i < 0 || i >= len(t.errs) {
		return nil
	}
	return t.errs[i]
}

// Len is the number of entries.
func (t *Table) Len() int { return len(t.entries) }

// Name returns entry i's C name, or "?".
func (t *Table) Name(i int) string {
	if i < 0 || i >= len(t.entries) {
		return "?"
	}
	return t.entries[i].Name
}

// Index returns the index of the entry with C name name, or -1.
func (t *Table) Index(name string) int {
	for i := range t.entries {
		if t.entries[i].Name == name {
			return i
		}
	}
	return -1
}

// Err turns a shim's cg_ret into the error the bindings function of the
// failing entry point returns: nil for 0; for a status, its bindings
// package's StatusError (a *driver.Error where making the context current
// failed, a *cublas.Error, ...); for CG_MISSING, the error that resolving
// it gave (a *MissingFunctionError, or why the library did not load).
func (t *Table) Err(r uint64) error {
	if r == 0 {
		return nil
	}
	return t.makeErr(r)
}

// makeErr is out of line so that Err inlines into every call.
//
//go:noinline
func (t *Table) makeErr(r uint64) error {
	i := int(r >> 32)
	code := uint32(r)
	if i < 0 || i >= len(t.entries) {
		return &dl.MissingFunctionError{Func: "?", Lib: "an index outside the C table"}
	}
	e := &t.entries[i]
	if code == Missing || e.Lib == nil {
		if err := t.LoadErr(i); err != nil {
			return err
		}
		name := "?"
		if e.Lib != nil {
			name = e.Lib.name
		}
		return &dl.MissingFunctionError{Func: e.Name, Lib: name}
	}
	return e.Lib.err(e.Name, code)
}
