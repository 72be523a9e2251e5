package blas

import (
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// gpu returns device 0, a new stream and a Handle on it, closed when the
// test ends; it skips without a GPU (fails with CUDAGO_REQUIRE_GPU=1).
func gpu(t testing.TB, opts *Options) (*core.Device, *core.Stream, *Handle) {
	t.Helper()
	s := libtest.Stream(t, core.StreamOptions{NonBlocking: true})
	t.Cleanup(func() { // after the Handle's Close
		if err := s.Sync(); err != nil {
			t.Errorf("Stream.Sync: %v", err)
		}
	})
	h := libtest.Open(t, func() (*Handle, error) { return New(s, opts) })
	return s.Device(), s, h
}

// eachScalar runs a test's subtests for float32, float64, complex64 and
// complex128: f is one generic function, instantiated for each.
func eachScalar(t *testing.T, f32, f64, c64, c128 func(*testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
	t.Run("complex64", c64)
	t.Run("complex128", c128)
}

type anyElem interface{ Scalar | MatmulScalar }

func toC[T anyElem](x T) complex128 {
	switch v := any(x).(type) {
	case float32:
		return complex(float64(v), 0)
	case float64:
		return complex(v, 0)
	case complex64:
		return complex128(v)
	case complex128:
		return v
	case Half:
		return complex(float64(v.Float32()), 0)
	case BFloat16:
		return complex(float64(v.Float32()), 0)
	}
	panic("unreachable")
}

func fromC[T anyElem](z complex128) T {
	var r T
	switch p := any(&r).(type) {
	case *float32:
		*p = float32(real(z))
	case *float64:
		*p = real(z)
	case *complex64:
		*p = complex64(z)
	case *complex128:
		*p = z
	case *Half:
		*p = HalfFromFloat32(float32(real(z)))
	case *BFloat16:
		*p = BFloat16FromFloat32(float32(real(z)))
	}
	return r
}

// unit is the unit roundoff of T's precision: half the distance from 1
// to the next number.
func unit[T anyElem]() float64 {
	switch elemOf[T]().kind {
	case 's', 'c':
		return 0x1p-24
	case 'd', 'z':
		return 0x1p-53
	case 'h':
		return 0x1p-11
	}
	return 0x1p-8
}

// random returns n values with parts uniform in [-1, 1), rounded to T.
func random[T anyElem](r *rand.Rand, n int) []T {
	out := make([]T, n)
	cplx := elemOf[T]().complex
	for i := range out {
		z := complex(2*r.Float64()-1, 0)
		if cplx {
			z += complex(0, 2*r.Float64()-1)
		}
		out[i] = fromC[T](z)
	}
	return out
}

func toCs[T anyElem](x []T) []complex128 {
	out := make([]complex128, len(x))
	for i, v := range x {
		out[i] = toC(v)
	}
	return out
}

// hostMat is batch matrices of rows×cols stored in a layout with leading
// dimension ld, stride elements apart, starting off elements into data,
// with guard elements after: everything outside the matrices must come
// back from the GPU unchanged.
type hostMat struct {
	lay                layout
	rows, cols, ld     int
	off, stride, batch int
	n                  int // len(data)
}

const guard = 5

func newHostMat(lay layout, rows, cols, pad, batch, extraStride int) hostMat {
	m := hostMat{lay: lay, rows: rows, cols: cols, off: 3, batch: batch}
	inner, outer := rows, cols
	if lay == rowMajor {
		inner, outer = cols, rows
	}
	m.ld = max(1, inner) + pad
	span := 0
	if inner > 0 && outer > 0 {
		span = (outer-1)*m.ld + inner
	}
	m.stride = span + extraStride
	m.n = m.off + max(0, batch-1)*m.stride + span + guard
	return m
}

// shift moves the matrices d elements further into data.
func (m *hostMat) shift(d int) {
	m.off += d
	m.n += d
}

// at is the index of element (i, j) of matrix b.
func (m hostMat) at(b, i, j int) int {
	if m.lay == rowMajor {
		return m.off + b*m.stride + i*m.ld + j
	}
	return m.off + b*m.stride + i + j*m.ld
}

// view is the Buffer from the first matrix on.
func (m hostMat) view(t testing.TB, buf *core.Buffer, esz int) *core.Buffer {
	t.Helper()
	v, err := buf.View(m.off*esz, buf.Size()-m.off*esz)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// opAt is element (i, l) of op(M) for matrix b.
func opAt(m hostMat, data []complex128, t Transpose, b, i, l int) complex128 {
	switch t {
	case Trans:
		return data[m.at(b, l, i)]
	case ConjTrans:
		return cmplx.Conj(data[m.at(b, l, i)])
	}
	return data[m.at(b, i, l)]
}

// refGemm computes the GEMMs in complex128 and returns, for every element
// of C's data, the expected value and the bound Σ|alpha·a·b| + |beta·c|
// that rounding errors are proportional to; elements outside the
// matrices expect their old value with bound -1 (exact).
func refGemm(tA, tB Transpose, m, n, k int, alpha, beta complex128, A hostMat, a []complex128, B hostMat, b []complex128, C hostMat, c []complex128) (ref []complex128, bound []float64) {
	ref = append([]complex128(nil), c...)
	bound = make([]float64, len(c))
	for i := range bound {
		bound[i] = -1
	}
	for bt := range C.batch {
		ba, bb := min(bt, A.batch-1), min(bt, B.batch-1) // a batch of one: broadcast
		for i := range m {
			for j := range n {
				var sum complex128
				var abs float64
				for l := range k {
					p := opAt(A, a, tA, ba, i, l) * opAt(B, b, tB, bb, l, j)
					sum += p
					abs += cmplx.Abs(p)
				}
				x := C.at(bt, i, j)
				ref[x] = alpha*sum + beta*c[x]
				bound[x] = cmplx.Abs(alpha)*abs + cmplx.Abs(beta*c[x])
			}
		}
	}
	return ref, bound
}

// tolerance says how far a result may be from the reference: rel·bound
// (the rounding of the sums), plus out·|ref| (rounding the result to a
// narrower type), plus abs.
type tolerance struct{ rel, out, abs float64 }

// gemmTol is the error bound of a GEMM with k terms computed in T's
// precision: each element is a dot product of k terms, then scaled by
// alpha and added to beta·c, so its error is at most γ_{k+3}·bound with
// γ_n = n·u/(1-n·u) (Higham, Accuracy and Stability of Numerical
// Algorithms, 3.1), in any summation order, FMA or not; (k+4)·u covers
// the 1/(1-n·u). A complex product has up to √2·γ₂ more, so complex
// types get twice the terms. For float64 the complex128 reference has
// errors of the same size: twice again.
func gemmTol[T Scalar](k int) tolerance {
	e := elemOf[T]()
	f := 1.0
	if e.complex {
		f = 2
	}
	if e.kind == 'd' || e.kind == 'z' {
		f *= 2
	}
	return tolerance{rel: f * float64(k+4) * unit[T]()}
}

// checkNear compares got with ref element by element: outside the
// matrices (bound < 0) exactly, inside within tol.
func checkNear[T anyElem](t *testing.T, what string, got []T, ref []complex128, bound []float64, tol tolerance) {
	t.Helper()
	bad := 0
	for x, g := range got {
		z := toC(g)
		if bound[x] < 0 {
			if z != ref[x] && !(cmplx.IsNaN(z) && cmplx.IsNaN(ref[x])) {
				t.Errorf("%s: element %d outside the matrices changed: %v, was %v", what, x, z, ref[x])
				bad++
			}
		} else if d, lim := cmplx.Abs(z-ref[x]), tol.rel*bound[x]+tol.out*cmplx.Abs(ref[x])+tol.abs; !(d <= lim) {
			t.Errorf("%s: element %d = %v, want %v (off by %.3g, tolerance %.3g)", what, x, z, ref[x], d, lim)
			bad++
		}
		if bad >= 5 {
			t.Fatalf("%s: stopping after 5 wrong elements", what)
		}
	}
}

// scalars of the tests: exact in every type, beta ≠ 0 so that C is read.
func alphaBeta[T anyElem]() (alpha, beta T) {
	if elemOf[T]().complex {
		return fromC[T](complex(1.5, -0.5)), fromC[T](complex(-0.75, 0.25))
	}
	return fromC[T](1.5), fromC[T](-0.75)
}

var (
	sizes  = []int{1, 7, 33, 100, 257}
	transs = []Transpose{NoTrans, Trans, ConjTrans}
	// shapes (m, n, k) that put each odd size in each place; 257³ is
	// added for two transpose pairs only (17M products per reference).
	shapes = [][3]int{{1, 1, 1}, {7, 33, 100}, {33, 7, 257}, {100, 257, 1}, {257, 100, 33}, {1, 257, 7}, {257, 1, 100}, {64, 64, 64}, {33, 100, 0}}
)

func rng(t testing.TB) *rand.Rand {
	var seed uint64
	for _, c := range t.Name() {
		seed = seed*131 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, 7))
}
