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
	st, err := libhandle.New(cusolverLib, "New", stream)
	if err != nil {
		return nil, err
	}
	h := &Handle{st: st}
	libhandle.CloseWith(h, st)
	return h, nil
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

// run runs an operation of h: hold adds its operands (their errors come
// before a closed handle's), then work queues it in the handle's turn.
func run(h *Handle, fn string, hold func(c *call) error, work func(c *call) error) error {
	st := h.state()
	c := &call{h: h, ops: libhandle.Operands{Package: "solver", Func: fn, Device: st.Device()}}
	defer c.ops.Release()
	if err := hold(c); err != nil {
		return err
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
	return work(c)
}

// workspace returns the handle's workspace, grown to lwork elements of T
// and held for the call.
func workspace[T Float](c *call, lwork int32) (unsafe.Pointer, error) {
	return c.h.st.AddWorkspace(&c.ops, int(lwork)*libhandle.SizeOf[T]())
}

// readInfo waits for the work queued so far on the stream and returns
// devInfo. h.info was allocated on the handle's stream, where its copies
// run: this copy follows the operation that wrote it.
func (c *call) readInfo() (int32, error) {
	var v [1]int32
	err := core.CopyFromDevice(v[:], c.h.info)
	return v[0], err
}

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("solver", fn, arg, format, args...)
}
