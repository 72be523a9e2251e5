package solver

import (
	"errors"
	"math"
	"runtime"

	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Handle is cuSOLVER's dense API bound to one stream: every operation
// given it is queued on that stream, in the stream's context. The
// cuSOLVER handle is created on the first operation and reused; so are
// the workspace, which grows to the largest size an operation has asked
// for, and the device word cuSOLVER reports its result in (devInfo). A
// Handle is safe for concurrent use: its operations take turns (cuSOLVER
// handles must not be used by two threads at once, and the operations
// share the workspace). Close frees it; a forgotten Handle is freed when
// it is collected.
type Handle struct {
	st      *handleState
	cleanup runtime.Cleanup
}

// handleState is what a Handle owns, apart from the Handle itself so that
// a cleanup can free it. Operations run between its begin and End.
type handleState struct {
	libhandle.State[cusolver.DnHandle]
	info *core.Buffer // devInfo: one int32; nil until the first operation
}

// cusolverLib is cuSOLVER's handle calls, for libhandle.
var cusolverLib = libhandle.Lib[cusolver.DnHandle]{Create: cusolverDnCreate, SetStream: cusolverDnSetStream, Destroy: cusolverDnDestroy}

// NewHandle returns a Handle for operations on stream.
func NewHandle(stream *core.Stream) (*Handle, error) {
	if stream == nil {
		return nil, errors.New("solver: NewHandle: nil *core.Stream")
	}
	st := &handleState{}
	if err := st.Init(stream, cusolverLib); err != nil {
		return nil, err
	}
	h := &Handle{st: st}
	h.cleanup = runtime.AddCleanup(h, func(st *handleState) { _ = st.close() }, st)
	return h, nil
}

// Stream returns the stream the handle's operations are queued on.
func (h *Handle) Stream() *core.Stream {
	if h == nil || h.st == nil {
		return nil
	}
	return h.st.Stream()
}

// WorkspaceSize returns the size in bytes of the handle's workspace (0
// before an operation needed one).
func (h *Handle) WorkspaceSize() int {
	if h == nil || h.st == nil {
		return 0
	}
	return h.st.WorkspaceSize()
}

// Close destroys the cuSOLVER handle and frees the workspace, ordered
// after the work queued on the stream. Later operations return
// core.ErrClosed; closing twice is not an error. Factorizations made with
// the handle cannot solve after it is closed.
func (h *Handle) Close() error {
	if h == nil || h.st == nil {
		return nil
	}
	h.cleanup.Stop()
	return h.st.close()
}

// begin starts an operation (libhandle.State.Begin) and allocates devInfo
// on first use. It returns the context to act in; every successful begin
// needs an End. Operations call it, not Begin, so that devInfo is there.
func (st *handleState) begin() (driver.Context, error) {
	ctx, err := st.Begin()
	if err != nil {
		return 0, err
	}
	if st.info == nil {
		if st.info, err = st.Stream().Device().Allocate(4, st.Stream()); err != nil {
			st.End()
			return 0, err
		}
	}
	return ctx, nil
}

// readInfo waits for the work queued so far on the stream and returns
// devInfo; call it between begin and End.
func (st *handleState) readInfo() (int32, error) {
	var v [1]int32
	// st.info was allocated on the handle's stream, where its copies run:
	// this copy follows the operation that wrote it.
	err := core.CopyFromDevice(v[:], st.info)
	return v[0], err
}

// minWorkspace is the smallest workspace allocated.
const minWorkspace = libhandle.MinWorkspace

// workspace returns the handle's workspace, grown to at least n bytes;
// call it between begin and End.
func (st *handleState) workspace(n int64) (*core.Buffer, error) {
	if n < 0 || n > math.MaxInt/2 {
		return nil, errors.New("solver: cuSOLVER asked for a workspace this platform cannot allocate")
	}
	return st.Workspace(int(n))
}

// close destroys the cuSOLVER handle and frees the workspace and then
// devInfo (libhandle.State.Close).
func (st *handleState) close() error {
	return st.Close(func() []*core.Buffer {
		info := st.info
		st.info = nil
		return []*core.Buffer{info}
	})
}
