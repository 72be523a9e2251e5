package blas

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"sync"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// gemmFunc is Gemm or GemmRowMajor.
type gemmFunc[T Scalar] func(h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta T, c *core.Buffer, ldc int) error

// testGemm runs one GEMM of the given shape on matrices padded (ld
// beyond the minimum) and placed in the middle of their Buffers, and
// checks every element of C's Buffer.
func testGemm[T Scalar](t *testing.T, h *Handle, s *core.Stream, lay layout, tA, tB Transpose, m, n, k, pad int) {
	r := rng(t)
	fn := gemmFunc[T](Gemm[T])
	if lay == rowMajor {
		fn = GemmRowMajor[T]
	}
	A := newHostMat(lay, m, k, pad, 1, 0)
	if tA != NoTrans {
		A = newHostMat(lay, k, m, pad, 1, 0)
	}
	B := newHostMat(lay, k, n, pad+1, 1, 0)
	if tB != NoTrans {
		B = newHostMat(lay, n, k, pad+1, 1, 0)
	}
	C := newHostMat(lay, m, n, 2*pad, 1, 0)
	a, b, c := random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
	alpha, beta := alphaBeta[T]()
	esz := elemOf[T]().size
	cb := libtest.Upload(t, s, c)
	what := fmt.Sprintf("%v %v %v m=%d n=%d k=%d pad=%d", lay, tA, tB, m, n, k, pad)
	err := fn(h, tA, tB, m, n, k, alpha, A.view(t, libtest.Upload(t, s, a), esz), A.ld, B.view(t, libtest.Upload(t, s, b), esz), B.ld, beta, C.view(t, cb, esz), C.ld)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	ref, bound := refGemm(tA, tB, m, n, k, toC(alpha), toC(beta), A, toCs(a), B, toCs(b), C, toCs(c))
	checkNear(t, what, libtest.Download[T](t, cb, C.n), ref, bound, gemmTol[T](k))
}

func gemmAll[T Scalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, sh := range shapes {
			for _, tA := range transs {
				for _, tB := range transs {
					testGemm[T](t, h, s, lay, tA, tB, sh[0], sh[1], sh[2], (sh[0]+sh[2])%4)
				}
			}
		}
		testGemm[T](t, h, s, lay, NoTrans, NoTrans, 257, 257, 257, 0)
		testGemm[T](t, h, s, lay, Trans, ConjTrans, 257, 257, 257, 3)
	}
}

func TestGPUGemm(t *testing.T) {
	eachScalar(t, gemmAll[float32], gemmAll[float64], gemmAll[complex64], gemmAll[complex128])
}

// TestGPUGemmBetaZero: with beta 0, C is written, not read (BLAS's rule):
// NaNs in C do not reach the result.
func TestGPUGemmBetaZero(t *testing.T) {
	_, s, h := gpu(t, nil)
	const m, n, k = 7, 33, 5
	r := rng(t)
	a, b := random[float64](r, m*k), random[float64](r, k*n)
	c := make([]float64, m*n)
	for i := range c {
		c[i] = math.NaN()
	}
	cb := libtest.Upload(t, s, c)
	if err := GemmRowMajor(h, NoTrans, NoTrans, m, n, k, 1.0, libtest.Upload(t, s, a), k, libtest.Upload(t, s, b), n, 0.0, cb, n); err != nil {
		t.Fatal(err)
	}
	got := libtest.Download[float64](t, cb, m*n)
	for i := range m {
		for j := range n {
			var want float64
			for l := range k {
				want += a[i*k+l] * b[l*n+j]
			}
			if d := math.Abs(got[i*n+j] - want); !(d <= 1e-14) {
				t.Fatalf("C[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
			}
		}
	}
}

func stridedAll[T Scalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	esz := elemOf[T]().size
	alpha, beta := alphaBeta[T]()
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, batch := range []int{1, 3, 17} {
			for _, broadcastB := range []bool{false, true} {
				for _, tc := range []struct {
					m, n, k int
					tA, tB  Transpose
				}{{7, 33, 100, NoTrans, NoTrans}, {33, 1, 7, ConjTrans, Trans}, {1, 100, 33, Trans, ConjTrans}, {100, 7, 1, NoTrans, Trans}} {
					m, n, k := tc.m, tc.n, tc.k
					A := newHostMat(lay, m, k, 1, batch, 3)
					if tc.tA != NoTrans {
						A = newHostMat(lay, k, m, 1, batch, 3)
					}
					nb, sb := batch, 0
					if broadcastB {
						nb = 1
					}
					B := newHostMat(lay, k, n, 0, nb, 0)
					if tc.tB != NoTrans {
						B = newHostMat(lay, n, k, 0, nb, 0)
					}
					if !broadcastB {
						sb = B.stride
					}
					C := newHostMat(lay, m, n, 2, batch, 1)
					a, b, c := random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
					cb := libtest.Upload(t, s, c)
					fn := GemmStridedBatched[T]
					if lay == rowMajor {
						fn = GemmStridedBatchedRowMajor[T]
					}
					what := fmt.Sprintf("%v batch %d broadcast B %v: %+v", lay, batch, broadcastB, tc)
					err := fn(h, tc.tA, tc.tB, m, n, k, alpha, A.view(t, libtest.Upload(t, s, a), esz), A.ld, int64(A.stride),
						B.view(t, libtest.Upload(t, s, b), esz), B.ld, int64(sb), beta, C.view(t, cb, esz), C.ld, int64(C.stride), batch)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					ref, bound := refGemm(tc.tA, tc.tB, m, n, k, toC(alpha), toC(beta), A, toCs(a), B, toCs(b), C, toCs(c))
					checkNear(t, what, libtest.Download[T](t, cb, C.n), ref, bound, gemmTol[T](k))
				}
			}
		}
	}
}

func TestGPUGemmStridedBatched(t *testing.T) {
	eachScalar(t, stridedAll[float32], stridedAll[float64], stridedAll[complex64], stridedAll[complex128])
}

func batchedAll[T Scalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	esz := elemOf[T]().size
	alpha, beta := alphaBeta[T]()
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, batch := range []int{1, 3, 17} {
			for _, tc := range []struct {
				m, n, k int
				tA, tB  Transpose
			}{{7, 33, 100, NoTrans, ConjTrans}, {33, 7, 1, Trans, NoTrans}, {100, 1, 7, ConjTrans, ConjTrans}} {
				m, n, k := tc.m, tc.n, tc.k
				A := newHostMat(lay, m, k, 2, 1, 0)
				if tc.tA != NoTrans {
					A = newHostMat(lay, k, m, 2, 1, 0)
				}
				B := newHostMat(lay, k, n, 1, 1, 0)
				if tc.tB != NoTrans {
					B = newHostMat(lay, n, k, 1, 1, 0)
				}
				C := newHostMat(lay, m, n, 0, 1, 0)
				as, bs, cs := make([]*core.Buffer, batch), make([]*core.Buffer, batch), make([]*core.Buffer, batch)
				ha, hb, hc := make([][]T, batch), make([][]T, batch), make([][]T, batch)
				for i := range batch {
					ha[i], hb[i], hc[i] = random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
					as[i], bs[i] = A.view(t, libtest.Upload(t, s, ha[i]), esz), B.view(t, libtest.Upload(t, s, hb[i]), esz)
					cs[i] = libtest.Upload(t, s, hc[i])
				}
				cviews := make([]*core.Buffer, batch)
				for i := range batch {
					cviews[i] = C.view(t, cs[i], esz)
				}
				fn := GemmBatched[T]
				if lay == rowMajor {
					fn = GemmBatchedRowMajor[T]
				}
				what := fmt.Sprintf("%v batch %d: %+v", lay, batch, tc)
				if err := fn(h, tc.tA, tc.tB, m, n, k, alpha, as, A.ld, bs, B.ld, beta, cviews, C.ld); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				for i := range batch {
					ref, bound := refGemm(tc.tA, tc.tB, m, n, k, toC(alpha), toC(beta), A, toCs(ha[i]), B, toCs(hb[i]), C, toCs(hc[i]))
					checkNear(t, fmt.Sprintf("%s, GEMM %d", what, i), libtest.Download[T](t, cs[i], C.n), ref, bound, gemmTol[T](k))
				}
			}
		}
	}
}

func TestGPUGemmBatched(t *testing.T) {
	eachScalar(t, batchedAll[float32], batchedAll[float64], batchedAll[complex64], batchedAll[complex128])
}

// refVec is a vector of n elements inc apart in a slice with guards; its
// elements expect ref within bound, the rest their old value.
func vecIndex(i, inc int) int { return 2 + i*inc }

func vecLen(n, inc int) int { return 2 + max(0, n-1)*inc + 1 + guard }

func gemvAll[T Scalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	esz := elemOf[T]().size
	alpha, beta := alphaBeta[T]()
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, m := range sizes {
			for _, n := range sizes {
				for _, tA := range transs {
					incx, incy := 1+m%3, 1+n%2
					A := newHostMat(lay, m, n, m%3, 1, 0)
					nx, ny := n, m
					if tA != NoTrans {
						nx, ny = m, n
					}
					a := random[T](r, A.n)
					x, y := random[T](r, vecLen(nx, incx)), random[T](r, vecLen(ny, incy))
					ca, cx, cy := toCs(a), toCs(x), toCs(y)
					ref := append([]complex128(nil), cy...)
					bound := make([]float64, len(cy))
					for i := range bound {
						bound[i] = -1
					}
					// op(A) is ny×nx: row i of it times x.
					for i := range ny {
						var sum complex128
						var abs float64
						for l := range nx {
							p := opAt(A, ca, tA, 0, i, l) * cx[vecIndex(l, incx)]
							sum += p
							abs += cmplx.Abs(p)
						}
						yi := vecIndex(i, incy)
						ref[yi] = toC(alpha)*sum + toC(beta)*cy[yi]
						bound[yi] = cmplx.Abs(toC(alpha))*abs + cmplx.Abs(toC(beta)*cy[yi])
					}
					fn := Gemv[T]
					if lay == rowMajor {
						fn = GemvRowMajor[T]
					}
					xb, yb := libtest.Upload(t, s, x), libtest.Upload(t, s, y)
					xv, _ := xb.View(2*esz, xb.Size()-2*esz)
					yv, _ := yb.View(2*esz, yb.Size()-2*esz)
					what := fmt.Sprintf("%v %v m=%d n=%d incx=%d incy=%d", lay, tA, m, n, incx, incy)
					if err := fn(h, tA, m, n, alpha, A.view(t, libtest.Upload(t, s, a), esz), A.ld, xv, incx, beta, yv, incy); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkNear(t, what, libtest.Download[T](t, yb, len(y)), ref, bound, gemmTol[T](nx))
				}
			}
		}
	}
}

func TestGPUGemv(t *testing.T) {
	eachScalar(t, gemvAll[float32], gemvAll[float64], gemvAll[complex64], gemvAll[complex128])
}

func level1All[T Scalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	esz := elemOf[T]().size
	u := unit[T]()
	// Errors of the complex128/float64 references are of the same size
	// as float64's own: twice the tolerance there, as for GEMM.
	f := 1.0
	if e := elemOf[T](); e.kind == 'd' || e.kind == 'z' {
		f = 2
	}
	cf := 1.0
	if elemOf[T]().complex {
		cf = 2
	}
	alpha, _ := alphaBeta[T]()
	for _, n := range append(sizes, 100003) {
		for _, inc := range []int{1, 3} {
			incy := 1 + inc%2
			x, y := random[T](r, vecLen(n, inc)), random[T](r, vecLen(n, incy))
			cx, cy := toCs(x), toCs(y)
			view := func(b *core.Buffer) *core.Buffer {
				v, err := b.View(2*esz, b.Size()-2*esz)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			what := fmt.Sprintf("n=%d incx=%d incy=%d", n, inc, incy)

			// AXPY: one product and one sum per element (a complex product
			// more): 2u, complex 4u, of |alpha·x| + |y|.
			xb, yb := libtest.Upload(t, s, x), libtest.Upload(t, s, y)
			if err := Axpy(h, n, alpha, view(xb), inc, view(yb), incy); err != nil {
				t.Fatalf("Axpy %s: %v", what, err)
			}
			ref := append([]complex128(nil), cy...)
			bound := make([]float64, len(cy))
			for i := range bound {
				bound[i] = -1
			}
			for i := range n {
				xi, yi := vecIndex(i, inc), vecIndex(i, incy)
				ref[yi] = toC(alpha)*cx[xi] + cy[yi]
				bound[yi] = cmplx.Abs(toC(alpha)*cx[xi]) + cmplx.Abs(cy[yi])
			}
			checkNear(t, "Axpy "+what, libtest.Download[T](t, yb, len(y)), ref, bound, tolerance{rel: 2 * cf * f * u})

			// DOT and DOTC: a dot product of n terms, γ_n as in GEMM.
			for _, conj := range []bool{false, true} {
				var want complex128
				var abs float64
				for i := range n {
					xi := cx[vecIndex(i, inc)]
					if conj {
						xi = cmplx.Conj(xi)
					}
					p := xi * cy[vecIndex(i, incy)]
					want += p
					abs += cmplx.Abs(p)
				}
				dot, name := Dot[T], "Dot"
				if conj {
					dot, name = Dotc[T], "Dotc"
				}
				got, err := dot(h, n, view(libtest.Upload(t, s, x)), inc, view(libtest.Upload(t, s, y)), incy)
				if err != nil {
					t.Fatalf("%s %s: %v", name, what, err)
				}
				if d, lim := cmplx.Abs(toC(got)-want), cf*f*float64(n+2)*u*abs; !(d <= lim) {
					t.Errorf("%s %s = %v, want %v (off by %.3g, tolerance %.3g)", name, what, got, want, d, lim)
				}
			}

			// NRM2: the sum of n squares (relative error γ_n, 2γ_n for the
			// two parts of a complex number), halved by the square root,
			// plus its own rounding; (n+4)u relative covers both, and the
			// scaling cuBLAS does against overflow is exact (powers of two)
			// or one more rounding per element, which 2(n+4)u allows.
			var ss float64
			for i := range n {
				z := cx[vecIndex(i, inc)]
				ss += real(z)*real(z) + imag(z)*imag(z)
			}
			want := math.Sqrt(ss)
			got, err := Nrm2[T](h, n, view(libtest.Upload(t, s, x)), inc)
			if err != nil {
				t.Fatalf("Nrm2 %s: %v", what, err)
			}
			if d, lim := math.Abs(got-want), 2*cf*f*float64(n+4)*u*want; !(d <= lim) {
				t.Errorf("Nrm2 %s = %v, want %v (off by %.3g, tolerance %.3g)", what, got, want, d, lim)
			}
		}
	}
	// n = 0: DOT is 0, NRM2 is 0, AXPY changes nothing.
	if got, err := Dot[T](h, 0, libtest.Upload(t, s, []T{}), 1, libtest.Upload(t, s, []T{}), 1); err != nil || toC(got) != 0 {
		t.Errorf("Dot of nothing: %v, %v", got, err)
	}
	if got, err := Nrm2[T](h, 0, libtest.Upload(t, s, []T{}), 1); err != nil || got != 0 {
		t.Errorf("Nrm2 of nothing: %v, %v", got, err)
	}
}

func TestGPULevel1(t *testing.T) {
	eachScalar(t, level1All[float32], level1All[float64], level1All[complex64], level1All[complex128])
}

// matmulTol is the error bound of a Matmul of k terms with inputs of T
// and compute type ct:
//   - ComputeFloat32: the GEMM in float32 (as gemmTol; the split-K
//     reductions are in float32 too), then one rounding to T (out: T's
//     unit roundoff of the result; abs: half T's smallest subnormal);
//   - ComputeFloat16: the same in Half, and Half's subnormal spacing
//     (2⁻²⁴) lost in at most k+4 operations on tiny values;
//   - ComputeTF32: each float32 input rounded (or truncated) to TF32's 10
//     fraction bits, up to 2⁻¹⁰ each, so 2·2⁻¹⁰ per product, plus the
//     float32 sums.
func matmulTol[T MatmulScalar](ct ComputeType, k int) tolerance {
	const u32 = 0x1p-24
	sum32 := float64(k+4) * u32
	switch {
	case ct == ComputeFloat16:
		return tolerance{rel: float64(k+4) * 0x1p-11, abs: float64(k+4) * 0x1p-24}
	case ct == ComputeTF32:
		return tolerance{rel: 2*0x1p-10 + sum32}
	// A 16-bit result may be rounded to T before an epilogue adds the bias
	// or applies the activation (seen on the H100: Half results off by up
	// to 25 ulps of a small sum when the bias cancels the product), so
	// one more rounding of T counts against the terms' bound.
	case elemOf[T]().kind == 'h':
		return tolerance{rel: sum32*(1+0x1p-11) + 0x1p-11, out: 0x1p-11, abs: 0x1p-25}
	case elemOf[T]().kind == 'b':
		return tolerance{rel: sum32*(1+0x1p-8) + 0x1p-8, out: 0x1p-8, abs: 0x1p-134}
	}
	return tolerance{rel: sum32}
}

func testMatmul[T MatmulScalar](t *testing.T, h *Handle, s *core.Stream, ct ComputeType, lay layout, tA, tB Transpose, m, n, k, pad, off int) {
	r := rng(t)
	esz := elemOf[T]().size
	A := newHostMat(lay, m, k, pad, 1, 0)
	if tA != NoTrans {
		A = newHostMat(lay, k, m, pad, 1, 0)
	}
	B := newHostMat(lay, k, n, 0, 1, 0)
	if tB != NoTrans {
		B = newHostMat(lay, n, k, 0, 1, 0)
	}
	C := newHostMat(lay, m, n, pad, 1, 0)
	// The matrices start 256 bytes into their Buffers (so aligned as a
	// Buffer is), after a guard; A off elements more when asked, an
	// address aligned to less.
	for _, x := range []*hostMat{&A, &B, &C} {
		x.shift(256/esz - x.off)
	}
	A.shift(off)
	a, b, c := random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
	cb := libtest.Upload(t, s, c)
	fn := Matmul[T]
	if lay == rowMajor {
		fn = MatmulRowMajor[T]
	}
	what := fmt.Sprintf("%v %v %v %v m=%d n=%d k=%d pad=%d off=%d", ct, lay, tA, tB, m, n, k, pad, off)
	if err := fn(h, ct, tA, tB, m, n, k, 1.5, A.view(t, libtest.Upload(t, s, a), esz), A.ld, B.view(t, libtest.Upload(t, s, b), esz), B.ld, -0.5, C.view(t, cb, esz), C.ld, nil); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	ref, bound := refGemm(tA, tB, m, n, k, 1.5, -0.5, A, toCs(a), B, toCs(b), C, toCs(c))
	checkNear(t, what, libtest.Download[T](t, cb, C.n), ref, bound, matmulTol[T](ct, k))
}

func matmulAll[T MatmulScalar](cts ...ComputeType) func(*testing.T) {
	return func(t *testing.T) {
		_, s, h := gpu(t, nil)
		for _, ct := range cts {
			for _, lay := range []layout{colMajor, rowMajor} {
				for _, sh := range shapes {
					if sh[2] == 0 {
						continue
					}
					for _, tA := range []Transpose{NoTrans, Trans} {
						for _, tB := range []Transpose{NoTrans, ConjTrans} {
							testMatmul[T](t, h, s, ct, lay, tA, tB, sh[0], sh[1], sh[2], sh[1]%3, 0)
						}
					}
				}
				testMatmul[T](t, h, s, ct, lay, NoTrans, Trans, 256, 256, 256, 0, 0)
				// A one element off its Buffer's alignment (2 bytes for
				// Half): the plan must not assume 16.
				testMatmul[T](t, h, s, ct, lay, NoTrans, NoTrans, 64, 64, 64, 0, 1)
			}
		}
	}
}

func TestGPUMatmul(t *testing.T) {
	t.Run("Half", matmulAll[Half](ComputeFloat32, ComputeFloat16))
	t.Run("BFloat16", matmulAll[BFloat16](ComputeFloat32))
	t.Run("float32", matmulAll[float32](ComputeFloat32, ComputeTF32))
}

// TestGPUNoTF32: float32 GEMMs compute in float32 unless asked. Every
// element of A is 1+2⁻¹², B is ones: every partial sum s·(1+2⁻¹²), s ≤
// 256, is exact in float32, so C is 256 + 2⁻⁴ exactly, in any order; TF32
// (10 fraction bits) would make A ones and C 256.
func TestGPUNoTF32(t *testing.T) {
	const n = 256
	a, b := make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = 1+0x1p-12, 1
	}
	const want = 256 + 0x1p-4
	run := func(t *testing.T, opts *Options, f func(h *Handle, a, b, c *core.Buffer) error) []float32 {
		_, s, h := gpu(t, opts)
		cb := libtest.Upload(t, s, make([]float32, n*n))
		if err := f(h, libtest.Upload(t, s, a), libtest.Upload(t, s, b), cb); err != nil {
			t.Fatal(err)
		}
		return libtest.Download[float32](t, cb, n*n)
	}
	gemm := func(h *Handle, a, b, c *core.Buffer) error {
		return Gemm(h, NoTrans, NoTrans, n, n, n, float32(1), a, n, b, n, float32(0), c, n)
	}
	exact := func(t *testing.T, c []float32) {
		for i, v := range c {
			if v != want {
				t.Fatalf("C[%d] = %v, want exactly %v: the GEMM did not compute in float32", i, v, want)
			}
		}
	}
	t.Run("Gemm", func(t *testing.T) { exact(t, run(t, nil, gemm)) })
	t.Run("Matmul", func(t *testing.T) {
		exact(t, run(t, nil, func(h *Handle, a, b, c *core.Buffer) error {
			return Matmul[float32](h, ComputeFloat32, NoTrans, NoTrans, n, n, n, 1, a, n, b, n, 0, c, n, nil)
		}))
	})
	// Asked for, TF32 may be used (cuBLAS chooses): either value is right.
	t.Run("Options.TF32", func(t *testing.T) {
		c := run(t, &Options{TF32: true}, gemm)
		for i, v := range c {
			if v != want && v != 256 {
				t.Fatalf("C[%d] = %v, want %v or 256", i, v, want)
			}
		}
		t.Logf("with Options.TF32, C[0] = %v (256: TF32 was used)", c[0])
	})
	t.Run("ComputeTF32", func(t *testing.T) {
		c := run(t, nil, func(h *Handle, a, b, c *core.Buffer) error {
			return Matmul[float32](h, ComputeTF32, NoTrans, NoTrans, n, n, n, 1, a, n, b, n, 0, c, n, nil)
		})
		for i, v := range c {
			if v != want && v != 256 {
				t.Fatalf("C[%d] = %v, want %v or 256", i, v, want)
			}
		}
		t.Logf("with ComputeTF32, C[0] = %v (256: TF32 was used)", c[0])
	})
}

// TestGPUHandle: concurrent use, plans, closed resources, allocations.
func TestGPUHandle(t *testing.T) {
	d, s, h := gpu(t, nil)
	if h.Stream() != s {
		t.Error("Stream() is not the handle's stream")
	}
	const n = 64
	r := rng(t)

	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			a, b := random[float32](r, n*n), random[float32](r, n*n)
			ab, bb := libtest.Upload(t, s, a), libtest.Upload(t, s, b)
			cb := libtest.Upload(t, s, make([]float32, n*n))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if err := GemmRowMajor(h, NoTrans, NoTrans, n, n, n, float32(1), ab, n, bb, n, float32(0), cb, n); err != nil {
						errs <- err
						return
					}
				}
				got := make([]float32, n*n)
				if err := core.CopyFromDevice(got, cb); err != nil {
					errs <- err
					return
				}
				for i := range n {
					for j := range n {
						var want, abs float64
						for l := range n {
							p := float64(a[i*n+l]) * float64(b[l*n+j])
							want += p
							abs += math.Abs(p)
						}
						if d := math.Abs(float64(got[i*n+j]) - want); !(d <= float64(n+4)*0x1p-24*abs) {
							errs <- fmt.Errorf("goroutine %d: C[%d][%d] = %v, want %v", g, i, j, got[i*n+j], want)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("plans", func(t *testing.T) {
		a, b, c := libtest.Upload(t, s, make([]Half, n*n)), libtest.Upload(t, s, make([]Half, n*n)), libtest.Upload(t, s, make([]Half, n*n))
		count := func() int {
			h.plans.mu.Lock()
			defer h.plans.mu.Unlock()
			return len(h.plans.plans)
		}
		before := count()
		for range 3 {
			if err := Matmul[Half](h, ComputeFloat32, NoTrans, NoTrans, n, n, n, 1, a, n, b, n, 0, c, n, nil); err != nil {
				t.Fatal(err)
			}
		}
		if got := count(); got != before+1 {
			t.Errorf("3 Matmuls of one shape: %d plans, want %d", got, before+1)
		}
		v, _ := a.View(2, a.Size()-2) // 2-byte aligned: another plan
		if err := Matmul[Half](h, ComputeFloat32, NoTrans, NoTrans, n-1, n, n, 1, v, n, b, n, 0, c, n, nil); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != before+2 {
			t.Errorf("a less aligned A: %d plans, want %d", got, before+2)
		}
	})

	t.Run("allocs", func(t *testing.T) {
		if raceEnabled {
			t.Skip("the race detector drops sync.Pool items")
		}
		a, b, c := libtest.Upload(t, s, make([]float32, n*n)), libtest.Upload(t, s, make([]float32, n*n)), libtest.Upload(t, s, make([]float32, n*n))
		gemm := func() {
			if err := Gemm(h, NoTrans, NoTrans, n, n, n, float32(1), a, n, b, n, float32(0), c, n); err != nil {
				t.Fatal(err)
			}
		}
		gemm()
		if got := testing.AllocsPerRun(200, gemm); got != 0 {
			t.Errorf("Gemm: %v allocations per call", got)
		}
		// A Matmul of a known shape, plain and with a bias epilogue
		// (whose descriptor takes the bias's address on every call).
		ah, bh, ch, bias := libtest.Upload(t, s, make([]Half, n*n)), libtest.Upload(t, s, make([]Half, n*n)), libtest.Upload(t, s, make([]Half, n*n)), libtest.Upload(t, s, make([]Half, n))
		epi := &MatmulOptions{Epilogue: EpilogueReLUBias, Bias: bias}
		for _, o := range []*MatmulOptions{nil, epi} {
			mm := func() {
				if err := Matmul[Half](h, ComputeFloat32, NoTrans, NoTrans, n, n, n, 1, ah, n, bh, n, 0, ch, n, o); err != nil {
					t.Fatal(err)
				}
			}
			mm()
			if got := testing.AllocsPerRun(200, mm); got != 0 {
				t.Errorf("Matmul (options %v): %v allocations per call", o, got)
			}
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("closed", func(t *testing.T) {
		b := libtest.Upload(t, s, make([]float32, 4))
		b.Close()
		err := Axpy(h, 4, float32(1), libtest.Upload(t, s, make([]float32, 4)), 1, b, 1)
		if !errors.Is(err, core.ErrClosed) {
			t.Errorf("Axpy into a closed Buffer: %v, want core.ErrClosed", err)
		}
		s2, err := d.NewStream(nil)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := New(s2, &Options{WorkspaceSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		x := libtest.Upload(t, s2, []float32{3, 4})
		if got, err := Nrm2[float32](h2, 2, x, 1); err != nil || math.Abs(got-5) > 1e-6 {
			t.Errorf("Nrm2 on a second handle: %v, %v; want 5", got, err)
		}
		if err := h2.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := h2.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := Nrm2[float32](h2, 2, x, 1); !errors.Is(err, core.ErrClosed) {
			t.Errorf("Nrm2 on a closed Handle: %v, want core.ErrClosed", err)
		}
		// A handle whose stream is closed first: its operations return
		// ErrClosed, and Close still releases it.
		h3, err := New(s2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Nrm2[float32](h3, 2, x, 1); err != nil { // creates its handles
			t.Fatal(err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Nrm2[float32](h3, 2, x, 1); !errors.Is(err, core.ErrClosed) {
			t.Errorf("Nrm2 on a closed stream: %v, want core.ErrClosed", err)
		}
		if err := h3.Close(); err != nil {
			t.Errorf("Close after the stream: %v", err)
		}
	})

	t.Run("other device", func(t *testing.T) {
		n, err := core.DeviceCount()
		if err != nil || n < 2 {
			t.Skip("one GPU")
		}
		d1, err := core.GetDevice(1)
		if err != nil {
			t.Fatal(err)
		}
		x, err := d1.Allocate(16, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		_, err = Nrm2[float32](h, 4, x, 1)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != "x" {
			t.Errorf("Nrm2 of another device's Buffer: %v, want an *ArgError about x", err)
		}
	})
}
