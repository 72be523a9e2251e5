package sparse

import (
	"errors"
	"math"
	"runtime"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Handle is cuSPARSE bound to one stream: every operation given it is
// queued on that stream, in the stream's context. The cuSPARSE handle is
// created on the first operation and reused; so is the workspace, which
// grows to the largest size an operation has asked for. A Handle is safe
// for concurrent use: its operations take turns (they share the
// workspace, and their work is ordered on one stream anyway). Close frees
// it; a forgotten Handle is freed when it is collected.
type Handle struct {
	st      *handleState
	cleanup runtime.Cleanup
}

// handleState is what a Handle owns, apart from the Handle itself so that
// a cleanup can free it. Operations run between its Begin and End.
type handleState struct {
	libhandle.State[cusparse.Handle]
}

// cusparseLib is cuSPARSE's handle calls, for libhandle.
var cusparseLib = libhandle.Lib[cusparse.Handle]{Create: cusparseCreate, SetStream: cusparseSetStream, Destroy: cusparseDestroy}

// NewHandle returns a Handle for operations on stream.
func NewHandle(stream *core.Stream) (*Handle, error) {
	if stream == nil {
		return nil, errors.New("sparse: NewHandle: nil *core.Stream")
	}
	st := &handleState{}
	if err := st.Init(stream, cusparseLib); err != nil {
		return nil, err
	}
	h := &Handle{st: st}
	h.cleanup = runtime.AddCleanup(h, func(st *handleState) { _ = st.Close(nil) }, st)
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

// Close destroys the cuSPARSE handle and frees the workspace, ordered
// after the work queued on the stream. Later operations return
// core.ErrClosed; closing twice is not an error.
func (h *Handle) Close() error {
	if h == nil || h.st == nil {
		return nil
	}
	h.cleanup.Stop()
	return h.st.Close(nil)
}

// minWorkspace is the smallest workspace allocated.
const minWorkspace = libhandle.MinWorkspace

// workspace returns the handle's workspace, grown to at least n bytes;
// call it between Begin and End.
func (st *handleState) workspace(n uint64) (*core.Buffer, error) {
	if n > math.MaxInt/2 {
		return nil, errors.New("sparse: cuSPARSE asked for a workspace larger than this platform can allocate")
	}
	return st.Workspace(int(n))
}
