package blas

import (
	"math/rand/v2"
	"testing"

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
			return Matmul[T](h, ct, NoTrans, NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n)
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
// Its C twin ("C") is a loop in C calling cublasSgemm_v2 on the same
// cuBLAS handle through the entry point the bindings resolve
// (internal/testing/ctwin), timed the same way: c-ns/op is its time per call.
func BenchmarkGemmSmall64(b *testing.B) {
	const n, chunk = 64, 500
	_, s, h := gpu(b, nil)
	a, bb, c := libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, make([]float32, n*n))
	gemm := func() error {
		return Gemm(h, NoTrans, NoTrans, n, n, n, float32(1), a, n, bb, n, float32(0), c, n)
	}
	b.Run("cudago", func(b *testing.B) {
		b.ReportAllocs()
		if err := gemm(); err != nil {
			b.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for done := 0; done < b.N; done += chunk {
			for range min(chunk, b.N-done) {
				if err := gemm(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := s.Sync(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("C", func(b *testing.B) {
		if err := gemm(); err != nil { // the handle exists
			b.Fatal(err)
		}
		ctx, sh, err := s.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer s.Release()
		pa, _ := a.Acquire()
		defer a.Release()
		pb, _ := bb.Acquire()
		defer bb.Release()
		pc, _ := c.Acquire()
		defer c.Release()
		b.ResetTimer()
		el, err := ctwin.SgemmLoop(ctx, sh, h.st.Handle().blas, n, pa, pb, pc, b.N, chunk)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "c-ns/op")
	})
}
