// Command nvvm_jitlink runs the NVVM -> nvJitLink pipeline of the
// JIT-compilation seed: libNVVM compiles LLVM IR (simple_kernel, which
// doubles a vector) to PTX, nvJitLink links the PTX into a CUBIN for the
// GPU at hand, and the kernel runs on the GPU and is checked.
//
// Without a GPU it compiles and links for sm_90, says that it cannot run
// the kernel, and exits 0; it exits 1 on any other error or a mismatch.
package main

import (
	"fmt"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

// llvmIR is the seed's IR, with the annotation that makes simple_kernel a
// kernel (an entry point) and the NVVM IR version.
const llvmIR = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @simple_kernel(float* %input, float* %output, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tmp1 = mul i32 %bid, %bdim
  %idx = add i32 %tmp1, %tid
  %cond = icmp slt i32 %idx, %n
  br i1 %cond, label %if.then, label %if.end

if.then:
  %input_ptr = getelementptr float, float* %input, i32 %idx
  %val = load float, float* %input_ptr
  %result = fmul float %val, 2.0
  %output_ptr = getelementptr float, float* %output, i32 %idx
  store float %result, float* %output_ptr
  br label %if.end

if.end:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() nounwind readnone
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() nounwind readnone
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x() nounwind readnone

!nvvm.annotations = !{!0}
!0 = !{void (float*, float*, i32)* @simple_kernel, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
`

func main() { demo.Main("nvvm_jitlink", run) }

func run() error {
	// The GPU is needed only to run the kernel: without one, link anyway.
	dev, arch, noGPU := demo.Target()
	major, minor, _ := nvvm.Version()
	fmt.Printf("libNVVM %d.%d, target sm_%s\n", major, minor, arch)

	// Step 1: NVVM IR -> PTX.
	p, err := core.NewProgram(llvmIR, "nvvm", &core.ProgramOptions{Name: "simple_kernel.ll", Arch: "compute_" + arch})
	if err != nil {
		return err
	}
	defer p.Close()
	ptx, err := p.Compile("ptx")
	if err != nil {
		return err
	}
	fmt.Printf("NVVM: %d bytes of IR -> %d bytes of PTX\n", len(llvmIR), len(ptx.Code()))

	// Step 2: PTX -> CUBIN with nvJitLink.
	l, err := core.NewLinker(&core.LinkerOptions{Arch: "sm_" + arch}, ptx)
	if err != nil {
		return err
	}
	defer l.Close()
	cubin, err := l.Link("cubin")
	if err != nil {
		return err
	}
	defer cubin.Close()
	fmt.Printf("%s: %d bytes of CUBIN\n", l.Backend(), len(cubin.Code()))
	if noGPU != nil {
		fmt.Printf("no GPU, so simple_kernel was not run: %v\n", noGPU)
		return nil
	}

	// Step 3: run it.
	k, err := cubin.Kernel("simple_kernel")
	if err != nil {
		return err
	}
	const n = 1000
	in, want := make([]float32, n), make([]float32, n)
	for i := range in {
		in[i] = float32(i) * 0.5
		want[i] = 2 * in[i]
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	din, err := demo.Upload(s, in)
	if err != nil {
		return err
	}
	defer din.Close()
	dout, err := core.Alloc[float32](dev, n, s)
	if err != nil {
		return err
	}
	defer dout.Close()
	cfg := core.LaunchConfig{Grid: core.Dim((n + 127) / 128), Block: core.Dim(128)}
	if err := core.Launch(s, cfg, k, din, dout, int32(n)); err != nil {
		return err
	}
	out, err := demo.Download[float32](dout) // after the kernel, on s
	if err != nil {
		return err
	}
	if err := demo.Equal("output", out, want); err != nil {
		return err
	}
	fmt.Printf("simple_kernel on %s: output[%d] = %g ... all %d results correct\n", dev.Name(), n-1, out[n-1], n)
	return nil
}
