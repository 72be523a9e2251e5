package blas

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
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
// everything; a forgotten Handle is released when it is collected.
type Handle struct {
	*state
	cleanup runtime.Cleanup
}

// state is what a Handle owns, apart from the Handle so that a cleanup
// can release it. A zero Handle has none and acts as a closed one.
type state struct {
	mu      sync.RWMutex // read: an operation in flight; write: creating, closing
	stream  *core.Stream
	dev     *core.Device
	tf32    bool
	wsSize  uint64
	created bool // the library handles and the workspace exist
	closed  bool
	cublas  cublas.Handle
	lt      cublaslt.Handle
	ws      *core.Buffer
	wsPtr   driver.Deviceptr
	plans   planCache
}

// resources are what a Handle's state releases.
type resources struct {
	stream *core.Stream
	cublas cublas.Handle
	lt     cublaslt.Handle
	ws     *core.Buffer
}

// New returns a Handle for operations on stream. The cuBLAS handle (bound
// to stream once, with the workspace, host pointer mode, and default math
// unless Options.TF32), the cuBLASLt handle and the workspace are made by
// the first operation. Scalars (alpha, beta, results) are Go values.
func New(stream *core.Stream, opts *Options) (*Handle, error) {
	if stream == nil {
		return nil, errors.New("blas: New: nil *core.Stream")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkspaceSize < 0 {
		return nil, fmt.Errorf("blas: New: negative WorkspaceSize %d", o.WorkspaceSize)
	}
	if _, _, err := stream.Acquire(); err != nil {
		return nil, err
	}
	stream.Release()
	d := stream.Device()
	size := o.WorkspaceSize
	if size == 0 {
		size = 4 << 20
		if major, _ := d.ComputeCapability(); major >= 9 {
			size = 32 << 20
		}
	}
	st := &state{stream: stream, dev: d, tf32: o.TF32, wsSize: uint64(size)}
	h := &Handle{state: st}
	h.cleanup = runtime.AddCleanup(h, func(st *state) { st.close() }, st)
	return h, nil
}

// create makes the workspace and the library handles, with st.mu held
// for writing.
func (st *state) create() error {
	ws, err := st.dev.Allocate(int(st.wsSize), st.stream)
	if err != nil {
		return fmt.Errorf("blas: allocating the %d-byte workspace: %w", st.wsSize, err)
	}
	r := resources{stream: st.stream, ws: ws}
	if err := r.create(st.tf32); err != nil {
		return errors.Join(err, r.release())
	}
	st.cublas, st.lt, st.ws, st.wsPtr = r.cublas, r.lt, ws, ws.Ptr()
	st.created = true
	return nil
}

// create makes the library handles of r, in the stream's context.
func (r *resources) create(tf32 bool) error {
	ctx, s, err := r.stream.Acquire()
	if err != nil {
		return err
	}
	defer r.stream.Release()
	wsPtr, err := r.ws.Acquire()
	if err != nil {
		return err
	}
	defer r.ws.Release()
	if wsPtr%256 != 0 { // cublasSetWorkspace's requirement
		return fmt.Errorf("blas: the workspace at %#x is not 256-byte aligned", uint64(wsPtr))
	}
	if err := cublasCreate(ctx, &r.cublas); err != nil {
		return err
	}
	// cublasSetStream resets the workspace to cuBLAS's own pool: the
	// stream first, then the workspace.
	if err := cublasSetStream(ctx, r.cublas, s); err != nil {
		return err
	}
	if err := cublasSetWorkspace(ctx, r.cublas, ptr(wsPtr), uint64(r.ws.Size())); err != nil {
		return err
	}
	if err := cublasSetPointerMode(ctx, r.cublas, cublas.PointerModeHost); err != nil {
		return err
	}
	mode := cublas.DefaultMath
	if tf32 {
		mode = cublas.Tf32TensorOpMath
	}
	if err := cublasSetMathMode(ctx, r.cublas, mode); err != nil {
		return err
	}
	return cublasLtCreate(ctx, &r.lt)
}

// release destroys what r holds. Destroying needs the stream's context:
// after the stream is closed its context is used directly, and when that
// is gone too the handles went with it.
func (r resources) release() error {
	var errs []error
	if r.cublas != 0 || r.lt != 0 {
		ctx, _, err := r.stream.Acquire()
		streamGone := err != nil
		if err == nil {
			defer r.stream.Release()
		} else {
			ctx, err = r.stream.Context().Handle()
		}
		if err == nil {
			if r.cublas != 0 && streamGone {
				// Leave cuBLAS no destroyed stream to touch.
				errs = append(errs, cublasSetStream(ctx, r.cublas, 0))
			}
			if r.cublas != 0 {
				errs = append(errs, cublasDestroy(ctx, r.cublas))
			}
			if r.lt != 0 {
				errs = append(errs, cublasLtDestroy(ctx, r.lt))
			}
		}
	}
	if r.ws != nil {
		// Freed on the stream, after the work queued there that uses it.
		errs = append(errs, r.ws.Close())
	}
	return errors.Join(errs...)
}

// Stream returns the stream the handle's operations are queued on (nil
// for a zero Handle).
func (h *Handle) Stream() *core.Stream {
	if h.state == nil {
		return nil
	}
	return h.stream
}

// Close destroys the handles, the cached cuBLASLt plans and the
// workspace (freed after the work queued on the stream). It waits for
// operations in flight in other goroutines, and for the GPU
// (cublasDestroy synchronizes the device); later operations return
// core.ErrClosed. Closing twice is not an error.
func (h *Handle) Close() error {
	if h == nil || h.state == nil {
		return nil
	}
	h.cleanup.Stop()
	return h.state.close()
}

func (st *state) close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	if !st.created {
		return nil
	}
	st.plans.clear()
	err := resources{stream: st.stream, cublas: st.cublas, lt: st.lt, ws: st.ws}.release()
	st.cublas, st.lt, st.ws, st.wsPtr = 0, 0, nil, 0
	return err
}

// createOnce makes the library handles unless they exist.
func (st *state) createOnce() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return core.ErrClosed
	}
	if st.created {
		return nil
	}
	return st.create()
}

// begin starts an operation: it makes the library handles on first use,
// holds the handle open and the stream and its context, and checks that
// the operands' memory is the stream's device's. Every successful begin
// needs an end.
func (h *Handle) begin(fn string, ops *operands) (driver.Context, driver.Stream, error) {
	if h.state == nil {
		return 0, 0, core.ErrClosed
	}
	h.mu.RLock()
	for !h.created || h.closed {
		h.mu.RUnlock()
		if err := h.createOnce(); err != nil {
			return 0, 0, err
		}
		h.mu.RLock()
	}
	ctx, s, err := h.stream.Acquire()
	if err != nil {
		h.mu.RUnlock()
		return 0, 0, err
	}
	if err := ops.checkDevice(fn, h.dev); err != nil {
		h.end()
		return 0, 0, err
	}
	return ctx, s, nil
}

func (h *Handle) end() {
	h.stream.Release()
	h.mu.RUnlock()
}

// operand is one Buffer of an operation: arg, or arg[idx] when idx >= 0.
type operand struct {
	b   *core.Buffer
	arg string
	idx int
}

func (x *operand) name() string {
	if x.idx < 0 {
		return x.arg
	}
	return fmt.Sprintf("%s[%d]", x.arg, x.idx)
}

// operands holds the Buffers of one operation open (Acquire) until
// release. The first three need no allocation.
type operands struct {
	n     int
	fixed [3]operand
	more  []operand
}

func (o *operands) at(i int) *operand {
	if i < len(o.fixed) {
		return &o.fixed[i]
	}
	return &o.more[i-len(o.fixed)]
}

// add acquires b, the operand arg (arg[idx] when idx >= 0), and checks
// that the GPU can use it and that its address is aligned for e.
func (o *operands) add(fn, arg string, idx int, b *core.Buffer, e elem) (driver.Deviceptr, error) {
	x := operand{b, arg, idx}
	p, err := b.Acquire()
	if err != nil {
		return 0, fmt.Errorf("blas: %s: %s: %w", fn, x.name(), err)
	}
	if o.n < len(o.fixed) {
		o.fixed[o.n] = x
	} else {
		o.more = append(o.more, x)
	}
	o.n++
	if mr := b.MemoryResource(); mr != nil && !mr.DeviceAccessible() {
		return 0, argErr(fn, x.name(), "%s is %T memory, which the GPU cannot access", x.name(), mr)
	}
	if int(p%driver.Deviceptr(e.size)) != 0 {
		return 0, argErr(fn, x.name(), "%s is at %#x, not aligned to %s's %d bytes", x.name(), uint64(p), e.name, e.size)
	}
	return p, nil
}

// checkDevice refuses memory of another device than d: its addresses
// would fault on d.
func (o *operands) checkDevice(fn string, d *core.Device) error {
	for i := range o.n {
		x := o.at(i)
		mr := x.b.MemoryResource()
		if mr == nil || d == nil {
			continue
		}
		if bd := mr.Device(); bd != nil && bd != d {
			return argErr(fn, x.name(), "%s is memory of %v, but the handle's stream is on %v", x.name(), bd, d)
		}
	}
	return nil
}

func (o *operands) release() {
	for i := range o.n {
		o.at(i).b.Release()
	}
	o.n = 0
}
