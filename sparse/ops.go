package sparse

import (
	"unsafe"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/lib"
)

// Transpose says how an operation uses its sparse matrix A. It is
// lib.Transpose, the type blas takes too.
type Transpose = lib.Transpose

const (
	NoTrans   = lib.NoTrans   // op(A) = A
	Trans     = lib.Trans     // op(A) = Aᵀ
	ConjTrans = lib.ConjTrans // op(A) = Aᴴ (Aᵀ for real matrices)
)

// Op is Transpose's old name.
//
// Deprecated: use Transpose, the type blas and sparse share; Op goes in
// the next release.
type Op = Transpose

// libOp is cuSPARSE's name of op for a matrix of T.
func libOp[T Scalar](op Transpose) cusparse.Operation {
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

// SpMV computes y = alpha·op(A)·x + beta·y on h's stream, where op(A) is
// m×k, x holds k elements of T and y m (the buffers may be larger; only
// their first elements are used). x and y must not overlap. It returns
// once the work is queued.
func SpMV[T Scalar](h *Handle, op Transpose, alpha T, a *Matrix[T], x *core.Buffer, beta T, y *core.Buffer) error {
	if err := checkSpMV(h, op, a, x, y); err != nil {
		return err
	}
	m, k := op.Dims(a.rows, a.cols)
	return run(h, "SpMV", a, "x", x, "y", y, func(c *call, xp, yp unsafe.Pointer) error {
		dt := dataType[T]()
		var vx, vy cusparse.DnVecDescr
		if err := cusparseCreateDnVec(c.ctx, &vx, int64(k), xp, dt); err != nil {
			return err
		}
		defer cusparseDestroyDnVec(c.ctx, cusparse.ConstDnVecDescr(vx))
		if err := cusparseCreateDnVec(c.ctx, &vy, int64(m), yp, dt); err != nil {
			return err
		}
		defer cusparseDestroyDnVec(c.ctx, cusparse.ConstDnVecDescr(vy))
		lop, ap, bp, am := libOp[T](op), unsafe.Pointer(&alpha), unsafe.Pointer(&beta), cusparse.ConstSpMatDescr(a.desc)
		size, err := cusparseSpMVBufferSize(c.ctx, c.h, lop, ap, am, cusparse.ConstDnVecDescr(vx), bp, vy, dt, cusparse.SpmvAlgDefault)
		if err != nil {
			return err
		}
		ws, err := c.workspace(size)
		if err != nil {
			return err
		}
		return cusparseSpMV(c.ctx, c.h, lop, ap, am, cusparse.ConstDnVecDescr(vx), bp, vy, dt, cusparse.SpmvAlgDefault, ws)
	})
}

// SpMM computes C = alpha·op(A)·B + beta·C on h's stream, where op(A) is
// m×k and the dense matrices are row-major (Go's order, and the one
// cuSPARSE's fastest CSR and COO algorithms want) and contiguous: B is
// k×n, k rows of n elements, and C m×n. B and C must not overlap. It
// returns once the work is queued.
func SpMM[T Scalar](h *Handle, op Transpose, alpha T, a *Matrix[T], b *core.Buffer, n int, beta T, c *core.Buffer) error {
	if err := checkSpMM(h, op, a, b, n, c); err != nil {
		return err
	}
	m, k := op.Dims(a.rows, a.cols)
	return run(h, "SpMM", a, "B", b, "C", c, func(cl *call, bp, cp unsafe.Pointer) error {
		dt := dataType[T]()
		var mb, mc cusparse.DnMatDescr
		if err := cusparseCreateDnMat(cl.ctx, &mb, int64(k), int64(n), int64(n), bp, dt, cusparse.OrderRow); err != nil {
			return err
		}
		defer cusparseDestroyDnMat(cl.ctx, cusparse.ConstDnMatDescr(mb))
		if err := cusparseCreateDnMat(cl.ctx, &mc, int64(m), int64(n), int64(n), cp, dt, cusparse.OrderRow); err != nil {
			return err
		}
		defer cusparseDestroyDnMat(cl.ctx, cusparse.ConstDnMatDescr(mc))
		lop, nop, am := libOp[T](op), cusparse.OperationNonTranspose, cusparse.ConstSpMatDescr(a.desc)
		ap, bp2 := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
		size, err := cusparseSpMMBufferSize(cl.ctx, cl.h, lop, nop, ap, am, cusparse.ConstDnMatDescr(mb), bp2, mc, dt, cusparse.SpmmAlgDefault)
		if err != nil {
			return err
		}
		ws, err := cl.workspace(size)
		if err != nil {
			return err
		}
		return cusparseSpMM(cl.ctx, cl.h, lop, nop, ap, am, cusparse.ConstDnMatDescr(mb), bp2, mc, dt, cusparse.SpmmAlgDefault, ws)
	})
}

// call is one operation in progress: its context and cuSPARSE handle, in
// the handle's turn, with its Buffers held.
type call struct {
	ctx driver.Context
	h   cusparse.Handle
	st  *libhandle.State[cusparse.Handle]
	ops *libhandle.Operands
}

// workspace returns the handle's workspace grown to n bytes, held for
// the call.
func (c *call) workspace(n uint64) (unsafe.Pointer, error) {
	return c.st.AddWorkspace(c.ops, int(n)) // past MaxInt, int(n) < 0 is refused
}

// run holds the dense operands x and y (SpMV's vectors, SpMM's B and C),
// the matrix and the handle, and calls f with their addresses. a's own
// buffers are closed only by its Close, which the read lock holds off:
// they need no Acquire.
func run[T Scalar](h *Handle, fn string, a *Matrix[T], xArg string, x *core.Buffer, yArg string, y *core.Buffer, f func(c *call, xp, yp unsafe.Pointer) error) error {
	st := h.state()
	ops := libhandle.Operands{Package: "sparse", Func: fn, Device: st.Device()}
	defer ops.Release()
	xp, err := libhandle.AddOf[T](&ops, xArg, x)
	if err != nil {
		return err
	}
	yp, err := libhandle.AddOf[T](&ops, yArg, y)
	if err != nil {
		return err
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return core.ErrClosed
	}
	ctx, _, err := st.Begin()
	if err != nil {
		return err
	}
	defer st.End()
	return f(&call{ctx, st.Handle(), st, &ops}, xp, yp)
}

// checkSpMV checks SpMV's arguments before anything is queued; what
// needs the Buffers held (their addresses, their memory) run checks.
func checkSpMV[T Scalar](h *Handle, op Transpose, a *Matrix[T], x, y *core.Buffer) error {
	const fn = "SpMV"
	if err := checkCommon(fn, h, op, a); err != nil {
		return err
	}
	m, k := op.Dims(a.rows, a.cols)
	if err := libhandle.CheckDense[T]("sparse", fn, "x", x, k, 1); err != nil {
		return err
	}
	if err := libhandle.CheckDense[T]("sparse", fn, "y", y, m, 1); err != nil {
		return err
	}
	es := libhandle.SizeOf[T]()
	return libhandle.CheckOverlap("sparse", fn, "x", x, k*es, "y", y, m*es)
}

// checkSpMM checks SpMM's arguments before anything is queued.
func checkSpMM[T Scalar](h *Handle, op Transpose, a *Matrix[T], b *core.Buffer, n int, c *core.Buffer) error {
	const fn = "SpMM"
	if err := checkCommon(fn, h, op, a); err != nil {
		return err
	}
	if n < 1 {
		return argErr(fn, "n", "n = %d: B and C need at least one column", n)
	}
	m, k := op.Dims(a.rows, a.cols)
	if err := libhandle.CheckDense[T]("sparse", fn, "B", b, k, n); err != nil {
		return err
	}
	if err := libhandle.CheckDense[T]("sparse", fn, "C", c, m, n); err != nil {
		return err
	}
	es := libhandle.SizeOf[T]()
	return libhandle.CheckOverlap("sparse", fn, "B", b, k*n*es, "C", c, m*n*es)
}

func checkCommon[T Scalar](fn string, h *Handle, op Transpose, a *Matrix[T]) error {
	switch {
	case h == nil:
		return argErr(fn, "h", "nil *Handle")
	case a == nil:
		return argErr(fn, "a", "nil *Matrix")
	case !op.Valid():
		return argErr(fn, "op", "op = %v is not NoTrans, Trans or ConjTrans", op)
	}
	if hs, as := h.Stream(), a.stream; hs != nil && as != nil && hs.Device() != as.Device() {
		return argErr(fn, "a", "the matrix is on %v, the handle's stream on %v", as.Device(), hs.Device())
	}
	return nil
}
