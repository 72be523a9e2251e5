package blas

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/ctwin"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// fill returns n pseudo-random values in [-1, 1) of T, cheaply (the
// 8192² matrices have 67M elements).
func fill[T anyElem](n int) []T {
	out := make([]T, n)
	r := rand.New(rand.NewPCG(1, 2))
	pattern := random[T](r, 1<<16)
	for i := range out {
		out[i] = pattern[(i*7919)&(1<<16-1)]
	}
	return out
}

// benchTFLOPs times b.N calls of gemm, an n×n×n GEMM queued on s: the
// stream is drained before the timer starts and before it stops, so the
// time is the GPU's, and 2n³ floating-point operations per call give
// TFLOP/s.
func benchTFLOPs(b *testing.B, s *core.Stream, n int, gemm func() error) {
	for range 3 { // plans, heuristics, clocks
		if err := gemm(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := gemm(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	flops := 2 * float64(n) * float64(n) * float64(n) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

func gemm8192[T Scalar](b *testing.B) {
	const n = 8192
	_, s, h := gpu(b, nil)
	a, bb, c := libtest.Upload(b, s, fill[T](n*n)), libtest.Upload(b, s, fill[T](n*n)), libtest.Upload(b, s, make([]T, n*n))
	var one, zero T
	one += 1
	benchTFLOPs(b, s, n, func() error {
		return Gemm(h, NoTrans, NoTrans, n, n, n, one, a, n, bb, n, zero, c, n)
	})
}

func matmul8192[T MatmulScalar](ct ComputeType) func(*testing.B) {
	return func(b *testing.B) {
		const n = 8192
		_, s, h := gpu(b, nil)
		a, bb, c := libtest.Upload(b, s, fill[T](n*n)), libtest.Upload(b, s, fill[T](n*n)), libtest.Upload(b, s, make([]T, n*n))
		benchTFLOPs(b, s, n, func() error {
			return Matmul[T](h, ct, NoTrans, NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n, nil)
		})
	}
}

// BenchmarkGemm8192: C = A·B of 8192×8192 matrices. float32 and float64
// are cuBLAS's SGEMM and DGEMM (float32 without TF32); float16 and
// bfloat16 are Matmul through cuBLASLt with float32 accumulation
// (ComputeFloat32), as CuPy's and PyTorch's defaults; tf32 is float32
// through cuBLASLt with ComputeTF32, for comparison.
func BenchmarkGemm8192(b *testing.B) {
	b.Run("float32", gemm8192[float32])
	b.Run("float64", gemm8192[float64])
	b.Run("float16", matmul8192[Half](ComputeFloat32))
	b.Run("bfloat16", matmul8192[BFloat16](ComputeFloat32))
	b.Run("tf32", matmul8192[float32](ComputeTF32))
}

// BenchmarkGemm8192Unrestricted is the 16-bit cases of BenchmarkGemm8192
// with the heuristic free to pick split-K reductions in 16 bits (as CuPy
// and PyTorch leave it), to measure what restricting them costs.
func BenchmarkGemm8192Unrestricted(b *testing.B) {
	restrictReduction = false
	defer func() { restrictReduction = true }()
	b.Run("float16", matmul8192[Half](ComputeFloat32))
	b.Run("bfloat16", matmul8192[BFloat16](ComputeFloat32))
}

// BenchmarkGemmSmall64 is the CPU cost of one small GEMM call (64×64×64
// float32, cuBLAS's SGEMM): the calls are queued back to back and the
// stream is drained every 500 calls, untimed, as bench/ times launches
// (docs/benchmarks.md, "How the launch rows are timed"): timing
// thousands of calls in a row would measure how fast the GPU empties a
// full queue instead.
//
// "cudago" is Gemm; "C" is its C twin, a loop in C calling cublasSgemm_v2
// on the same cuBLAS handle, matrices and stream through the entry point
// the bindings resolve (internal/testing/ctwin), timed the same way: ns/op and
// allocs/op of each. "interleaved" alternates a chunk of each, so that
// both meet the same clocks and neighbours: its ns/op is cudago's, c-ns/op
// the C twin's, and x-C the ratio, the target (at most 1.03).
func BenchmarkGemmSmall64(b *testing.B) {
	const n, chunk = 64, 500
	_, s, h := gpu(b, nil)
	a, bb, c := libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, make([]float32, n*n))
	goSide := func(m int) error {
		for range m {
			if err := Gemm(h, NoTrans, NoTrans, n, n, n, float32(1), a, n, bb, n, float32(0), c, n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := goSide(1); err != nil { // the handle exists
		b.Fatal(err)
	}
	ctx, _, err := s.Acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Release()
	var p [3]driver.Deviceptr
	for i, buf := range []*core.Buffer{a, bb, c} {
		if p[i], err = buf.Acquire(); err != nil {
			b.Fatal(err)
		}
		defer buf.Release()
	}
	cSide := func(m int) error { return ctwin.Sgemm(ctx, h.st.Handle().blas, n, p[0], p[1], p[2], m) }
	chunked := func(b *testing.B, run func(m int) error) {
		b.ReportAllocs()
		if err := run(1); err != nil {
			b.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for done := 0; done < b.N; done += chunk {
			if err := run(min(chunk, b.N-done)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := s.Sync(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("cudago", func(b *testing.B) { chunked(b, goSide) })
	b.Run("C", func(b *testing.B) { chunked(b, cSide) })
	// "C-percall" is the C twin entered once per GEMM from a Go loop: the
	// cgo crossing and the thread's context check of every call, without
	// cudago's checks and holds. cudago - C-percall is cudago's Go side;
	// C-percall - C is what crossing from Go costs each call.
	b.Run("C-percall", func(b *testing.B) {
		chunked(b, func(m int) error {
			for range m {
				if err := cSide(1); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("interleaved", func(b *testing.B) {
		var cTime time.Duration
		var cCalls int
		chunked(b, func(m int) error {
			if err := goSide(m); err != nil {
				return err
			}
			b.StopTimer()
			defer b.StartTimer()
			if err := s.Sync(); err != nil {
				return err
			}
			t0 := time.Now()
			err := cSide(m)
			cTime += time.Since(t0)
			cCalls += m
			return err
		})
		cNs := float64(cTime.Nanoseconds()) / float64(cCalls)
		b.ReportMetric(cNs, "c-ns/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cNs, "x-C")
	})
}
