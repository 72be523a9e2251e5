package blas

import "github.com/cudago/cudago/core"

// Gemv computes y = alpha·op(A)·x + beta·y with A an m×n column-major
// matrix (lda at least m, and at least 1), as cuBLAS does
// (cublas<S|D|C|Z>gemv): x has n elements and y m when tA is NoTrans,
// the other way round otherwise, each inc elements apart (positive).
// When m or n is 0, y is left as it is (as BLAS does).
func Gemv[T Scalar](h *Handle, tA Transpose, m, n int, alpha T, a *core.Buffer, lda int, x *core.Buffer, incx int, beta T, y *core.Buffer, incy int) error {
	const fn = "Gemv"
	e := elemOf[T]()
	if err := checkGemv(fn, colMajor, e, h, tA, m, n, a, lda, x, incx, y, incy); err != nil {
		return err
	}
	return gemv(fn, e, h, tA, m, n, alpha, a, lda, x, incx, beta, y, incy)
}

// GemvRowMajor computes y = alpha·op(A)·x + beta·y with A an m×n
// row-major matrix (lda at least n, and at least 1), as gonum's BLAS
// does: x has n elements and y m when tA is NoTrans, the other way round
// otherwise.
//
// In cuBLAS's terms A is Aᵀ, column-major n×m: NoTrans becomes Trans and
// the other way round. Aᴴ·x of a complex A, which would need the
// conjugate of A without a transpose, is computed as yᵀ = xᵀ·conj(A), a
// GEMM with one row; still no copy.
func GemvRowMajor[T Scalar](h *Handle, tA Transpose, m, n int, alpha T, a *core.Buffer, lda int, x *core.Buffer, incx int, beta T, y *core.Buffer, incy int) error {
	const fn = "GemvRowMajor"
	e := elemOf[T]()
	if err := checkGemv(fn, rowMajor, e, h, tA, m, n, a, lda, x, incx, y, incy); err != nil {
		return err
	}
	if tA == ConjTrans && e.complex {
		if m == 0 || n == 0 {
			return nil // y unchanged, as Gemv
		}
		// Column-major: Y (1×n, ld incy) = X (1×m, ld incx) · Mᴴ, where
		// M (n×m, ld lda) is A's memory: Mᴴ = conj(Mᵀ) = conj(A).
		return h.do(fn, e, "xay", [3]*core.Buffer{x, a, y}, func(c call) error {
			g := gemmOp{tA: NoTrans, tB: ConjTrans, m: 1, n: n, k: m, lda: incx, ldb: lda, ldc: incy}
			return gemm(c, e, alpha, beta, g.at(c.p, colMajor))
		})
	}
	t := Trans
	if tA != NoTrans {
		t = NoTrans
	}
	return gemv(fn, e, h, t, n, m, alpha, a, lda, x, incx, beta, y, incy)
}

// gemv queues a checked column-major GEMV.
func gemv[T Scalar](fn string, e elem, h *Handle, tA Transpose, m, n int, alpha T, a *core.Buffer, lda int, x *core.Buffer, incx int, beta T, y *core.Buffer, incy int) error {
	if m == 0 || n == 0 {
		return nil
	}
	return h.do(fn, e, "axy", [3]*core.Buffer{a, x, y}, func(c call) error {
		op := cublasOp(tA, e.complex)
		M, N, lA, ix, iy := int32(m), int32(n), int32(lda), int32(incx), int32(incy)
		pa, px, py := c.p[0], c.p[1], c.p[2]
		slot := getScalars(alpha, beta)
		defer scalarPool.Put(slot)
		al, be := slot.ptrs()
		switch e.kind {
		case 's':
			return cublasSgemv(c.ctx, c.lib.blas, op, M, N, (*float32)(al), (*float32)(pa), lA, (*float32)(px), ix, (*float32)(be), (*float32)(py), iy)
		case 'd':
			return cublasDgemv(c.ctx, c.lib.blas, op, M, N, (*float64)(al), (*float64)(pa), lA, (*float64)(px), ix, (*float64)(be), (*float64)(py), iy)
		case 'c':
			return cublasCgemv(c.ctx, c.lib.blas, op, M, N, (*complex64)(al), (*complex64)(pa), lA, (*complex64)(px), ix, (*complex64)(be), (*complex64)(py), iy)
		default:
			return cublasZgemv(c.ctx, c.lib.blas, op, M, N, (*complex128)(al), (*complex128)(pa), lA, (*complex128)(px), ix, (*complex128)(be), (*complex128)(py), iy)
		}
	})
}
