package testenv

// Sources the seeds give verbatim, shared by the tests of several packages.

// SeedSaxpy is the kernel of the "Runtime Fatbin Creation" blog post
// (internal/testing/seeds/testdata/seeds/runtime-fatbin-creation.txt), verbatim.
const SeedSaxpy = `
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

// SeedNVVMKernel is the LLVM IR of the "NVVM LLVM IR Compilation" example
// of
// internal/testing/seeds/testdata/seeds/jit-compilation-nvvm-nvjitlink.txt,
// verbatim: it lacks the !nvvmir.version and kernel annotations that
// libNVVM needs, which tests append.
const SeedNVVMKernel = `
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
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
`

// SeedNVVMAnnotations makes SeedNVVMKernel's simple_kernel a kernel and
// declares NVVM IR version 2.0.
const SeedNVVMAnnotations = `
!nvvm.annotations = !{!0}
!0 = !{void (float*, float*, i32)* @simple_kernel, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
`
