package core_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/core"
)

// Compiling CUDA C++ to PTX needs NVRTC only, no GPU.
func ExampleNewProgram() {
	const src = `
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = a * x[i] + y[i];
}`
	p, err := core.NewProgram(src, "c++", &core.ProgramOptions{Name: "saxpy.cu", Arch: "compute_80"})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ptx, err := p.Compile("ptx")
	if err != nil {
		log.Fatal(err)
	}
	text := string(ptx.Code())
	fmt.Println(p.Backend(), "compiled", ptx.Name(), "to", ptx.CodeType())
	fmt.Println("targets sm_80:", strings.Contains(text, ".target sm_80"))
	fmt.Println("has .entry saxpy:", strings.Contains(text, ".entry saxpy("))
	// Output:
	// NVRTC compiled saxpy.cu to ptx
	// targets sm_80: true
	// has .entry saxpy: true
}

// ProgramOptions render to the compiler's command line; bad values are
// found before any library is called.
func ExampleProgramOptions_NVRTCOptions() {
	opts := &core.ProgramOptions{
		Arch:     "sm_90",
		Std:      "c++17",
		Defines:  map[string]string{"N": "256", "USE_FAST": ""},
		LineInfo: true,
	}
	args, err := opts.NVRTCOptions()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(args, " "))

	_, err = (&core.ProgramOptions{Arch: "sm_9x"}).NVRTCOptions()
	fmt.Println("invalid option:", errors.Is(err, core.ErrInvalidOption))
	// Output:
	// -arch=sm_90 --std=c++17 -DN=256 -DUSE_FAST --generate-line-info
	// invalid option: true
}

// A failed compilation is a *CompileError holding the compiler's log;
// errors.Is also matches the backend's status.
func ExampleCompileError() {
	const src = `extern "C" __global__ void broken(float* x) {
	x[0] = undefined_thing;
}`
	p, err := core.NewProgram(src, "c++", &core.ProgramOptions{Name: "broken.cu", Arch: "compute_80"})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	_, err = p.Compile("ptx")
	if err == nil {
		log.Fatal("broken code compiled")
	}

	var ce *core.CompileError
	fmt.Println("CompileError:", errors.As(err, &ce))
	fmt.Println("NVRTC_ERROR_COMPILATION:", errors.Is(err, nvrtc.ErrorCompilation))
	fmt.Println(ce.Backend, ce.Program, ce.Target)
	first, _, _ := strings.Cut(ce.Log, "\n")
	fmt.Println(first)
	// Output:
	// CompileError: true
	// NVRTC_ERROR_COMPILATION: true
	// NVRTC broken.cu ptx
	// broken.cu(2): error: identifier "undefined_thing" is undefined
}

// Validate finds a shape no CUDA device accepts before any driver call;
// Launch calls it too.
func ExampleLaunchConfig_Validate() {
	ok := core.LaunchConfig{Grid: core.Dim(4096), Block: core.Dim(256)}
	fmt.Println(ok.Validate())

	tooBig := core.LaunchConfig{Grid: core.Dim(512), Block: core.Dim(2048)}
	fmt.Println(tooBig.Validate())
	// Output:
	// <nil>
	// core: LaunchConfig: block 2048x1x1 has 2048 threads, more than 1024
}

// Compile a kernel for the GPU at hand, copy data in, launch, copy back.
// (It needs a GPU, so it is not run as a test.)
func ExampleLaunch() {
	const src = `
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}`
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err) // without a GPU: an error matching driver.ErrorNoDevice
	}
	p, err := core.NewProgram(src, "c++", &core.ProgramOptions{Arch: "sm_" + dev.Arch()})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	obj, err := p.Compile("cubin")
	if err != nil {
		log.Fatal(err)
	}
	defer obj.Close()
	add, err := obj.Kernel("add")
	if err != nil {
		log.Fatal(err)
	}

	const n = 1 << 20
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), 1
	}
	s := dev.DefaultStream()
	da, _ := dev.Allocate(n*4, s)
	db, _ := dev.Allocate(n*4, s)
	dc, err := dev.Allocate(n*4, s)
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	defer db.Close()
	defer dc.Close()
	if err := errors.Join(core.CopyToDevice(da, a), core.CopyToDevice(db, b)); err != nil {
		log.Fatal(err)
	}
	cfg := core.LaunchConfig{Grid: core.Dim(n / 256), Block: core.Dim(256)}
	if err := core.Launch(s, cfg, add, da, db, dc, int32(n)); err != nil {
		log.Fatal(err)
	}
	if err := core.CopyFromDevice(c, dc); err != nil { // waits for the kernel
		log.Fatal(err)
	}
	fmt.Println(c[0], c[n-1]) // 1 1.048576e+06
}

// Capture launches into a graph once, then replay it; Update swaps in the
// parameters of a graph of the same shape. (It needs a GPU.)
func ExampleGraphExec_Update() {
	const src = `
extern "C" __global__ void scale(float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := core.NewProgram(src, "c++", &core.ProgramOptions{Arch: "sm_" + dev.Arch()})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	obj, err := p.Compile("cubin")
	if err != nil {
		log.Fatal(err)
	}
	defer obj.Close()
	scale, err := obj.Kernel("scale")
	if err != nil {
		log.Fatal(err)
	}

	// The default streams cannot capture.
	s, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	const n = 4096
	x, err := dev.Allocate(n*4, s)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	if err := core.CopyToDevice(x, ones); err != nil {
		log.Fatal(err)
	}

	cfg := core.LaunchConfig{Grid: core.Dim(n / 256), Block: core.Dim(256)}
	capture := func(a float32) *core.Graph {
		if err := s.BeginCapture(core.CaptureRelaxed); err != nil {
			log.Fatal(err)
		}
		for range 3 {
			if err := core.Launch(s, cfg, scale, x, a, int32(n)); err != nil {
				log.Fatal(err)
			}
		}
		g, err := s.EndCapture()
		if err != nil {
			log.Fatal(err)
		}
		return g
	}

	g := capture(2)
	defer g.Close()
	exec, err := g.Instantiate()
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()
	for range 5 { // five replays of three launches
		if err := exec.Launch(s); err != nil {
			log.Fatal(err)
		}
	}

	g2 := capture(0.5) // same topology, another parameter
	defer g2.Close()
	if err := exec.Update(g2); err != nil {
		log.Fatal(err)
	}
	if err := exec.Launch(s); err != nil {
		log.Fatal(err)
	}
	if err := core.CopyFromDevice(ones, x); err != nil { // on x's stream, s
		log.Fatal(err)
	}
	fmt.Println(ones[0]) // 4096: 1 * 2^(5*3) * 0.5^3
}

// WaitContext waits for a stream's work with a deadline; the GPU work
// itself goes on. (It needs a GPU.)
func ExampleStream_WaitContext() {
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	s, err := dev.NewStream(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	buf, err := dev.Allocate(256<<20, s)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := buf.Memset32Async(s, 0); err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	switch err := s.WaitContext(ctx); {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Println("still running after a second")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("done") // done
	}
}
