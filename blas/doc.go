// Package blas is dense linear algebra on the GPU: cuBLAS (GEMM, batched,
// strided-batched and grouped GEMM, GEMV, AXPY, DOT, NRM2 for float32,
// float64, complex64 and complex128) and cuBLASLt (Matmul: GEMM of Half,
// BFloat16 and float32 with an explicit compute type, fused epilogues and
// strided batches, and FP8 GEMM with per-tensor scales), on core's
// Buffers and Streams.
//
// # Handles and streams
//
// A Handle is one cuBLAS handle and one cuBLASLt handle bound to one
// core.Stream:
//
//	h, err := blas.New(stream, nil)
//	defer h.Close()
//	err = blas.GemmRowMajor(h, blas.NoTrans, blas.NoTrans, m, n, k, float32(1), a, k, b, n, float32(0), c, n)
//
// Every operation is queued on the handle's stream, in order; the
// functions return once it is queued, except Dot, Dotc and Nrm2, which
// return their result and so wait for it. Make one Handle per stream and
// keep it: its first operation is expensive (it creates the cuBLAS
// handle, which loads its kernels), the next ones are not, and several
// goroutines may share it. The handle owns its
// workspace (shared by cuBLAS and cuBLASLt, whose work is ordered on the
// one stream) and its cuBLASLt plans; Close frees them, and a forgotten
// Handle is freed when it is collected. Scalars are Go values (cuBLAS's
// host pointer mode). Each call makes the stream's context current for
// itself, so no runtime.LockOSThread is needed.
//
// # Layout
//
// cuBLAS is column-major, as Fortran: Gemm, Gemv and the batched GEMMs
// take their matrices that way, with cuBLAS's arguments. Go programs
// usually store matrices row-major (row i of an m×n matrix at i·ld, as
// gonum does): GemmRowMajor, GemvRowMajor, GemmBatchedRowMajor,
// GemmStridedBatchedRowMajor and MatmulRowMajor take that layout, and
// gonum's argument order. They copy nothing: a row-major matrix is its
// transpose in column-major order, so C = A·B row-major is Cᵀ = Bᵀ·Aᵀ
// column-major, the same GEMM with A and B swapped.
//
// # Checks
//
// Every dimension, leading dimension, increment, transpose and batch
// stride is checked against the Buffers' sizes before anything is
// queued: a mistake is a *lib.ArgError naming the argument ("lda = 3 must be
// at least 5: A is 4×5, row-major"), never a GPU reading or writing
// outside a Buffer. Buffer addresses must be aligned for their element
// type. A closed Handle, Stream or Buffer gives core.ErrClosed; a failed
// library call returns the bindings' error, which errors.Is matches
// against cublas.Status values (cublas.StatusNotSupported, ...). Sizes
// are cuBLAS's 32-bit ones (at most 2³¹-1).
//
// # Precision
//
// float32 GEMMs compute in float32 unless Options.TF32 allows TF32
// tensor cores. Matmul takes its arithmetic explicitly (ComputeFloat32,
// ComputeFloat16, ComputeTF32); Half and BFloat16 are Go types here, with
// conversions from and to float32 that round as CUDA's do, and so are the
// FP8 formats E4M3 and E5M2 of MatmulFP8.
//
// # Matmul
//
// Matmul and MatmulRowMajor take a *MatmulOptions (nil for none): an
// Epilogue that cuBLASLt applies in the GEMM's kernel (bias, ReLU, GELU,
// and for training the auxiliary output of the forward pass and the
// backward epilogues that read it, with bias gradients), and a strided
// batch. MatmulFP8 multiplies E4M3 and E5M2 matrices with per-tensor
// scales on Ada and Hopper GPUs and newer. The first Matmul of a shape
// times cuBLASLt's top candidate algorithms and keeps the fastest, for
// the Handle, the process and, with Options.MatmulTuning = TuneDisk,
// later processes (see Tuning). GemmGrouped runs groups of GEMMs of
// different shapes in one call.
//
// The package is named blas, not cublas, because bindings/cublas is the
// C API itself; this one is its Go form, and it also covers cuBLASLt.
package blas

//go:generate go run ../internal/bindgen -calls .
