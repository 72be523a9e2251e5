package core

import (
	"errors"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
)

// Packages built on core (the math libraries' packages, or a user's own
// bindings to a CUDA library) call C with the driver handles of core's
// Streams and Buffers. Acquire holds a resource open for such a call, as
// core holds it for its own: until the matching Release, Close waits, and
// after Close, Acquire returns ErrClosed instead of a handle that may name
// freed memory or a destroyed stream. Every successful Acquire needs
// exactly one Release; hold them only for the length of the call.

// Acquire holds s and its context open and returns their handles; the
// context must be made current for the call (see Context.SetCurrent, or
// generate an in-context call as core's own are).
func (s *Stream) Acquire() (driver.Context, driver.Stream, error) {
	if s == nil {
		return 0, 0, ErrClosed
	}
	h, err := s.acquire()
	if err != nil {
		return 0, 0, err
	}
	return h, s.handle, nil
}

// Release ends an Acquire of s.
func (s *Stream) Release() { s.release() }

// Acquire holds b (and the buffer it views) open and returns its device
// address.
func (b *Buffer) Acquire() (driver.Deviceptr, error) {
	if b == nil || !b.acquire() {
		return 0, ErrClosed
	}
	return b.ptr, nil
}

// Release ends an Acquire of b.
func (b *Buffer) Release() { b.release() }

// OnFree arranges for f to run once, just before the memory b owns is
// freed, or kept by a DeviceMemoryResource for another Buffer: in Close or
// CloseOn, once no call holds b (Acquire), or in the finalizer of a
// forgotten b. A package that gives a library b's address to keep beyond
// a call (cuFile's buffer registration) takes it back in f. For a view, f
// belongs to the buffer it views. f runs after b is closed, so it must not
// use b, and it must not keep b (or a view of it) reachable, or b is never
// finalized; it
// should return promptly (it may run on the runtime's cleanup goroutine).
// Functions run in the order they were added. A closed b returns ErrClosed;
// a zero-size Buffer owns no memory, and its functions never run.
func (b *Buffer) OnFree(f func()) error {
	if f == nil {
		return errors.New("core: Buffer.OnFree: nil function")
	}
	if b == nil || !b.acquire() { // Close waits for this
		return ErrClosed
	}
	defer b.release()
	root := b.root()
	hooksMu.Lock()
	defer hooksMu.Unlock()
	if root.hooks == nil {
		root.hooks = &freeHooks{} // the finalizer (Buffer.free) runs them too
	}
	root.hooks.fs = append(root.hooks.fs, f)
	return nil
}

// hooksMu orders concurrent OnFree calls; Close needs no lock, as it waits
// for them (they hold the buffer).
var hooksMu sync.Mutex

// freeHooks are a Buffer's OnFree functions.
type freeHooks struct{ fs []func() }

// run runs the functions once; nil has none.
func (h *freeHooks) run() {
	if h == nil {
		return
	}
	hooksMu.Lock()
	fs := h.fs
	h.fs = nil
	hooksMu.Unlock()
	for _, f := range fs {
		f()
	}
}
