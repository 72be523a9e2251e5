package sparse

import (
	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Options configure New. There are none yet: nil is the default, and the
// type is there so that options can come without changing New.
type Options struct{}

// Handle is cuSPARSE bound to one stream: every operation given it is
// queued on that stream, in the stream's context. The cuSPARSE handle is
// created on the first operation and reused; so is the workspace, which
// grows to the largest size an operation has asked for. A Handle is safe
// for concurrent use: its operations take turns (they share the
// workspace, and their work is ordered on one stream anyway). Close frees
// it; a forgotten Handle is freed when it is collected. A zero Handle
// acts as a closed one.
type Handle struct {
	st *libhandle.State[cusparse.Handle]
}

// cusparseLib is cuSPARSE's handle calls, for libhandle.
var cusparseLib = libhandle.Lib[cusparse.Handle]{
	Package: "sparse", Create: cusparseCreate, SetStream: cusparseSetStream, Destroy: cusparseDestroy,
}

// New returns a Handle for operations on stream; opts may be nil.
func New(stream *core.Stream, opts *Options) (*Handle, error) {
	return libhandle.Open(cusparseLib, "New", stream, func(st *libhandle.State[cusparse.Handle]) *Handle { return &Handle{st: st} })
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

// Close destroys the cuSPARSE handle and frees the workspace, ordered
// after the work queued on the stream. Later operations return
// core.ErrClosed; closing twice is not an error.
func (h *Handle) Close() error { return h.state().Close() }

// state is h's State; nil for a nil or zero Handle, which acts closed.
func (h *Handle) state() *libhandle.State[cusparse.Handle] {
	if h == nil {
		return nil
	}
	return h.st
}

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("sparse", fn, arg, format, args...)
}
