package blas

import (
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
)

// TestGemmFits checks gemmFits, Gemm's fast path, against checkGemm on
// random GEMMs around every boundary: small sizes and leading dimensions
// with Buffers of about the size they need, negative and 32-bit-overflowing
// values, invalid transposes, a nil Handle or Buffer, both layouts and
// every element size. gemmFits must say true exactly when checkGemm
// accepts.
func TestGemmFits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dims := []int{-1, 0, 1, 2, 3, 5, 6, maxDim, maxDim + 1}
	dim := func() int {
		if r.IntN(8) == 0 {
			return dims[r.IntN(len(dims))]
		}
		return r.IntN(7)
	}
	buf := func() *core.Buffer {
		if r.IntN(40) == 0 {
			return nil
		}
		return core.NewBuffer(0, r.IntN(8*8*16+64), nil, nil)
	}
	trans := []Transpose{NoTrans, Trans, ConjTrans, Transpose(7)}
	elems := []elem{elemOf[float32](), elemOf[float64](), elemOf[complex64](), elemOf[complex128]()}
	h := &Handle{}
	accepted, refused := 0, 0
	for range 300000 {
		hh := h
		if r.IntN(50) == 0 {
			hh = nil
		}
		l := layout(r.IntN(2) == 1)
		e := elems[r.IntN(len(elems))]
		tA, tB := trans[r.IntN(4)], trans[r.IntN(4)]
		if r.IntN(10) != 0 {
			tA, tB = trans[r.IntN(3)], trans[r.IntN(3)]
		}
		m, n, k := dim(), dim(), dim()
		lda, ldb, ldc := dim()+r.IntN(3), dim()+r.IntN(3), dim()+r.IntN(3)
		a, b, c := buf(), buf(), buf()
		fits := gemmFits(l, e.size, hh, tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
		err := checkGemm("Gemm", l, e, hh, tA, tB, m, n, k, a, lda, 0, b, ldb, 0, c, ldc, 0, 1)
		if fits != (err == nil) {
			t.Fatalf("%v %s, h %v, %v %v, m %d n %d k %d, lda %d ldb %d ldc %d, sizes %d %d %d: gemmFits %v, checkGemm %v",
				l, e.name, hh != nil, tA, tB, m, n, k, lda, ldb, ldc, size(a), size(b), size(c), fits, err)
		}
		if fits {
			accepted++
		} else {
			refused++
		}
	}
	if accepted < 10000 || refused < 10000 {
		t.Errorf("%d GEMMs accepted and %d refused: the cases do not cover both sides", accepted, refused)
	}
}

// size is b's size, -1 for nil.
func size(b *core.Buffer) int {
	if b == nil {
		return -1
	}
	return b.Size()
}
