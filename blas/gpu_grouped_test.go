package blas

import (
	"fmt"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

func groupedAll[T GroupScalar](t *testing.T) {
	e := elemOf[T]()
	if err := missingCall(groupedCall(e)); err != nil {
		t.Skipf("this cuBLAS cannot: %v", err)
	}
	_, s, h := gpu(t, nil)
	r := rng(t)
	type shape struct {
		tA, tB      Transpose
		m, n, k     int
		count, pad  int
		alpha, beta float64
	}
	shapes := []shape{
		{NoTrans, NoTrans, 7, 33, 20, 2, 0, 1.5, -0.75},
		{Trans, NoTrans, 33, 7, 100, 1, 3, 1, 0},
		{NoTrans, Trans, 64, 48, 16, 3, 1, -0.5, 0.5},
		{NoTrans, NoTrans, 5, 5, 5, 0, 0, 1, 0}, // an empty group
	}
	for _, lay := range []layout{colMajor, rowMajor} {
		type gemm struct {
			A, B, C hostMat
			a, b, c []T
			cb      *core.Buffer
		}
		var groups []GemmGroup
		var gemms [][]gemm
		for _, sh := range shapes {
			g := GemmGroup{TransA: sh.tA, TransB: sh.tB, M: sh.m, N: sh.n, K: sh.k, Alpha: sh.alpha, Beta: sh.beta}
			var gs []gemm
			for range sh.count {
				var x gemm
				x.A = newHostMat(lay, sh.m, sh.k, sh.pad, 1, 0)
				if sh.tA != NoTrans {
					x.A = newHostMat(lay, sh.k, sh.m, sh.pad, 1, 0)
				}
				x.B = newHostMat(lay, sh.k, sh.n, sh.pad, 1, 0)
				if sh.tB != NoTrans {
					x.B = newHostMat(lay, sh.n, sh.k, sh.pad, 1, 0)
				}
				x.C = newHostMat(lay, sh.m, sh.n, sh.pad, 1, 0)
				x.a, x.b, x.c = random[T](r, x.A.n), random[T](r, x.B.n), random[T](r, x.C.n)
				x.cb = libtest.Upload(t, s, x.c)
				g.A = append(g.A, x.A.view(t, libtest.Upload(t, s, x.a), e.size))
				g.B = append(g.B, x.B.view(t, libtest.Upload(t, s, x.b), e.size))
				g.C = append(g.C, x.C.view(t, x.cb, e.size))
				g.LdA, g.LdB, g.LdC = x.A.ld, x.B.ld, x.C.ld
				gs = append(gs, x)
			}
			if sh.count == 0 {
				g.LdA, g.LdB, g.LdC = 5, 5, 5
			}
			groups = append(groups, g)
			gemms = append(gemms, gs)
		}
		fn := GemmGrouped[T]
		if lay == rowMajor {
			fn = GemmGroupedRowMajor[T]
		}
		if err := fn(h, groups); err != nil {
			t.Fatalf("%v: %v", lay, err)
		}
		for gi, sh := range shapes {
			for i, x := range gemms[gi] {
				what := fmt.Sprintf("%v group %d GEMM %d (%v%v %d×%d×%d)", lay, gi, i, sh.tA, sh.tB, sh.m, sh.n, sh.k)
				ref, bound := refGemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, complex(sh.alpha, 0), complex(sh.beta, 0), x.A, toCs(x.a), x.B, toCs(x.b), x.C, toCs(x.c))
				var tol tolerance
				switch e.kind {
				case 's':
					tol = gemmTol[float32](sh.k)
				case 'd':
					tol = gemmTol[float64](sh.k)
				case 'h':
					tol = matmulTol[Half](ComputeFloat32, sh.k)
				default:
					tol = matmulTol[BFloat16](ComputeFloat32, sh.k)
				}
				checkNear(t, what, libtest.Download[T](t, x.cb, x.C.n), ref, bound, tol)
			}
		}
	}
}

// TestGPUGemmGrouped: groups of different shapes, transposes and sizes
// (an empty one too) in one call, both layouts, against the CPU.
func TestGPUGemmGrouped(t *testing.T) {
	t.Run("float32", groupedAll[float32])
	t.Run("float64", groupedAll[float64])
	t.Run("Half", groupedAll[Half])
	t.Run("BFloat16", groupedAll[BFloat16])
}
