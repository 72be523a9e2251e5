package blas

import (
	"math/bits"

	"github.com/cudago/cudago/core"
)

// gemmFits is checkGemm's answer for one GEMM (batch 1, no strides)
// without its bookkeeping: true exactly when checkGemm returns nil. A
// small GEMM's call costs a few microseconds in cuBLAS, and checkGemm's
// descriptions of each matrix (what its errors are made from) took a
// quarter of the Go side's instructions; the valid call takes this path,
// and checkGemm runs only to name what is wrong (gemmfits_test.go checks
// that the two agree).
func gemmFits(l layout, esz int, h *Handle, tA, tB Transpose, m, n, k int, a *core.Buffer, lda int, b *core.Buffer, ldb int, c *core.Buffer, ldc int) bool {
	if h == nil || !tA.Valid() || !tB.Valid() || uint(m) > maxDim || uint(n) > maxDim || uint(k) > maxDim {
		return false
	}
	ar, ac := m, k
	if tA != NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != NoTrans {
		br, bc = n, k
	}
	sh := bits.TrailingZeros(uint(esz)) // element sizes are powers of two: a shift, not a division
	return matFits(l, sh, a, ar, ac, lda) && matFits(l, sh, b, br, bc, ldb) && matFits(l, sh, c, m, n, ldc)
}

// matFits is checkMat's answer for one rows×cols matrix of elements of
// 1<<sh bytes (rows and cols within maxDim; ld is checked here).
func matFits(l layout, sh int, buf *core.Buffer, rows, cols, ld int) bool {
	inner, outer := rows, cols
	if l == rowMajor {
		inner, outer = cols, rows
	}
	if buf == nil || uint(ld) > maxDim || ld < max(1, inner) {
		return false
	}
	if inner == 0 || outer == 0 {
		return true
	}
	return (outer-1)*ld+inner <= buf.Size()>>sh // < 2^62: all three are at most maxDim
}
