// Command fatbin_saxpy is the runtime-fatbin example of NVIDIA's "Runtime
// Fatbin Creation Using the NVIDIA CUDA Toolkit 12.4 Compiler", in Go:
// NVRTC compiles SAXPY for a known architecture and for the GPU at hand,
// nvFatbin puts both CUBINs (and PTX for the GPU's architecture) into one
// fatbin, the driver loads it, and the kernel runs and is checked.
//
// It needs a GPU. The launch uses bindings/driver directly.
package main

import (
	"fmt"
	"os"

	"github.com/cudago/cudago/core"
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

// compile runs NVRTC for one target and architecture.
func compile(target, arch string) (*core.ObjectCode, error) {
	p, err := core.NewProgram(saxpy, "c++", &core.ProgramOptions{Name: "fatbin_saxpy.cu", Arch: arch})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	code, err := p.Compile(target)
	if log := p.Log(); log != "" {
		fmt.Print(log)
	}
	return code, err
}

func run() error {
	g, err := openGPU()
	if err != nil {
		return err
	}
	defer g.close()
	const known = "sm_75"
	dynamic := "sm_" + g.arch
	fmt.Printf("device %s: building a fatbin for %s and %s\n", g.name, known, dynamic)

	knownCubin, err := compile("cubin", known)
	if err != nil {
		return err
	}
	dynamicCubin, err := compile("cubin", dynamic)
	if err != nil {
		return err
	}
	ptx, err := compile("ptx", "compute_"+g.arch)
	if err != nil {
		return err
	}
	b, err := core.NewFatbinBuilder(&core.FatbinOptions{Name: "fatbin_saxpy"})
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.AddCubin(dynamicCubin.Code(), dynamic, "dynamic"); err != nil {
		return err
	}
	if err := b.AddCubin(knownCubin.Code(), known, "known"); err != nil {
		return err
	}
	if err := b.AddPTX(ptx.Code(), g.arch, "dynamic_ptx", ""); err != nil {
		return err
	}
	fatbin, err := b.Build()
	if err != nil {
		return err
	}
	defer fatbin.Close()
	fmt.Printf("fatbin: %d bytes\n", len(fatbin.Code()))
	k, err := fatbin.Kernel("saxpy")
	if err != nil {
		return err
	}

	const numThreads, numBlocks = 128, 32
	n := numThreads * numBlocks
	a := float32(5.1)
	x, y := make([]float32, n), make([]float32, n)
	for i := range n {
		x[i] = float32(i)
		y[i] = float32(i * 2)
	}
	dx, err := g.upload(x)
	if err != nil {
		return err
	}
	dy, err := g.upload(y)
	if err != nil {
		return err
	}
	dout, err := g.alloc(n)
	if err != nil {
		return err
	}
	if err := g.launch(k, numBlocks, numThreads, a, dx, dy, dout, uint64(n)); err != nil {
		return err
	}
	out, err := g.download(dout, n)
	if err != nil {
		return err
	}
	for i := range n {
		want := a*x[i] + y[i]
		if d := out[i] - want; d > 1e-3*want || d < -1e-3*want {
			return fmt.Errorf("out[%d] = %g, want %g", i, out[i], want)
		}
		if i < 4 || i == n-1 {
			fmt.Printf("%g * %g + %g = %g\n", a, x[i], y[i], out[i])
		}
	}
	fmt.Printf("saxpy: all %d results correct\n", n)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fatbin_saxpy:", err)
		os.Exit(1)
	}
}
