// Package libhandle is the one base of cudago's library packages (blas,
// fft, rng, solver, sparse): a library handle bound to one stream. A State
// creates the handle on the first operation, in the stream's context, and
// binds it to the stream for life; operations take turns (or, for a
// library that allows it, run at once) and hold the stream open; a
// workspace grows on demand; Close is ordered after the work queued on the
// stream, and a forgotten owner is closed by a cleanup. Operands holds the
// Buffers of one call open and checks what needs their addresses, and
// every bad argument is a *lib.ArgError.
//
// It calls no library itself: each package gives it its generated
// in-context calls (calls_gen.go) as function values in a Lib, so that
// every library call stays in that package's calls_gen.go.
package libhandle

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/lib"
)

// Lib is a library's handle calls, each acting in the context given, and
// how its handles may be used.
type Lib[H comparable] struct {
	// Package names the Go package in errors: "sparse".
	Package string
	// Shared lets operations run at once, each holding the state for
	// reading (cuBLAS allows concurrent calls on one handle whose
	// configuration does not change); otherwise they take turns.
	// Operations of a shared state must not grow the workspace: Setup
	// allocates it.
	Shared bool

	Create func(ctx driver.Context, h *H) error
	// Setup, when not nil, configures a new handle and binds it to stream
	// s; when nil, SetStream binds it. Setup may call State.Workspace.
	// When it fails, the handle is destroyed (Destroy must take a handle
	// Setup left half made).
	Setup     func(ctx driver.Context, h *H, s driver.Stream) error
	SetStream func(ctx driver.Context, h H, s driver.Stream) error
	Destroy   func(ctx driver.Context, h H) error
}

// State is a library handle bound to one stream, its workspace and the
// Buffers kept beside it. A nil *State acts as a closed one: its
// operations give core.ErrClosed.
type State[H comparable] struct {
	lib    Lib[H]
	stream *core.Stream

	mu      sync.RWMutex // operations: read (Shared) or write; creating, closing: write
	h       H
	made    bool // h exists
	ws      *core.Buffer
	kept    []*core.Buffer
	closed  bool
	cleanup runtime.Cleanup
}

// New returns a State for l's handles on stream, which must be open. fn
// names the caller in errors ("New").
func New[H comparable](l Lib[H], fn string, stream *core.Stream) (*State[H], error) {
	if stream == nil {
		return nil, ArgErr(l.Package, fn, "stream", "nil *core.Stream (Context.DefaultStream is the legacy default stream)")
	}
	if _, _, err := stream.Acquire(); err != nil {
		return nil, fmt.Errorf("%s: %s: stream: %w", l.Package, fn, err)
	}
	stream.Release()
	return &State[H]{lib: l, stream: stream}, nil
}

// Open is New for a package's object: it returns wrap(st), the object
// that holds st, which is closed when the object is collected without its
// Close (wrap's object must not be reachable from st).
func Open[T any, H comparable](l Lib[H], fn string, stream *core.Stream, wrap func(*State[H]) *T) (*T, error) {
	st, err := New(l, fn, stream)
	if err != nil {
		return nil, err
	}
	owner := wrap(st)
	CloseWith(owner, st)
	return owner, nil
}

// CloseWith arranges for st to be closed when owner, the package's object
// that holds it, is collected without its Close. owner must not be
// reachable from st.
func CloseWith[T any, H comparable](owner *T, st *State[H]) {
	st.cleanup = runtime.AddCleanup(owner, func(st *State[H]) { _ = st.Close() }, st)
}

// Stream returns the stream the operations are queued on (nil for a nil
// State).
func (st *State[H]) Stream() *core.Stream {
	if st == nil {
		return nil
	}
	return st.stream
}

// Device returns the stream's device (nil for a nil or zero State).
func (st *State[H]) Device() *core.Device {
	if st == nil || st.stream == nil {
		return nil
	}
	return st.stream.Device()
}

// Handle returns the library handle; call it between Begin and End.
func (st *State[H]) Handle() H { return st.h }

// Created reports whether the library handle exists.
func (st *State[H]) Created() bool {
	if st == nil {
		return false
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.made
}

// Begin starts an operation: it takes the state's turn (or, when Shared,
// a share of it), holds the stream open and creates the library handle on
// first use. It returns the context to act in and the stream's handle;
// every successful Begin needs an End.
func (st *State[H]) Begin() (driver.Context, driver.Stream, error) {
	if st == nil {
		return 0, 0, core.ErrClosed
	}
	if st.lib.Shared {
		st.mu.RLock()
		for !st.made || st.closed {
			closed := st.closed
			st.mu.RUnlock()
			if closed {
				return 0, 0, core.ErrClosed
			}
			if err := st.createOnce(); err != nil {
				return 0, 0, err
			}
			st.mu.RLock()
		}
		ctx, s, err := st.stream.Acquire()
		if err != nil {
			st.mu.RUnlock()
			return 0, 0, err
		}
		return ctx, s, nil
	}
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return 0, 0, core.ErrClosed
	}
	ctx, s, err := st.stream.Acquire()
	if err == nil && !st.made {
		if err = st.create(ctx, s); err != nil {
			st.stream.Release()
		}
	}
	if err != nil {
		st.mu.Unlock()
		return 0, 0, err
	}
	return ctx, s, nil
}

// End ends an operation that Begin started.
func (st *State[H]) End() {
	st.stream.Release()
	if st.lib.Shared {
		st.mu.RUnlock()
	} else {
		st.mu.Unlock()
	}
}

// createOnce creates the handle of a Shared state unless it exists.
func (st *State[H]) createOnce() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return core.ErrClosed
	}
	if st.made {
		return nil
	}
	ctx, s, err := st.stream.Acquire()
	if err != nil {
		return err
	}
	defer st.stream.Release()
	return st.create(ctx, s)
}

// create makes the handle and binds it to s, holding the state for
// writing and the stream open.
func (st *State[H]) create(ctx driver.Context, s driver.Stream) error {
	var h H
	if err := st.lib.Create(ctx, &h); err != nil {
		return err
	}
	var err error
	if st.lib.Setup != nil {
		err = st.lib.Setup(ctx, &h, s)
	} else {
		err = st.lib.SetStream(ctx, h, s)
	}
	if err != nil {
		// err stays the library's own unless destroying fails too.
		if derr := st.lib.Destroy(ctx, h); derr != nil {
			err = errors.Join(err, derr)
		}
		return err
	}
	st.h, st.made = h, true
	return nil
}

// Renew destroys the library handle and makes a new one in its place (for
// a library that cannot reset a handle's state otherwise); call it between
// Begin and End of a state that is not Shared, with what Begin returned.
func (st *State[H]) Renew(ctx driver.Context, s driver.Stream) error {
	if st.made {
		if err := st.lib.Destroy(ctx, st.h); err != nil {
			return err
		}
		var zero H
		st.h, st.made = zero, false
	}
	return st.create(ctx, s)
}

// Do runs f in the state's turn, for changing what the operations read;
// it gives core.ErrClosed for a closed State.
func (st *State[H]) Do(f func() error) error {
	if st == nil {
		return core.ErrClosed
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return core.ErrClosed
	}
	return f()
}

// Err returns core.ErrClosed when the state or its stream is closed: what
// an operation with nothing to do reports instead of calling Begin.
func (st *State[H]) Err() error {
	if st == nil {
		return core.ErrClosed
	}
	st.mu.RLock()
	closed := st.closed
	st.mu.RUnlock()
	if closed {
		return core.ErrClosed
	}
	if _, _, err := st.stream.Acquire(); err != nil {
		return err
	}
	st.stream.Release()
	return nil
}

// MinWorkspace is the smallest workspace allocated: an operation always
// gets a valid address, even where the library asks for 0 bytes.
const MinWorkspace = 256

// Workspace returns the workspace, grown to at least n bytes; call it
// between Begin and End of a state that is not Shared, or from Setup. A
// workspace too small is freed ordered on the stream, after the work
// queued there that uses it, and the new one grows by at least half so
// that slowly growing requests reallocate rarely; its size is rounded up
// to whole 4 KiB pages, so WorkspaceSize may exceed n (core's pool gives
// whole 2 MiB pages from 2 MiB up). It is plain device
// memory of the stream's device, from the device's memory resource unless
// that is host-accessible (pinned or managed memory would slow every
// library call down).
func (st *State[H]) Workspace(n int) (*core.Buffer, error) {
	if n < 0 || n > math.MaxInt/2 {
		return nil, fmt.Errorf("%s: the library asked for a workspace of %d bytes, which this platform cannot allocate", st.lib.Package, n)
	}
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
	dev := st.stream.Device()
	mr := dev.MemoryResource()
	if mr == nil || !mr.DeviceAccessible() || mr.HostAccessible() {
		mr = core.NewDeviceMemoryResource(dev)
	}
	ws, err := mr.Allocate(need, st.stream)
	if err != nil {
		return nil, fmt.Errorf("%s: allocating a %d-byte workspace: %w", st.lib.Package, need, err)
	}
	st.ws = ws
	return ws, nil
}

// AddWorkspace is Workspace held as one more operand of ops: its address,
// for the library call.
func (st *State[H]) AddWorkspace(ops *Operands, n int) (unsafe.Pointer, error) {
	ws, err := st.Workspace(n)
	if err != nil {
		return nil, err
	}
	return ops.Add("workspace", ws, 1, "")
}

// WorkspaceSize returns the size in bytes of the workspace (0 before an
// operation needed one).
func (st *State[H]) WorkspaceSize() int {
	if st == nil {
		return 0
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.ws == nil {
		return 0
	}
	return st.ws.Size()
}

// Keep makes b the state's, to be freed by Close as the workspace is
// (solver's devInfo); call it between Begin and End.
func (st *State[H]) Keep(b *core.Buffer) { st.kept = append(st.kept, b) }

// Close destroys the library handle, then frees the workspace and the
// kept Buffers, in the state's turn: it waits for the operations in
// flight. The Buffers are freed ordered on the stream, after the work
// queued there; their core.ErrClosed (a context gone first) is not an
// error. When the stream was closed first, the handle is moved to the
// legacy default stream before it is destroyed, in the stream's context if
// that still exists. Later operations give core.ErrClosed; closing twice,
// or a nil State, is not an error.
func (st *State[H]) Close() error {
	if st == nil {
		return nil
	}
	st.cleanup.Stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	var err error
	if st.made {
		h := st.h
		err = InContext(st.stream, func(ctx driver.Context, streamOpen bool) error {
			if !streamOpen {
				if err := st.lib.SetStream(ctx, h, 0); err != nil {
					return err
				}
			}
			return st.lib.Destroy(ctx, h)
		})
		var zero H
		st.h, st.made = zero, false
	}
	for _, b := range append([]*core.Buffer{st.ws}, st.kept...) {
		if b != nil {
			if berr := b.Close(); berr != nil && !errors.Is(berr, core.ErrClosed) {
				err = errors.Join(err, berr)
			}
		}
	}
	st.ws, st.kept = nil, nil
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

// ArgErr returns a *lib.ArgError of package pkg's function fn for its
// argument arg.
func ArgErr(pkg, fn, arg, format string, args ...any) error {
	return &lib.ArgError{Package: pkg, Func: fn, Arg: arg, Msg: fmt.Sprintf(format, args...)}
}
