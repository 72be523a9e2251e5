package sparse

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
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
// a cleanup can free it.
type handleState struct {
	mu     sync.Mutex
	stream *core.Stream
	lib    cusparse.Handle // 0 until the first operation
	ws     *core.Buffer    // nil until an operation needs a workspace
	closed bool
}

// NewHandle returns a Handle for operations on stream.
func NewHandle(stream *core.Stream) (*Handle, error) {
	if stream == nil {
		return nil, errors.New("sparse: NewHandle: nil *core.Stream")
	}
	if _, _, err := stream.Acquire(); err != nil {
		return nil, err
	}
	stream.Release()
	st := &handleState{stream: stream}
	h := &Handle{st: st}
	h.cleanup = runtime.AddCleanup(h, func(st *handleState) { _ = st.close() }, st)
	return h, nil
}

// Stream returns the stream the handle's operations are queued on.
func (h *Handle) Stream() *core.Stream { return h.st.stream }

// WorkspaceSize returns the size in bytes of the handle's workspace (0
// before an operation needed one).
func (h *Handle) WorkspaceSize() int {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	if h.st.ws == nil {
		return 0
	}
	return h.st.ws.Size()
}

// Close destroys the cuSPARSE handle and frees the workspace, ordered
// after the work queued on the stream. Later operations return
// core.ErrClosed; closing twice is not an error.
func (h *Handle) Close() error {
	h.cleanup.Stop()
	return h.st.close()
}

// begin starts an operation: it takes the handle's turn, holds its stream
// open and creates the cuSPARSE handle on first use. It returns the
// context to act in; every successful begin needs an end.
func (st *handleState) begin() (driver.Context, error) {
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
	if st.lib == 0 {
		var lib cusparse.Handle
		err = cusparseCreate(ctx, &lib)
		if err == nil {
			if err = cusparseSetStream(ctx, lib, s); err != nil {
				_ = cusparseDestroy(ctx, lib)
			}
		}
		if err != nil {
			st.stream.Release()
			st.mu.Unlock()
			return 0, err
		}
		st.lib = lib
	}
	return ctx, nil
}

// end ends an operation that begin started.
func (st *handleState) end() {
	st.stream.Release()
	st.mu.Unlock()
}

// minWorkspace is the smallest workspace allocated: an operation always
// gets a valid address, even where cuSPARSE asks for 0 bytes.
const minWorkspace = 256

// workspace returns the handle's workspace, grown to at least n bytes;
// call it between begin and end. A workspace too small is freed ordered
// on the stream, after the work queued there that uses it, and the new
// one grows by at least half so that slowly growing requests reallocate
// rarely.
func (st *handleState) workspace(n uint64) (*core.Buffer, error) {
	if n > math.MaxInt/2 {
		return nil, errors.New("sparse: cuSPARSE asked for a workspace larger than this platform can allocate")
	}
	need := max(int(n), minWorkspace)
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

// close destroys the cuSPARSE handle and frees the workspace. When the
// stream was closed first, the handle is moved to the legacy default
// stream before it is destroyed, and destroyed in the stream's context if
// that still exists.
func (st *handleState) close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	var err error
	if st.lib != 0 {
		err = inContext(st.stream, func(ctx driver.Context, streamOpen bool) error {
			if !streamOpen {
				if err := cusparseSetStream(ctx, st.lib, 0); err != nil {
					return err
				}
			}
			return cusparseDestroy(ctx, st.lib)
		})
		st.lib = 0
	}
	if st.ws != nil {
		if werr := st.ws.Close(); werr != nil && !errors.Is(werr, core.ErrClosed) {
			err = errors.Join(err, werr)
		}
		st.ws = nil
	}
	return err
}

// inContext calls f in the context of stream s, for destroying what was
// made there: with s held open when it is, or else with its context's
// handle (streamOpen false). When that context is gone too, so is
// everything made in it, and f is not called.
func inContext(s *core.Stream, f func(ctx driver.Context, streamOpen bool) error) error {
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

// pins holds the Buffers of one library call open (core.Buffer.Acquire)
// and gives their addresses in the form the bindings take.
type pins struct {
	bufs [4]*core.Buffer
	n    int
}

// add acquires b and returns its device address.
func (p *pins) add(b *core.Buffer) (unsafe.Pointer, error) {
	ptr, err := b.Acquire()
	if err != nil {
		return nil, err
	}
	p.bufs[p.n] = b
	p.n++
	return devPtr(ptr), nil
}

// release releases what add acquired.
func (p *pins) release() {
	for i := range p.n {
		p.bufs[i].Release()
		p.bufs[i] = nil
	}
	p.n = 0
}

// devPtr converts a device address to the pointer type the bindings take;
// the address is not Go memory, and this form of the conversion is the one
// go vet accepts.
func devPtr(p driver.Deviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
