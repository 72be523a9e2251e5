package blas

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// gelu is the tanh form cuBLASLt's GELU epilogues compute, and its
// derivative.
func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func geluGrad(x float64) float64 {
	c := math.Sqrt(2 / math.Pi)
	th := math.Tanh(c * (x + 0.044715*x*x*x))
	return 0.5*(1+th) + 0.5*x*(1-th*th)*c*(1+3*0.044715*x*x)
}

// geluSlack is what cuBLASLt's GELU may differ from gelu by besides
// its input's error: its tanh is a fast approximation (relative error
// about 2⁻¹¹), which moves GELU by at most |x|·2⁻¹¹ and its derivative by
// about as much relative to |x|; twice that, and a floor for tiny values.
func geluSlack(x float64) float64 { return math.Abs(x)*0x1p-10 + 0x1p-14 }

// epiCase is one epilogue test: matrices in layout lay, C m×n.
type epiCase struct {
	lay         layout
	ep          Epilogue
	tA, tB      Transpose
	m, n, k     int
	pad         int // added to each leading dimension (odd ones when odd)
	ldAux       int
	alpha, beta float32
}

func (c epiCase) String() string {
	return fmt.Sprintf("%v %v %v%v m=%d n=%d k=%d pad=%d ldAux=%d", c.ep, c.lay, c.tA, c.tB, c.m, c.n, c.k, c.pad, c.ldAux)
}

// epiRun is what a Matmul with an epilogue produced, and its reference.
type epiRun struct {
	A, B, C    hostMat
	a, b       []complex128 // A's and B's data
	x, xBound  []float64    // the GEMM's result per element of C's data (before the epilogue), its error bound
	got        []float64    // C after the Matmul
	bias       []float64    // the bias added (or the gradient written)
	aux        *core.Buffer
	auxLd      int
	tol        tolerance
	inner, out int // C's lines: length and count
}

// matrices makes A, B and C for c in layout c.lay, starting 256 bytes
// into their Buffers (aligned as a Buffer is).
func epiMatrices(c epiCase, esz int) (A, B, C hostMat) {
	A = newHostMat(c.lay, c.m, c.k, c.pad, 1, 0)
	if c.tA != NoTrans {
		A = newHostMat(c.lay, c.k, c.m, c.pad, 1, 0)
	}
	B = newHostMat(c.lay, c.k, c.n, c.pad, 1, 0)
	if c.tB != NoTrans {
		B = newHostMat(c.lay, c.n, c.k, c.pad, 1, 0)
	}
	C = newHostMat(c.lay, c.m, c.n, c.pad, 1, 0)
	for _, x := range []*hostMat{&A, &B, &C} {
		x.shift(256/esz - x.off)
	}
	return
}

// runEpilogue runs c's Matmul on matrices of random values from r; aux
// (nil for a new one) is the Aux to read or write. A bias to add is
// random; a gradient's Buffer starts as 10⁴s, which it must overwrite. It returns false when cuBLASLt has no
// algorithm for the case (NOT_SUPPORTED): the caller decides whether
// that is allowed.
func runEpilogue[T MatmulScalar](t *testing.T, r *rand.Rand, h *Handle, s *core.Stream, c epiCase, aux *core.Buffer) (epiRun, bool) {
	t.Helper()
	e := elemOf[T]()
	A, B, C := epiMatrices(c, e.size)
	a, b, cv := random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
	cb := libtest.Upload(t, s, cv)
	info := epilogues[c.ep]
	run := epiRun{C: C, inner: c.m, out: c.n, tol: matmulTol[T](ComputeFloat32, c.k)}
	if c.lay == rowMajor {
		run.inner, run.out = c.n, c.m
	}
	opts := &MatmulOptions{Epilogue: c.ep, LdAux: c.ldAux}
	var biasBuf *core.Buffer
	var biasT []T
	if info.bias != noBias {
		n := run.inner
		switch info.bias {
		case biasGradA:
			n = c.m
		case biasGradB:
			n = c.n
		}
		if info.bias == biasIn {
			biasT = random[T](r, n)
		} else {
			biasT = make([]T, n)
			for i := range biasT {
				biasT[i] = fromC[T](complex(1e4, 0)) // overwritten
			}
		}
		biasBuf = libtest.Upload(t, s, biasT)
		opts.Bias = biasBuf
	}
	if info.aux != noAux {
		al := info.aux.align()
		run.auxLd = c.ldAux
		if run.auxLd == 0 {
			run.auxLd = (run.inner + al - 1) / al * al
		}
		if aux == nil {
			n := ((run.out-1)*run.auxLd + run.inner) * e.size
			if al == 128 {
				n = run.out * run.auxLd / 8
			}
			aux = libtest.Upload(t, s, make([]byte, n))
		}
		opts.Aux = aux
		run.aux = aux
	}
	fn := Matmul[T]
	if c.lay == rowMajor {
		fn = MatmulRowMajor[T]
	}
	err := fn(h, ComputeFloat32, c.tA, c.tB, c.m, c.n, c.k, c.alpha, A.view(t, libtest.Upload(t, s, a), e.size), A.ld, B.view(t, libtest.Upload(t, s, b), e.size), B.ld, c.beta, C.view(t, cb, e.size), C.ld, opts)
	if errors.Is(err, cublas.StatusNotSupported) {
		return run, false
	}
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	run.A, run.B, run.a, run.b = A, B, toCs(a), toCs(b)
	ref, bound := refGemm(c.tA, c.tB, c.m, c.n, c.k, complex(float64(c.alpha), 0), complex(float64(c.beta), 0), A, run.a, B, run.b, C, toCs(cv))
	run.x, run.xBound = make([]float64, len(ref)), bound
	for i, z := range ref {
		run.x[i] = real(z)
	}
	if info.bias == biasIn {
		for i := range c.m {
			for j := range c.n {
				bi := i
				if c.lay == rowMajor {
					bi = j
				}
				run.x[C.at(0, i, j)] += real(toC(biasT[bi]))
			}
		}
	}
	for _, v := range libtest.Download[T](t, cb, C.n) {
		run.got = append(run.got, real(toC(v)))
	}
	if biasBuf != nil {
		for _, v := range libtest.Download[T](t, biasBuf, len(biasT)) {
			run.bias = append(run.bias, real(toC(v)))
		}
	}
	return run, true
}

// elemTol is the tolerance of element x of the GEMM's result.
func (r *epiRun) elemTol(x int) float64 {
	return r.tol.rel*r.xBound[x] + 0x1p-23*math.Abs(r.x[x])
}

// lt is the index in cuBLASLt's column-major D (row, column) of C's
// element (i, j).
func (r *epiRun) lt(c epiCase, i, j int) (row, col int) {
	if c.lay == rowMajor {
		return j, i
	}
	return i, j
}

// checkForward checks C (and Aux) after a forward epilogue.
func checkForward[T MatmulScalar](t *testing.T, c epiCase, r epiRun) {
	t.Helper()
	info := epilogues[c.ep]
	bad := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%v: "+format, append([]any{c}, args...)...)
		if bad++; bad >= 5 {
			t.Fatalf("%v: stopping after 5 wrong elements", c)
		}
	}
	relu := c.ep == EpilogueReLU || c.ep == EpilogueReLUBias || c.ep == EpilogueReLUAux || c.ep == EpilogueReLUAuxBias
	isGELU := c.ep == EpilogueGELU || c.ep == EpilogueGELUBias || c.ep == EpilogueGELUAux || c.ep == EpilogueGELUAuxBias
	var geluIn []T
	if info.aux == geluInputOut {
		geluIn = libtest.Download[T](t, r.aux, (r.out-1)*r.auxLd+r.inner)
	}
	var mask []byte
	if info.aux == reluMaskOut {
		mask = libtest.Download[byte](t, r.aux, r.out*r.auxLd/8)
	}
	inMatrix := make([]bool, len(r.got))
	for i := range c.m {
		for j := range c.n {
			inMatrix[r.C.at(0, i, j)] = true
		}
	}
	for x := range r.got {
		if !inMatrix[x] {
			if r.got[x] != r.x[x] {
				fail("element %d outside C changed: %v, was %v", x, r.got[x], r.x[x])
			}
			continue
		}
		v, tol := r.x[x], r.elemTol(x)
		want := v
		switch {
		case relu:
			want = max(v, 0)
		case isGELU:
			want = gelu(v)
			tol = 1.13*tol + geluSlack(v)
		}
		if d, lim := math.Abs(r.got[x]-want), tol+r.tol.out*math.Abs(want)+r.tol.abs; !(d <= lim) {
			fail("element %d = %v, want %v (x = %v; off by %.3g, tolerance %.3g)", x, r.got[x], want, v, d, lim)
		}
	}
	// GELU's input, kept in Aux.
	for i := range c.m {
		for j := range c.n {
			if geluIn == nil {
				break
			}
			x := r.C.at(0, i, j)
			row, col := r.lt(c, i, j)
			got := real(toC(geluIn[row+col*r.auxLd]))
			if d, lim := math.Abs(got-r.x[x]), r.elemTol(x)+r.tol.out*math.Abs(r.x[x])+r.tol.abs; !(d <= lim) {
				fail("Aux(%d, %d) = %v, want GELU's input %v (off by %.3g, tolerance %.3g)", i, j, got, r.x[x], d, lim)
			}
		}
	}
	// ReLU's mask: per line of cuBLASLt's D, the number of bits set lies
	// between the number of clearly positive and of possibly positive x
	// (the order of the bits within the line is cuBLASLt's).
	if mask != nil {
		for col := range r.out {
			set := 0
			for row := range r.inner {
				b := col*r.auxLd + row
				set += int(mask[b/8] >> (b % 8) & 1)
			}
			lo, hi := 0, 0
			for row := range r.inner {
				i, j := row, col
				if c.lay == rowMajor {
					i, j = col, row
				}
				x := r.C.at(0, i, j)
				tol := r.elemTol(x) + r.tol.abs
				if r.x[x] > tol {
					lo++
				}
				if r.x[x] > -tol {
					hi++
				}
			}
			if set < lo || set > hi {
				fail("ReLU mask line %d: %d bits set of %d, want %d to %d (the positive x)", col, set, r.inner, lo, hi)
			}
		}
	}
}

var forwardEpilogues = []Epilogue{EpilogueNone, EpilogueBias, EpilogueReLU, EpilogueReLUBias, EpilogueGELU, EpilogueGELUBias, EpilogueReLUAux, EpilogueReLUAuxBias, EpilogueGELUAux, EpilogueGELUAuxBias}

// epiShapes are the shapes of the epilogue tests: leading dimensions that
// are multiples of 8 elements (16 bytes for 16-bit types), which every
// epilogue must take, then non-square ones with odd leading dimensions
// and an explicit LdAux, which cuBLASLt may refuse (logged).
func epiShapes(lay layout, ep Epilogue) (aligned, odd []epiCase) {
	for _, tt := range [][2]Transpose{{NoTrans, NoTrans}, {Trans, NoTrans}, {NoTrans, Trans}} {
		aligned = append(aligned, epiCase{lay: lay, ep: ep, tA: tt[0], tB: tt[1], m: 48, n: 40, k: 32, alpha: 1.5, beta: -0.5})
	}
	ld := 0
	if al := epilogues[ep].aux; al != noAux {
		inner := 37
		if lay == rowMajor {
			inner = 50
		}
		ld = (inner+al.align()-1)/al.align()*al.align() + al.align()
	}
	odd = []epiCase{
		{lay: lay, ep: ep, tA: NoTrans, tB: NoTrans, m: 37, n: 50, k: 29, pad: 1, ldAux: ld, alpha: 1.5, beta: -0.5},
		{lay: lay, ep: ep, tA: Trans, tB: Trans, m: 37, n: 50, k: 29, pad: 3, ldAux: ld, alpha: 1.5, beta: -0.5},
	}
	return
}

func epilogueForward[T MatmulScalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	refused := 0
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, ep := range forwardEpilogues {
			aligned, odd := epiShapes(lay, ep)
			ran := 0
			for _, c := range aligned {
				run, ok := runEpilogue[T](t, r, h, s, c, nil)
				if !ok {
					t.Logf("refused by cuBLASLt (NOT_SUPPORTED): %v", c)
					refused++
					continue
				}
				ran++
				checkForward[T](t, c, run)
			}
			if ran == 0 {
				t.Errorf("%v %v: cuBLASLt took none of the 16-byte-aligned shapes", ep, lay)
			}
			for _, c := range odd {
				run, ok := runEpilogue[T](t, r, h, s, c, nil)
				if !ok {
					t.Logf("refused by cuBLASLt (NOT_SUPPORTED): %v", c)
					refused++
					continue
				}
				checkForward[T](t, c, run)
			}
		}
	}
	t.Logf("%d cases of %d refused by cuBLASLt (NOT_SUPPORTED, listed above)", refused, 2*5*len(forwardEpilogues))
}

// TestGPUMatmulEpilogues: every forward epilogue against the CPU, for
// Half, BFloat16 and float32, both layouts, non-square shapes.
func TestGPUMatmulEpilogues(t *testing.T) {
	t.Run("Half", epilogueForward[Half])
	t.Run("BFloat16", epilogueForward[BFloat16])
	t.Run("float32", epilogueForward[float32])
}

// lineSums returns, per line of cuBLASLt's D (per row of a column-major
// C, per column of a row-major one), the sum of want over the line and
// the sum of the tolerances and magnitudes.
func lineSums(c epiCase, C hostMat, want, tol []float64) (sum, tolSum, absSum []float64) {
	inner := c.m
	if c.lay == rowMajor {
		inner = c.n
	}
	sum, tolSum, absSum = make([]float64, inner), make([]float64, inner), make([]float64, inner)
	for i := range c.m {
		for j := range c.n {
			l := i
			if c.lay == rowMajor {
				l = j
			}
			x := C.at(0, i, j)
			sum[l] += want[x]
			tolSum[l] += tol[x]
			absSum[l] += math.Abs(want[x])
		}
	}
	return
}

func epilogueBackward[T MatmulScalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, bw := range []struct{ fwd, bwd Epilogue }{
			{EpilogueReLUAuxBias, EpilogueDReLU}, {EpilogueReLUAux, EpilogueDReLUBGrad},
			{EpilogueGELUAuxBias, EpilogueDGELU}, {EpilogueGELUAux, EpilogueDGELUBGrad},
		} {
			for _, shape := range []struct{ m, n, k, k2, pad int }{{48, 40, 32, 24, 0}, {37, 50, 29, 19, 1}} {
				ld := 0
				if shape.pad != 0 {
					inner := shape.m
					if lay == rowMajor {
						inner = shape.n
					}
					al := epilogues[bw.fwd].aux.align()
					ld = (inner+al-1)/al*al + al
				}
				fc := epiCase{lay: lay, ep: bw.fwd, m: shape.m, n: shape.n, k: shape.k, pad: shape.pad, ldAux: ld, alpha: 1.5, beta: -0.5}
				fwd, ok := runEpilogue[T](t, r, h, s, fc, nil)
				if !ok {
					if shape.pad == 0 {
						t.Errorf("%v: cuBLASLt has no algorithm", fc)
					} else {
						t.Logf("refused by cuBLASLt (NOT_SUPPORTED): %v", fc)
					}
					continue
				}
				checkForward[T](t, fc, fwd)
				// The backward GEMM in the transposes cuBLASLt takes: the
				// first that runs is checked.
				ran := false
				for _, tt := range [][2]Transpose{{Trans, NoTrans}, {NoTrans, NoTrans}, {NoTrans, Trans}, {Trans, Trans}} {
					bc := epiCase{lay: lay, ep: bw.bwd, tA: tt[0], tB: tt[1], m: shape.m, n: shape.n, k: shape.k2, pad: shape.pad, ldAux: ld, alpha: 1.5, beta: 0}
					bwd, ok := runEpilogue[T](t, r, h, s, bc, fwd.aux)
					if !ok {
						t.Logf("refused by cuBLASLt (NOT_SUPPORTED): %v", bc)
						continue
					}
					checkBackward[T](t, bc, fwd, bwd)
					ran = true
					break
				}
				if !ran && shape.pad == 0 {
					t.Errorf("%v %v after %v: cuBLASLt took no transpose of the aligned shape", bw.bwd, lay, bw.fwd)
				}
			}
		}
	}
}

// checkBackward checks a DReLU or DGELU Matmul (bwd) against the forward
// pass that wrote its Aux (fwd).
func checkBackward[T MatmulScalar](t *testing.T, c epiCase, fwd, bwd epiRun) {
	t.Helper()
	info := epilogues[c.ep]
	relu := info.aux == reluMaskIn
	var geluIn []T
	if !relu {
		geluIn = libtest.Download[T](t, fwd.aux, (fwd.out-1)*fwd.auxLd+fwd.inner)
	}
	want := make([]float64, len(bwd.got))
	tol := make([]float64, len(bwd.got))
	bad := 0
	for i := range c.m {
		for j := range c.n {
			x := bwd.C.at(0, i, j)
			fx := fwd.C.at(0, i, j)
			v, vt := bwd.x[x], bwd.elemTol(x)
			if relu {
				ft := fwd.elemTol(fx) + fwd.tol.abs
				switch {
				case fwd.x[fx] > ft:
					want[x], tol[x] = v, vt
				case fwd.x[fx] < -ft:
					want[x], tol[x] = 0, 0
				default: // either: x or 0
					want[x], tol[x] = v/2, math.Abs(v)/2+vt
				}
			} else {
				row, col := fwd.lt(c, i, j)
				g := real(toC(geluIn[row+col*fwd.auxLd]))
				want[x] = v * geluGrad(g)
				tol[x] = 1.13*vt + math.Abs(v)*geluSlack(g)
			}
			lim := tol[x] + bwd.tol.out*math.Abs(want[x]) + bwd.tol.abs
			if d := math.Abs(bwd.got[x] - want[x]); !(d <= lim) {
				t.Errorf("%v: element (%d, %d) = %v, want %v (off by %.3g, tolerance %.3g)", c, i, j, bwd.got[x], want[x], d, lim)
				if bad++; bad >= 5 {
					t.Fatalf("%v: stopping after 5 wrong elements", c)
				}
			}
		}
	}
	if info.bias != biasGrad {
		return
	}
	sum, tolSum, absSum := lineSums(c, bwd.C, want, tol)
	for l := range sum {
		terms := c.n
		if c.lay == rowMajor {
			terms = c.m
		}
		lim := tolSum[l] + float64(terms+4)*0x1p-24*absSum[l] + bwd.tol.out*math.Abs(sum[l]) + bwd.tol.abs
		if d := math.Abs(bwd.bias[l] - sum[l]); !(d <= lim) {
			t.Errorf("%v: bias gradient[%d] = %v, want %v, the sum of the line's gradients (off by %.3g, tolerance %.3g)", c, l, bwd.bias[l], sum[l], d, lim)
		}
	}
}

// TestGPUMatmulEpilogueBackward: DReLU and DGELU (with and without the
// bias gradient) read the Aux their forward pass wrote.
func TestGPUMatmulEpilogueBackward(t *testing.T) {
	t.Run("Half", epilogueBackward[Half])
	t.Run("BFloat16", epilogueBackward[BFloat16])
	t.Run("float32", epilogueBackward[float32])
}

func epilogueBGrad[T MatmulScalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	for _, ep := range []Epilogue{EpilogueBGradA, EpilogueBGradB} {
		for _, lay := range []layout{colMajor, rowMajor} {
			ran := 0
			for _, tt := range [][2]Transpose{{NoTrans, NoTrans}, {Trans, NoTrans}, {NoTrans, Trans}, {Trans, Trans}} {
				for _, sh := range []struct{ m, n, k, pad int }{{48, 40, 32, 0}, {37, 50, 29, 1}} {
					c := epiCase{lay: lay, ep: ep, tA: tt[0], tB: tt[1], m: sh.m, n: sh.n, k: sh.k, pad: sh.pad, alpha: 1, beta: 0}
					run, ok := runEpilogue[T](t, r, h, s, c, nil)
					if !ok {
						t.Logf("refused by cuBLASLt (NOT_SUPPORTED): %v", c)
						continue
					}
					ran++
					checkForward[T](t, c, run)
					checkBGrad[T](t, c, run)
				}
			}
			if ran == 0 {
				t.Errorf("%v %v: cuBLASLt refused every transpose and shape", ep, lay)
			}
		}
	}
}

// checkBGrad checks the sums over k of op(A)'s rows (BGradA) or op(B)'s
// columns (BGradB).
func checkBGrad[T MatmulScalar](t *testing.T, c epiCase, r epiRun) {
	t.Helper()
	n := c.m
	if c.ep == EpilogueBGradB {
		n = c.n
	}
	for v := range n {
		var sum, abs float64
		for l := range c.k {
			var z complex128
			if c.ep == EpilogueBGradA {
				z = opAt(r.A, r.a, c.tA, 0, v, l)
			} else {
				z = opAt(r.B, r.b, c.tB, 0, l, v)
			}
			sum += real(z)
			abs += math.Abs(real(z))
		}
		lim := float64(c.k+4)*0x1p-24*abs + r.tol.out*math.Abs(sum) + r.tol.abs
		if d := math.Abs(r.bias[v] - sum); !(d <= lim) {
			t.Errorf("%v: bias gradient[%d] = %v, want %v (off by %.3g, tolerance %.3g)", c, v, r.bias[v], sum, d, lim)
		}
	}
}

// TestGPUMatmulBGrad: the bias gradients of A and B, in both layouts
// (row-major swaps cuBLASLt's BGRADA and BGRADB), for every transpose
// cuBLASLt takes; at least one must run.
func TestGPUMatmulBGrad(t *testing.T) {
	t.Run("Half", epilogueBGrad[Half])
	t.Run("BFloat16", epilogueBGrad[BFloat16])
	t.Run("float32", epilogueBGrad[float32])
}

func stridedMatmul[T MatmulScalar](t *testing.T) {
	_, s, h := gpu(t, nil)
	r := rng(t)
	e := elemOf[T]()
	for _, lay := range []layout{colMajor, rowMajor} {
		for _, broadcastB := range []bool{false, true} {
			for _, withBias := range []bool{false, true} {
				const batch, m, n, k = 3, 37, 24, 19
				A := newHostMat(lay, m, k, 1, batch, 5)
				nb := batch
				if broadcastB {
					nb = 1
				}
				B := newHostMat(lay, n, k, 0, nb, 0) // op(B) = Bᵀ
				C := newHostMat(lay, m, n, 2, batch, 3)
				for _, x := range []*hostMat{&A, &B, &C} {
					x.shift(256/e.size - x.off)
				}
				sb := int64(B.stride)
				if broadcastB {
					sb = 0
				}
				a, b, cv := random[T](r, A.n), random[T](r, B.n), random[T](r, C.n)
				cb := libtest.Upload(t, s, cv)
				opts := &MatmulOptions{Batch: batch, StrideA: int64(A.stride), StrideB: sb, StrideC: int64(C.stride)}
				inner := m
				if lay == rowMajor {
					inner = n
				}
				var bias []T
				if withBias {
					bias = random[T](r, batch*inner+4)
					opts.Epilogue, opts.Bias, opts.StrideBias = EpilogueBias, libtest.Upload(t, s, bias), int64(inner+2)
				}
				fn := Matmul[T]
				if lay == rowMajor {
					fn = MatmulRowMajor[T]
				}
				what := fmt.Sprintf("%v broadcastB=%v bias=%v", lay, broadcastB, withBias)
				if err := fn(h, ComputeFloat32, NoTrans, Trans, m, n, k, 1.5, A.view(t, libtest.Upload(t, s, a), e.size), A.ld, B.view(t, libtest.Upload(t, s, b), e.size), B.ld, -0.5, C.view(t, cb, e.size), C.ld, opts); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				ref, bound := refGemm(NoTrans, Trans, m, n, k, 1.5, -0.5, A, toCs(a), B, toCs(b), C, toCs(cv))
				if withBias {
					for bt := range batch {
						for i := range m {
							for j := range n {
								bi := i
								if lay == rowMajor {
									bi = j
								}
								ref[C.at(bt, i, j)] += toC(bias[bt*(inner+2)+bi])
							}
						}
					}
				}
				tol := matmulTol[T](ComputeFloat32, k)
				tol.out += 0x1p-23 // the bias, added in float32
				checkNear(t, what, libtest.Download[T](t, cb, C.n), ref, bound, tol)
			}
		}
	}
}

// TestGPUMatmulStridedBatched: batches of 3 with padded strides, one B
// for all (stride 0) or one each, one bias per GEMM.
func TestGPUMatmulStridedBatched(t *testing.T) {
	t.Run("Half", stridedMatmul[Half])
	t.Run("BFloat16", stridedMatmul[BFloat16])
	t.Run("float32", stridedMatmul[float32])
}
