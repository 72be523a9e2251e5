package solver

import (
	"math"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/enum"
	"github.com/cudago/cudago/internal/libhandle"
)

// Float is the element type of the dense solvers: cuSOLVER's S and D
// routines.
type Float interface {
	float32 | float64
}

// Layout is the order in which a matrix's elements are stored.
type Layout int

const (
	// ColMajor: column j is elements j·n to j·n+n-1 (LAPACK's and
	// cuSOLVER's order).
	ColMajor Layout = iota
	// RowMajor: row i is elements i·n to i·n+n-1 (Go's order). cuSOLVER
	// reads such an array as the transpose of the matrix.
	RowMajor
)

func (l Layout) String() string { return enum.Name(l, "Layout", "ColMajor", "RowMajor") }

// Uplo names the triangle of a symmetric matrix that an operation reads,
// as the column-major array shows it. In a row-major array the triangles
// swap: the column-major Lower triangle is the row-major upper one. A
// matrix stored in full is read correctly either way.
type Uplo int

const (
	Lower Uplo = iota // the lower triangle, diagonal included
	Upper             // the upper triangle, diagonal included
)

func (u Uplo) String() string { return enum.Name(u, "Uplo", "Lower", "Upper") }

func (u Uplo) fill() cublas.FillMode {
	if u == Upper {
		return cublas.FillModeUpper
	}
	return cublas.FillModeLower
}

// EigJob says what SymEig computes.
type EigJob int

const (
	Values           EigJob = iota // eigenvalues only
	ValuesAndVectors               // eigenvalues, and eigenvectors in place of the matrix
)

func (j EigJob) String() string {
	return enum.Name(j, "EigJob", "Values", "ValuesAndVectors")
}

// The checks here are pure Go and run before anything is held or queued;
// what needs a Buffer held (its address, its memory) the operation's
// libhandle.Operands checks.

// checkHandle checks an operation's handle and order n.
func checkHandle(fn string, h *Handle, n int) error {
	if h == nil {
		return argErr(fn, "h", "nil *Handle")
	}
	if n < 1 || n > math.MaxInt32 {
		return argErr(fn, "n", "n = %d is outside [1, %d]", n, math.MaxInt32)
	}
	return nil
}

// checkRHS checks the right-hand sides b of a solve with the n×n matrix a.
func checkRHS[T Float](fn string, a *core.Buffer, n int, b *core.Buffer, nrhs int) error {
	if nrhs < 1 || nrhs > math.MaxInt32 { // cuSOLVER takes it in 32 bits
		return argErr(fn, "nrhs", "nrhs = %d is outside [1, %d]", nrhs, math.MaxInt32)
	}
	if err := checkBuf[T](fn, "B", b, n, nrhs); err != nil {
		return err
	}
	es := libhandle.SizeOf[T]()
	return libhandle.CheckOverlap("solver", fn, "A", a, n*n*es, "B", b, n*nrhs*es)
}

// checkBuf checks that b holds rows×cols elements of T.
func checkBuf[T Float](fn, arg string, b *core.Buffer, rows, cols int) error {
	return libhandle.CheckDense[T]("solver", fn, arg, b, rows, cols)
}

func isFloat32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}
