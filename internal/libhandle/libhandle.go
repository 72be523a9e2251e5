// Package libhandle is the state shared by the math packages whose library
// handle is bound to one stream (sparse, solver): the handle is created on
// the first operation, operations take turns and hold the stream open, a
// workspace grows on demand, and closing is ordered after the work queued
// on the stream. It calls no library itself: each package gives it its
// generated in-context calls (calls_gen.go) as function values, so that
// every library call stays in that package's calls_gen.go.
package libhandle

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Lib is a library's handle calls, each acting in the context given.
type Lib[H comparable] struct {
	Create    func(ctx driver.Context, h *H) error
	SetStream func(ctx driver.Context, h H, s driver.Stream) error
	Destroy   func(ctx driver.Context, h H) error
}

// State is a library handle bound to one stream, and its workspace. The
// zero value has no stream; it can be closed, and after that its
// operations give core.ErrClosed.
type State[H comparable] struct {
	mu     sync.Mutex
	stream *core.Stream
	lib    Lib[H]
	h      H            // the zero H until the first operation
	ws     *core.Buffer // nil until an operation needs a workspace
	closed bool
}

// Init binds a zero State to stream, which must be open (and not nil),
// and to lib's calls.
func (st *State[H]) Init(stream *core.Stream, lib Lib[H]) error {
	if _, _, err := stream.Acquire(); err != nil {
		return err
	}
	stream.Release()
	st.stream, st.lib = stream, lib
	return nil
}

// Stream returns the stream the operations are queued on.
func (st *State[H]) Stream() *core.Stream { return st.stream }

// Lib returns the library handle; call it between Begin and End.
func (st *State[H]) Lib() H { return st.h }

// Begin starts an operation: it takes the state's turn, holds its stream
// open and creates the library handle on first use. It returns the
// context to act in; every successful Begin needs an End.
func (st *State[H]) Begin() (driver.Context, error) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return 0, core.ErrClosed
	}
	ctx, s, err := st.stream.Acquire()
	if err != nil {
		st.mu.Unlock()
		return 0, err
	}
	var zero H
	if st.h == zero {
		var h H
		err = st.lib.Create(ctx, &h)
		if err == nil {
			if err = st.lib.SetStream(ctx, h, s); err != nil {
				_ = st.lib.Destroy(ctx, h)
			}
		}
		if err != nil {
			st.stream.Release()
			st.mu.Unlock()
			return 0, err
		}
		st.h = h
	}
	return ctx, nil
}

// End ends an operation that Begin started.
func (st *State[H]) End() {
	st.stream.Release()
	st.mu.Unlock()
}

// MinWorkspace is the smallest workspace allocated: an operation always
// gets a valid address, even where the library asks for 0 bytes.
const MinWorkspace = 256

// Workspace returns the workspace, grown to at least n bytes (0 <= n <=
// math.MaxInt/2: the caller checks what its library asked for); call it
// between Begin and End. A workspace too small is freed ordered on the
// stream, after the work queued there that uses it, and the new one grows
// by at least half so that slowly growing requests reallocate rarely.
func (st *State[H]) Workspace(n int) (*core.Buffer, error) {
	need := max(n, MinWorkspace)
	if st.ws != nil && st.ws.Size() >= need {
		return st.ws, nil
	}
	if st.ws != nil {
		need = max(need, st.ws.Size()+st.ws.Size()/2)
		if err := st.ws.Close(); err != nil {
			return nil, err
		}
		st.ws = nil
	}
	need = (need + 4095) &^ 4095
	ws, err := st.stream.Device().Allocate(need, st.stream)
	if err != nil {
		return nil, err
	}
	st.ws = ws
	return ws, nil
}

// WorkspaceSize returns the size in bytes of the workspace (0 before an
// operation needed one).
func (st *State[H]) WorkspaceSize() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ws == nil {
		return 0
	}
	return st.ws.Size()
}

// Close destroys the library handle, frees the workspace and then calls
// also (when not nil) to free what the caller owns beside them, all in the
// state's turn; also's buffers are freed as the workspace is, and their
// core.ErrClosed is not an error. When the stream was closed first, the
// handle is moved to the legacy default stream before it is destroyed, and
// destroyed in the stream's context if that still exists. Closing twice is
// not an error.
func (st *State[H]) Close(also func() []*core.Buffer) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	var err error
	var zero H
	if st.h != zero {
		h := st.h
		err = InContext(st.stream, func(ctx driver.Context, streamOpen bool) error {
			if !streamOpen {
				if err := st.lib.SetStream(ctx, h, 0); err != nil {
					return err
				}
			}
			return st.lib.Destroy(ctx, h)
		})
		st.h = zero
	}
	bufs := []*core.Buffer{st.ws}
	if also != nil {
		bufs = append(bufs, also()...)
	}
	for _, b := range bufs {
		if b != nil {
			if berr := b.Close(); berr != nil && !errors.Is(berr, core.ErrClosed) {
				err = errors.Join(err, berr)
			}
		}
	}
	st.ws = nil
	return err
}

// InContext calls f in the context of stream s, for destroying what was
// made there: with s held open when it is, or else with its context's
// handle (streamOpen false). When that context is gone too, so is
// everything made in it, and f is not called.
func InContext(s *core.Stream, f func(ctx driver.Context, streamOpen bool) error) error {
	if ctx, _, err := s.Acquire(); err == nil {
		defer s.Release()
		return f(ctx, true)
	}
	ctx, err := s.Context().Handle()
	if err != nil {
		return nil
	}
	return f(ctx, false)
}

// Pins holds the Buffers of one library call open (core.Buffer.Acquire)
// and gives their addresses in the form the bindings take. It holds five
// at the most, the most one call needs.
type Pins struct {
	bufs [5]*core.Buffer
	n    int
}

// Add acquires b and returns its device address.
func (p *Pins) Add(b *core.Buffer) (unsafe.Pointer, error) {
	ptr, err := b.Acquire()
	if err != nil {
		return nil, err
	}
	p.bufs[p.n] = b
	p.n++
	return DevPtr(ptr), nil
}

// Release releases what Add acquired.
func (p *Pins) Release() {
	for i := range p.n {
		p.bufs[i].Release()
		p.bufs[i] = nil
	}
	p.n = 0
}

// DevPtr converts a device address to a pointer for the bindings (which
// type it further); the address is not Go memory, and this form of the
// conversion is the one go vet accepts.
func DevPtr(p driver.Deviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
