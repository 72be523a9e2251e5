// Command sparse multiplies the 1-D Laplacian, the n×n matrix
// tridiag(-1, 2, -1) stored in CSR form, by a vector on the GPU with
// package sparse (cuSPARSE's SpMV) and checks every element of the result
// against the same product computed on the CPU.
//
// It prints one line and exits 0 when all are right; on a mismatch or any
// other error it prints the error and exits 1. Without a GPU it builds the
// matrix and the CPU result, says that it cannot run SpMV, and exits 0.
//
//	go run ./examples/sparse
package main

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/sparse"
)

const n = 1_000_003

func main() { demo.Main("sparse", run) }

// laplacian returns tridiag(-1, 2, -1) in CSR form: row i holds columns
// i-1, i, i+1 where they exist.
func laplacian(n int) (rowOffsets, colInd []int32, values []float64) {
	rowOffsets = make([]int32, 1, n+1)
	for i := range n {
		for j := i - 1; j <= i+1; j++ {
			if j < 0 || j >= n {
				continue
			}
			colInd = append(colInd, int32(j))
			if j == i {
				values = append(values, 2)
			} else {
				values = append(values, -1)
			}
		}
		rowOffsets = append(rowOffsets, int32(len(colInd)))
	}
	return rowOffsets, colInd, values
}

func run() error {
	off, col, val := laplacian(n)
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(i) * 0.001)
	}
	// The CPU result, and the size of its terms for the tolerance.
	want, scale := make([]float64, n), make([]float64, n)
	for i := range n {
		want[i], scale[i] = 2*x[i], 2*math.Abs(x[i])
		if i > 0 {
			want[i] -= x[i-1]
			scale[i] += math.Abs(x[i-1])
		}
		if i < n-1 {
			want[i] -= x[i+1]
			scale[i] += math.Abs(x[i+1])
		}
	}
	fmt.Printf("1-D Laplacian: %d×%d, %d nonzeros in CSR form\n", n, n, len(val))

	dev := demo.Device("SpMV was not run")
	if dev == nil {
		return nil
	}
	s := dev.DefaultStream()
	a, err := sparse.NewCSR(s, n, n, off, col, val) // checked on the CPU, then copied
	if err != nil {
		return err
	}
	defer a.Close()
	h, err := sparse.New(s, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	xb, err := demo.Upload(s, x)
	if err != nil {
		return err
	}
	defer xb.Close()
	yb, err := core.Alloc[float64](dev, n, s)
	if err != nil {
		return err
	}
	defer yb.Close()
	if err := sparse.SpMV(h, sparse.NoTrans, 1, a, xb, 0, yb); err != nil { // y = A·x
		return err
	}
	y, err := demo.Download[float64](yb) // on s, after the SpMV
	if err != nil {
		return err
	}
	// Three terms: a few ulps of their magnitudes, in any order.
	if err := demo.Check("y", y, want, func(i int) bool { return math.Abs(y[i]-want[i]) <= 8*0x1p-52*scale[i] }); err != nil {
		return err
	}
	fmt.Printf("SpMV on %s: all %d elements of A·x match the CPU\n", dev.Name(), n)
	return nil
}
