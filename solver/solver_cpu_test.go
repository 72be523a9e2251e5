package solver

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/internal/testing/libtest"
	"github.com/cudago/cudago/lib"
)

func wantErr(t *testing.T, name string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want an error containing %q", name, err, want)
	}
}

func TestCheckLU(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	b := libtest.Fakes(9*8, 8*8, 3*8, 2*8)
	a, short, rhs, shortRHS := b[0], b[1], b[2], b[3]
	if err := checkLU[float64]("FactorLU", h, a, 3, ColMajor); err != nil {
		t.Errorf("valid: %v", err)
	}
	if err := checkLU[float32]("FactorLU", h, a, 4, RowMajor); err != nil { // 64 bytes hold 4×4 float32
		t.Errorf("valid float32: %v", err)
	}
	root := core.NewBuffer(0, 4096, nil, nil)
	odd, _ := root.View(4, 72)
	closed := libtest.Fakes(72)[0]
	closed.Close()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil handle", checkLU[float64]("FactorLU", nil, a, 3, ColMajor), "solver: FactorLU: nil *Handle"},
		{"zero n", checkLU[float64]("FactorLU", h, a, 0, ColMajor), "solver: FactorLU: n = 0 is outside [1, 2147483647]"},
		{"negative n", checkLU[float64]("FactorLU", h, a, -3, ColMajor), "solver: FactorLU: n = -3 is outside"},
		{"huge n", checkLU[float64]("FactorLU", h, a, math.MaxInt32+1, ColMajor), "solver: FactorLU: n = 2147483648 is outside"},
		{"bad layout", checkLU[float64]("FactorLU", h, a, 3, Layout(2)), "solver: FactorLU: unknown Layout(2)"},
		{"nil A", checkLU[float64]("FactorLU", h, nil, 3, ColMajor), "solver: FactorLU: nil *core.Buffer for A"},
		{"short A", checkLU[float64]("FactorLU", h, short, 3, ColMajor), "solver: FactorLU: A holds 64 bytes, want 3×3 elements of float64 = 72 bytes"},
		{"misaligned A", func() error { _, err := FactorLU[float64](h, odd, 3, ColMajor); return err }(), "solver: FactorLU: A's address 0x4 is not aligned to its 8-byte float64 elements"},
		{"public FactorLU", func() error { _, err := FactorLU[float64](h, short, 3, ColMajor); return err }(), "A holds 64 bytes"},
		{"public SolveLU A", SolveLU[float64](h, a, 3, RowMajor, rhs, 2), "solver: SolveLU: B holds 24 bytes, want 3×2 elements"},
		{"SolveLU nrhs", SolveLU[float64](h, a, 3, ColMajor, rhs, 0), "solver: SolveLU: nrhs = 0 is outside [1, 2147483647]"},
		{"SolveLU short B", SolveLU[float64](h, a, 3, ColMajor, shortRHS, 1), "solver: SolveLU: B holds 16 bytes, want 3×1 elements of float64 = 24 bytes"},
		{"SolveLU nil B", SolveLU[float64](h, a, 3, ColMajor, nil, 1), "solver: SolveLU: nil *core.Buffer for B"},
		{"SolveLU B is A", SolveLU[float64](h, a, 3, ColMajor, a, 1), "solver: SolveLU: A and B overlap"},
		{"SolveLU layout", SolveLU[float32](h, a, 3, Layout(-1), rhs, 1), "solver: SolveLU: unknown Layout(-1)"},
	} {
		wantErr(t, c.name, c.err, c.want)
	}
	if _, err := FactorLU[float64](h, closed, 3, ColMajor); !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "solver: FactorLU: A: ") {
		t.Errorf("closed A: %v, want core.ErrClosed", err)
	}
	// B may follow A in one buffer.
	ab, _ := root.View(256, 12*8)
	aa, _ := root.View(256, 9*8)
	bb, _ := root.View(256+9*8, 3*8)
	if err := checkRHS[float64]("x", aa, 3, bb, 1); err != nil {
		t.Errorf("B right after A: %v", err)
	}
	if err := checkRHS[float64]("x", aa, 3, ab, 1); err == nil {
		t.Error("B over A: no error")
	}
}

func TestLUSolveChecks(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	b := libtest.Fakes(16*4, 4*4, 3*4)
	f := &LU[float32]{h: h, a: b[0], n: 4}
	wantErr(t, "nrhs", f.Solve(b[1], -1), "solver: LU.Solve: nrhs = -1 is outside")
	wantErr(t, "short B", f.Solve(b[2], 1), "solver: LU.Solve: B holds 12 bytes, want 4×1 elements of float32 = 16 bytes")
	wantErr(t, "B too small for 2", f.Solve(b[1], 2), "solver: LU.Solve: B holds 16 bytes, want 4×2 elements")
	wantErr(t, "B is A", f.Solve(b[0], 1), "solver: LU.Solve: A and B overlap")
	var nilLU *LU[float64]
	wantErr(t, "nil LU", nilLU.Solve(b[1], 1), "solver: LU.Solve: nil *LU")
	if _, err := nilLU.Pivots(); err == nil {
		t.Error("Pivots of a nil *LU: no error")
	}
	if err := nilLU.Close(); err != nil {
		t.Errorf("Close of a nil *LU: %v", err)
	}
	// A closed LU: its pivots are closed.
	piv := libtest.Fakes(16)[0]
	piv.Close()
	g := &LU[float32]{h: h, a: b[0], n: 4, ipiv: piv}
	if err := g.Close(); err != nil {
		t.Errorf("Close twice: %v", err)
	}
	if _, err := g.Pivots(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Pivots of a closed LU: %v, want core.ErrClosed", err)
	}
}

func TestCheckCholesky(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	b := libtest.Fakes(4*8, 2*8, 8)
	if err := checkCholesky[float64]("FactorCholesky", h, b[0], 2, Upper); err != nil {
		t.Errorf("valid: %v", err)
	}
	_, err := FactorCholesky[float64](h, b[0], 2, Uplo(5))
	wantErr(t, "bad uplo", err, "solver: FactorCholesky: unknown Uplo(5)")
	_, err = FactorCholesky[float64](h, b[0], 3, Lower)
	wantErr(t, "short A", err, "solver: FactorCholesky: A holds 32 bytes, want 3×3 elements of float64 = 72 bytes")
	_, err = FactorCholesky[float32](nil, b[0], 2, Lower)
	wantErr(t, "nil handle", err, "solver: FactorCholesky: nil *Handle")
	wantErr(t, "SolveCholesky n", SolveCholesky[float64](h, b[0], 0, Lower, b[1], 1), "solver: SolveCholesky: n = 0")
	wantErr(t, "SolveCholesky short B", SolveCholesky[float64](h, b[0], 2, Lower, b[2], 1), "solver: SolveCholesky: B holds 8 bytes, want 2×1 elements")
	wantErr(t, "SolveCholesky overlap", SolveCholesky[float64](h, b[0], 2, Lower, b[0], 2), "solver: SolveCholesky: A and B overlap")
	f := &Cholesky[float64]{h: h, a: b[0], n: 2}
	wantErr(t, "Solve nrhs", f.Solve(b[1], 0), "solver: Cholesky.Solve: nrhs = 0")
	wantErr(t, "Solve short B", f.Solve(b[2], 1), "solver: Cholesky.Solve: B holds 8 bytes")
	var nilC *Cholesky[float32]
	wantErr(t, "nil Cholesky", nilC.Solve(b[1], 1), "solver: Cholesky.Solve: nil *Cholesky")
}

func TestCheckSymEig(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	b := libtest.Fakes(9*4, 3*4, 2*4)
	a, w, shortW := b[0], b[1], b[2]
	if err := checkSymEig[float32](h, a, 3, Lower, w, ValuesAndVectors); err != nil {
		t.Errorf("valid: %v", err)
	}
	wantErr(t, "bad job", SymEig[float32](h, a, 3, Lower, w, EigJob(2)), "solver: SymEig: unknown EigJob(2)")
	wantErr(t, "bad uplo", SymEig[float32](h, a, 3, Uplo(-1), w, Values), "solver: SymEig: unknown Uplo(-1)")
	wantErr(t, "nil w", SymEig[float32](h, a, 3, Lower, nil, Values), "solver: SymEig: nil *core.Buffer for w")
	wantErr(t, "short w", SymEig[float32](h, a, 3, Lower, shortW, Values), "solver: SymEig: w holds 8 bytes, want 3×1 elements of float32 = 12 bytes")
	wantErr(t, "w in A", SymEig[float32](h, a, 3, Lower, a, Values), "solver: SymEig: A and w overlap")
	wantErr(t, "short A", SymEig[float64](h, a, 3, Lower, w, Values), "solver: SymEig: A holds 36 bytes, want 3×3 elements of float64")
	wantErr(t, "nil A", SymEig[float64](h, nil, 3, Lower, w, Values), "solver: SymEig: nil *core.Buffer for A")
	wc := libtest.Fakes(12)[0]
	wc.Close()
	if err := SymEig[float32](h, a, 3, Lower, wc, Values); !errors.Is(err, core.ErrClosed) {
		t.Errorf("closed w: %v, want core.ErrClosed", err)
	}
}

// TestClosedHandle: operations on a closed Handle give core.ErrClosed. A
// Handle that never ran an operation owns nothing on the GPU, so this
// needs none.
func TestClosedHandle(t *testing.T) {
	for _, h := range []*Handle{nil, {}} { // nil and zero: closed, never a panic
		if h.Close() != nil || h.Stream() != nil || h.WorkspaceSize() != 0 {
			t.Errorf("%#v", h)
		}
	}
	if _, err := FactorCholesky[float32](&Handle{}, libtest.Fakes(64)[0], 4, Lower); !errors.Is(err, core.ErrClosed) {
		t.Errorf("FactorCholesky on a zero Handle: %v, want core.ErrClosed", err)
	}
	h := &Handle{st: new(libhandle.State[cusolver.DnHandle])}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	b := libtest.Fakes(4*8, 2*8)
	if _, err := FactorLU[float64](h, b[0], 2, ColMajor); !errors.Is(err, core.ErrClosed) {
		t.Errorf("FactorLU: %v, want core.ErrClosed", err)
	}
	if _, err := FactorCholesky[float64](h, b[0], 2, Lower); !errors.Is(err, core.ErrClosed) {
		t.Errorf("FactorCholesky: %v, want core.ErrClosed", err)
	}
	if err := SymEig[float64](h, b[0], 2, Lower, b[1], Values); !errors.Is(err, core.ErrClosed) {
		t.Errorf("SymEig: %v, want core.ErrClosed", err)
	}
	f := &Cholesky[float64]{h: h, a: b[0], n: 2}
	if err := f.Solve(b[1], 1); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Cholesky.Solve: %v, want core.ErrClosed", err)
	}
	_, err := New(nil, nil)
	var ae *lib.ArgError
	if !errors.As(err, &ae) || ae.Arg != "stream" || !strings.HasPrefix(err.Error(), "solver: New: nil *core.Stream") {
		t.Errorf("New(nil): %v", err)
	}
	if !errors.As(SolveLU[float64](h, b[0], 2, ColMajor, b[0], 1), &ae) || ae.Func != "SolveLU" || ae.Arg != "B" {
		t.Errorf("an overlap is not an ArgError for B: %v", ae)
	}
}

func TestInfoErrors(t *testing.T) {
	pos := func(i int) error { return &SingularError{Step: i} }
	if err := infoError("getrf", 0, pos); err != nil {
		t.Errorf("info 0: %v", err)
	}
	wantErr(t, "negative", infoError("getrf", -4, pos), "solver: cuSOLVER's getrf rejected its parameter 4 (devInfo = -4)")
	err := infoError("getrf", 3, pos)
	var se *SingularError
	if !errors.As(err, &se) || se.Step != 3 || !errors.Is(err, ErrSingular) || errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("info 3: %v", err)
	}
	wantErr(t, "singular", err, "solver: LU: the matrix is singular: U(3,3) is exactly zero (step 3, counted from 1)")
	npd := error(&NotPositiveDefiniteError{Minor: 5})
	if !errors.Is(npd, ErrNotPositiveDefinite) || errors.Is(npd, ErrSingular) {
		t.Error("NotPositiveDefiniteError does not match ErrNotPositiveDefinite alone")
	}
	wantErr(t, "not PD", npd, "solver: Cholesky: the matrix is not positive definite: its leading minor of order 5 is not")
	nc := error(&NoConvergenceError{Count: 2})
	if !errors.Is(nc, ErrNoConvergence) || errors.Is(nc, ErrSingular) {
		t.Error("NoConvergenceError does not match ErrNoConvergence alone")
	}
	wantErr(t, "no convergence", nc, "solver: SymEig: 2 off-diagonal elements")
}

func TestEnums(t *testing.T) {
	if Lower.fill() != cublas.FillModeLower || Upper.fill() != cublas.FillModeUpper {
		t.Error("Uplo.fill")
	}
	for _, c := range []struct{ got, want string }{
		{ColMajor.String(), "ColMajor"}, {RowMajor.String(), "RowMajor"}, {Layout(9).String(), "Layout(9)"},
		{Lower.String(), "Lower"}, {Upper.String(), "Upper"}, {Uplo(9).String(), "Uplo(9)"},
		{Values.String(), "Values"}, {ValuesAndVectors.String(), "ValuesAndVectors"}, {EigJob(9).String(), "EigJob(9)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	if !isFloat32[float32]() || isFloat32[float64]() || libhandle.SizeOf[float32]() != 4 || libhandle.SizeOf[float64]() != 8 {
		t.Error("isFloat32 or sizeOf")
	}
}

// The references of the GPU tests.

func TestJacobiEigen(t *testing.T) {
	// Known spectra.
	for _, c := range []struct {
		a    []float64
		n    int
		want []float64
	}{
		{[]float64{4}, 1, []float64{4}},
		{[]float64{2, 1, 1, 2}, 2, []float64{1, 3}},
		{[]float64{3, 0, 0, 0, -1, 0, 0, 0, 2}, 3, []float64{-1, 2, 3}},
		// The 1-D Laplacian of order 3: 2 - 2cos(kπ/4).
		{[]float64{2, -1, 0, -1, 2, -1, 0, -1, 2}, 3, []float64{2 - math.Sqrt2, 2, 2 + math.Sqrt2}},
	} {
		got := jacobiEigen(c.a, c.n)
		for i := range c.want {
			if math.Abs(got[i]-c.want[i]) > 1e-14 {
				t.Errorf("%v: eigenvalues %v, want %v", c.a, got, c.want)
				break
			}
		}
	}
	// Random matrices keep their invariants: the trace is the sum of the
	// eigenvalues and ‖A‖_F² the sum of their squares.
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{5, 33} {
		a := randSymmetric[float64](r, n)
		w := jacobiEigen(a, n)
		trace, sum, sq := 0.0, 0.0, 0.0
		for i := range n {
			trace += a[i*n+i]
			sum += w[i]
			sq += w[i] * w[i]
		}
		f := frobenius(a)
		if math.Abs(trace-sum) > 1e-12*f || math.Abs(f*f-sq) > 1e-12*f*f {
			t.Errorf("n=%d: trace %v, Σλ %v; ‖A‖² %v, Σλ² %v", n, trace, sum, f*f, sq)
		}
		for i := 1; i < n; i++ {
			if w[i] < w[i-1] {
				t.Fatalf("n=%d: not ascending: %v", n, w)
			}
		}
		// det(A - λI) changes sign around each simple eigenvalue: check
		// that A - λ·I is singular by its smallest pivot, relative to ‖A‖.
		for _, l := range []float64{w[0], w[n/2], w[n-1]} {
			if p := minPivot(a, n, l); p > 1e-10*f {
				t.Errorf("n=%d: A - %v·I has no small pivot (%g)", n, l, p)
			}
		}
	}
}

// minPivot is the smallest |pivot| of Gaussian elimination with partial
// pivoting on A - l·I: about 0 when l is an eigenvalue.
func minPivot(a []float64, n int, l float64) float64 {
	m := make([]float64, n*n)
	copy(m, a)
	for i := range n {
		m[i*n+i] -= l
	}
	minp := math.Inf(1)
	for k := range n {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(m[i*n+k]) > math.Abs(m[p*n+k]) {
				p = i
			}
		}
		for j := range n {
			m[k*n+j], m[p*n+j] = m[p*n+j], m[k*n+j]
		}
		minp = min(minp, math.Abs(m[k*n+k]))
		if m[k*n+k] == 0 {
			continue
		}
		for i := k + 1; i < n; i++ {
			f := m[i*n+k] / m[k*n+k]
			for j := k; j < n; j++ {
				m[i*n+j] -= f * m[k*n+j]
			}
		}
	}
	return minp
}

func TestResidualRatio(t *testing.T) {
	a := []float64{2, 0, 0, 4}
	// The exact solution has ratio 0; a wrong one a large ratio.
	if r := residualRatio(a, 2, []float64{1, 1}, []float64{2, 4}, 0x1p-52); r != 0 {
		t.Errorf("exact solution: ratio %v", r)
	}
	if r := residualRatio(a, 2, []float64{1, 1.001}, []float64{2, 4}, 0x1p-52); r < 1e9 {
		t.Errorf("wrong solution: ratio %v", r)
	}
	r := rand.New(rand.NewPCG(2, 2))
	s := randSPD[float64](r, 7)
	for i := range 7 {
		for j := range 7 {
			if s[i*7+j] != s[j*7+i] {
				t.Fatal("randSPD is not symmetric")
			}
		}
	}
	if w := jacobiEigen(s, 7); w[0] < 1-1e-12 {
		t.Errorf("randSPD: smallest eigenvalue %v, want at least 1", w[0])
	}
	if tr := transpose([]float64{1, 2, 3, 4}, 2); tr[1] != 3 || tr[2] != 2 {
		t.Errorf("transpose: %v", tr)
	}
}
