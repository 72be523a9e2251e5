package solver

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/core"
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

func (l Layout) String() string {
	switch l {
	case ColMajor:
		return "ColMajor"
	case RowMajor:
		return "RowMajor"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Uplo names the triangle of a symmetric matrix that an operation reads,
// as the column-major array shows it. In a row-major array the triangles
// swap: the column-major Lower triangle is the row-major upper one. A
// matrix stored in full is read correctly either way.
type Uplo int

const (
	Lower Uplo = iota // the lower triangle, diagonal included
	Upper             // the upper triangle, diagonal included
)

func (u Uplo) String() string {
	switch u {
	case Lower:
		return "Lower"
	case Upper:
		return "Upper"
	}
	return fmt.Sprintf("Uplo(%d)", int(u))
}

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
	switch j {
	case Values:
		return "Values"
	case ValuesAndVectors:
		return "ValuesAndVectors"
	}
	return fmt.Sprintf("EigJob(%d)", int(j))
}

func sizeOf[T Float]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// checkHandle checks an operation's handle and order n.
func checkHandle(fn string, h *Handle, n int) error {
	if h == nil {
		return fmt.Errorf("solver: %s: nil *Handle", fn)
	}
	if h.st == nil {
		return fmt.Errorf("solver: %s: a Handle not made by NewHandle: %w", fn, core.ErrClosed)
	}
	if n < 1 || n > math.MaxInt32 {
		return fmt.Errorf("solver: %s: n = %d is outside [1, %d]", fn, n, math.MaxInt32)
	}
	return nil
}

// checkNRHS checks a number of right-hand sides, which cuSOLVER takes in
// 32 bits.
func checkNRHS(fn string, nrhs int) error {
	if nrhs < 1 || nrhs > math.MaxInt32 {
		return fmt.Errorf("solver: %s: nrhs = %d is outside [1, %d]", fn, nrhs, math.MaxInt32)
	}
	return nil
}

// checkBuf checks that b holds rows×cols elements of T, usable from the
// handle's device, and is open.
func checkBuf[T Float](fn string, h *Handle, name string, b *core.Buffer, rows, cols int) error {
	if b == nil {
		return fmt.Errorf("solver: %s: nil *core.Buffer for %s", fn, name)
	}
	es := sizeOf[T]()
	var z T
	if rows > math.MaxInt/es/cols {
		return fmt.Errorf("solver: %s: %s of %d×%d elements is too large", fn, name, rows, cols)
	}
	if need := rows * cols * es; b.Size() < need {
		return fmt.Errorf("solver: %s: %s holds %d bytes, want %d×%d elements of %T = %d bytes", fn, name, b.Size(), rows, cols, z, need)
	}
	ptr, err := b.Acquire()
	if err != nil {
		return fmt.Errorf("solver: %s: %s: %w", fn, name, err)
	}
	b.Release()
	if uint64(ptr)%uint64(es) != 0 {
		return fmt.Errorf("solver: %s: %s at %#x is not aligned to %d bytes for %T", fn, name, uint64(ptr), es, z)
	}
	if mr := b.MemoryResource(); mr != nil {
		if !mr.DeviceAccessible() {
			return fmt.Errorf("solver: %s: %s is %T memory, which the GPU cannot use", fn, name, mr)
		}
		if s := h.st.Stream(); s != nil && mr.Device() != nil && mr.Device() != s.Device() { // nil: a resource of no one device
			return fmt.Errorf("solver: %s: %s is on %v, the handle's stream on %v", fn, name, mr.Device(), s.Device())
		}
	}
	return nil
}

// checkOverlap refuses two operands whose first n1 and n2 elements
// overlap: cuSOLVER reads one while it writes the other.
func checkOverlap[T Float](fn, name1 string, b1 *core.Buffer, n1 int, name2 string, b2 *core.Buffer, n2 int) error {
	es := uint64(sizeOf[T]())
	p, q := uint64(b1.Ptr()), uint64(b2.Ptr())
	if p < q+uint64(n2)*es && q < p+uint64(n1)*es {
		return fmt.Errorf("solver: %s: %s and %s overlap", fn, name1, name2)
	}
	return nil
}
