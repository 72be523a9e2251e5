package rng

import "testing"

// The target: BenchmarkUniformFloat32 at >= 0.98x the GB/s of
// CuPy's cupy.random uniform float32 (473 GB/s on the H100). CuPy's
// cupy.random functions use a RandomState of CURAND_RNG_PSEUDO_DEFAULT,
// cuRAND's XORWOW, and curandGenerateUniform (then their own kernels:
// random_sample maps 1 to 0, uniform scales); so the benchmark uses
// Default, XORWOW. The others are for comparison.

const benchBytes = 256 << 20

// benchFill times filling a 256 MiB Buffer with one call of kind o per
// iteration, queued back to back on one stream and waited for at the end,
// and reports GB/s of output (1e9 B/s). The first call, which sets up the
// generator's state (slow for XORWOW), is not timed.
func benchFill(b *testing.B, typ Type, o op, size int) {
	s := gpuStream(b)
	n := size / ops[o].size
	buf := alloc(b, s, size)
	defer buf.Close()
	g := newGen(b, s, Options{Type: typ, Seed: 1})
	p := params{mean: 0, stddev: 1, lambda: 10}
	if err := gen(g, o, buf, n, p); err != nil {
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		if err := gen(g, o, buf, n, p); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
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
