// Command lto_link links two CUDA C++ translation units with link-time
// optimization: NVRTC compiles each to LTO-IR (the kernel calls an extern
// __device__ function of the other unit), nvJitLink links them with -lto
// into one CUBIN for the GPU at hand, and the kernel runs and is checked.
//
// Without a GPU it compiles and links for sm_90, says that it cannot run
// the kernel, and exits 0; it exits 1 on any other error or a mismatch.
package main

import (
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
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

// ltoir compiles one unit to LTO-IR; -rdc lets it call the other's code.
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

func main() { demo.Main("lto_link", run) }

func run() error {
	// The GPU is needed only to run the kernel: without one, link anyway.
	dev, arch, noGPU := demo.Target()
	a, err := ltoir(kernelUnit, "kernel.cu", arch)
	if err != nil {
		return err
	}
	b, err := ltoir(helperUnit, "helper.cu", arch)
	if err != nil {
		return err
	}
	fmt.Printf("NVRTC: LTO-IR of kernel.cu %d bytes, helper.cu %d bytes\n", len(a.Code()), len(b.Code()))
	l, err := core.NewLinker(&core.LinkerOptions{Arch: "sm_" + arch, LTO: true}, a, b)
	if err != nil {
		return err
	}
	defer l.Close()
	cubin, err := l.Link("cubin")
	if err != nil {
		return err
	}
	defer cubin.Close()
	fmt.Printf("%s -lto: %d bytes of CUBIN for sm_%s\n", l.Backend(), len(cubin.Code()), arch)
	if noGPU != nil {
		fmt.Printf("no GPU, so apply was not run: %v\n", noGPU)
		return nil
	}

	k, err := cubin.Kernel("apply")
	if err != nil {
		return err
	}
	const n = 4096
	x, want := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i%100) / 10
		want[i] = x[i]*x[i] + 1
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	buf, err := demo.Upload(s, x)
	if err != nil {
		return err
	}
	defer buf.Close()
	cfg := core.LaunchConfig{Grid: core.Dim(n / 256), Block: core.Dim(256)}
	if err := core.Launch(s, cfg, k, buf, int32(n)); err != nil {
		return err
	}
	out, err := demo.Download[float32](buf) // after the kernel, on s
	if err != nil {
		return err
	}
	// The GPU may fuse v*v+1 into one FMA: compare with a tolerance.
	if err := demo.Near("x", out, want, 1e-5); err != nil {
		return err
	}
	fmt.Printf("apply on %s: x[42] = %g ... all %d results correct\n", dev.Name(), out[42], n)
	return nil
}
