package blas

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Options configure New. The zero value (or nil) is the default.
type Options struct {
	// WorkspaceSize is the size in bytes of the workspace that cuBLAS and
	// cuBLASLt share (their work is ordered on the handle's one stream).
	// 0 is NVIDIA's recommendation: 32 MiB on Hopper (compute capability
	// 9.0) and newer, 4 MiB before.
	WorkspaceSize int
	// TF32 lets cuBLAS's float32 GEMMs (Gemm, GemmBatched,
	// GemmStridedBatched and their row-major forms) round their inputs
	// to TF32 (10 fraction bits) and use tensor cores
	// (CUBLAS_TF32_TENSOR_OP_MATH). Off by default: float32 GEMMs then
	// compute in float32 (CUBLAS_COMPUTE_32F). Matmul takes its compute
	// type per call instead.
	TF32 bool
	// MatmulTuning says how Matmul chooses its algorithm for a new shape:
	// by timing cuBLASLt's top candidates (TuneTimed, the default), also
	// keeping the choice on disk (TuneDisk), or by the heuristic alone
	// (TuneOff). See Tuning.
	MatmulTuning Tuning
	// MatmulCandidates is how many of the heuristic's candidates tuning
	// times: 0 is 8; at most 64.
	MatmulCandidates int
}

// Handle is a cuBLAS handle and a cuBLASLt handle bound to one stream:
// every operation of the handle is queued on that stream. Both are
// created by the first operation, with the workspace (see
// Options.WorkspaceSize) they share, allocated from the stream's device;
// then reused. Several goroutines may use one Handle at once: cuBLAS
// allows calls on one handle from several threads while its
// configuration does not change, and a Handle's never does once made.
// Their operations are ordered on the stream as their calls return.
//
// The Handle also keeps the cuBLASLt plans of Matmul. Close releases
// everything; a forgotten Handle is released when it is collected. A zero
// Handle acts as a closed one.
type Handle struct {
	*state
}

// handles are the library handles of a Handle.
type handles struct {
	blas cublas.Handle
	lt   cublaslt.Handle
}

// state is what a Handle owns, apart from the Handle so that a cleanup
// can release it.
type state struct {
	st     *libhandle.State[handles]
	dev    *core.Device
	tf32   bool
	wsSize int // asked for
	tuning Tuning
	nCand  int
	// Set by setup, before any operation reads them.
	ws    unsafe.Pointer // the workspace's device address
	wsLen uint64         // and its size
	plans planCache
}

// New returns a Handle for operations on stream; opts may be nil. The
// cuBLAS handle (bound to stream once, with the workspace, host pointer
// mode, and default math unless Options.TF32), the cuBLASLt handle and
// the workspace are made by the first operation. Scalars (alpha, beta,
// results) are Go values.
func New(stream *core.Stream, opts *Options) (*Handle, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkspaceSize < 0 {
		return nil, argErr("New", "opts.WorkspaceSize", "negative WorkspaceSize %d", o.WorkspaceSize)
	}
	if o.MatmulTuning >= numTunings {
		return nil, argErr("New", "opts.MatmulTuning", "opts.MatmulTuning = %v is not TuneTimed, TuneOff or TuneDisk", o.MatmulTuning)
	}
	if o.MatmulCandidates < 0 || o.MatmulCandidates > maxCandidates {
		return nil, argErr("New", "opts.MatmulCandidates", "opts.MatmulCandidates = %d is not between 0 (the default, %d) and %d", o.MatmulCandidates, defaultCandidates, maxCandidates)
	}
	s := &state{tf32: o.TF32, wsSize: o.WorkspaceSize, tuning: o.MatmulTuning, nCand: o.MatmulCandidates}
	st, err := libhandle.New(libhandle.Lib[handles]{
		Package: "blas", Shared: true,
		Create:    func(ctx driver.Context, h *handles) error { return cublasCreate(ctx, &h.blas) },
		Setup:     s.setup,
		SetStream: func(ctx driver.Context, h handles, hs driver.Stream) error { return cublasSetStream(ctx, h.blas, hs) },
		Destroy:   destroy,
	}, "New", stream)
	if err != nil {
		return nil, err
	}
	s.st, s.dev = st, stream.Device()
	if s.wsSize == 0 {
		s.wsSize = 4 << 20
		if major, _ := s.dev.ComputeCapability(); major >= 9 {
			s.wsSize = 32 << 20
		}
	}
	h := &Handle{state: s}
	libhandle.CloseWith(h, st)
	return h, nil
}

// setup configures a new cuBLAS handle and makes the cuBLASLt one, in
// the state's turn.
func (s *state) setup(ctx driver.Context, h *handles, hs driver.Stream) error {
	ws, err := s.st.Workspace(s.wsSize)
	if err != nil {
		return err
	}
	p := ws.Ptr()
	if p%256 != 0 { // cublasSetWorkspace's requirement
		return fmt.Errorf("blas: the workspace at %#x is not 256-byte aligned", uint64(p))
	}
	// cublasSetStream resets the workspace to cuBLAS's own pool: the
	// stream first, then the workspace.
	if err := cublasSetStream(ctx, h.blas, hs); err != nil {
		return err
	}
	if err := cublasSetWorkspace(ctx, h.blas, libhandle.Ptr(p), uint64(ws.Size())); err != nil {
		return err
	}
	if err := cublasSetPointerMode(ctx, h.blas, cublas.PointerModeHost); err != nil {
		return err
	}
	mode := cublas.DefaultMath
	if s.tf32 {
		mode = cublas.Tf32TensorOpMath
	}
	if err := cublasSetMathMode(ctx, h.blas, mode); err != nil {
		return err
	}
	if err := cublasLtCreate(ctx, &h.lt); err != nil {
		return err
	}
	s.ws, s.wsLen = libhandle.Ptr(p), uint64(ws.Size())
	return nil
}

// destroy destroys what create and setup made.
func destroy(ctx driver.Context, h handles) error {
	var err error
	if h.blas != 0 {
		err = cublasDestroy(ctx, h.blas)
	}
	if h.lt != 0 {
		err = errors.Join(err, cublasLtDestroy(ctx, h.lt))
	}
	return err
}

// Stream returns the stream the handle's operations are queued on (nil
// for a zero Handle).
func (h *Handle) Stream() *core.Stream { return h.lib().Stream() }

// Close destroys the handles, the cached cuBLASLt plans and the
// workspace (freed after the work queued on the stream). It waits for
// operations in flight in other goroutines, and for the GPU
// (cublasDestroy synchronizes the device); later operations return
// core.ErrClosed. Closing twice is not an error.
func (h *Handle) Close() error {
	st := h.lib()
	if st == nil {
		return nil
	}
	err := st.Close()
	// No operation is in flight, and none can start, to use a plan.
	h.plans.clear()
	return err
}

// lib is h's State; nil for a nil or zero Handle, which acts closed.
func (h *Handle) lib() *libhandle.State[handles] {
	if h == nil || h.state == nil {
		return nil
	}
	return h.st
}

// operands returns the holder of fn's Buffers, which checks them against
// the handle's device.
func (h *Handle) operands(fn string) libhandle.Operands {
	return libhandle.Operands{Package: "blas", Func: fn, Device: h.lib().Device()}
}

// call is one cuBLAS operation in progress: its context, stream and
// library handles, and the addresses of its operands.
type call struct {
	ctx driver.Context
	s   driver.Stream
	lib handles
	p   [3]unsafe.Pointer
}

// do is every operation's path from its checked arguments to its cuBLAS
// call: it holds bufs, operands of elements e named by the letters of
// names ("axy": a, x and y), begins the operation (in the Handle's
// share) and calls queue with their addresses.
func (h *Handle) do(fn string, e elem, names string, bufs [3]*core.Buffer, queue func(c call) error) error {
	ops := h.operands(fn)
	defer ops.Release()
	var c call
	var err error
	for i := range len(names) {
		if c.p[i], err = ops.Add(names[i:i+1], bufs[i], e.size, e.name); err != nil {
			return err
		}
	}
	if c.ctx, c.s, err = h.lib().Begin(); err != nil {
		return err
	}
	defer h.st.End()
	c.lib = h.st.Handle()
	return queue(c)
}

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("blas", fn, arg, format, args...)
}
