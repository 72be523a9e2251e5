// Command solver solves a small symmetric positive definite system A·x = b
// on the GPU with package solver (cuSOLVER's Cholesky factorization,
// potrf, and solve, potrs), and prints the solution and the residual
// ‖b - A·x‖∞ computed on the CPU.
//
// It exits 0 when the residual is at rounding level and 1 otherwise or on
// any error. Without a GPU it says that it cannot run the solve, and exits
// 0.
//
//	go run ./examples/solver
package main

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/solver"
)

const n = 6

func main() { demo.Main("solver", run) }

func run() error {
	// A = tridiag(-1, 4, -1) + 1/(i+j+1) (a Hilbert part): symmetric,
	// positive definite. Symmetric, so row-major and column-major are the
	// same array.
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			a[i*n+j] = 1 / float64(i+j+1)
			switch {
			case i == j:
				a[i*n+j] += 4
			case i == j+1 || j == i+1:
				a[i*n+j]--
			}
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = float64(i + 1)
	}

	dev := demo.Device("the Cholesky solve was not run")
	if dev == nil {
		return nil
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	h, err := solver.New(s, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	ab, err := demo.Upload(s, a)
	if err != nil {
		return err
	}
	defer ab.Close()
	xb, err := demo.Upload(s, b)
	if err != nil {
		return err
	}
	defer xb.Close()
	// Factor (waits, to turn cuSOLVER's devInfo into an error), then solve
	// in place: xb goes from b to x.
	if err := solver.SolveCholesky[float64](h, ab, n, solver.Lower, xb, 1); err != nil {
		return err
	}
	x, err := demo.Download[float64](xb) // on s, after the solve
	if err != nil {
		return err
	}
	res, normA, normX := 0.0, 0.0, 0.0
	for i := range n {
		r, row := b[i], 0.0
		for j := range n {
			r -= a[i*n+j] * x[j]
			row += math.Abs(a[i*n+j])
		}
		res, normA, normX = max(res, math.Abs(r)), max(normA, row), max(normX, math.Abs(x[i]))
	}
	fmt.Printf("x = %.6f\n", x)
	fmt.Printf("residual ‖b - A·x‖∞ = %.3g (‖A‖∞·‖x‖∞ = %.3g) on %s\n", res, normA*normX, dev.Name())
	// LAPACK's test ratio: ‖b - A·x‖ / (n·‖A‖·‖x‖·eps) stays below 30.
	if ratio := res / (n * normA * normX * 0x1p-52); ratio > 30 {
		return fmt.Errorf("residual ratio %.3g, want below 30", ratio)
	}
	return nil
}
