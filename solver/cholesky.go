package solver

import (
	"unsafe"

	"github.com/cudago/cudago/core"
)

// Cholesky is the factorization A = L·Lᵀ (Lower) or A = Uᵀ·U (Upper) of a
// symmetric positive definite n×n matrix, made by FactorCholesky
// (cuSOLVER's potrf). The factor is in the caller's buffer, in place of
// the triangle of A it was made from, which must stay unchanged while the
// Cholesky is used; the other triangle is neither read nor written.
type Cholesky[T Float] struct {
	h    *Handle
	a    *core.Buffer
	n    int
	uplo Uplo
}

// FactorCholesky factors the symmetric positive definite n×n matrix in a,
// in place, on h's stream, reading only the uplo triangle, and waits for
// the result: a matrix that is not positive definite gives a
// *NotPositiveDefiniteError (errors.Is(err, ErrNotPositiveDefinite))
// naming the order of the first leading minor that is not.
//
// A symmetric matrix is its own transpose, so a row-major array holds the
// same matrix as a column-major one; only the name of a triangle changes
// (see Uplo).
func FactorCholesky[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo) (*Cholesky[T], error) {
	const fn = "FactorCholesky"
	if err := checkCholesky[T](fn, h, a, n, uplo); err != nil {
		return nil, err
	}
	err := run[T](h, fn, []operand{{"A", a}}, func(c *call, p []unsafe.Pointer) error {
		ap, n32, fill := p[0], int32(n), uplo.fill()
		return factor[T](c, "potrf", func(lwork *int32) error {
			if isFloat32[T]() {
				return cusolverDnSpotrfBufferSize(c.ctx, c.lib, fill, n32, (*float32)(ap), n32, lwork)
			}
			return cusolverDnDpotrfBufferSize(c.ctx, c.lib, fill, n32, (*float64)(ap), n32, lwork)
		}, func(ws unsafe.Pointer, lwork int32) error {
			if isFloat32[T]() {
				return cusolverDnSpotrf(c.ctx, c.lib, fill, n32, (*float32)(ap), n32, (*float32)(ws), lwork, (*int32)(c.info))
			}
			return cusolverDnDpotrf(c.ctx, c.lib, fill, n32, (*float64)(ap), n32, (*float64)(ws), lwork, (*int32)(c.info))
		}, func(i int) error { return &NotPositiveDefiniteError{Minor: i} })
	})
	if err != nil {
		return nil, err
	}
	return &Cholesky[T]{h: h, a: a, n: n, uplo: uplo}, nil
}

func checkCholesky[T Float](fn string, h *Handle, a *core.Buffer, n int, uplo Uplo) error {
	if err := checkHandle(fn, h, n); err != nil {
		return err
	}
	if uplo != Lower && uplo != Upper {
		return argErr(fn, "uplo", "unknown %v", uplo)
	}
	return checkBuf[T](fn, "A", a, n, n)
}

// N returns the order of the factored matrix.
func (f *Cholesky[T]) N() int { return f.n }

// Solve solves A·X = B on the handle's stream, in place: b holds nrhs
// right-hand sides of n elements each, one after another (a column-major
// n×nrhs matrix; with one right-hand side, a vector), and gets the
// solutions. It returns once the work is queued. b must not overlap A.
func (f *Cholesky[T]) Solve(b *core.Buffer, nrhs int) error {
	const fn = "Cholesky.Solve"
	if f == nil {
		return argErr(fn, "f", "nil *Cholesky")
	}
	return solve[T](f.h, fn, f.a, f.n, b, nrhs, func(c *call, ap, bp unsafe.Pointer) error {
		n, k, fill := int32(f.n), int32(nrhs), f.uplo.fill()
		// devInfo reports only a wrong parameter, which the checks
		// exclude: Solve does not wait to read it.
		if isFloat32[T]() {
			return cusolverDnSpotrs(c.ctx, c.lib, fill, n, k, (*float32)(ap), n, (*float32)(bp), n, (*int32)(c.info))
		}
		return cusolverDnDpotrs(c.ctx, c.lib, fill, n, k, (*float64)(ap), n, (*float64)(bp), n, (*int32)(c.info))
	})
}

// SolveCholesky solves A·X = B for a symmetric positive definite n×n
// matrix A: FactorCholesky, then Solve. The uplo triangle of a is
// overwritten by the factor and b by the solutions (see Cholesky.Solve
// for its shape). It waits for the factorization, not for the solve.
func SolveCholesky[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo, b *core.Buffer, nrhs int) error {
	if err := checkCholesky[T]("SolveCholesky", h, a, n, uplo); err != nil {
		return err
	}
	if err := checkRHS[T]("SolveCholesky", a, n, b, nrhs); err != nil {
		return err
	}
	f, err := FactorCholesky[T](h, a, n, uplo)
	if err != nil {
		return err
	}
	return f.Solve(b, nrhs)
}
