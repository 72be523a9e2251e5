package blas

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
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
// float32) against C loops on the same handles, matrices and stream. Each
// of 120 rounds (the first 4 untimed) runs 500 calls of every variant, in
// an order shuffled each round, each after the stream is drained: thousands
// of calls in a row would measure how fast the GPU empties a full queue
// (docs/benchmarks.md, "How the launch rows are timed"), and the shuffle
// gives every variant the same clocks and predecessors. The variants:
//
//	C             a C loop calling cublasSgemm_v2 (internal/testing/ctwin):
//	              the baseline
//	gemm          blas.Gemm (cublasSgemm)
//	C-percall     a Go loop of one-GEMM calls into that C loop: the cgo
//	              crossing and nothing of cudago
//	matmul        blas.Matmul (cuBLASLt, the Handle's cached plan)
//	C-lt          a C loop calling cublasLtMatmul with that plan: the same
//	              call as matmul's
//	C-lt-percall  a Go loop of one-matmul calls into it
//
// It reports each variant's median ns per call (name-ns), its median ratio
// to C in the same round (name/C), matmul's to C-lt (matmul/C-lt), the
// allocations of gemm and matmul, and cgo-ns, an empty cgo call. Run it
// with -test.benchtime 1x: one b.N is all the rounds.
func BenchmarkGemmSmall64(b *testing.B) {
	const n, chunk, rounds, warm = 64, 500, 120, 4
	_, s, h := gpu(b, nil)
	a, bb, c := libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, fill[float32](n*n)), libtest.Upload(b, s, make([]float32, n*n))
	gemm := func() error { return Gemm(h, NoTrans, NoTrans, n, n, n, float32(1), a, n, bb, n, float32(0), c, n) }
	matmul := func() error {
		return Matmul[float32](h, ComputeFloat32, NoTrans, NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n, nil)
	}
	for _, f := range []func() error{gemm, matmul} { // the handles, the plan
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	pl := h.plans.last.Load()
	if pl == nil {
		b.Fatal("Matmul left no plan")
	}
	ctx, hs, err := s.Acquire()
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
	lib := h.st.Handle()
	cLoop := func(m int) error { return ctwin.Sgemm(ctx, lib.blas, n, p[0], p[1], p[2], m) }
	ltLoop := func(m int) error {
		return ctwin.LtMatmul(ctx, uintptr(lib.lt), uintptr(pl.desc), uintptr(p[0]), uintptr(pl.a), uintptr(p[1]), uintptr(pl.b),
			uintptr(p[2]), uintptr(pl.c), unsafe.Pointer(&pl.algo), uintptr(libhandle.Addr(h.ws)), h.wsLen, hs, m)
	}
	perCall := func(f func() error) func(int) error {
		return func(m int) error {
			for range m {
				if err := f(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	vs := []struct {
		name string
		run  func(m int) error
	}{
		{"C", cLoop},
		{"gemm", perCall(gemm)},
		{"C-percall", perCall(func() error { return cLoop(1) })},
		{"matmul", perCall(matmul)},
		{"C-lt", ltLoop},
		{"C-lt-percall", perCall(func() error { return ltLoop(1) })},
	}
	ns := make([][]float64, len(vs))
	ratio := make([][]float64, len(vs))
	var mmLt []float64
	order := rand.New(rand.NewPCG(7, 8))
	for range b.N {
		for r := range rounds {
			t := make([]float64, len(vs))
			for _, i := range order.Perm(len(vs)) {
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := vs[i].run(chunk); err != nil {
					b.Fatalf("%s: %v", vs[i].name, err)
				}
				t[i] = float64(time.Since(t0).Nanoseconds()) / chunk
			}
			if r < warm {
				continue
			}
			for i := range vs {
				ns[i] = append(ns[i], t[i])
				ratio[i] = append(ratio[i], t[i]/t[0])
			}
			mmLt = append(mmLt, t[3]/t[4])
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	for i, v := range vs {
		b.ReportMetric(median(ns[i]), v.name+"-ns")
		if i > 0 {
			b.ReportMetric(median(ratio[i]), v.name+"/C")
		}
	}
	b.ReportMetric(median(mmLt), "matmul/C-lt")
	for _, v := range []struct {
		name string
		f    func() error
	}{{"gemm", gemm}, {"matmul", matmul}} {
		if err := v.f(); err != nil {
			b.Fatalf("%s: %v", v.name, err)
		}
		b.ReportMetric(testing.AllocsPerRun(1000, func() { v.f() }), v.name+"-allocs")
	}
	t0 := time.Now()
	for range 1 << 20 {
		ctwin.Empty()
	}
	b.ReportMetric(float64(time.Since(t0).Nanoseconds())/(1<<20), "cgo-ns")
}
