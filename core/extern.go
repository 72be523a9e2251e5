package core

import "github.com/cudago/cudago/bindings/driver"

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
