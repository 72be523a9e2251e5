package solver

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// checkSolved checks LAPACK's residual ratio (see residualRatio) of each
// of the nrhs solutions that b holds, of A·X = B for the row-major am and
// the right-hand sides bv.
func checkSolved[T Float](t *testing.T, what string, b *core.Buffer, am []T, n, nrhs int, bv []T, eps float64) {
	t.Helper()
	x := libtest.Download[T](t, b, n*nrhs)
	for c := range nrhs {
		if q := residualRatio(am, n, x[c*n:(c+1)*n], bv[c*n:(c+1)*n], eps); !(q < 30) {
			t.Errorf("%s: right-hand side %d: residual ratio %.3g, want < 30", what, c, q)
		}
	}
}

// sizes are the orders of the solver tests.
var sizes = []int{1, 7, 33, 100, 257}

func TestGPULU(t *testing.T) {
	eachFloat(t, testLU[float32], testLU[float64])
}

// testLU solves random systems with both layouts, through FactorLU and
// Solve and through SolveLU, and checks LAPACK's residual ratio (see
// residualRatio) for every right-hand side, and the pivots.
func testLU[T Float](t *testing.T, s *core.Stream, h *Handle) {
	r := rand.New(rand.NewPCG(1, 2))
	eps := epsOf[T]()
	for _, n := range sizes {
		for _, layout := range []Layout{ColMajor, RowMajor} {
			for _, nrhs := range []int{1, 3} {
				what := fmt.Sprintf("n=%d %v nrhs=%d", n, layout, nrhs)
				am := randMatrix[T](r, n) // row-major A
				stored := am
				if layout == ColMajor {
					stored = transpose(am, n)
				}
				bv := randMatrix[T](r, max(n, nrhs))[:n*nrhs] // nrhs vectors, one after another
				a, b := libtest.Upload(t, s, stored), libtest.Upload(t, s, bv)
				f, err := FactorLU[T](h, a, n, layout)
				if err != nil {
					t.Fatalf("%s: FactorLU: %v", what, err)
				}
				if f.N() != n {
					t.Errorf("%s: N() = %d", what, f.N())
				}
				if err := f.Solve(b, nrhs); err != nil {
					t.Fatalf("%s: Solve: %v", what, err)
				}
				checkSolved(t, what, b, am, n, nrhs, bv, eps)
				piv, err := f.Pivots()
				if err != nil {
					t.Fatalf("%s: Pivots: %v", what, err)
				}
				for i, p := range piv { // LAPACK's IPIV: 1-based, row i+1 swapped with row p >= i+1
					if int(p) < i+1 || int(p) > n {
						t.Errorf("%s: pivot %d = %d, want in [%d, %d]", what, i, p, i+1, n)
						break
					}
				}
				if err := f.Close(); err != nil {
					t.Errorf("%s: LU.Close: %v", what, err)
				}
				// The one-call form, on fresh copies.
				a2, b2 := libtest.Upload(t, s, stored), libtest.Upload(t, s, bv)
				if err := SolveLU[T](h, a2, n, layout, b2, nrhs); err != nil {
					t.Fatalf("%s: SolveLU: %v", what, err)
				}
				checkSolved(t, what+": SolveLU", b2, am, n, nrhs, bv, eps)
			}
		}
	}
}

// TestGPUSingular: exactly singular matrices give *SingularError at the
// step whose pivot is exactly zero (the arithmetic below is exact in
// binary floating point).
func TestGPUSingular(t *testing.T) {
	eachFloat(t, testSingular[float32], testSingular[float64])
}

func testSingular[T Float](t *testing.T, s *core.Stream, h *Handle) {
	for _, c := range []struct {
		name string
		a    []T // column-major
		n    int
		step int
	}{
		{"zero 1×1", []T{0}, 1, 1},
		// [[1, 2], [2, 4]]: after the swap, 2 - (1/2)·4 = 0.
		{"rank 1", []T{1, 2, 2, 4}, 2, 2},
		// The second column is zero.
		{"zero column", []T{1, 3, 5, 0, 0, 0, 2, 4, 6}, 3, 2},
		// The last column repeats the first.
		{"repeated column", []T{4, 1, 2, 1, 3, 1, 4, 1, 2}, 3, 3},
	} {
		for _, layout := range []Layout{ColMajor, RowMajor} {
			a := libtest.Upload(t, s, c.a)
			f, err := FactorLU[T](h, a, c.n, layout)
			var se *SingularError
			if !errors.As(err, &se) || !errors.Is(err, ErrSingular) {
				t.Errorf("%s %v: FactorLU = %v, %v; want a *SingularError", c.name, layout, f, err)
				continue
			}
			// Either layout hands cuSOLVER the same array (row-major A
			// is the Aᵀ it sees), so the step is the same.
			if se.Step != c.step {
				t.Errorf("%s %v: step %d, want %d", c.name, layout, se.Step, c.step)
			}
			a2, b := libtest.Upload(t, s, c.a), libtest.Upload(t, s, make([]T, c.n))
			if err := SolveLU[T](h, a2, c.n, layout, b, 1); !errors.Is(err, ErrSingular) {
				t.Errorf("%s %v: SolveLU = %v, want ErrSingular", c.name, layout, err)
			}
		}
	}
	// A nonsingular matrix right after: the handle's devInfo is reset.
	a, b := libtest.Upload(t, s, []T{2, 0, 0, 4}), libtest.Upload(t, s, []T{2, 4})
	if err := SolveLU[T](h, a, 2, ColMajor, b, 1); err != nil {
		t.Fatalf("SolveLU after the singular ones: %v", err)
	}
	if x := libtest.Download[T](t, b, 2); x[0] != 1 || x[1] != 1 {
		t.Errorf("x = %v, want [1 1]", x)
	}
}

func TestGPUCholesky(t *testing.T) {
	eachFloat(t, testCholesky[float32], testCholesky[float64])
}

// garbage fills the triangle of a that uplo does not name: an operation
// that read it would see a matrix that is not even symmetric.
const garbage = -77.5

// testCholesky solves SPD systems (see randSPD) reading one triangle, the
// other holding garbage, and checks the residual ratio.
func testCholesky[T Float](t *testing.T, s *core.Stream, h *Handle) {
	r := rand.New(rand.NewPCG(3, 4))
	eps := epsOf[T]()
	for _, n := range sizes {
		am := randSPD[T](r, n)
		for _, uplo := range []Uplo{Lower, Upper} {
			for _, nrhs := range []int{1, 3} {
				what := fmt.Sprintf("n=%d %v nrhs=%d", n, uplo, nrhs)
				stored := transpose(am, n) // column-major (the same, A being symmetric)
				for j := range n {
					for i := range n {
						if uplo == Lower && i < j || uplo == Upper && i > j {
							stored[j*n+i] = garbage // (i, j) in column-major
						}
					}
				}
				bv := randMatrix[T](r, max(n, nrhs))[:n*nrhs]
				a, b := libtest.Upload(t, s, stored), libtest.Upload(t, s, bv)
				f, err := FactorCholesky[T](h, a, n, uplo)
				if err != nil {
					t.Fatalf("%s: FactorCholesky: %v", what, err)
				}
				if err := f.Solve(b, nrhs); err != nil {
					t.Fatalf("%s: Solve: %v", what, err)
				}
				checkSolved(t, what, b, am, n, nrhs, bv, eps)
				// The one-call form; a row-major array of a symmetric
				// matrix is the same array.
				a2, b2 := libtest.Upload(t, s, am), libtest.Upload(t, s, bv)
				if err := SolveCholesky[T](h, a2, n, uplo, b2, nrhs); err != nil {
					t.Fatalf("%s: SolveCholesky: %v", what, err)
				}
				checkSolved(t, what+": SolveCholesky", b2, am, n, nrhs, bv, eps)
			}
		}
	}
}

// TestGPUNotPositiveDefinite: a negative diagonal entry makes the leading
// minor of its order, and every larger one, not positive definite.
func TestGPUNotPositiveDefinite(t *testing.T) {
	eachFloat(t, testNotPD[float32], testNotPD[float64])
}

func testNotPD[T Float](t *testing.T, s *core.Stream, h *Handle) {
	// diag(1, 2, -3, 4): the minor of order 3 is the first that is not.
	d := []T{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, -3, 0, 0, 0, 0, 4}
	// An SPD matrix of order 33 whose 21st diagonal entry is far below
	// what the entries before it can make up: the minors of order 1-20
	// are those of an SPD matrix, and that of order 21 is not.
	r := rand.New(rand.NewPCG(5, 6))
	big := randSPD[T](r, 33)
	big[20*33+20] = -1000
	// Not even semidefinite everywhere: the zero matrix of order 1.
	for _, c := range []struct {
		name  string
		a     []T
		n     int
		minor int
	}{{"diag", d, 4, 3}, {"33", big, 33, 21}, {"zero", []T{0}, 1, 1}} {
		for _, uplo := range []Uplo{Lower, Upper} {
			a := libtest.Upload(t, s, c.a)
			_, err := FactorCholesky[T](h, a, c.n, uplo)
			var pe *NotPositiveDefiniteError
			if !errors.As(err, &pe) || !errors.Is(err, ErrNotPositiveDefinite) {
				t.Errorf("%s %v: %v, want a *NotPositiveDefiniteError", c.name, uplo, err)
				continue
			}
			if pe.Minor != c.minor {
				t.Errorf("%s %v: minor %d, want %d", c.name, uplo, pe.Minor, c.minor)
			}
			a2, b := libtest.Upload(t, s, c.a), libtest.Upload(t, s, make([]T, c.n))
			if err := SolveCholesky[T](h, a2, c.n, uplo, b, 1); !errors.Is(err, ErrNotPositiveDefinite) {
				t.Errorf("%s %v: SolveCholesky = %v, want ErrNotPositiveDefinite", c.name, uplo, err)
			}
		}
	}
}

func TestGPUSymEig(t *testing.T) {
	eachFloat(t, testSymEig[float32], testSymEig[float64])
}

// testSymEig compares syevd's eigenvalues with the CPU Jacobi method's
// and checks the eigenvectors: A·v = λ·v and VᵀV = I.
//
// Tolerances: symmetric eigenvalues are perfectly conditioned (Weyl: a
// change δA moves each by at most ‖δA‖₂), and syevd is backward stable,
// with ‖δA‖ ≤ p(n)·u·‖A‖ for a modest p(n); we allow 4·n·eps·‖A‖_F
// (eps = 2u). The Jacobi reference, in float64 on the same T inputs, is
// far more accurate for float32 and within a few ulps for float64. The
// eigenvector residual ‖A·v - λ·v‖₂ and the loss of orthogonality get the
// same bound (relative to ‖A‖_F and to 1).
func testSymEig[T Float](t *testing.T, s *core.Stream, h *Handle) {
	r := rand.New(rand.NewPCG(7, 8))
	eps := epsOf[T]()
	for _, n := range []int{1, 5, 33, 100} {
		am := randSymmetric[T](r, n)
		am64 := make([]float64, n*n)
		for i, v := range am {
			am64[i] = float64(v)
		}
		ref := jacobiEigen(am64, n)
		normA := frobenius(am)
		tol := 4 * float64(n) * eps * normA
		for _, uplo := range []Uplo{Lower, Upper} {
			for _, job := range []EigJob{Values, ValuesAndVectors} {
				what := fmt.Sprintf("n=%d %v %v", n, uplo, job)
				stored := transpose(am, n)
				for j := range n {
					for i := range n {
						if uplo == Lower && i < j || uplo == Upper && i > j {
							stored[j*n+i] = garbage
						}
					}
				}
				a, w := libtest.Upload(t, s, stored), libtest.Upload(t, s, make([]T, n))
				if err := SymEig[T](h, a, n, uplo, w, job); err != nil {
					t.Fatalf("%s: SymEig: %v", what, err)
				}
				wv := libtest.Download[T](t, w, n)
				for i := range n {
					if d := math.Abs(float64(wv[i]) - ref[i]); !(d <= tol) {
						t.Errorf("%s: eigenvalue %d = %v, want %v (difference %.3g, tolerance %.3g)", what, i, wv[i], ref[i], d, tol)
						break
					}
				}
				if job == ValuesAndVectors {
					checkVectors(t, what, am, n, libtest.Download[T](t, a, n*n), wv, tol, 4*float64(n)*eps)
				}
				a.Close()
				w.Close()
			}
		}
	}
}

// checkVectors checks that column j of v (column-major) is a unit
// eigenvector of A (row-major) for w[j], and that they are orthonormal.
func checkVectors[T Float](t *testing.T, what string, am []T, n int, v, w []T, tolRes, tolOrth float64) {
	t.Helper()
	for j := range n {
		col := v[j*n : (j+1)*n]
		res := 0.0
		for i := range n {
			s := -float64(w[j]) * float64(col[i])
			for k := range n {
				s += float64(am[i*n+k]) * float64(col[k])
			}
			res += s * s
		}
		if res = math.Sqrt(res); !(res <= tolRes) {
			t.Errorf("%s: ‖A·v - λ·v‖ = %.3g for eigenvector %d, tolerance %.3g", what, res, j, tolRes)
			return
		}
		for k := 0; k <= j; k++ {
			dot := 0.0
			for i := range n {
				dot += float64(col[i]) * float64(v[k*n+i])
			}
			if k == j {
				dot--
			}
			if !(math.Abs(dot) <= tolOrth) {
				t.Errorf("%s: vᵀv of eigenvectors %d and %d is off by %.3g, tolerance %.3g", what, k, j, dot, tolOrth)
				return
			}
		}
	}
}

// TestGPUSymEigKnown: the 1-D Laplacian's eigenvalues are known in closed
// form, 2 - 2·cos(kπ/(n+1)); the matrix is passed row-major, which for a
// symmetric matrix is the same array.
func TestGPUSymEigKnown(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	const n = 64
	a := make([]float64, n*n)
	for i := range n {
		a[i*n+i] = 2
		if i > 0 {
			a[i*n+i-1], a[(i-1)*n+i] = -1, -1
		}
	}
	ab, w := libtest.Upload(t, s, a), libtest.Upload(t, s, make([]float64, n))
	if err := SymEig[float64](h, ab, n, Upper, w, Values); err != nil {
		t.Fatal(err)
	}
	got := libtest.Download[float64](t, w, n)
	for k := 1; k <= n; k++ {
		want := 2 - 2*math.Cos(float64(k)*math.Pi/(n+1))
		// 4·n·eps·‖A‖_F as in testSymEig, ‖A‖_F < 3·√n.
		if d := math.Abs(got[k-1] - want); d > 4*n*0x1p-52*3*8 {
			t.Errorf("eigenvalue %d = %v, want %v", k, got[k-1], want)
		}
	}
}

// TestGPUWorkspaceKept: the workspace is allocated once per size and kept.
func TestGPUWorkspaceKept(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	if h.WorkspaceSize() != 0 {
		t.Fatalf("a new handle has a workspace of %d bytes", h.WorkspaceSize())
	}
	r := rand.New(rand.NewPCG(9, 10))
	am := randSPD[float64](r, 100)
	run := func() {
		a, b := libtest.Upload(t, s, am), libtest.Upload(t, s, make([]float64, 100))
		if err := SolveCholesky[float64](h, a, 100, Lower, b, 1); err != nil {
			t.Fatal(err)
		}
		a.Close()
		b.Close()
	}
	run()
	first := h.WorkspaceSize()
	if first < libhandle.MinWorkspace {
		t.Fatalf("workspace of %d bytes after potrf", first)
	}
	for range 5 {
		run()
	}
	if got := h.WorkspaceSize(); got != first {
		t.Errorf("workspace went from %d to %d bytes for the same operation", first, got)
	}
}

// TestGPUConcurrent: goroutines share one Handle, others use handles of
// their own streams; every solve is right.
func TestGPUConcurrent(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	const workers, n = 8, 65
	libtest.Concurrently(t, workers, s, newHandle(t, s), func(s *core.Stream) (*Handle, error) { return New(s, nil) }, func(w int, sw *core.Stream, hw *Handle) error {
		r := rand.New(rand.NewPCG(11, uint64(w)))
		am, bv := randMatrix[float64](r, n), randMatrix[float64](r, n)[:n]
		a, err := sw.Device().Allocate(n*n*8, sw)
		if err != nil {
			return err
		}
		defer a.Close()
		b, err := sw.Device().Allocate(n*8, sw)
		if err != nil {
			return err
		}
		defer b.Close()
		for range 5 {
			if err := core.CopyToDevice(a, am); err != nil {
				return err
			}
			if err := core.CopyToDevice(b, bv); err != nil {
				return err
			}
			if err := SolveLU[float64](hw, a, n, RowMajor, b, 1); err != nil {
				return err
			}
			x := make([]float64, n)
			if err := core.CopyFromDevice(x, b); err != nil {
				return err
			}
			if q := residualRatio(am, n, x, bv, 0x1p-52); !(q < 30) {
				return fmt.Errorf("worker %d: residual ratio %.3g", w, q)
			}
		}
		return nil
	})
}

// TestGPUClosed: closed LUs, handles and buffers give core.ErrClosed; a
// handle outlives its stream's Close.
func TestGPUClosed(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	a, b := libtest.Upload(t, s, []float32{2, 0, 0, 4}), libtest.Upload(t, s, []float32{2, 4})
	f, err := FactorLU[float32](h, a, 2, ColMajor)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second LU.Close: %v", err)
	}
	if err := f.Solve(b, 1); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Solve of a closed LU: %v, want core.ErrClosed", err)
	}
	c := libtest.Upload(t, s, []float32{4, 0, 0, 9})
	ch, err := FactorCholesky[float32](h, c, 2, Lower)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := ch.Solve(b, 1); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Cholesky.Solve with its matrix closed: %v, want core.ErrClosed", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := FactorLU[float32](h, a, 2, ColMajor); !errors.Is(err, core.ErrClosed) {
		t.Errorf("FactorLU on a closed handle: %v, want core.ErrClosed", err)
	}
	// The stream goes first: the handle is still destroyed cleanly.
	s2, err := s.Device().NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := New(s2, nil)
	if err != nil {
		t.Fatal(err)
	}
	a2 := libtest.Upload(t, s, []float64{4, 1, 1, 3})
	w := libtest.Upload(t, s, []float64{0, 0})
	if err := SymEig[float64](h2, a2, 2, Lower, w, Values); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := SymEig[float64](h2, a2, 2, Lower, w, Values); !errors.Is(err, core.ErrClosed) {
		t.Errorf("handle of a closed stream: %v, want core.ErrClosed", err)
	}
	if err := h2.Close(); err != nil {
		t.Errorf("Close of a handle whose stream is closed: %v", err)
	}
	// (7 ± √5)/2.
	got := libtest.Download[float64](t, w, 2)
	if want0, want1 := (7-math.Sqrt(5))/2, (7+math.Sqrt(5))/2; math.Abs(got[0]-want0) > 1e-14 || math.Abs(got[1]-want1) > 1e-14 {
		t.Errorf("eigenvalues %v, want [%v %v]", got, want0, want1)
	}
}

// BenchmarkFactorLU factors a random 4096×4096 float64 matrix; it reports
// TFLOP/s for LU's 2/3·n³ operations (a sync per factorization, for
// devInfo, included).
func BenchmarkFactorLU(b *testing.B) {
	s := libtest.Stream(b, core.StreamOptions{})
	h := newHandle(b, s)
	const n = 4096
	am := randMatrix[float64](rand.New(rand.NewPCG(1, 1)), n)
	src, a := libtest.Upload(b, s, am), libtest.Upload(b, s, am)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := a.CopyFrom(src); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		f, err := FactorLU[float64](h, a, n, ColMajor)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	b.StopTimer()
	b.ReportMetric(2.0/3*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// eachFloat runs a test's float32 and float64 subtests, f instantiated
// for each, with one stream and Handle.
func eachFloat(t *testing.T, f32, f64 func(*testing.T, *core.Stream, *Handle)) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	t.Run("float32", func(t *testing.T) { f32(t, s, h) })
	t.Run("float64", func(t *testing.T) { f64(t, s, h) })
}

// newHandle returns a Handle on s, closed when t ends.
func newHandle(t testing.TB, s *core.Stream) *Handle {
	return libtest.Open(t, func() (*Handle, error) { return New(s, nil) })
}
