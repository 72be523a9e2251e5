package blas

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// The GEMM rows of issue 24, against bench/bench_torch_gemm.py (CuPy and
// PyTorch) with the same shapes and inputs: C = A·B row-major, A m×k,
// B k×n (FP8: B stored n×k, as torch._scaled_mm's column-major mat2).
// "const" inputs are ones on both sides; "random" are uniform in [-1, 1)
// (a repeating pattern here, torch.rand there: the values, not their
// order, set the power draw). Each sub-benchmark times b.N calls back to
// back after 3 warm-ups (the first tunes the shape); run it with
// -test.benchtime 20x for the sustained figure the Python side measures.
// scripts/gpu/gemm-bench.sh runs both sides and compares them.

var gemmShapes = []struct {
	name    string
	m, n, k int
}{{"8192x8192x8192", 8192, 8192, 8192}, {"4096x16384x4096", 4096, 16384, 4096}}

// benchFlops times b.N calls of f after three warm-ups, the stream drained
// before and after, and reports 2·m·n·k per call as TFLOP/s.
func benchFlops(b *testing.B, s *core.Stream, m, n, k int, f func() error) {
	for range 3 {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// onesBits is 1 in each element type, repeated to fill 32 bits (float64
// goes through the host: its bits do not repeat in 32).
func onesBits(e elem) uint32 {
	switch e.kind {
	case 'h':
		return 0x3c003c00
	case 'b':
		return 0x3f803f80
	case 's':
		return 0x3f800000
	case '4':
		return 0x38383838
	}
	panic("no 32-bit pattern for " + e.name)
}

// benchInput returns n elements of T on s: ones, or uniform in [-1, 1).
func benchInput[T anyType](b *testing.B, s *core.Stream, n int, random bool) *core.Buffer {
	b.Helper()
	e := elemOf[T]()
	switch {
	case random && e.fp8():
		f := fill[float32](n)
		v := make([]E4M3, n)
		for i, x := range f {
			v[i] = E4M3FromFloat32(x)
		}
		return libtest.Upload(b, s, v)
	case random:
		return libtest.Upload(b, s, fillAny[T](n))
	case e.kind == 'd':
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		return libtest.Upload(b, s, v)
	}
	buf, err := s.Device().Allocate(n*e.size, s)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Close() })
	if err := buf.Memset32Async(s, onesBits(e)); err != nil {
		b.Fatal(err)
	}
	return buf
}

// fillAny is fill for every element type of the benchmarks.
func fillAny[T anyType](n int) []T {
	var z T
	switch any(z).(type) {
	case Half:
		return any(fill[Half](n)).([]T)
	case BFloat16:
		return any(fill[BFloat16](n)).([]T)
	case float32:
		return any(fill[float32](n)).([]T)
	case float64:
		return any(fill[float64](n)).([]T)
	}
	panic("fillAny")
}

// ltCase is a Matmul of T (tuned, float32 compute), with an epilogue.
func ltCase[T MatmulScalar](m, n, k int, random bool, ep Epilogue) func(*testing.B) {
	return func(b *testing.B) {
		_, s, h := gpu(b, nil)
		a, bb, c := benchInput[T](b, s, m*k, random), benchInput[T](b, s, k*n, random), benchInput[T](b, s, m*n, false)
		var opts *MatmulOptions
		if ep != EpilogueNone {
			opts = &MatmulOptions{Epilogue: ep, Bias: benchInput[T](b, s, n, random)}
		}
		benchFlops(b, s, m, n, k, func() error {
			return MatmulRowMajor[T](h, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n, opts)
		})
	}
}

// blasCase is cuBLAS's SGEMM or DGEMM (float32 without TF32).
func blasCase[T float32 | float64](m, n, k int, random bool) func(*testing.B) {
	return func(b *testing.B) {
		_, s, h := gpu(b, nil)
		a, bb, c := benchInput[T](b, s, m*k, random), benchInput[T](b, s, k*n, random), benchInput[T](b, s, m*n, false)
		benchFlops(b, s, m, n, k, func() error {
			return GemmRowMajor[T](h, NoTrans, NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n)
		})
	}
}

// dgemmF32Values is DGEMM on float32 values widened to float64 (24 random
// mantissa bits of 53), the inputs the Python scripts once gave the
// float64 case: set beside the full-precision random case, it shows how
// much the FP64 units' speed depends on the bits they toggle.
func dgemmF32Values(m, n, k int) func(*testing.B) {
	return func(b *testing.B) {
		_, s, h := gpu(b, nil)
		widen := func(n int) *core.Buffer {
			v := make([]float64, n)
			for i, x := range fill[float32](n) {
				v[i] = float64(x)
			}
			return libtest.Upload(b, s, v)
		}
		a, bb, c := widen(m*k), widen(k*n), benchInput[float64](b, s, m*n, false)
		benchFlops(b, s, m, n, k, func() error {
			return GemmRowMajor[float64](h, NoTrans, NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n)
		})
	}
}

// fp8Bench is E4M3·E4M3 with a BFloat16 C and scales of 1 on the device,
// as torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16).
func fp8Bench(m, n, k int, random bool) func(*testing.B) {
	return func(b *testing.B) {
		_, s, h := gpu(b, nil)
		a, bb, c := benchInput[E4M3](b, s, m*k, random), benchInput[E4M3](b, s, n*k, random), benchInput[BFloat16](b, s, m*n, false)
		opts := &MatmulOptions{ScaleA: libtest.Upload(b, s, []float32{1}), ScaleB: libtest.Upload(b, s, []float32{1})}
		benchFlops(b, s, m, n, k, func() error {
			return MatmulFP8RowMajor[E4M3, E4M3, BFloat16](h, NoTrans, Trans, m, n, k, 1, a, k, bb, k, 0, c, n, opts)
		})
	}
}

// BenchmarkGEMM: the GEMM rows, named case/shape/inputs:
// float16, bfloat16 and float32 are Matmul (cuBLASLt, float32 compute,
// tuned; float32 without TF32), float32-sgemm and float64 are cuBLAS's
// SGEMM and DGEMM (Gemm), bfloat16-bias-gelu is Matmul with
// EpilogueGELUBias (a bias per column), fp8-e4m3-bf16 is MatmulFP8.
func BenchmarkGEMM(b *testing.B) {
	for _, sh := range gemmShapes {
		m, n, k := sh.m, sh.n, sh.k
		for _, random := range []bool{false, true} {
			if random && sh.m != 8192 {
				continue
			}
			in := "const"
			if random {
				in = "random"
			}
			name := func(c string) string { return fmt.Sprintf("%s/%s/%s", c, sh.name, in) }
			b.Run(name("float16"), ltCase[Half](m, n, k, random, EpilogueNone))
			b.Run(name("bfloat16"), ltCase[BFloat16](m, n, k, random, EpilogueNone))
			b.Run(name("float32"), ltCase[float32](m, n, k, random, EpilogueNone))
			b.Run(name("float32-sgemm"), blasCase[float32](m, n, k, random))
			b.Run(name("float64"), blasCase[float64](m, n, k, random))
			if random && sh.m == 8192 {
				b.Run(name("float64-f32values"), dgemmF32Values(m, n, k))
			}
			if sh.m == 8192 {
				b.Run(name("bfloat16-bias-gelu"), ltCase[BFloat16](m, n, k, random, EpilogueGELUBias))
				b.Run(name("fp8-e4m3-bf16"), fp8Bench(m, n, k, random))
			}
		}
	}
}

// BenchmarkGEMMCandidates asks the heuristic for up to 64 candidates of
// the float32 (no TF32) Matmul shapes, logs each one's tuning time, then
// times the heuristic's first and the four fastest that ran, each forced
// (asking for i+1 candidates, so that forcing the i-th times no more than
// it must), sustained: whether any algorithm beats the first.
func BenchmarkGEMMCandidates(b *testing.B) {
	for _, sh := range gemmShapes {
		b.Run("float32/"+sh.name, func(b *testing.B) {
			m, n, k := sh.m, sh.n, sh.k
			run := func(b *testing.B, force, nCand int) []time.Duration {
				tuned.forget()
				forceCandidate = force
				var times []time.Duration
				chosen := -1
				tuneHook = func(ev tuneEvent) {
					if ev.source == tuneMeasured {
						times, chosen = ev.times, ev.chosen
					}
				}
				defer func() { tuneHook, forceCandidate = nil, -1 }()
				candCase(b, m, n, k, nCand)
				// Candidate 0 asks for one candidate: it is the heuristic's
				// first, untimed, so no choice is reported.
				if force > 0 && chosen != force {
					b.Fatalf("forcing candidate %d chose %d", force, chosen)
				}
				return times
			}
			var times []time.Duration
			b.Run("all", func(b *testing.B) { times = run(b, -1, 64) })
			b.Logf("%d candidates: %v", len(times), times)
			var ran []int // the candidates that ran, fastest first
			for i, t := range times {
				if t >= 0 {
					ran = append(ran, i)
				}
			}
			slices.SortFunc(ran, func(x, y int) int { return cmp.Compare(times[x], times[y]) })
			try := []int{0}
			for _, i := range ran[:min(4, len(ran))] {
				if i != 0 {
					try = append(try, i)
				}
			}
			for _, i := range try {
				b.Run(fmt.Sprintf("cand%d", i), func(b *testing.B) { run(b, i, i+1) })
			}
		})
	}
}

func candCase(b *testing.B, m, n, k, nCand int) {
	_, s, h := gpu(b, &Options{MatmulCandidates: nCand})
	a, bb, c := benchInput[float32](b, s, m*k, true), benchInput[float32](b, s, k*n, true), benchInput[float32](b, s, m*n, false)
	benchFlops(b, s, m, n, k, func() error {
		return MatmulRowMajor[float32](h, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n, nil)
	})
}
