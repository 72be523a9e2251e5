package solver

import (
	"unsafe"

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
	const fn = "SymEig"
	if err := checkSymEig[T](h, a, n, uplo, w, job); err != nil {
		return err
	}
	return run[T](h, fn, []operand{{"A", a}, {"w", w}}, func(c *call, p []unsafe.Pointer) error {
		ap, wp, n32, fill, mode := p[0], p[1], int32(n), uplo.fill(), cusolver.EigModeNovector
		if job == ValuesAndVectors {
			mode = cusolver.EigModeVector
		}
		return factor[T](c, "syevd", func(lwork *int32) error {
			if isFloat32[T]() {
				return cusolverDnSsyevdBufferSize(c.ctx, c.lib, mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), lwork)
			}
			return cusolverDnDsyevdBufferSize(c.ctx, c.lib, mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), lwork)
		}, func(ws unsafe.Pointer, lwork int32) error {
			if isFloat32[T]() {
				return cusolverDnSsyevd(c.ctx, c.lib, mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), (*float32)(ws), lwork, (*int32)(c.info))
			}
			return cusolverDnDsyevd(c.ctx, c.lib, mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), (*float64)(ws), lwork, (*int32)(c.info))
		}, func(i int) error { return &NoConvergenceError{Count: i} })
	})
}

func checkSymEig[T Float](h *Handle, a *core.Buffer, n int, uplo Uplo, w *core.Buffer, job EigJob) error {
	const fn = "SymEig"
	if err := checkCholesky[T](fn, h, a, n, uplo); err != nil {
		return err
	}
	if job != Values && job != ValuesAndVectors {
		return argErr(fn, "job", "unknown %v", job)
	}
	if err := checkBuf[T](fn, "w", w, n, 1); err != nil {
		return err
	}
	es := libhandle.SizeOf[T]()
	return libhandle.CheckOverlap("solver", fn, "A", a, n*n*es, "w", w, n*es)
}
