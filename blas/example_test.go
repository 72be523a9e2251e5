package blas_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/cudago/cudago/blas"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/lib"
)

// C = A·B for row-major matrices, as Go and gonum store them: A is 2×3,
// B 3×2. Every operation is queued on the Handle's stream (here the
// device's legacy default stream); the copy back waits for it. (It needs a
// GPU, so it has no Output.)
func ExampleGemmRowMajor() {
	const m, n, k = 2, 2, 3
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 0, 1, 1, 1}
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	bufs := make([]*core.Buffer, 3)
	for i, v := range [][]float32{a, b, make([]float32, m*n)} {
		if bufs[i], err = dev.Allocate(len(v)*4, nil); err != nil {
			log.Fatal(err)
		}
		defer bufs[i].Close()
		if err := core.CopyToDevice(bufs[i], v); err != nil {
			log.Fatal(err)
		}
	}
	h, err := blas.New(dev.DefaultStream(), nil) // the cuBLAS handle is made by the first operation
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	// lda, ldb and ldc are the row lengths: k, n and n.
	if err := blas.GemmRowMajor(h, blas.NoTrans, blas.NoTrans, m, n, k, float32(1), bufs[0], k, bufs[1], n, float32(0), bufs[2], n); err != nil {
		log.Fatal(err)
	}
	c := make([]float32, m*n)
	if err := core.CopyFromDevice(c, bufs[2]); err != nil {
		log.Fatal(err)
	}
	fmt.Println(c) // [4 5 10 11]
}

// The sizes of every operation are checked against its Buffers before
// anything is queued; a mistake is a *lib.ArgError that names the
// argument. A nil Handle is one such mistake, found without a GPU.
func Example_argumentErrors() {
	a := core.NewBuffer(0, 64, nil, nil) // a Buffer with no memory: it is never used
	err := blas.GemmRowMajor[float32](nil, blas.NoTrans, blas.NoTrans, 4, 4, 4, 1, a, 4, a, 4, 0, a, 4)
	var ae *lib.ArgError
	if errors.As(err, &ae) {
		fmt.Println(ae.Func, ae.Arg)
		fmt.Println(err)
	}
	_, err = blas.New(nil, &blas.Options{WorkspaceSize: -1})
	fmt.Println(err)
	// Output:
	// GemmRowMajor h
	// blas: GemmRowMajor: nil *Handle
	// blas: New: negative WorkspaceSize -1
}

// Half and BFloat16 are Go types for the 16-bit floating-point formats
// of Matmul, which Go does not have. Their conversions round to nearest
// even, as CUDA's do.
func ExampleHalfFromFloat32() {
	for _, f := range []float32{1, 1.0 / 3, 65504, 1e-8} {
		h, b := blas.HalfFromFloat32(f), blas.BFloat16FromFloat32(f)
		fmt.Printf("%-10g Half %-12g BFloat16 %g\n", f, h.Float32(), b.Float32())
	}
	// Output:
	// 1          Half 1            BFloat16 1
	// 0.33333334 Half 0.33325195   BFloat16 0.33398438
	// 65504      Half 65504        BFloat16 65536
	// 1e-08      Half 0            BFloat16 1.0011718e-08
}

// A linear layer with a fused epilogue: Y = GELU(X·W + b) for row-major X
// (batch×in) and W (in×out), b with one element per output feature
// (per column of the row-major Y). cuBLASLt applies the bias and GELU in
// the GEMM's own kernel. (It needs a GPU, so it has no Output.)
func ExampleMatmulRowMajor_epilogue() {
	const batch, in, out = 64, 256, 128
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	var bufs [4]*core.Buffer // X, W, b, Y (filled elsewhere)
	for i, n := range []int{batch * in, in * out, out, batch * out} {
		if bufs[i], err = core.Alloc[blas.BFloat16](dev, n, nil); err != nil {
			log.Fatal(err)
		}
		defer bufs[i].Close()
	}
	h, err := blas.New(dev.DefaultStream(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	err = blas.MatmulRowMajor[blas.BFloat16](h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, batch, out, in,
		1, bufs[0], in, bufs[1], out, 0, bufs[3], out, &blas.MatmulOptions{Epilogue: blas.EpilogueGELUBias, Bias: bufs[2]})
	if err != nil {
		log.Fatal(err)
	}
}

// Matmul's checks run before anything is queued, so they need no GPU: an
// epilogue's bias must have one element per output feature, and FP8
// Matmuls need the layout cuBLASLt's FP8 kernels take.
func ExampleMatmulFP8_checks() {
	buf := func(n int) *core.Buffer { return core.NewBuffer(1<<20, n, nil, nil) } // no memory: never used
	var h blas.Handle                                                             // closed: the arguments are checked, nothing runs
	err := blas.MatmulRowMajor[blas.Half](&h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, 4, 8, 16, 1, buf(128), 16, buf(256), 8, 0, buf(64), 8,
		&blas.MatmulOptions{Epilogue: blas.EpilogueReLUBias, Bias: buf(8)})
	fmt.Println(err)
	err = blas.MatmulFP8RowMajor[blas.E4M3, blas.E4M3, blas.BFloat16](&h, blas.NoTrans, blas.NoTrans, 32, 32, 32, 1, buf(1024), 32, buf(1024), 32, 0, buf(2048), 32, nil)
	fmt.Println(err)
	// Output:
	// blas: MatmulRowMajor: opts.Bias holds 8 bytes, but EpilogueReLUBias needs 8 Half elements (one element per column of C (n), batch 1, stride 0): 16 bytes
	// blas: MatmulFP8RowMajor: tA = NoTrans, tB = NoTrans: FP8 needs k contiguous in both A and B, tA = NoTrans and tB = Trans row-major (cuBLASLt's "TN", the only layout of its FP8 kernels on Ada and Hopper)
}

// E4M3 and E5M2 are the two FP8 formats (OCP): Go types holding the bits,
// with conversions from float32 that round to nearest even and saturate.
func ExampleE4M3FromFloat32() {
	for _, f := range []float32{1, 0.3, 300, 1000, -1e9} {
		fmt.Printf("%-6g E4M3 %-6v E5M2 %v\n", f, blas.E4M3FromFloat32(f), blas.E5M2FromFloat32(f))
	}
	// Output:
	// 1      E4M3 1      E5M2 1
	// 0.3    E4M3 0.3125 E5M2 0.3125
	// 300    E4M3 288    E5M2 320
	// 1000   E4M3 448    E5M2 1024
	// -1e+09 E4M3 -448   E5M2 -57344
}
