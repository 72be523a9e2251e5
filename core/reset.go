package core

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

// ResetPrimaryContext releases the device's primary context and resets it
// (cuDevicePrimaryCtxRelease, then cuDevicePrimaryCtxReset): every
// allocation, stream, event, graph and loaded module of the primary
// context is destroyed, and the next operation that needs the context
// retains a fresh one. It is how a process recovers from a sticky error
// (IsSticky), such as a kernel that trapped (CUDA_ERROR_LAUNCH_FAILED) or
// read out of bounds (CUDA_ERROR_ILLEGAL_ADDRESS), after which every call
// in the context fails; the other way is to start a new process. The
// errors recorded on the context for its next Sync (see Context) are
// forgotten: they are the old context's.
//
// Before calling it, stop using the device's primary context from other
// goroutines and Close the Streams, Events, Buffers, Graphs and
// GraphExecs made in it (their errors can be ignored): their driver
// handles die with the context, and one that is closed, or collected by
// its finalizer, after the reset refers to nothing, or to an object of the
// new context. If the driver keeps the error even so (it reports it
// again when the context is retained anew), ResetPrimaryContext returns
// an error that wraps it, and only a new process can use the device.
// ObjectCodes and Kernels stay valid: a library loaded with
// cuLibraryLoadData is loaded again into the new context on first use.
func (d *Device) ResetPrimaryContext() error {
	if err := initDriver(); err != nil {
		return err
	}
	c := d.primary
	c.mu.Lock()
	defer c.mu.Unlock()
	// None of these calls needs a current context, so no thread is held.
	// Threads that had the old context current keep its handle, as they
	// always did; every core call makes its context current itself.
	if h := c.h.Swap(0); h != 0 {
		stagingContextGone(driver.Context(h)) // the reset frees its pinned staging buffers
		c.pool.takeAll(nil)                   // and the pool blocks kept for reuse
		c.recorded.take()                     // what failed in the old context is over
		// Its error, if any, is the sticky one: the reset is the cure.
		cuDevicePrimaryCtxRelease(d.handle)
	}
	if err := cuDevicePrimaryCtxReset(d.handle); err != nil {
		return fmt.Errorf("core: ResetPrimaryContext %v: %w", d, err)
	}
	// Check that a fresh context can be had, and keep it retained.
	h, err := cuDevicePrimaryCtxRetain(d.handle)
	if err != nil {
		// A second reset, now that nothing holds the old context.
		if err2 := cuDevicePrimaryCtxReset(d.handle); err2 == nil {
			h, err = cuDevicePrimaryCtxRetain(d.handle)
		}
	}
	if err != nil && IsSticky(err) {
		return fmt.Errorf("core: ResetPrimaryContext %v: the driver keeps the error; only a new process can use the device again: %w", d, err)
	}
	if err != nil {
		return fmt.Errorf("core: ResetPrimaryContext %v: retaining a fresh context failed (if it keeps failing, only a new process can use the device): %w", d, err)
	}
	c.h.Store(uintptr(h))
	return nil
}
