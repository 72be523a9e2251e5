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
	var ap, wp unsafe.Pointer
	return run(h, fn, func(c *call) (err error) {
		if ap, err = libhandle.AddOf[T](&c.ops, "A", a); err != nil {
			return err
		}
		wp, err = libhandle.AddOf[T](&c.ops, "w", w)
		return err
	}, func(c *call) error {
		n32, fill, mode := int32(n), uplo.fill(), cusolver.EigModeNovector
		if job == ValuesAndVectors {
			mode = cusolver.EigModeVector
		}
		var lwork int32
		var err error
		if isFloat32[T]() {
			err = cusolverDnSsyevdBufferSize(c.ctx, c.lib, mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), &lwork)
		} else {
			err = cusolverDnDsyevdBufferSize(c.ctx, c.lib, mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), &lwork)
		}
		if err != nil {
			return err
		}
		wsp, err := workspace[T](c, lwork)
		if err != nil {
			return err
		}
		if isFloat32[T]() {
			err = cusolverDnSsyevd(c.ctx, c.lib, mode, fill, n32, (*float32)(ap), n32, (*float32)(wp), (*float32)(wsp), lwork, (*int32)(c.info))
		} else {
			err = cusolverDnDsyevd(c.ctx, c.lib, mode, fill, n32, (*float64)(ap), n32, (*float64)(wp), (*float64)(wsp), lwork, (*int32)(c.info))
		}
		if err != nil {
			return err
		}
		info, err := c.readInfo()
		if err != nil {
			return err
		}
		return infoError("syevd", info, func(i int) error { return &NoConvergenceError{Count: i} })
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
