package core

import (
	"testing"
)

// benchCompileSrc is a 2-kernel file, as in the performance issue.
const benchCompileSrc = `
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void noargs() {}
`

func benchCompile(b *testing.B) {
	b.Helper()
	p, err := NewProgram(benchCompileSrc, "c++", &ProgramOptions{Name: "bench", Arch: "sm_90"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		o, err := p.Compile(CodeCubin)
		if err != nil {
			b.Fatal(err)
		}
		if len(o.Code()) == 0 {
			b.Fatal("empty cubin")
		}
	}
}

// BenchmarkCompileNoCache compiles a 2-kernel file with NVRTC every time.
func BenchmarkCompileNoCache(b *testing.B) {
	useCacheDir(b)
	b.Setenv("CUDAGO_CACHE", "off")
	benchCompile(b)
}

// BenchmarkCompileCacheHit is Program.Compile of the same file on a warm
// cache (and page cache): key, read, verify, ObjectCode.
func BenchmarkCompileCacheHit(b *testing.B) {
	useCacheDir(b)
	p, err := NewProgram(benchCompileSrc, "c++", &ProgramOptions{Name: "bench", Arch: "sm_90"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Compile(CodeCubin); err != nil { // fill
		b.Fatal(err)
	}
	p.Close()
	h0 := cacheState.hits.Load()
	benchCompile(b)
	if cacheState.hits.Load() == h0 {
		b.Fatal("no cache hits")
	}
}
