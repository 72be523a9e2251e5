package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// hostMatrix is a random sparse matrix, with its dense row-major form for
// the reference and its CSR and COO arrays.
type hostMatrix[T Scalar] struct {
	rows, cols     int
	dense          []T
	off            []int64 // CSR row offsets
	rowInd, colInd []int64
	vals           []T
}

// randomSparse makes a rows×cols matrix in which each entry is nonzero
// with probability density, except that every fourth row (1, 5, 9, ...)
// is empty when there are more than two rows.
func randomSparse[T Scalar](r *rand.Rand, rows, cols int, density float64) hostMatrix[T] {
	hm := hostMatrix[T]{rows: rows, cols: cols, dense: make([]T, rows*cols), off: []int64{0}}
	for i := range rows {
		for j := range cols {
			if rows > 2 && i%4 == 1 || r.Float64() >= density {
				continue
			}
			v := randScalar[T](r)
			hm.dense[i*cols+j] = v
			hm.rowInd = append(hm.rowInd, int64(i))
			hm.colInd = append(hm.colInd, int64(j))
			hm.vals = append(hm.vals, v)
		}
		hm.off = append(hm.off, int64(len(hm.vals)))
	}
	return hm
}

// randScalar is uniform in [-1, 1) (both parts, for complex types), never
// exactly 0 so that the dense form shows every stored entry.
func randScalar[T Scalar](r *rand.Rand) T {
	for {
		re, im := 2*r.Float64()-1, 2*r.Float64()-1
		if re != 0 {
			return scalar[T](re, im)
		}
	}
}

func randVec[T Scalar](r *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = randScalar[T](r)
	}
	return v
}

// scalar is re + i·im as a T (im is dropped for real types).
func scalar[T Scalar](re, im float64) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(re)).(T)
	case float64:
		return any(re).(T)
	case complex64:
		return any(complex64(complex(re, im))).(T)
	}
	return any(complex(re, im)).(T)
}

func c128[T Scalar](v T) complex128 {
	switch x := any(v).(type) {
	case float32:
		return complex(float64(x), 0)
	case float64:
		return complex(x, 0)
	case complex64:
		return complex128(x)
	}
	return any(v).(complex128)
}

// epsOf is the machine epsilon of T's parts (2^-23 or 2^-52).
func epsOf[T Scalar]() float64 {
	var z T
	switch any(z).(type) {
	case float32, complex64:
		return 0x1p-23
	}
	return 0x1p-52
}

func conv[I Index](s []int64) []I {
	out := make([]I, len(s))
	for i, v := range s {
		out[i] = I(v)
	}
	return out
}

// makeMatrix uploads hm in format f with index type I.
func makeMatrix[T Scalar, I Index](t *testing.T, s *core.Stream, f Format, hm hostMatrix[T]) *Matrix[T] {
	t.Helper()
	var a *Matrix[T]
	var err error
	if f == CSR {
		a, err = NewCSR(s, hm.rows, hm.cols, conv[I](hm.off), conv[I](hm.colInd), hm.vals)
	} else {
		a, err = NewCOO(s, hm.rows, hm.cols, conv[I](hm.rowInd), conv[I](hm.colInd), hm.vals)
	}
	if err != nil {
		t.Fatalf("New%v: %v", f, err)
	}
	if a.Rows() != hm.rows || a.Cols() != hm.cols || a.NNZ() != len(hm.vals) || a.Format() != f {
		t.Fatalf("matrix is %v %d×%d with %d nonzeros, want %v %d×%d with %d", a.Format(), a.Rows(), a.Cols(), a.NNZ(), f, hm.rows, hm.cols, len(hm.vals))
	}
	return a
}

// opEntry is op(A)[i][j].
func (hm hostMatrix[T]) opEntry(op Transpose, i, j int) complex128 {
	if op == NoTrans {
		return c128(hm.dense[i*hm.cols+j])
	}
	v := c128(hm.dense[j*hm.cols+i])
	if op == ConjTrans {
		v = cmplx.Conj(v)
	}
	return v
}

// reference returns alpha·op(A)·B + beta·C for row-major B (k×n) and C
// (m×n), in complex128, with the tolerance of each element.
//
// Each element is alpha times a sum of cnt products plus beta·c, where
// cnt is the number of nonzeros in its row of op(A). The standard
// rounding-error bound for that in T is γ·scale with γ ≈ (cnt+2)·u,
// u = eps/2 the unit roundoff, and scale = |alpha|·Σ|a||b| + |beta|·|c|;
// the tolerance, 2·(cnt+3)·eps·scale = 4·(cnt+3)·u·scale, adds room for
// complex products (each within √5·u), whatever summation order, atomics
// or FMAs the GPU uses, and the reference's own rounding in float64. The
// inputs are the same T values on both sides, so nothing else differs.
func (hm hostMatrix[T]) reference(op Transpose, alpha T, b []T, n int, beta T, c []T) ([]complex128, []float64) {
	m, k := op.Dims(hm.rows, hm.cols)
	eps := epsOf[T]()
	al, be := c128(alpha), c128(beta)
	ref, tol := make([]complex128, m*n), make([]float64, m*n)
	for i := range m {
		for col := range n {
			var sum complex128
			var abs float64
			cnt := 0
			for j := range k {
				if a := hm.opEntry(op, i, j); a != 0 {
					bj := c128(b[j*n+col])
					sum += a * bj
					abs += cmplx.Abs(a) * cmplx.Abs(bj)
					cnt++
				}
			}
			ci := c128(c[i*n+col])
			ref[i*n+col] = al*sum + be*ci
			tol[i*n+col] = 2 * float64(cnt+3) * eps * (cmplx.Abs(al)*abs + cmplx.Abs(be)*cmplx.Abs(ci))
		}
	}
	return ref, tol
}

func compare[T Scalar](t *testing.T, what string, got []T, ref []complex128, tol []float64) {
	t.Helper()
	bad := 0
	for i := range ref {
		if d := cmplx.Abs(c128(got[i]) - ref[i]); !(d <= tol[i]) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v (difference %.3g, tolerance %.3g)", what, i, got[i], ref[i], d, tol[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", what, bad)
	}
}

// shapes are the matrices of the SpMV and SpMM tests: odd sizes, 1×1, a
// single row and a single column, and wide and tall ones; all but the
// smallest have empty rows (see randomSparse).
var shapes = []struct {
	rows, cols int
	density    float64
}{
	{1, 1, 1}, {7, 5, 0.4}, {1, 100, 0.3}, {100, 1, 0.5}, {33, 33, 0.2}, {257, 33, 0.1}, {33, 257, 0.1}, {300, 300, 0.02},
}

func TestGPUSpMV(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	t.Run("float32", func(t *testing.T) { testSpMV[float32](t, s, h) })
	t.Run("float64", func(t *testing.T) { testSpMV[float64](t, s, h) })
	t.Run("complex64", func(t *testing.T) { testSpMV[complex64](t, s, h) })
	t.Run("complex128", func(t *testing.T) { testSpMV[complex128](t, s, h) })
	if ws := h.WorkspaceSize(); ws < libhandle.MinWorkspace {
		t.Errorf("workspace of %d bytes after the SpMVs, want at least %d", ws, libhandle.MinWorkspace)
	}
}

func testSpMV[T Scalar](t *testing.T, s *core.Stream, h *Handle) {
	r := rand.New(rand.NewPCG(1, 2))
	alpha, beta := scalar[T](1.5, -0.5), scalar[T](-0.75, 0.25)
	for _, sh := range shapes {
		hm := randomSparse[T](r, sh.rows, sh.cols, sh.density)
		for _, f := range []Format{CSR, COO} {
			for _, wide := range []bool{false, true} {
				var a *Matrix[T]
				if wide {
					a = makeMatrix[T, int64](t, s, f, hm)
				} else {
					a = makeMatrix[T, int32](t, s, f, hm)
				}
				for _, op := range []Transpose{NoTrans, Trans, ConjTrans} {
					m, k := op.Dims(hm.rows, hm.cols)
					x, y0 := randVec[T](r, k), randVec[T](r, m)
					xb, yb := libtest.Upload(t, s, x), libtest.Upload(t, s, y0)
					what := fmt.Sprintf("%d×%d %v int64=%v %v", hm.rows, hm.cols, f, wide, op)
					if err := SpMV(h, op, alpha, a, xb, beta, yb); err != nil {
						t.Fatalf("%s: SpMV: %v", what, err)
					}
					ref, tol := hm.reference(op, alpha, x, 1, beta, y0)
					compare(t, what, libtest.Download[T](t, yb, m), ref, tol)
					xb.Close()
					yb.Close()
				}
				if err := a.Close(); err != nil {
					t.Errorf("Matrix.Close: %v", err)
				}
			}
		}
	}
}

func TestGPUSpMM(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	t.Run("float32", func(t *testing.T) { testSpMM[float32](t, s, h) })
	t.Run("float64", func(t *testing.T) { testSpMM[float64](t, s, h) })
	t.Run("complex64", func(t *testing.T) { testSpMM[complex64](t, s, h) })
	t.Run("complex128", func(t *testing.T) { testSpMM[complex128](t, s, h) })
}

func testSpMM[T Scalar](t *testing.T, s *core.Stream, h *Handle) {
	r := rand.New(rand.NewPCG(3, 4))
	alpha, beta := scalar[T](-1.25, 0.5), scalar[T](0.5, -1)
	for i, sh := range shapes {
		hm := randomSparse[T](r, sh.rows, sh.cols, sh.density)
		for _, f := range []Format{CSR, COO} {
			var a *Matrix[T]
			wide := i%2 == 1 // both index types, over the shapes
			if wide {
				a = makeMatrix[T, int64](t, s, f, hm)
			} else {
				a = makeMatrix[T, int32](t, s, f, hm)
			}
			for _, op := range []Transpose{NoTrans, Trans, ConjTrans} {
				for _, n := range []int{1, 3, 17} {
					m, k := op.Dims(hm.rows, hm.cols)
					b, c0 := randVec[T](r, k*n), randVec[T](r, m*n)
					bb, cb := libtest.Upload(t, s, b), libtest.Upload(t, s, c0)
					what := fmt.Sprintf("%d×%d %v int64=%v %v n=%d", hm.rows, hm.cols, f, wide, op, n)
					if err := SpMM(h, op, alpha, a, bb, n, beta, cb); err != nil {
						t.Fatalf("%s: SpMM: %v", what, err)
					}
					ref, tol := hm.reference(op, alpha, b, n, beta, c0)
					compare(t, what, libtest.Download[T](t, cb, m*n), ref, tol)
					bb.Close()
					cb.Close()
				}
			}
			if err := a.Close(); err != nil {
				t.Errorf("Matrix.Close: %v", err)
			}
		}
	}
}

// TestGPUNoNonzeros: a matrix without nonzeros gives y = beta·y.
func TestGPUNoNonzeros(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	for _, f := range []Format{CSR, COO} {
		var a *Matrix[float64]
		var err error
		if f == CSR {
			a, err = NewCSR[float64](s, 5, 4, []int32{0, 0, 0, 0, 0, 0}, nil, nil)
		} else {
			a, err = NewCOO[float64, int32](s, 5, 4, nil, nil, nil)
		}
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		x, y := libtest.Upload(t, s, []float64{1, 2, 3, 4}), libtest.Upload(t, s, []float64{1, -2, 3, -4, 5})
		if err := SpMV(h, NoTrans, 2, a, x, 0.5, y); err != nil {
			t.Fatalf("%v: SpMV: %v", f, err)
		}
		// beta·y is exact for beta = 0.5.
		if got, want := libtest.Download[float64](t, y, 5), []float64{0.5, -1, 1.5, -2, 2.5}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: y = %v, want %v", f, got, want)
		}
		x.Close()
		y.Close()
		a.Close()
	}
}

// TestGPUWorkspaceKept: the workspace is allocated once and kept for the
// same operation, and a second handle has its own.
func TestGPUWorkspaceKept(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	if h.WorkspaceSize() != 0 {
		t.Fatalf("a new handle has a workspace of %d bytes", h.WorkspaceSize())
	}
	r := rand.New(rand.NewPCG(5, 6))
	hm := randomSparse[float32](r, 257, 33, 0.1)
	a := makeMatrix[float32, int32](t, s, CSR, hm)
	defer a.Close()
	// Aᵀ is 33×257: B is 257×8 and C 33×8.
	bm, cm := libtest.Upload(t, s, randVec[float32](r, 257*8)), libtest.Upload(t, s, make([]float32, 33*8))
	defer bm.Close()
	defer cm.Close()
	if err := SpMM(h, Trans, 1, a, bm, 8, 0, cm); err != nil {
		t.Fatal(err)
	}
	first := h.WorkspaceSize()
	if first < libhandle.MinWorkspace {
		t.Fatalf("workspace of %d bytes after SpMM", first)
	}
	for range 5 {
		if err := SpMM(h, Trans, 1, a, bm, 8, 0, cm); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.WorkspaceSize(); got != first {
		t.Errorf("workspace went from %d to %d bytes for the same operation", first, got)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUConcurrent: goroutines share one Handle and one Matrix, and
// others use the Matrix through handles of their own streams; every
// result is right.
func TestGPUConcurrent(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	r := rand.New(rand.NewPCG(7, 8))
	hm := randomSparse[float64](r, 257, 33, 0.2)
	a := makeMatrix[float64, int32](t, s, CSR, hm)
	defer a.Close()
	const workers = 8
	x := randVec[float64](r, 33)
	ref, tol := hm.reference(NoTrans, 1, x, 1, 0, make([]float64, 257))
	libtest.Concurrently(t, workers, s, h, func(s *core.Stream) (*Handle, error) { return New(s, nil) }, func(w int, sw *core.Stream, hw *Handle) error {
		xb, err := sw.Device().Allocate(33*8, sw)
		if err != nil {
			return err
		}
		defer xb.Close()
		yb, err := sw.Device().Allocate(257*8, sw)
		if err != nil {
			return err
		}
		defer yb.Close()
		if err := core.CopyToDevice(xb, x); err != nil {
			return err
		}
		for range 20 {
			if err := SpMV(hw, NoTrans, 1, a, xb, 0, yb); err != nil {
				return err
			}
		}
		got := make([]float64, 257)
		if err := core.CopyFromDevice(got, yb); err != nil {
			return err
		}
		for i := range got {
			if d := math.Abs(got[i] - real(ref[i])); !(d <= tol[i]) {
				return fmt.Errorf("worker %d: y[%d] = %v, want %v", w, i, got[i], real(ref[i]))
			}
		}
		return nil
	})
}

// TestGPUClosed: closed matrices, handles and buffers give core.ErrClosed;
// a handle outlives its stream's Close.
func TestGPUClosed(t *testing.T) {
	s := libtest.Stream(t, core.StreamOptions{})
	h := newHandle(t, s)
	a, err := NewCSR(s, 2, 2, []int32{0, 1, 2}, []int32{0, 1}, []float32{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	x, y := libtest.Upload(t, s, []float32{1, 1}), libtest.Upload(t, s, []float32{0, 0})
	defer y.Close()
	if err := SpMV(h, NoTrans, 1, a, x, 0, y); err != nil {
		t.Fatal(err)
	}
	if got := libtest.Download[float32](t, y, 2); got[0] != 2 || got[1] != 3 {
		t.Errorf("y = %v, want [2 3]", got)
	}
	x.Close()
	if err := SpMV(h, NoTrans, 1, a, x, 0, y); !errors.Is(err, core.ErrClosed) {
		t.Errorf("closed x: %v, want core.ErrClosed", err)
	}
	x = libtest.Upload(t, s, []float32{1, 1})
	defer x.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Matrix.Close: %v", err)
	}
	if err := SpMV(h, NoTrans, 1, a, x, 0, y); !errors.Is(err, core.ErrClosed) {
		t.Errorf("closed matrix: %v, want core.ErrClosed", err)
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
	a2, err := NewCOO(s, 2, 2, []int64{0, 1}, []int64{1, 0}, []float32{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	if err := SpMV(h2, NoTrans, 1, a2, x, 0, y); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := libtest.Download[float32](t, y, 2); got[0] != 4 || got[1] != 5 {
		t.Errorf("y = %v, want [4 5]", got)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := SpMV(h2, NoTrans, 1, a2, x, 0, y); !errors.Is(err, core.ErrClosed) {
		t.Errorf("handle of a closed stream: %v, want core.ErrClosed", err)
	}
	if err := h2.Close(); err != nil {
		t.Errorf("Close of a handle whose stream is closed: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Handle.Close: %v", err)
	}
	if err := SpMV(h, NoTrans, 1, a2, x, 0, y); !errors.Is(err, core.ErrClosed) {
		t.Errorf("closed handle: %v, want core.ErrClosed", err)
	}
	if _, err := New(s2, nil); !errors.Is(err, core.ErrClosed) {
		t.Errorf("New of a closed stream: %v, want core.ErrClosed", err)
	}
}

// BenchmarkSpMV multiplies the 1-D Laplacian of 1<<22 rows (CSR, float32)
// by a vector; it reports the bytes the kernel must move per second.
func BenchmarkSpMV(b *testing.B) {
	s := libtest.Stream(b, core.StreamOptions{})
	dev := s.Device()
	const n = 1 << 22
	off, col, val := laplacian1D(n)
	a, err := NewCSR(s, n, n, off, col, val)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	h := newHandle(b, s)
	x, err := dev.Allocate(n*4, s)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	y, err := dev.Allocate(n*4, s)
	if err != nil {
		b.Fatal(err)
	}
	defer y.Close()
	if err := x.Memset32(0x3f800000); err != nil { // 1.0
		b.Fatal(err)
	}
	if err := SpMV(h, NoTrans, 1, a, x, 0, y); err != nil { // warm up
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := SpMV(h, NoTrans, 1, a, x, 0, y); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	// Values and column indices (4+4 bytes per nonzero), offsets, x and y.
	bytes := float64(len(val)*8 + len(off)*4 + 2*n*4)
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// laplacian1D is the n×n matrix tridiag(-1, 2, -1) in CSR form.
func laplacian1D(n int) (off, col []int32, val []float32) {
	off = make([]int32, 0, n+1)
	off = append(off, 0)
	for i := range n {
		for j := i - 1; j <= i+1; j++ {
			if j < 0 || j >= n {
				continue
			}
			col = append(col, int32(j))
			if j == i {
				val = append(val, 2)
			} else {
				val = append(val, -1)
			}
		}
		off = append(off, int32(len(col)))
	}
	return off, col, val
}

// newHandle returns a Handle on s, closed when t ends.
func newHandle(t testing.TB, s *core.Stream) *Handle {
	return libtest.Open(t, func() (*Handle, error) { return New(s, nil) })
}
