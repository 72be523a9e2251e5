package solver

import (
	"errors"

	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// SymEig computes the eigenvalues of the symmetric n×n matrix in a, and
// with ValuesAndVectors its eigenvectors, on h's stream (cuSOLVER's
// syevd, divide and conquer), reading only the uplo triangle of a, and
// waits for the result. w gets the n eigenvalues in ascending order. With
// ValuesAndVectors, a is overwritten by orthonormal eigenvectors: column
// j of the column-major array (row j when it is read row-major) belongs
// to w[j]. With Values, a's uplo triangle is overwritten. A failure to
// converge gives a *NoConvergenceError (errors.Is(err,
// ErrNoConvergence)).
//
// A symmetric matrix is its own transpose, so a row-major array holds the
// same matrix as a column-major one; only the name of a triangle changes
// (see Uplo).
func SymEig[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo, w *core.Buffer, job EigJob) error {
	if err := checkSymEig[T](h, a, n, uplo, w, job); err != nil {
		return err
	}
	st := h.st
	ctx, err := st.begin()
	if err != nil {
		return err
	}
	defer st.End()
	var p libhandle.Pins
	defer p.Release()
	ap, err := p.Add(a)
	if err != nil {
		return err
	}
	wp, err := p.Add(w)
	if err != nil {
		return err
	}
	ip, err := p.Add(st.info)
	if err != nil {
		return err
	}
	n32, fill, mode := int32(n), uplo.fill(), cusolver.EigModeNovector
	if job == ValuesAndVectors {
		mode = cusolver.EigModeVector
	}
	var lwork int32
	if isFloat32[T]() {
		err = cusolverDnSsyevdBufferSize(ctx, st.Lib(), mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), &lwork)
	} else {
		err = cusolverDnDsyevdBufferSize(ctx, st.Lib(), mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), &lwork)
	}
	if err != nil {
		return err
	}
	ws, err := st.workspace(int64(lwork) * int64(sizeOf[T]()))
	if err != nil {
		return err
	}
	wsp, err := p.Add(ws)
	if err != nil {
		return err
	}
	if isFloat32[T]() {
		err = cusolverDnSsyevd(ctx, st.Lib(), mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), (*float32)(wsp), lwork, (*int32)(ip))
	} else {
		err = cusolverDnDsyevd(ctx, st.Lib(), mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), (*float64)(wsp), lwork, (*int32)(ip))
	}
	if err != nil {
		return err
	}
	info, err := st.readInfo()
	if err != nil {
		return err
	}
	return infoError("syevd", info, func(i int) error { return &NoConvergenceError{Count: i} })
}

func checkSymEig[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo, w *core.Buffer, job EigJob) error {
	if err := checkCholesky[T]("SymEig", h, a, n, uplo); err != nil {
		return err
	}
	if job != Values && job != ValuesAndVectors {
		return errors.New("solver: SymEig: unknown " + job.String())
	}
	if err := checkBuf[T]("SymEig", h, "w", w, n, 1); err != nil {
		return err
	}
	return checkOverlap[T]("SymEig", "A", a, n*n, "w", w, n)
}
