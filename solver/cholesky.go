package solver

import (
	"errors"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
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
	if err := checkCholesky[T]("FactorCholesky", h, a, n, uplo); err != nil {
		return nil, err
	}
	st := h.st
	ctx, err := st.begin()
	if err != nil {
		return nil, err
	}
	defer st.End()
	var p libhandle.Pins
	defer p.Release()
	ap, err := p.Add(a)
	if err != nil {
		return nil, err
	}
	ip, err := p.Add(st.info)
	if err != nil {
		return nil, err
	}
	n32, fill := int32(n), uplo.fill()
	var lwork int32
	if isFloat32[T]() {
		err = cusolverDnSpotrfBufferSize(ctx, st.Lib(), fill, n32, (*float32)(ap), n32, &lwork)
	} else {
		err = cusolverDnDpotrfBufferSize(ctx, st.Lib(), fill, n32, (*float64)(ap), n32, &lwork)
	}
	if err != nil {
		return nil, err
	}
	ws, err := st.workspace(int64(lwork) * int64(sizeOf[T]()))
	if err != nil {
		return nil, err
	}
	wp, err := p.Add(ws)
	if err != nil {
		return nil, err
	}
	if isFloat32[T]() {
		err = cusolverDnSpotrf(ctx, st.Lib(), fill, n32, (*float32)(ap), n32, (*float32)(wp), lwork, (*int32)(ip))
	} else {
		err = cusolverDnDpotrf(ctx, st.Lib(), fill, n32, (*float64)(ap), n32, (*float64)(wp), lwork, (*int32)(ip))
	}
	if err != nil {
		return nil, err
	}
	info, err := st.readInfo()
	if err != nil {
		return nil, err
	}
	if err := infoError("potrf", info, func(i int) error { return &NotPositiveDefiniteError{Minor: i} }); err != nil {
		return nil, err
	}
	return &Cholesky[T]{h: h, a: a, n: n, uplo: uplo}, nil
}

func checkCholesky[T Float](fn string, h *Handle, a *core.Buffer, n int, uplo Uplo) error {
	if err := checkHandle(fn, h, n); err != nil {
		return err
	}
	if uplo != Lower && uplo != Upper {
		return errors.New("solver: " + fn + ": unknown " + uplo.String())
	}
	return checkBuf[T](fn, h, "A", a, n, n)
}

// N returns the order of the factored matrix.
func (f *Cholesky[T]) N() int { return f.n }

// Solve solves A·X = B on the handle's stream, in place: b holds nrhs
// right-hand sides of n elements each, one after another (a column-major
// n×nrhs matrix; with one right-hand side, a vector), and gets the
// solutions. It returns once the work is queued. b must not overlap A.
func (f *Cholesky[T]) Solve(b *core.Buffer, nrhs int) error {
	if f == nil {
		return errors.New("solver: Cholesky.Solve: nil *Cholesky")
	}
	if err := checkRHS[T]("Cholesky.Solve", f.h, f.a, f.n, b, nrhs); err != nil {
		return err
	}
	st := f.h.st
	ctx, err := st.begin()
	if err != nil {
		return err
	}
	defer st.End()
	var p libhandle.Pins
	defer p.Release()
	ap, err := p.Add(f.a)
	if err != nil {
		return err
	}
	bp, err := p.Add(b)
	if err != nil {
		return err
	}
	ip, err := p.Add(st.info)
	if err != nil {
		return err
	}
	n, k, fill := int32(f.n), int32(nrhs), f.uplo.fill()
	// devInfo reports only a wrong parameter, which the checks exclude:
	// Solve does not wait to read it.
	if isFloat32[T]() {
		return cusolverDnSpotrs(ctx, st.Lib(), fill, n, k, (*float32)(ap), n, (*float32)(bp), n, (*int32)(ip))
	}
	return cusolverDnDpotrs(ctx, st.Lib(), fill, n, k, (*float64)(ap), n, (*float64)(bp), n, (*int32)(ip))
}

// SolveCholesky solves A·X = B for a symmetric positive definite n×n
// matrix A: FactorCholesky, then Solve. The uplo triangle of a is
// overwritten by the factor and b by the solutions (see Cholesky.Solve
// for its shape). It waits for the factorization, not for the solve.
func SolveCholesky[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo, b *core.Buffer, nrhs int) error {
	if err := checkCholesky[T]("SolveCholesky", h, a, n, uplo); err != nil {
		return err
	}
	if err := checkRHS[T]("SolveCholesky", h, a, n, b, nrhs); err != nil {
		return err
	}
	f, err := FactorCholesky[T](h, a, n, uplo)
	if err != nil {
		return err
	}
	return f.Solve(b, nrhs)
}
