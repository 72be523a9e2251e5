package rng

import (
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// The target: BenchmarkUniformFloat32 at >= 0.98x the GB/s of
// CuPy's cupy.random uniform float32 (473 GB/s on the H100;
// bench/bench_cupy_math.py's UniformFloat32_256MiB,
// RandomState(1234).random_sample(64Mi, float32)). CuPy's RandomState is
// CURAND_RNG_PSEUDO_DEFAULT, cuRAND's XORWOW, and random_sample is
// curandGenerateUniform into a new array from its pool, then its own
// kernel that maps 1 to 0 (CuPy's [0, 1)); so the benchmark uses Default,
// XORWOW, and curandGenerateUniform alone. The others are for comparison.

const benchBytes = 256 << 20

// benchFill fills a size-byte Buffer with one call of kind o per
// iteration, queued back to back on one stream, and reports the GPU time
// between two events around the loop (as bench/bench_cupy_math.py times
// CuPy's UniformFloat32_256MiB case) per call and as GB/s of output (1e9
// B/s). The first call, which sets up the generator's state (slow for
// XORWOW), is not timed.
func benchFill(b *testing.B, typ Type, o op, size int) {
	s := libtest.Stream(b, core.StreamOptions{})
	n := size / ops[o].size
	buf := alloc(b, s, size)
	defer buf.Close()
	g := newGen(b, s, Options{Type: typ, Seed: 1})
	p := params{mean: 0, stddev: 1, lambda: 10}
	start, err := s.Context().NewEvent(&core.EventOptions{Timing: true})
	if err != nil {
		b.Fatal(err)
	}
	defer start.Close()
	end, err := s.Context().NewEvent(&core.EventOptions{Timing: true})
	if err != nil {
		b.Fatal(err)
	}
	defer end.Close()
	if err := gen(g, o, buf, n, p); err != nil {
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	if err := start.Record(s); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if err := gen(g, o, buf, n, p); err != nil {
			b.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		b.Fatal(err)
	}
	if err := end.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	gpu, err := core.Elapsed(start, end)
	if err != nil {
		b.Fatal(err)
	}
	per := gpu.Seconds() / float64(b.N)
	b.ReportMetric(per*1e3, "ms/call")
	b.ReportMetric(float64(size)/per/1e9, "GB/s")
}

// BenchmarkUniformFloat32 fills 256 MiB of float32 uniforms with XORWOW,
// CuPy's default generator: the target.
func BenchmarkUniformFloat32(b *testing.B) { benchFill(b, Default, opUniform, benchBytes) }

func BenchmarkUniformFloat32Philox(b *testing.B) {
	benchFill(b, Philox4_32_10, opUniform, benchBytes)
}

func BenchmarkUniformFloat32MRG32k3a(b *testing.B) { benchFill(b, MRG32k3a, opUniform, benchBytes) }

func BenchmarkNormalFloat32(b *testing.B) { benchFill(b, Default, opNormal, benchBytes) }

// BenchmarkUniformFloat32Small is 1024 values a call: the cost of a call
// (Go, the cgo call, the lock and the acquisitions) more than the GPU's.
func BenchmarkUniformFloat32Small(b *testing.B) { benchFill(b, Default, opUniform, 4096) }
