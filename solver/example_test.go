package solver_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/solver"
)

// SolveCholesky solves A·x = b for a symmetric positive definite A: the
// factorization, which waits for cuSOLVER's verdict, then the solve,
// queued on the Handle's stream. (It needs a GPU, so it has no Output.)
func ExampleSolveCholesky() {
	a := []float64{4, 2, 2, 3} // symmetric: the same array in either order
	b := []float64{2, 1}
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	s := dev.DefaultStream() // the legacy default stream; any Stream will do
	ab, err := dev.Allocate(len(a)*8, s)
	if err != nil {
		log.Fatal(err)
	}
	defer ab.Close()
	xb, err := dev.Allocate(len(b)*8, s)
	if err != nil {
		log.Fatal(err)
	}
	defer xb.Close()
	if err := errors.Join(core.CopyToDevice(ab, a), core.CopyToDevice(xb, b)); err != nil {
		log.Fatal(err)
	}
	h, err := solver.New(s, nil) // the cuSOLVER handle is made by the first operation
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	if err := solver.SolveCholesky[float64](h, ab, 2, solver.Lower, xb, 1); err != nil {
		log.Fatal(err) // errors.Is(err, solver.ErrNotPositiveDefinite) for a matrix that is not
	}
	x := make([]float64, 2)
	if err := core.CopyFromDevice(x, xb); err != nil { // waits for the solve
		log.Fatal(err)
	}
	fmt.Println(x) // [0.5 0]
}

// The factorizations report what cuSOLVER finds in the matrix as typed
// errors, which errors.Is matches against the package's sentinels.
func ExampleSingularError() {
	var err error = &solver.SingularError{Step: 3} // as FactorLU returns it
	err = fmt.Errorf("solving the model: %w", err)
	fmt.Println(errors.Is(err, solver.ErrSingular))
	var se *solver.SingularError
	if errors.As(err, &se) {
		fmt.Println("zero pivot at step", se.Step)
	}
	// Output:
	// true
	// zero pivot at step 3
}

// Arguments are checked before anything is queued, and a bad one is a
// *lib.ArgError; a closed or zero Handle gives core.ErrClosed.
func ExampleFactorLU_errors() {
	a := core.NewBuffer(0, 3*3*8, nil, nil) // a Buffer with no memory: never used
	_, err := solver.FactorLU[float64](nil, a, 3, solver.ColMajor)
	fmt.Println(err)
	_, err = solver.FactorLU[float64](&solver.Handle{}, a, 4, solver.ColMajor)
	fmt.Println(err)
	_, err = solver.FactorLU[float64](&solver.Handle{}, a, 3, solver.ColMajor)
	fmt.Println(errors.Is(err, core.ErrClosed))
	// Output:
	// solver: FactorLU: nil *Handle
	// solver: FactorLU: A holds 72 bytes, want 4×4 elements of float64 = 128 bytes
	// true
}
