// Command lto_link links two CUDA C++ translation units with link-time
// optimization: NVRTC compiles each to LTO-IR (the kernel calls an extern
// __device__ function of the other unit), nvJitLink links them with -lto
// into one CUBIN for the GPU at hand, and the kernel runs and is checked.
//
// It needs a GPU. The launch uses bindings/driver directly.
package main

import (
	"fmt"
	"os"

	"github.com/cudago/cudago/core"
)

const kernelUnit = `
extern __device__ float transform(float v);
extern "C" __global__ void apply(float *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = transform(x[i]);
}
`

const helperUnit = `
__device__ float transform(float v) { return v * v + 1.0f; }
`

func ltoir(src, name, arch string) (*core.ObjectCode, error) {
	p, err := core.NewProgram(src, "c++", &core.ProgramOptions{
		Name: name, Arch: "compute_" + arch, RelocatableDeviceCode: true, LTO: true,
	})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Compile("ltoir")
}

func run() error {
	g, err := openGPU()
	if err != nil {
		return err
	}
	defer g.close()
	fmt.Printf("device %s (sm_%s)\n", g.name, g.arch)
	a, err := ltoir(kernelUnit, "kernel.cu", g.arch)
	if err != nil {
		return err
	}
	b, err := ltoir(helperUnit, "helper.cu", g.arch)
	if err != nil {
		return err
	}
	fmt.Printf("NVRTC: LTO-IR of kernel.cu %d bytes, helper.cu %d bytes\n", len(a.Code()), len(b.Code()))
	l, err := core.NewLinker(&core.LinkerOptions{Arch: "sm_" + g.arch, LTO: true}, a, b)
	if err != nil {
		return err
	}
	defer l.Close()
	cubin, err := l.Link("cubin")
	if err != nil {
		return err
	}
	defer cubin.Close()
	fmt.Printf("nvJitLink -lto: %d bytes of CUBIN\n", len(cubin.Code()))

	k, err := cubin.Kernel("apply")
	if err != nil {
		return err
	}
	const n = 4096
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%100) / 10
	}
	dx, err := g.upload(x)
	if err != nil {
		return err
	}
	if err := g.launch(k, n/256, 256, dx, int32(n)); err != nil {
		return err
	}
	out, err := g.download(dx, n)
	if err != nil {
		return err
	}
	for i := range out {
		// The device may fuse v*v+1 into one FMA: compare with a tolerance.
		if want := x[i]*x[i] + 1; out[i]-want > 1e-5*want || want-out[i] > 1e-5*want {
			return fmt.Errorf("x[%d] = %g, want %g", i, out[i], want)
		}
	}
	fmt.Printf("apply: x[%d] = %g ... all %d results correct\n", 42, out[42], n)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "lto_link:", err)
		os.Exit(1)
	}
}
