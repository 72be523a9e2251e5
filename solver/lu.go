package solver

import (
	"errors"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/core"
)

// LU is the factorization P·A = L·U of an n×n matrix, with partial
// pivoting, made by FactorLU (cuSOLVER's getrf). L and U are in the
// caller's buffer, in place of A, which must stay unchanged while the LU
// is used; the LU owns the pivots. Close frees them.
type LU[T Float] struct {
	h      *Handle
	a      *core.Buffer
	n      int
	layout Layout
	ipiv   *core.Buffer // n int32, 1-based as LAPACK's
}

// FactorLU factors the n×n matrix in a, in place, on h's stream, and
// waits for the result: a singular matrix gives a *SingularError
// (errors.Is(err, ErrSingular)) naming the step whose pivot is zero.
//
// With ColMajor, a holds A column by column, as cuSOLVER wants. With
// RowMajor, a holds A row by row, which cuSOLVER reads as Aᵀ: FactorLU
// factors Aᵀ as it stands, without a copy, and Solve then solves with the
// transpose of that factorization, which is A·X = B again. The pivots and
// factors are then those of Aᵀ; a row-major singular A still gives
// ErrSingular.
func FactorLU[T Float](h *Handle, a *core.Buffer, n int, layout Layout) (*LU[T], error) {
	const fn = "FactorLU"
	if err := checkLU[T](fn, h, a, n, layout); err != nil {
		return nil, err
	}
	var ipiv *core.Buffer
	err := run[T](h, fn, []operand{{"A", a}}, func(c *call, p []unsafe.Pointer) (err error) {
		if ipiv, err = h.st.Device().Allocate(n*4, h.st.Stream()); err != nil {
			return err
		}
		return getrf[T](c, p[0], n, ipiv)
	})
	if err != nil {
		// Closed here, not inside run: run holds ipiv as an operand until
		// it returns, and Close waits for its holders (closing it inside
		// hung on a singular matrix: seen on the H100).
		if ipiv != nil {
			_ = ipiv.Close()
		}
		return nil, err
	}
	return &LU[T]{h: h, a: a, n: n, layout: layout, ipiv: ipiv}, nil
}

func checkLU[T Float](fn string, h *Handle, a *core.Buffer, n int, layout Layout) error {
	if err := checkHandle(fn, h, n); err != nil {
		return err
	}
	if layout != ColMajor && layout != RowMajor {
		return argErr(fn, "layout", "unknown %v", layout)
	}
	return checkBuf[T](fn, "A", a, n, n)
}

// getrf factors a in place, with its pivots in ipiv.
func getrf[T Float](c *call, ap unsafe.Pointer, n int, ipiv *core.Buffer) error {
	pp, err := c.ops.Add("ipiv", ipiv, 4, "int32")
	if err != nil {
		return err
	}
	n32 := int32(n)
	return factor[T](c, "getrf", func(lwork *int32) error {
		if isFloat32[T]() {
			return cusolverDnSgetrfBufferSize(c.ctx, c.lib, n32, n32, (*float32)(ap), n32, lwork)
		}
		return cusolverDnDgetrfBufferSize(c.ctx, c.lib, n32, n32, (*float64)(ap), n32, lwork)
	}, func(ws unsafe.Pointer, _ int32) error {
		if isFloat32[T]() {
			return cusolverDnSgetrf(c.ctx, c.lib, n32, n32, (*float32)(ap), n32, (*float32)(ws), (*int32)(pp), (*int32)(c.info))
		}
		return cusolverDnDgetrf(c.ctx, c.lib, n32, n32, (*float64)(ap), n32, (*float64)(ws), (*int32)(pp), (*int32)(c.info))
	}, func(i int) error { return &SingularError{Step: i} })
}

// N returns the order of the factored matrix.
func (f *LU[T]) N() int { return f.n }

// Solve solves A·X = B on the handle's stream, in place: b holds nrhs
// right-hand sides of n elements each, one after another (a column-major
// n×nrhs matrix; with one right-hand side, a vector), whatever the
// layout of A, and gets the solutions. It returns once the work is
// queued. b must not overlap A.
func (f *LU[T]) Solve(b *core.Buffer, nrhs int) error {
	const fn = "LU.Solve"
	if f == nil {
		return argErr(fn, "f", "nil *LU")
	}
	return solve[T](f.h, fn, f.a, f.n, b, nrhs, func(c *call, ap, bp unsafe.Pointer) error {
		pp, err := c.ops.Add("pivots", f.ipiv, 4, "int32")
		if err != nil {
			return err
		}
		op := cublas.OpN
		if f.layout == RowMajor {
			op = cublas.OpT // a holds Aᵀ's factors: (Aᵀ)ᵀ·X = B
		}
		n, k := int32(f.n), int32(nrhs)
		// devInfo reports only a wrong parameter, which the checks
		// exclude: Solve does not wait to read it.
		if isFloat32[T]() {
			return cusolverDnSgetrs(c.ctx, c.lib, op, n, k, (*float32)(ap), n, (*int32)(pp), (*float32)(bp), n, (*int32)(c.info))
		}
		return cusolverDnDgetrs(c.ctx, c.lib, op, n, k, (*float64)(ap), n, (*int32)(pp), (*float64)(bp), n, (*int32)(c.info))
	})
}

// Pivots returns the row interchanges, waiting for the factorization:
// row i (counted from 1, as LAPACK's IPIV) was interchanged with row
// Pivots()[i-1]. For a RowMajor LU they are those of Aᵀ.
func (f *LU[T]) Pivots() ([]int32, error) {
	if f == nil {
		return nil, argErr("LU.Pivots", "f", "nil *LU")
	}
	out := make([]int32, f.n)
	if err := core.CopyFromDevice(out, f.ipiv); err != nil {
		return nil, err
	}
	return out, nil
}

// Close frees the pivots, ordered after the work queued on the handle's
// stream. Later Solves return core.ErrClosed; closing twice is not an
// error.
func (f *LU[T]) Close() error {
	if f == nil {
		return nil
	}
	return f.ipiv.Close()
}

// SolveLU solves A·X = B for an n×n matrix A: FactorLU, then Solve. a is
// overwritten by the factors and b by the solutions (see LU.Solve for its
// shape). It waits for the factorization, not for the solve.
func SolveLU[T Float](h *Handle, a *core.Buffer, n int, layout Layout, b *core.Buffer, nrhs int) error {
	if err := checkLU[T]("SolveLU", h, a, n, layout); err != nil {
		return err
	}
	if err := checkRHS[T]("SolveLU", a, n, b, nrhs); err != nil {
		return err
	}
	f, err := FactorLU[T](h, a, n, layout)
	if err != nil {
		return err
	}
	err = f.Solve(b, nrhs)
	return errors.Join(err, f.Close())
}
