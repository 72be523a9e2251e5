package solver

import (
	"unsafe"

	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Options configure New. There are none yet: nil is the default, and the
// type is there so that options can come without changing New.
type Options struct{}

// Handle is cuSOLVER's dense API bound to one stream: every operation
// given it is queued on that stream, in the stream's context. The
// cuSOLVER handle is created on the first operation and reused; so are
// the workspace, which grows to the largest size an operation has asked
// for, and the device word cuSOLVER reports its result in (devInfo). A
// Handle is safe for concurrent use: its operations take turns (cuSOLVER
// handles must not be used by two threads at once, and the operations
// share the workspace). Close frees it; a forgotten Handle is freed when
// it is collected. A zero Handle acts as a closed one.
type Handle struct {
	st   *libhandle.State[cusolver.DnHandle]
	info *core.Buffer // devInfo, one int32: nil until the first operation; in st's turn
}

// cusolverLib is cuSOLVER's handle calls, for libhandle.
var cusolverLib = libhandle.Lib[cusolver.DnHandle]{
	Package: "solver", Create: cusolverDnCreate, SetStream: cusolverDnSetStream, Destroy: cusolverDnDestroy,
}

// New returns a Handle for operations on stream; opts may be nil.
func New(stream *core.Stream, opts *Options) (*Handle, error) {
	return libhandle.Open(cusolverLib, "New", stream, func(st *libhandle.State[cusolver.DnHandle]) *Handle { return &Handle{st: st} })
}

// NewHandle returns New(stream, nil).
//
// Deprecated: use New, which every library package has; NewHandle goes in
// the next release.
func NewHandle(stream *core.Stream) (*Handle, error) { return New(stream, nil) }

// Stream returns the stream the handle's operations are queued on.
func (h *Handle) Stream() *core.Stream { return h.state().Stream() }

// WorkspaceSize returns the size in bytes of the handle's workspace (0
// before an operation needed one).
func (h *Handle) WorkspaceSize() int { return h.state().WorkspaceSize() }

// Close destroys the cuSOLVER handle and frees the workspace and devInfo,
// ordered after the work queued on the stream. Later operations return
// core.ErrClosed; closing twice is not an error. Factorizations made with
// the handle cannot solve after it is closed.
func (h *Handle) Close() error { return h.state().Close() }

// state is h's State; nil for a nil or zero Handle, which acts closed.
func (h *Handle) state() *libhandle.State[cusolver.DnHandle] {
	if h == nil {
		return nil
	}
	return h.st
}

// call is one operation in progress: its Buffers held, and once begun,
// its context and cuSOLVER handle in the handle's turn, with devInfo.
type call struct {
	h    *Handle
	ops  libhandle.Operands
	ctx  driver.Context
	lib  cusolver.DnHandle
	info unsafe.Pointer
}

// operand is one matrix or vector of an operation: its argument's name
// and its Buffer, which holds elements of the operation's T.
type operand struct {
	arg string
	b   *core.Buffer
}

// run runs an operation of h: it holds bufs (their errors come before a
// closed handle's), then work queues the operation in the handle's turn,
// with the addresses of bufs.
func run[T Float](h *Handle, fn string, bufs []operand, work func(c *call, p []unsafe.Pointer) error) error {
	st := h.state()
	c := &call{h: h, ops: libhandle.Operands{Package: "solver", Func: fn, Device: st.Device()}}
	defer c.ops.Release()
	p := make([]unsafe.Pointer, len(bufs))
	for i, x := range bufs {
		var err error
		if p[i], err = libhandle.AddOf[T](&c.ops, x.arg, x.b); err != nil {
			return err
		}
	}
	ctx, _, err := st.Begin()
	if err != nil {
		return err
	}
	defer st.End()
	if h.info == nil {
		if h.info, err = st.Device().Allocate(4, st.Stream()); err != nil {
			return err
		}
		st.Keep(h.info)
	}
	if c.info, err = c.ops.Add("devInfo", h.info, 4, "int32"); err != nil {
		return err
	}
	c.ctx, c.lib = ctx, st.Handle()
	return work(c, p)
}

// solve is the part that Cholesky.Solve and LU.Solve share: it checks
// the right-hand sides b of a solve with the factored n×n matrix a, then
// runs work with the addresses of a and b.
func solve[T Float](h *Handle, fn string, a *core.Buffer, n int, b *core.Buffer, nrhs int, work func(c *call, ap, bp unsafe.Pointer) error) error {
	if err := checkRHS[T](fn, a, n, b, nrhs); err != nil {
		return err
	}
	return run[T](h, fn, []operand{{"A", a}, {"B", b}}, func(c *call, p []unsafe.Pointer) error {
		return work(c, p[0], p[1])
	})
}

// factor runs a cuSOLVER routine that reports its result in devInfo (fn:
// "getrf"): size asks for its workspace in elements of T, run queues it
// with the workspace, then factor waits for devInfo and turns a positive
// value into positive's error.
func factor[T Float](c *call, fn string, size func(lwork *int32) error, run func(ws unsafe.Pointer, lwork int32) error, positive func(int) error) error {
	var lwork int32
	if err := size(&lwork); err != nil {
		return err
	}
	ws, err := c.h.st.AddWorkspace(&c.ops, int(lwork)*libhandle.SizeOf[T]())
	if err != nil {
		return err
	}
	if err := run(ws, lwork); err != nil {
		return err
	}
	// h.info was allocated on the handle's stream, where its copies run:
	// this copy follows the routine that wrote it.
	var info [1]int32
	if err := core.CopyFromDevice(info[:], c.h.info); err != nil {
		return err
	}
	return infoError(fn, info[0], positive)
}

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("solver", fn, arg, format, args...)
}
