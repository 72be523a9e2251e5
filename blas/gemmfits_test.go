package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
)

// gemmCase is one random GEMM's arguments, around every boundary: small
// sizes and leading dimensions with Buffers of about the size they need,
// negative and 32-bit-overflowing values, invalid transposes, a nil Handle
// or Buffer, and both layouts.
type gemmCase struct {
	h             *Handle
	l             layout
	tA, tB        Transpose
	m, n, k       int
	lda, ldb, ldc int
	a, b, c       *core.Buffer
}

func randomGemm(r *rand.Rand, h *Handle) gemmCase {
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
	g := gemmCase{h: h, l: layout(r.IntN(2) == 1), tA: trans[r.IntN(4)], tB: trans[r.IntN(4)]}
	if r.IntN(50) == 0 {
		g.h = nil
	}
	if r.IntN(10) != 0 {
		g.tA, g.tB = trans[r.IntN(3)], trans[r.IntN(3)]
	}
	g.m, g.n, g.k = dim(), dim(), dim()
	g.lda, g.ldb, g.ldc = dim()+r.IntN(3), dim()+r.IntN(3), dim()+r.IntN(3)
	g.a, g.b, g.c = buf(), buf(), buf()
	return g
}

func (g gemmCase) String() string {
	return fmt.Sprintf("%v, h %v, %v %v, m %d n %d k %d, lda %d ldb %d ldc %d, sizes %d %d %d",
		g.l, g.h != nil, g.tA, g.tB, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, size(g.a), size(g.b), size(g.c))
}

// agree runs 300000 random cases through fast, a fast path's answer, and
// check, the full check's: fast must say true exactly when check accepts,
// and both answers must be common.
func agree(t *testing.T, seed uint64, fast func(r *rand.Rand, g gemmCase) (bool, string), check func(g gemmCase) error) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	h := &Handle{}
	accepted, refused := 0, 0
	for range 300000 {
		g := randomGemm(r, h)
		fits, what := fast(r, g)
		err := check(g)
		if fits != (err == nil) {
			t.Fatalf("%s %v: fast path %v, check %v", what, g, fits, err)
		}
		if fits {
			accepted++
		} else {
			refused++
		}
	}
	if accepted < 10000 || refused < 10000 {
		t.Errorf("%d cases accepted and %d refused: they do not cover both sides", accepted, refused)
	}
}

// TestGemmFits checks gemmFits, Gemm's fast path, against checkGemm, for
// every element size.
func TestGemmFits(t *testing.T) {
	elems := []elem{elemOf[float32](), elemOf[float64](), elemOf[complex64](), elemOf[complex128]()}
	var e elem
	agree(t, 3, func(r *rand.Rand, g gemmCase) (bool, string) {
		e = elems[r.IntN(len(elems))]
		return gemmFits(g.l, e.size, g.h, g.tA, g.tB, g.m, g.n, g.k, g.a, g.lda, g.b, g.ldb, g.c, g.ldc), e.name
	}, func(g gemmCase) error {
		return checkGemm("Gemm", g.l, e, g.h, g.tA, g.tB, g.m, g.n, g.k, g.a, g.lda, 0, g.b, g.ldb, 0, g.c, g.ldc, 0, 1)
	})
}

// TestMatmulFits checks mmCall.fits, the fast path of a Matmul without
// options, against mmCall.check, for Matmul's element types and every
// compute type, valid or not.
func TestMatmulFits(t *testing.T) {
	elems := []elem{halfElem, bfloat16Elem, elemOf[float32]()}
	cts := []ComputeType{ComputeFloat32, ComputeFloat16, ComputeTF32, 0, ComputeType(9)}
	var mc mmCall
	agree(t, 5, func(r *rand.Rand, g gemmCase) (bool, string) {
		e := elems[r.IntN(len(elems))]
		mc = mmCall{fn: "Matmul", l: g.l, h: g.h, ct: cts[r.IntN(len(cts))], tA: g.tA, tB: g.tB, m: g.m, n: g.n, k: g.k,
			a: g.a, b: g.b, c: g.c, lda: g.lda, ldb: g.ldb, ldc: g.ldc, ea: e, eb: e, ec: e}
		return mc.fits(), fmt.Sprintf("%s %v", e.name, mc.ct)
	}, func(gemmCase) error {
		var o MatmulOptions
		_, _, err := mc.check(&o)
		return err
	})
}

// size is b's size, -1 for nil.
func size(b *core.Buffer) int {
	if b == nil {
		return -1
	}
	return b.Size()
}
