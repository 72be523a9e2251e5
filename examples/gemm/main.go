// Command gemm multiplies matrices on the GPU with package blas: a
// row-major float32 GEMM of odd sizes through cuBLAS, C = A·B with A
// 37×53 and B 53×29, as Go programs store matrices (row i at i·ld), and
// the same product in bfloat16 through cuBLASLt, summed in float32.
// Both are checked against the product computed on the CPU.
//
// Without a GPU it computes the CPU product and the bfloat16 rounding of
// the inputs, says that it cannot run the GEMMs, and exits 0; it exits 1
// on any other error or a wrong result.
package main

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/blas"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const m, k, n = 37, 53, 29

func main() { demo.Main("gemm", run) }

func run() error {
	// Row-major A (m×k) and B (k×n), tightly packed: lda = k, ldb = n.
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%17)/8 - 1
	}
	for i := range b {
		b[i] = float32(i%13)/6 - 1
	}
	want, sumAbs := matmulCPU(a, b)

	// bfloat16 keeps 8 significant bits: the inputs are rounded first,
	// and the GPU's result is compared with the product of those.
	a16, b16 := make([]blas.BFloat16, len(a)), make([]blas.BFloat16, len(b))
	ar, br := make([]float32, len(a)), make([]float32, len(b))
	for i, v := range a {
		a16[i] = blas.BFloat16FromFloat32(v)
		ar[i] = a16[i].Float32()
	}
	for i, v := range b {
		b16[i] = blas.BFloat16FromFloat32(v)
		br[i] = b16[i].Float32()
	}
	want16, sumAbs16 := matmulCPU(ar, br)
	fmt.Printf("C = A·B with A %d×%d, B %d×%d, row-major; C[0][0] = %g on the CPU\n", m, k, k, n, want[0])

	dev := demo.Device("the GEMMs were not run")
	if dev == nil {
		return nil
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	h, err := blas.New(s, nil)
	if err != nil {
		return err
	}
	defer h.Close()

	// float32 through cuBLAS.
	f32, free, err := upload3(s, a, b, make([]float32, m*n))
	if err != nil {
		return err
	}
	defer free()
	da, db, dc := f32[0], f32[1], f32[2]
	if err := blas.GemmRowMajor(h, blas.NoTrans, blas.NoTrans, m, n, k, float32(1), da, k, db, n, float32(0), dc, n); err != nil {
		return err
	}
	c, err := demo.Download[float32](dc)
	if err != nil {
		return err
	}
	// Error bound of a float32 dot product of k terms: (k+2)·2⁻²⁴·Σ|a·b|.
	if err := demo.Check("float32 C", c, want, func(i int) bool {
		return math.Abs(float64(c[i])-want[i]) <= float64(k+2)*0x1p-24*sumAbs[i]
	}); err != nil {
		return err
	}
	fmt.Printf("float32 GEMM (cuBLAS) on %s: all %d elements match the CPU; C[0][0] = %g\n", dev.Name(), len(c), c[0])

	// bfloat16 through cuBLASLt, summed in float32.
	bf, free16, err := upload3(s, a16, b16, make([]blas.BFloat16, m*n))
	if err != nil {
		return err
	}
	defer free16()
	da16, db16, dc16 := bf[0], bf[1], bf[2]
	if err := blas.MatmulRowMajor[blas.BFloat16](h, blas.ComputeFloat32, blas.NoTrans, blas.NoTrans, m, n, k, 1, da16, k, db16, n, 0, dc16, n, nil); err != nil {
		return err
	}
	c16, err := demo.Download[blas.BFloat16](dc16)
	if err != nil {
		return err
	}
	// The float32 sum, then one rounding to bfloat16 (2⁻⁸ relative).
	if err := demo.Check("bfloat16 C", c16, want16, func(i int) bool {
		d := math.Abs(float64(c16[i].Float32()) - want16[i])
		return d <= 0x1p-8*math.Abs(want16[i])+float64(k+2)*0x1p-24*sumAbs16[i]+1e-38
	}); err != nil {
		return err
	}
	fmt.Printf("bfloat16 GEMM (cuBLASLt): all %d elements match the CPU to bfloat16's precision; C[0][0] = %g (float32 inputs: %g)\n", len(c16), c16[0].Float32(), c[0])
	return nil
}

// matmulCPU returns the row-major product A·B in float64 and, per
// element, Σ|a·b| for the error bounds.
func matmulCPU(a, b []float32) (c, sumAbs []float64) {
	c, sumAbs = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			for l := range k {
				p := float64(a[i*k+l]) * float64(b[l*n+j])
				c[i*n+j] += p
				sumAbs[i*n+j] += math.Abs(p)
			}
		}
	}
	return c, sumAbs
}

// upload3 uploads A, B and C; free frees them (on s, after its work).
func upload3[T any](s *core.Stream, a, b, c []T) (bufs [3]*core.Buffer, free func(), err error) {
	free = func() {
		for _, x := range bufs {
			if x != nil {
				x.Close()
			}
		}
	}
	for i, src := range [][]T{a, b, c} {
		if bufs[i], err = demo.Upload(s, src); err != nil {
			free()
			return bufs, nil, err
		}
	}
	return bufs, free, nil
}
