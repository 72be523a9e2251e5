package fakelib_test

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/blas"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/fft"
	"github.com/cudago/cudago/internal/testing/ctwin"
	"github.com/cudago/cudago/internal/testing/fakelib"
	"github.com/cudago/cudago/pathfinder"
)

// buildErr is why the fakes could not be built (no C compiler): the tests
// and benchmarks then skip.
var buildErr error

// TestMain builds the fakes and points pathfinder at them before anything
// loads a library: every test of this binary runs against them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakelib")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildErr = fakelib.Setenv(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env returns a stream on the fake device 0, closed at the end.
func env(tb testing.TB) (*core.Device, *core.Stream) {
	tb.Helper()
	if buildErr != nil {
		tb.Skipf("no fakes: %v", buildErr)
	}
	dev, err := core.GetDevice(0)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return dev, s
}

func alloc(tb testing.TB, dev *core.Device, s *core.Stream, n int) *core.Buffer {
	tb.Helper()
	b, err := dev.Allocate(n, s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

func counted(tb testing.TB, l pathfinder.Lib) int64 {
	tb.Helper()
	n, err := fakelib.Calls(l)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// gemmEnv is a Handle and three 64×64 float32 matrices on the fakes.
type gemmEnv struct {
	s       *core.Stream
	h       *blas.Handle
	a, b, c *core.Buffer
}

const n64 = 64

func newGemmEnv(tb testing.TB) *gemmEnv {
	dev, s := env(tb)
	h, err := blas.New(s, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	size := n64 * n64 * 4
	return &gemmEnv{s, h, alloc(tb, dev, s, size), alloc(tb, dev, s, size), alloc(tb, dev, s, size)}
}

func (e *gemmEnv) gemm() error {
	return blas.Gemm(e.h, blas.NoTrans, blas.NoTrans, n64, n64, n64, float32(1), e.a, n64, e.b, n64, float32(0), e.c, n64)
}

// TestGemm checks that each blas.Gemm reaches cublasSgemm once, with its
// arguments as cuBLAS takes them, and allocates nothing.
func TestGemm(t *testing.T) {
	e := newGemmEnv(t)
	before := counted(t, pathfinder.CuBLAS)
	for range 3 {
		if err := blas.Gemm(e.h, blas.Trans, blas.NoTrans, 3, 4, 5, float32(2), e.a, 7, e.b, 6, float32(0.5), e.c, 8); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted(t, pathfinder.CuBLAS) - before; n != 3 {
		t.Errorf("3 Gemm calls reached cublasSgemm %d times", n)
	}
	last, err := fakelib.Last(pathfinder.CuBLAS)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{fakelib.Handle, int64(cublas.OpT), int64(cublas.OpN), 3, 4, 5, int64(math.Float32bits(2)),
		int64(e.a.Ptr()), 7, int64(e.b.Ptr()), 6, int64(math.Float32bits(0.5)), int64(e.c.Ptr()), 8}
	if fmt.Sprint(last) != fmt.Sprint(want) {
		t.Errorf("cublasSgemm's arguments (handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):\n%v, want\n%v", last, want)
	}
	if raceEnabled {
		return // the race detector allocates
	}
	if a := testing.AllocsPerRun(1000, func() { e.gemm() }); a != 0 {
		t.Errorf("%v allocations per Gemm", a)
	}
}

// fftEnv is env with a plan cache on its stream, closed at the end: the
// start of the FFT test and benchmark.
func fftEnv(tb testing.TB) (*core.Device, *core.Stream, *fft.Cache) {
	dev, s := env(tb)
	c, err := fft.New(s, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return dev, s, c
}

// TestFFTForward checks that each Plan.Forward reaches cufftExecC2C (and
// an R2C plan's cufftExecR2C) once, with the plan's handle and the
// Buffers' addresses, and allocates nothing.
func TestFFTForward(t *testing.T) {
	dev, s, c := fftEnv(t)
	for _, d := range []fft.Desc{{Shape: []int{1 << 10}}, {Shape: []int{1 << 10}, Type: fft.R2C}} {
		p, err := c.Plan(d)
		if err != nil {
			t.Fatal(err)
		}
		if p.WorkSize() < 1<<20 {
			t.Errorf("%v: work area of %d bytes; the fake plan asks for 1 MiB", d.Type, p.WorkSize())
		}
		ib, ob := p.Bytes()
		in, out := alloc(t, dev, s, ib), alloc(t, dev, s, ob)
		before := counted(t, pathfinder.CuFFT)
		for range 3 {
			if err := p.Forward(in, out); err != nil {
				t.Fatal(err)
			}
		}
		if n := counted(t, pathfinder.CuFFT) - before; n != 3 {
			t.Errorf("%v: 3 Forward calls reached cuFFT %d times", d.Type, n)
		}
		last, err := fakelib.Last(pathfinder.CuFFT)
		if err != nil {
			t.Fatal(err)
		}
		kind, dir := int64(cufft.C2C), int64(cufft.Forward)
		if d.Type == fft.R2C {
			kind = int64(cufft.R2C)
		}
		if last[1] != int64(in.Ptr()) || last[2] != int64(out.Ptr()) || last[3] != dir || last[4] != kind {
			t.Errorf("%v: cuFFT's exec got (plan, in, out, direction, type) %x; want in %x, out %x, direction %d, type %#x",
				d.Type, last, in.Ptr(), out.Ptr(), dir, kind)
		}
		if !raceEnabled {
			if a := testing.AllocsPerRun(1000, func() { p.Forward(in, out) }); a != 0 {
				t.Errorf("%v: %v allocations per Forward", d.Type, a)
			}
		}
	}
}

// chunked times run(m) for b.N calls in chunks of 500, as blas's
// BenchmarkGemmSmall64 does on a GPU; there it drains the stream between
// chunks, untimed, which the fakes need not.
func chunked(b *testing.B, run func(m int) error) {
	const chunk = 500
	b.ReportAllocs()
	if err := run(1); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		if err := run(min(chunk, b.N-done)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGemmSmall64 is blas's BenchmarkGemmSmall64 against the fake
// cuBLAS, whose cublasSgemm returns at once: "cudago" times blas.Gemm,
// "C" the C twin (a C loop calling the same fake entry point), and
// "interleaved" alternates chunks of both and reports go-ns (cudago's time
// per call less C's): what the Go side adds to each call, which on a GPU
// machine is part of the difference between gemm and C-percall in
// blas.BenchmarkGemmSmall64.
func BenchmarkGemmSmall64(b *testing.B) {
	e := newGemmEnv(b)
	goSide := func(m int) error {
		for range m {
			if err := e.gemm(); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, _, err := e.s.Acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer e.s.Release()
	p := [3]driver.Deviceptr{e.a.Ptr(), e.b.Ptr(), e.c.Ptr()}
	cSide := func(m int) error { return ctwin.Sgemm(ctx, fakelib.Handle, n64, p[0], p[1], p[2], m) }
	b.Run("cudago", func(b *testing.B) { chunked(b, goSide) })
	b.Run("C", func(b *testing.B) { chunked(b, cSide) })
	b.Run("interleaved", func(b *testing.B) {
		var cTime time.Duration
		var cCalls int
		chunked(b, func(m int) error {
			if err := goSide(m); err != nil {
				return err
			}
			b.StopTimer()
			defer b.StartTimer()
			t0 := time.Now()
			err := cSide(m)
			cTime += time.Since(t0)
			cCalls += m
			return err
		})
		cNs := float64(cTime.Nanoseconds()) / float64(cCalls)
		b.ReportMetric(cNs, "c-ns/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)-cNs, "go-ns/op")
	})
}

// BenchmarkFFTForward is the CPU cost of one Plan.Forward (complex64 C2C)
// against the fake cuFFT, and of the C twin's cufftExecC2C on the same
// plan.
func BenchmarkFFTForward(b *testing.B) {
	dev, s, c := fftEnv(b)
	p, err := c.Plan(fft.Desc{Shape: []int{1 << 10}})
	if err != nil {
		b.Fatal(err)
	}
	ib, ob := p.Bytes()
	in, out := alloc(b, dev, s, ib), alloc(b, dev, s, ob)
	ctx, _, err := s.Acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Release()
	b.Run("cudago", func(b *testing.B) {
		chunked(b, func(m int) error {
			for range m {
				if err := p.Forward(in, out); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("C", func(b *testing.B) {
		// The fake ignores the plan handle; the C twin of a GPU run takes
		// the plan's own (fft's BenchmarkFFT*/C).
		chunked(b, func(m int) error {
			return ctwin.FFTExec(ctx, 1, cufft.C2C, in.Ptr(), out.Ptr(), cufft.Forward, m)
		})
	})
}

func (e *gemmEnv) matmul() error {
	return blas.Matmul[float32](e.h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, n64, n64, n64, 1, e.a, n64, e.b, n64, 0, e.c, n64, nil)
}

// TestMatmul checks that each blas.Matmul reaches cublasLtMatmul once,
// with the Buffers' addresses, its scalars, layouts of the shape asked for
// and the heuristic's algorithm, that the shape is planned once, and that
// a planned Matmul allocates nothing.
func TestMatmul(t *testing.T) {
	e := newGemmEnv(t)
	const m, n, k = 8, 4, 16 // column-major: A m×k, B k×n, C m×n
	mm := func() error {
		return blas.Matmul[float32](e.h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, m, n, k, 2, e.a, m, e.b, k, 0.5, e.c, m, nil)
	}
	before := counted(t, pathfinder.CuBLASLt)
	for range 3 {
		if err := mm(); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted(t, pathfinder.CuBLASLt) - before; n != 3 {
		t.Errorf("3 Matmul calls reached cublasLtMatmul %d times", n)
	}
	last, err := fakelib.Last(pathfinder.CuBLASLt)
	if err != nil {
		t.Fatal(err)
	}
	shape := func(l int64) [2]int64 { return [2]int64{l >> 40, l >> 20 & 0xfffff} }
	got := []any{math.Float32frombits(uint32(last[1])), last[2], shape(last[3]), last[4], shape(last[5]),
		math.Float32frombits(uint32(last[6])), last[7], shape(last[8]), last[9], last[10] == last[8], last[11]}
	want := []any{float32(2), int64(e.a.Ptr()), [2]int64{m, k}, int64(e.b.Ptr()), [2]int64{k, n},
		float32(0.5), int64(e.c.Ptr()), [2]int64{m, n}, int64(e.c.Ptr()), true, int64(0xa160)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cublasLtMatmul's (alpha, a, A's rows×cols, b, B's, beta, c, C's, d, D's layout is C's, algo):\n%v, want\n%v", got, want)
	}
	descs := last[14]
	for range 3 {
		if err := mm(); err != nil {
			t.Fatal(err)
		}
	}
	if last, err = fakelib.Last(pathfinder.CuBLASLt); err != nil || last[14] != descs {
		t.Errorf("a known shape made %d more matmul descriptors (%v)", last[14]-descs, err)
	}
	if raceEnabled {
		return // the race detector allocates
	}
	if a := testing.AllocsPerRun(1000, func() { e.matmul() }); a != 0 {
		t.Errorf("%v allocations per Matmul", a)
	}
}

// TestMatmulShapesConcurrent runs Matmuls of two shapes, alternately,
// from four goroutines on one Handle: the plan used last changes under
// them (run with -race), and every call still reaches cublasLtMatmul once.
func TestMatmulShapesConcurrent(t *testing.T) {
	e := newGemmEnv(t)
	before := counted(t, pathfinder.CuBLASLt)
	const workers, calls = 4, 200
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for i := range calls {
				n := n64 - 32*((i+w)%2) // 64 or 32
				if err = blas.Matmul[float32](e.h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, n, n, n, 1, e.a, n, e.b, n, 0, e.c, n, nil); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := counted(t, pathfinder.CuBLASLt) - before; n != workers*calls {
		t.Errorf("%d Matmul calls reached cublasLtMatmul %d times", workers*calls, n)
	}
}

// BenchmarkMatmulSmall64 is BenchmarkGemmSmall64 for blas.Matmul
// (float32, 64³, a cached plan) against a C loop of the fake
// cublasLtMatmul: cudago's ns/op less C's is what Matmul's Go side adds
// to each call.
func BenchmarkMatmulSmall64(b *testing.B) {
	e := newGemmEnv(b)
	goSide := func(m int) error {
		for range m {
			if err := e.matmul(); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, s, err := e.s.Acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer e.s.Release()
	var algo [8]uint64
	cSide := func(m int) error {
		return ctwin.LtMatmul(ctx, 0x17, 0x1000, uintptr(e.a.Ptr()), 0x1001, uintptr(e.b.Ptr()), 0x1002, uintptr(e.c.Ptr()), 0x1003,
			unsafe.Pointer(&algo), 0, 0, s, m)
	}
	b.Run("cudago", func(b *testing.B) { chunked(b, goSide) })
	b.Run("C", func(b *testing.B) { chunked(b, cSide) })
}
