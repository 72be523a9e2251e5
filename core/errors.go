package core

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
)

// The package's sentinel errors, all of them here. ErrClosed is returned as
// it is; the others only inside errors that wrap them (errors.Is matches)
// and whose messages say what failed, which is why their own text has no
// "core: " prefix.

// ErrClosed is returned by an operation on a resource after its Close.
var ErrClosed = errors.New("core: use of a closed resource")

// ErrInvalidCode is matched (errors.Is) by the errors of the From*
// constructors when the data is not of the kind they were asked for.
var ErrInvalidCode = errors.New("invalid object code")

// ErrNotLoadable is matched (errors.Is) by the error of Handle and Kernel
// for code the driver cannot load directly (LTO-IR, host objects, host
// libraries): link it first with a Linker.
var ErrNotLoadable = errors.New("object code cannot be loaded by the driver; link it first (NewLinker)")

// ErrInvalidOption is matched (errors.Is) by every error that reports a bad
// field of ProgramOptions, LinkerOptions or FatbinOptions, or a bad
// architecture name. Such errors are found before any CUDA library is
// called, and their message names the option.
var ErrInvalidOption = errors.New("invalid option")

// errCorrupt marks a compile-cache entry that failed verification.
var errCorrupt = errors.New("corrupted cache entry")

// IsSticky reports whether err holds a driver error that leaves its
// context unusable (driver.Result.Sticky, from cuda.h's text): a kernel
// that read or wrote out of bounds (CUDA_ERROR_ILLEGAL_ADDRESS), trapped or
// faulted (CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ILLEGAL_INSTRUCTION, ...),
// a device-side assert (CUDA_ERROR_ASSERT), a timeout of the display
// watchdog. Every later call in that context fails with the same error.
// It looks through wrapped and joined errors (errors.Join).
//
// To go on: stop using the context, Close its Streams, Events, Buffers,
// Graphs and GraphExecs (ignoring their errors), then, for a primary
// context, call Device.ResetPrimaryContext; for a created context, Close
// it and create another. When that fails too (ResetPrimaryContext says
// so), only a new process can use the device.
func IsSticky(err error) bool {
	return anyError(err, func(e error) bool {
		r, ok := e.(driver.Result)
		return ok && r.Sticky()
	})
}

// anyError reports whether f holds for err or any error it wraps.
func anyError(err error, f func(error) bool) bool {
	if err == nil {
		return false
	}
	if f(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return anyError(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if anyError(e, f) {
				return true
			}
		}
	}
	return false
}

// maxRecorded bounds the errors a context keeps for its next Sync; those
// past it are only counted.
const maxRecorded = 8

// recorded holds the errors of work done for a context where no caller can
// be told: finalizers of forgotten Buffers, Streams, Events, Graphs and
// GraphExecs, and pool blocks kept for reuse that are freed late. Context.Sync
// (and so Device.Sync) and Context.Close return them, and forget them.
type recorded struct {
	mu      sync.Mutex
	errs    []error
	dropped int
}

// add keeps err (nil and ErrClosed, whose resource went with its context,
// are not failures).
func (r *recorded) add(err error) {
	if err == nil || errors.Is(err, ErrClosed) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < maxRecorded {
		r.errs = append(r.errs, err)
	} else {
		r.dropped++
	}
}

// take returns the kept errors, joined, and forgets them.
func (r *recorded) take() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs, dropped := r.errs, r.dropped
	r.errs, r.dropped = nil, 0
	if dropped > 0 {
		errs = append(errs, fmt.Errorf("core: %d more errors of finalizers and late frees were dropped", dropped))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// record keeps err, which no caller can be told of, for c's next Sync:
// what says what failed.
func (c *Context) record(what string, err error) {
	if err != nil && !errors.Is(err, ErrClosed) {
		err = fmt.Errorf("core: %s: %w", what, err)
		warn(WarnUnreportedError, err.Error(), "err", err)
		c.recorded.add(err)
	}
}

// withRecorded returns err joined with the errors recorded on c, which it
// forgets.
func (c *Context) withRecorded(err error) error {
	rec := c.recorded.take()
	switch {
	case rec == nil:
		return err
	case err == nil:
		return rec
	}
	return errors.Join(err, rec)
}

// len returns the number of errors kept.
func (r *recorded) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs)
}

// optsOf is *p, or the zero options (the defaults) when p is nil: every
// options struct of core is taken by pointer, nil meaning the defaults.
func optsOf[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
