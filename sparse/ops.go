package sparse

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Op says how an operation uses its sparse matrix A.
type Op int

const (
	NoTrans   Op = iota // op(A) = A
	Trans               // op(A) = Aᵀ
	ConjTrans           // op(A) = Aᴴ (Aᵀ for real matrices)
)

func (o Op) String() string {
	switch o {
	case NoTrans:
		return "NoTrans"
	case Trans:
		return "Trans"
	case ConjTrans:
		return "ConjTrans"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// libOp is cuSPARSE's name of op for a matrix of T.
func libOp[T Scalar](op Op) cusparse.Operation {
	switch op {
	case Trans:
		return cusparse.OperationTranspose
	case ConjTrans:
		var z T
		switch any(z).(type) {
		case complex64, complex128:
			return cusparse.OperationConjugateTranspose
		}
		return cusparse.OperationTranspose
	}
	return cusparse.OperationNonTranspose
}

// opDims returns the shape m×k of op(A).
func opDims(op Op, rows, cols int) (m, k int) {
	if op == NoTrans {
		return rows, cols
	}
	return cols, rows
}

// SpMV computes y = alpha·op(A)·x + beta·y on h's stream, where op(A) is
// m×k, x holds k elements of T and y m (the buffers may be larger; only
// their first elements are used). x and y must not overlap. It returns
// once the work is queued.
func SpMV[T Scalar](h *Handle, op Op, alpha T, a *Matrix[T], x *core.Buffer, beta T, y *core.Buffer) error {
	if err := checkSpMV(h, op, a, x, y); err != nil {
		return err
	}
	// a's own buffers are closed only by its Close, which the read lock
	// holds off: they need no Acquire.
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return core.ErrClosed
	}
	ctx, err := h.st.Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	var p libhandle.Pins
	defer p.Release()
	xp, err := p.Add(x)
	if err != nil {
		return err
	}
	yp, err := p.Add(y)
	if err != nil {
		return err
	}
	m, k := opDims(op, a.rows, a.cols)
	dt := dataType[T]()
	var vx, vy cusparse.DnVecDescr
	if err := cusparseCreateDnVec(ctx, &vx, int64(k), xp, dt); err != nil {
		return err
	}
	defer cusparseDestroyDnVec(ctx, cusparse.ConstDnVecDescr(vx))
	if err := cusparseCreateDnVec(ctx, &vy, int64(m), yp, dt); err != nil {
		return err
	}
	defer cusparseDestroyDnVec(ctx, cusparse.ConstDnVecDescr(vy))
	lop, ap, bp := libOp[T](op), unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	size, err := cusparseSpMVBufferSize(ctx, h.st.Lib(), lop, ap, cusparse.ConstSpMatDescr(a.desc), cusparse.ConstDnVecDescr(vx), bp, vy, dt, cusparse.SpmvAlgDefault)
	if err != nil {
		return err
	}
	ws, err := h.st.workspace(size)
	if err != nil {
		return err
	}
	wp, err := p.Add(ws)
	if err != nil {
		return err
	}
	return cusparseSpMV(ctx, h.st.Lib(), lop, ap, cusparse.ConstSpMatDescr(a.desc), cusparse.ConstDnVecDescr(vx), bp, vy, dt, cusparse.SpmvAlgDefault, wp)
}

// SpMM computes C = alpha·op(A)·B + beta·C on h's stream, where op(A) is
// m×k and the dense matrices are row-major (Go's order, and the one
// cuSPARSE's fastest CSR and COO algorithms want) and contiguous: B is
// k×n, k rows of n elements, and C m×n. B and C must not overlap. It
// returns once the work is queued.
func SpMM[T Scalar](h *Handle, op Op, alpha T, a *Matrix[T], b *core.Buffer, n int, beta T, c *core.Buffer) error {
	if err := checkSpMM(h, op, a, b, n, c); err != nil {
		return err
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return core.ErrClosed
	}
	ctx, err := h.st.Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	var p libhandle.Pins
	defer p.Release()
	bptr, err := p.Add(b)
	if err != nil {
		return err
	}
	cptr, err := p.Add(c)
	if err != nil {
		return err
	}
	m, k := opDims(op, a.rows, a.cols)
	dt := dataType[T]()
	var mb, mc cusparse.DnMatDescr
	if err := cusparseCreateDnMat(ctx, &mb, int64(k), int64(n), int64(n), bptr, dt, cusparse.OrderRow); err != nil {
		return err
	}
	defer cusparseDestroyDnMat(ctx, cusparse.ConstDnMatDescr(mb))
	if err := cusparseCreateDnMat(ctx, &mc, int64(m), int64(n), int64(n), cptr, dt, cusparse.OrderRow); err != nil {
		return err
	}
	defer cusparseDestroyDnMat(ctx, cusparse.ConstDnMatDescr(mc))
	lop, nop := libOp[T](op), cusparse.OperationNonTranspose
	ap, bp := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	size, err := cusparseSpMMBufferSize(ctx, h.st.Lib(), lop, nop, ap, cusparse.ConstSpMatDescr(a.desc), cusparse.ConstDnMatDescr(mb), bp, mc, dt, cusparse.SpmmAlgDefault)
	if err != nil {
		return err
	}
	ws, err := h.st.workspace(size)
	if err != nil {
		return err
	}
	wp, err := p.Add(ws)
	if err != nil {
		return err
	}
	return cusparseSpMM(ctx, h.st.Lib(), lop, nop, ap, cusparse.ConstSpMatDescr(a.desc), cusparse.ConstDnMatDescr(mb), bp, mc, dt, cusparse.SpmmAlgDefault, wp)
}

// checkSpMV checks SpMV's arguments before anything is queued.
func checkSpMV[T Scalar](h *Handle, op Op, a *Matrix[T], x, y *core.Buffer) error {
	if err := checkCommon("SpMV", h, op, a); err != nil {
		return err
	}
	m, k := opDims(op, a.rows, a.cols)
	if err := checkDense[T]("SpMV", h, "x", x, k, 1); err != nil {
		return err
	}
	if err := checkDense[T]("SpMV", h, "y", y, m, 1); err != nil {
		return err
	}
	return checkOverlap[T]("SpMV", "x", x, k, "y", y, m)
}

// checkSpMM checks SpMM's arguments before anything is queued.
func checkSpMM[T Scalar](h *Handle, op Op, a *Matrix[T], b *core.Buffer, n int, c *core.Buffer) error {
	if err := checkCommon("SpMM", h, op, a); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("sparse: SpMM: n = %d: B and C need at least one column", n)
	}
	m, k := opDims(op, a.rows, a.cols)
	if err := checkDense[T]("SpMM", h, "B", b, k, n); err != nil {
		return err
	}
	if err := checkDense[T]("SpMM", h, "C", c, m, n); err != nil {
		return err
	}
	return checkOverlap[T]("SpMM", "B", b, k*n, "C", c, m*n)
}

func checkCommon[T Scalar](fn string, h *Handle, op Op, a *Matrix[T]) error {
	switch {
	case h == nil:
		return fmt.Errorf("sparse: %s: nil *Handle", fn)
	case h.st == nil:
		return fmt.Errorf("sparse: %s: a Handle not made by NewHandle: %w", fn, core.ErrClosed)
	case a == nil:
		return fmt.Errorf("sparse: %s: nil *Matrix", fn)
	case op < NoTrans || op > ConjTrans:
		return fmt.Errorf("sparse: %s: unknown %v", fn, op)
	}
	if hs, as := h.st.Stream(), a.stream; hs != nil && as != nil && hs.Device() != as.Device() {
		return fmt.Errorf("sparse: %s: the matrix is on %v, the handle's stream on %v", fn, as.Device(), hs.Device())
	}
	return nil
}

// checkDense checks that b holds a dense rows×cols array of T, usable
// from the handle's device, and is open.
func checkDense[T Scalar](fn string, h *Handle, name string, b *core.Buffer, rows, cols int) error {
	if b == nil {
		return fmt.Errorf("sparse: %s: nil *core.Buffer for %s", fn, name)
	}
	var z T
	es := int(unsafe.Sizeof(z))
	if rows > math.MaxInt/es/cols {
		return fmt.Errorf("sparse: %s: %s of %d×%d elements is too large", fn, name, rows, cols)
	}
	if need := rows * cols * es; b.Size() < need {
		return fmt.Errorf("sparse: %s: %s holds %d bytes, want %d×%d elements of %T = %d bytes", fn, name, b.Size(), rows, cols, z, need)
	}
	ptr, err := b.Acquire()
	if err != nil {
		return fmt.Errorf("sparse: %s: %s: %w", fn, name, err)
	}
	b.Release()
	if align := min(es, 16); uint64(ptr)%uint64(align) != 0 {
		return fmt.Errorf("sparse: %s: %s at %#x is not aligned to %d bytes for %T", fn, name, uint64(ptr), align, z)
	}
	if mr := b.MemoryResource(); mr != nil {
		if !mr.DeviceAccessible() {
			return fmt.Errorf("sparse: %s: %s is %T memory, which the GPU cannot use", fn, name, mr)
		}
		if s := h.st.Stream(); s != nil && mr.Device() != nil && mr.Device() != s.Device() { // nil: a resource of no one device
			return fmt.Errorf("sparse: %s: %s is on %v, the handle's stream on %v", fn, name, mr.Device(), s.Device())
		}
	}
	return nil
}

// checkOverlap refuses an output whose first nout elements overlap the
// first nin of an input: cuSPARSE reads the input while it writes the
// output.
func checkOverlap[T Scalar](fn, in string, bin *core.Buffer, nin int, out string, bout *core.Buffer, nout int) error {
	var z T
	es := uint64(unsafe.Sizeof(z))
	p, q := uint64(bin.Ptr()), uint64(bout.Ptr())
	if p < q+uint64(nout)*es && q < p+uint64(nin)*es {
		return fmt.Errorf("sparse: %s: %s and %s overlap", fn, in, out)
	}
	return nil
}
