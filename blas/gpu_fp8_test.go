package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// fp8Info is what the FP8 test needs of an element type: conversions
// through float64 and its precision.
type fp8Info struct {
	name string
	size int
	from func(float64) any // a value of the type
	val  func(any) float64
	unit float64 // unit roundoff
	tiny float64 // half the smallest subnormal
	fp8  bool
}

func infoOf[T FP8Result | FP8]() fp8Info {
	var z T
	switch any(z).(type) {
	case E4M3:
		return fp8Info{"E4M3", 1, func(f float64) any { return E4M3FromFloat32(float32(f)) }, func(v any) float64 { return float64(v.(E4M3).Float32()) }, 0x1p-4, 0x1p-10, true}
	case E5M2:
		return fp8Info{"E5M2", 1, func(f float64) any { return E5M2FromFloat32(float32(f)) }, func(v any) float64 { return float64(v.(E5M2).Float32()) }, 0x1p-3, 0x1p-17, true}
	case Half:
		return fp8Info{"Half", 2, func(f float64) any { return HalfFromFloat32(float32(f)) }, func(v any) float64 { return float64(v.(Half).Float32()) }, 0x1p-11, 0x1p-25, false}
	case BFloat16:
		return fp8Info{"BFloat16", 2, func(f float64) any { return BFloat16FromFloat32(float32(f)) }, func(v any) float64 { return float64(v.(BFloat16).Float32()) }, 0x1p-8, 0x1p-134, false}
	}
	return fp8Info{"float32", 4, func(f float64) any { return float32(f) }, func(v any) float64 { return float64(v.(float32)) }, 0, 0x1p-150, false}
}

// fp8Data returns n values of T, uniform in [-1, 1) before rounding, and
// their values.
func fp8Data[T FP8Result | FP8](r *rand.Rand, n int) ([]T, []complex128) {
	in := infoOf[T]()
	out, vals := make([]T, n), make([]complex128, n)
	for i := range out {
		out[i] = in.from(2*r.Float64() - 1).(T)
		vals[i] = complex(in.val(out[i]), 0)
	}
	return out, vals
}

type fp8Case struct {
	lay         layout
	m, n, k     int
	batch       int
	alpha, beta float32
	sa, sb, sd  float32 // 0: no scale
	amax        bool
	ep          Epilogue
	fast        bool
}

func (c fp8Case) String() string {
	return fmt.Sprintf("%v m=%d n=%d k=%d batch=%d alpha=%v beta=%v scales %v,%v,%v amax=%v %v fast=%v", c.lay, c.m, c.n, c.k, c.batch, c.alpha, c.beta, c.sa, c.sb, c.sd, c.amax, c.ep, c.fast)
}

// runFP8 runs one FP8 Matmul of random inputs and checks C (and the amax)
// against the CPU within FP8's precision: the inputs are exact FP8
// values, summed in float64 here; cuBLASLt's tensor cores keep about 14
// bits of each partial sum between its promotions to float32 (Hopper), so
// the sums may be off by k·2⁻¹³ of Σ|a·b|; then C is rounded once.
func runFP8[TA, TB FP8, TC FP8Result](t *testing.T, h *Handle, s *core.Stream, c fp8Case) {
	t.Helper()
	ia, ib, ic := infoOf[TA](), infoOf[TB](), infoOf[TC]()
	what := fmt.Sprintf("%s·%s→%s %v", ia.name, ib.name, ic.name, c)
	batch := max(c.batch, 1)
	// TN: k contiguous in A and B.
	A := newHostMat(c.lay, c.k, c.m, 0, batch, 16)
	B := newHostMat(c.lay, c.k, c.n, 0, batch, 16)
	tA, tB := Trans, NoTrans
	if c.lay == rowMajor {
		A = newHostMat(c.lay, c.m, c.k, 0, batch, 16)
		B = newHostMat(c.lay, c.n, c.k, 0, batch, 16)
		tA, tB = NoTrans, Trans
	}
	C := newHostMat(c.lay, c.m, c.n, 0, batch, 16/ic.size)
	A.shift(256 - A.off)
	B.shift(256 - B.off)
	C.shift(256/ic.size - C.off)
	r := rng(t)
	a, av := fp8Data[TA](r, A.n)
	b, bv := fp8Data[TB](r, B.n)
	var cb *core.Buffer
	cv := make([]complex128, C.n)
	if ic.fp8 {
		cb = libtest.Upload(t, s, make([]TC, C.n))
	} else {
		var cs []TC
		cs, cv = fp8Data[TC](r, C.n)
		cb = libtest.Upload(t, s, cs)
	}
	opts := &MatmulOptions{Epilogue: c.ep, FastAccum: c.fast}
	if batch > 1 {
		opts.Batch, opts.StrideA, opts.StrideB, opts.StrideC = batch, int64(A.stride), int64(B.stride), int64(C.stride)
	}
	scale := func(v float32) *core.Buffer {
		if v == 0 {
			return nil
		}
		return libtest.Upload(t, s, []float32{v})
	}
	opts.ScaleA, opts.ScaleB, opts.ScaleD = scale(c.sa), scale(c.sb), scale(c.sd)
	var amax *core.Buffer
	if c.amax {
		amax = libtest.Upload(t, s, []float32{-1})
		opts.AmaxD = amax
	}
	inner := c.m
	if c.lay == rowMajor {
		inner = c.n
	}
	var bias []float64 // small integers, exact in BFloat16 and Half
	if c.ep == EpilogueBias || c.ep == EpilogueReLUBias || c.ep == EpilogueGELUBias {
		b16, h16 := make([]BFloat16, inner), make([]Half, inner)
		for i := range inner {
			bias = append(bias, float64(i%7-3))
			b16[i], h16[i] = BFloat16FromFloat32(float32(bias[i])), HalfFromFloat32(float32(bias[i]))
		}
		if ic.name == "Half" { // the bias is Half with a Half C, BFloat16 otherwise
			opts.Bias = libtest.Upload(t, s, h16)
		} else {
			opts.Bias = libtest.Upload(t, s, b16)
		}
	}
	fn := MatmulFP8[TA, TB, TC]
	if c.lay == rowMajor {
		fn = MatmulFP8RowMajor[TA, TB, TC]
	}
	if err := fn(h, tA, tB, c.m, c.n, c.k, c.alpha, A.view(t, libtest.Upload(t, s, a), 1), A.ld, B.view(t, libtest.Upload(t, s, b), 1), B.ld, c.beta, C.view(t, cb, ic.size), C.ld, opts); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	sa, sb, sd := float64(c.sa), float64(c.sb), float64(c.sd)
	for _, p := range []*float64{&sa, &sb, &sd} {
		if *p == 0 {
			*p = 1
		}
	}
	ref, bound := refGemm(tA, tB, c.m, c.n, c.k, complex(float64(c.alpha)*sa*sb, 0), complex(float64(c.beta), 0), A, av, B, bv, C, cv)
	got := libtest.Download[TC](t, cb, C.n)
	rel := float64(c.k)*0x1p-13 + float64(c.k+4)*0x1p-24
	var wantAmax, amaxTol float64
	bad := 0
	for bt := range batch {
		for i := range c.m {
			for j := range c.n {
				x := C.at(bt, i, j)
				v, tol := real(ref[x]), rel*bound[x]
				if bias != nil {
					bi := i
					if c.lay == rowMajor {
						bi = j
					}
					v += bias[bi]
				}
				switch c.ep {
				case EpilogueReLU, EpilogueReLUBias:
					v = max(v, 0)
				case EpilogueGELU, EpilogueGELUBias:
					v, tol = gelu(v), 1.13*tol+geluSlack(v)
				}
				if math.Abs(v)+tol > wantAmax+amaxTol {
					wantAmax, amaxTol = math.Abs(v), tol
				}
				want := v
				if ic.fp8 {
					want, tol = sd*v, sd*tol
				}
				g := ic.val(got[x])
				if d, lim := math.Abs(g-want), tol+ic.unit*math.Abs(want)+2*ic.tiny; !(d <= lim) {
					t.Errorf("%s: C[%d](%d, %d) = %v, want %v (off by %.3g, tolerance %.3g)", what, bt, i, j, g, want, d, lim)
					if bad++; bad >= 5 {
						t.Fatalf("%s: stopping after 5 wrong elements", what)
					}
				}
			}
		}
	}
	if c.amax {
		g := float64(libtest.Download[float32](t, amax, 1)[0])
		if d := math.Abs(g - wantAmax); !(d <= amaxTol+0x1p-20*wantAmax) {
			t.Errorf("%s: amax of D = %v, want %v (tolerance %.3g)", what, g, wantAmax, amaxTol)
		}
	}
}

// TestGPUMatmulFP8: E4M3 and E5M2 inputs with per-tensor scales, every
// kind of result, bias and activation epilogues, batches, both layouts,
// against the CPU within FP8's precision. Skipped before compute
// capability 8.9.
func TestGPUMatmulFP8(t *testing.T) {
	d, s, h := gpu(t, nil)
	if major, minor := d.ComputeCapability(); major*10+minor < 89 {
		t.Skipf("FP8 Matmuls need compute capability 8.9 (sm_89) or newer; %v is sm_%d%d", d, major, minor)
	}
	const m, n, k = 48, 64, 80 // every leading dimension a multiple of 16 bytes
	col, row := colMajor, rowMajor
	t.Run("E4M3·E4M3→BFloat16", func(t *testing.T) {
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: col, m: m, n: n, k: k, alpha: 1.5, beta: -0.5, sa: 0.5, sb: 4})
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, alpha: 1, sa: 2})
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, alpha: 1, ep: EpilogueReLUBias})
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: col, m: m, n: n, k: k, alpha: 1, ep: EpilogueGELUBias, sb: 0.25})
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: col, m: m, n: n, k: 256, alpha: 1, fast: true})
		runFP8[E4M3, E4M3, BFloat16](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, batch: 3, alpha: 1, beta: 1, sa: 0.5})
	})
	t.Run("E4M3·E5M2→Half", func(t *testing.T) {
		runFP8[E4M3, E5M2, Half](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, alpha: 1, sa: 0.5, sb: 2})
		runFP8[E4M3, E5M2, Half](t, h, s, fp8Case{lay: col, m: m, n: n, k: k, alpha: 1, ep: EpilogueBias})
	})
	t.Run("E5M2·E4M3→float32", func(t *testing.T) {
		runFP8[E5M2, E4M3, float32](t, h, s, fp8Case{lay: col, m: m, n: n, k: k, alpha: 1, beta: 0.5, ep: EpilogueGELU})
	})
	t.Run("E4M3·E4M3→E4M3", func(t *testing.T) {
		runFP8[E4M3, E4M3, E4M3](t, h, s, fp8Case{lay: col, m: m, n: n, k: k, alpha: 1, sa: 0.5, sb: 0.5, sd: 16, amax: true})
		runFP8[E4M3, E4M3, E4M3](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, alpha: 1, sd: 4, amax: true, ep: EpilogueReLU})
	})
	t.Run("E4M3·E5M2→E5M2", func(t *testing.T) {
		runFP8[E4M3, E5M2, E5M2](t, h, s, fp8Case{lay: row, m: m, n: n, k: k, alpha: 1, sd: 0.5, amax: true})
	})
}
