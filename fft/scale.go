package fft

import (
	"fmt"
	"sync"

	"github.com/cudago/cudago/core"
)

// scaleSource multiplies n reals in place; a complex array is scaled as
// its 2n reals. A grid-stride loop lets one launch shape cover any n.
const scaleSource = `
extern "C" __global__ void cudago_fft_scale_f32(float *p, float a, unsigned long long n) {
	unsigned long long step = (unsigned long long)blockDim.x * gridDim.x;
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		p[i] *= a;
}
extern "C" __global__ void cudago_fft_scale_f64(double *p, double a, unsigned long long n) {
	unsigned long long step = (unsigned long long)blockDim.x * gridDim.x;
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		p[i] *= a;
}
`

// scaleKernels holds the compiled scale kernels by architecture ("90").
// Kernels are context-independent, so one compile serves every device of
// an architecture; the code stays loaded for the life of the process.
var scaleKernels struct {
	mu     sync.Mutex
	byArch map[string][2]*core.Kernel // by Precision
}

func scaleKernel(dev *core.Device, prec Precision) (*core.Kernel, error) {
	if dev == nil {
		return nil, fmt.Errorf("fft: normalization needs the plan's device")
	}
	arch := dev.Arch()
	scaleKernels.mu.Lock()
	defer scaleKernels.mu.Unlock()
	if ks, ok := scaleKernels.byArch[arch]; ok {
		return ks[prec], nil
	}
	ks, err := compileScale("sm_" + arch)
	if err != nil {
		return nil, fmt.Errorf("fft: compiling the normalization kernel for sm_%s: %w", arch, err)
	}
	if scaleKernels.byArch == nil {
		scaleKernels.byArch = map[string][2]*core.Kernel{}
	}
	scaleKernels.byArch[arch] = ks
	return ks[prec], nil
}

// compileScale compiles scaleSource to a CUBIN for arch ("sm_90") and
// returns its kernels, Single then Double.
func compileScale(arch string) ([2]*core.Kernel, error) {
	var ks [2]*core.Kernel
	prog, err := core.NewProgram(scaleSource, "c++", &core.ProgramOptions{Name: "cudago_fft_scale", Arch: arch})
	if err != nil {
		return ks, err
	}
	defer prog.Close()
	code, err := prog.Compile(core.CodeCubin)
	if err != nil {
		return ks, err
	}
	for i, name := range []string{"cudago_fft_scale_f32", "cudago_fft_scale_f64"} {
		if ks[i], err = code.Kernel(name); err != nil {
			code.Close()
			return ks, err
		}
	}
	return ks, nil
}

// launchScale queues the division of the output of l's transform, in b,
// by N = prod(Shape). In place it scales the padding too, which holds no
// data.
func launchScale(s *core.Stream, k *core.Kernel, b *core.Buffer, l layout) error {
	n := l.outBytes / l.Precision.realSize()
	if n == 0 {
		return nil
	}
	const block = 256
	// Enough blocks to fill the GPU; the loop covers the rest.
	grid := min((n+block-1)/block, 32*max(s.Device().MultiprocessorCount(), 1))
	cfg := core.LaunchConfig{Grid: core.Dim(uint32(grid)), Block: core.Dim(block)}
	factor := 1 / float64(l.n)
	if l.Precision == Single {
		return core.Launch(s, cfg, k, b, float32(factor), uint64(n))
	}
	return core.Launch(s, cfg, k, b, factor, uint64(n))
}
