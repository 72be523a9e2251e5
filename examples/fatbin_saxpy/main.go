// Command fatbin_saxpy is the runtime-fatbin example of NVIDIA's "Runtime
// Fatbin Creation Using the NVIDIA CUDA Toolkit 12.4 Compiler", in Go:
// NVRTC compiles SAXPY for a known architecture (sm_75) and for the GPU at
// hand, nvFatbin puts both CUBINs (and PTX for the GPU's architecture) into
// one fatbin, the driver loads it, and the kernel runs and is checked.
//
// Without a GPU it builds the fatbin for sm_75 and sm_90, says that it
// cannot run it, and exits 0; it exits 1 on any other error or a mismatch.
package main

import (
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const saxpy = `
__device__ float compute(float a, float x, float y) {
	return a * x + y;
}

extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
	size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	if (tid < n) {
		out[tid] = compute(a, x[tid], y[tid]);
	}
}
`

// compile runs NVRTC for one target ("cubin", "ptx") and architecture.
func compile(target, arch string) (*core.ObjectCode, error) {
	p, err := core.NewProgram(saxpy, "c++", &core.ProgramOptions{Name: "saxpy_" + arch, Arch: arch})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Compile(target)
}

func main() { demo.Main("fatbin_saxpy", run) }

func run() error {
	// The GPU is needed only to run the kernel: without one, build anyway.
	dev, arch, noGPU := demo.Target()
	const known = "sm_75"
	fmt.Printf("building a fatbin for %s and sm_%s\n", known, arch)

	b, err := core.NewFatbinBuilder(&core.FatbinOptions{Name: "fatbin_saxpy"})
	if err != nil {
		return err
	}
	defer b.Close()
	for _, t := range []struct{ target, arch string }{
		{"cubin", "sm_" + arch}, {"cubin", known}, {"ptx", "compute_" + arch},
	} {
		if t.arch == known && arch == "75" {
			continue // the GPU is sm_75: one CUBIN for it is enough
		}
		code, err := compile(t.target, t.arch)
		if err != nil {
			return err
		}
		if err := b.Add(code, t.arch); err != nil {
			return err
		}
	}
	fatbin, err := b.Build()
	if err != nil {
		return err
	}
	defer fatbin.Close()
	fmt.Printf("fatbin: %d bytes\n", len(fatbin.Code()))
	if noGPU != nil {
		fmt.Printf("no GPU, so saxpy was not run: %v\n", noGPU)
		return nil
	}

	k, err := fatbin.Kernel("saxpy")
	if err != nil {
		return err
	}
	const threads, blocks = 128, 32
	const n = threads * blocks
	const a = float32(5.1)
	x, y := make([]float32, n), make([]float32, n)
	for i := range n {
		x[i], y[i] = float32(i), float32(2*i)
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	var bufs [3]*core.Buffer // x, y, out; allocated and freed in s's order
	for i, host := range [][]float32{x, y, make([]float32, n)} {
		if bufs[i], err = demo.Upload(s, host); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	cfg := core.LaunchConfig{Grid: core.Dim(blocks), Block: core.Dim(threads)}
	if err := core.Launch(s, cfg, k, a, bufs[0], bufs[1], bufs[2], uint64(n)); err != nil {
		return err
	}
	out, err := demo.Download[float32](bufs[2]) // after the kernel, on s
	if err != nil {
		return err
	}
	want := make([]float32, n)
	for i := range want {
		want[i] = a*x[i] + y[i]
	}
	// The GPU may fuse a*x+y into one FMA: compare with a tolerance.
	if err := demo.Near("out", out, want, 1e-3); err != nil {
		return err
	}
	for _, i := range []int{0, 1, 2, 3, n - 1} {
		fmt.Printf("%g * %g + %g = %g\n", a, x[i], y[i], out[i])
	}
	fmt.Printf("saxpy on %s: all %d results correct\n", dev.Name(), n)
	return nil
}
