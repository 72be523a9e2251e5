package blas

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/driver"
)

// Scalar is an element type of the cuBLAS routines: float32, float64,
// complex64 and complex128 (cuBLAS's S, D, C and Z).
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// MatmulScalar is an element type of Matmul, through cuBLASLt.
type MatmulScalar interface {
	Half | BFloat16 | float32
}

// Transpose says what a routine does to a matrix before multiplying it.
type Transpose uint8

const (
	NoTrans   Transpose = iota // op(A) = A
	Trans                      // op(A) = Aᵀ
	ConjTrans                  // op(A) = Aᴴ (Aᵀ for real types)
)

// String returns the constant's name.
func (t Transpose) String() string {
	switch t {
	case NoTrans:
		return "NoTrans"
	case Trans:
		return "Trans"
	case ConjTrans:
		return "ConjTrans"
	}
	return fmt.Sprintf("Transpose(%d)", uint8(t))
}

func (t Transpose) valid() bool { return t <= ConjTrans }

// op is t as cuBLAS's operation; real types take ConjTrans as Trans.
func (t Transpose) op(complex bool) cublas.Operation {
	switch {
	case t == NoTrans:
		return cublas.OpN
	case t == ConjTrans && complex:
		return cublas.OpC
	}
	return cublas.OpT
}

// ComputeType is the arithmetic of a Matmul: the precision its products
// are summed in (and its split-K partial sums are reduced in), and the
// type of alpha and beta. It has no default: the caller chooses.
type ComputeType uint8

const (
	// ComputeFloat32 sums in float32 (CUBLAS_COMPUTE_32F): for Half,
	// BFloat16 and float32. With Half or BFloat16 the results are rounded
	// once, at the end; no partial sum is kept in the 16-bit type.
	ComputeFloat32 ComputeType = iota + 1
	// ComputeFloat16 sums in Half (CUBLAS_COMPUTE_16F): for Half only.
	// Faster on some GPUs, with Half's precision (2⁻¹¹) in every partial
	// sum; alpha and beta are rounded to Half.
	ComputeFloat16
	// ComputeTF32 rounds the float32 inputs to TF32 (10 fraction bits)
	// and sums in float32 on tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32):
	// for float32 only, when that precision is acceptable.
	ComputeTF32
)

// String returns the constant's name.
func (c ComputeType) String() string {
	switch c {
	case ComputeFloat32:
		return "ComputeFloat32"
	case ComputeFloat16:
		return "ComputeFloat16"
	case ComputeTF32:
		return "ComputeTF32"
	}
	return fmt.Sprintf("ComputeType(%d)", uint8(c))
}

// ArgError reports an argument that is invalid or does not fit the
// Buffers it describes; it is returned before any library call.
type ArgError struct {
	Func string // the package's function: "Gemm"
	Arg  string // the argument: "lda", "b", "a[3]", "strideC"
	Msg  string // what is wrong, naming the argument
}

func (e *ArgError) Error() string { return "blas: " + e.Func + ": " + e.Msg }

func argErr(fn, arg, format string, args ...any) error {
	return &ArgError{Func: fn, Arg: arg, Msg: fmt.Sprintf(format, args...)}
}

// elem describes an element type.
type elem struct {
	kind    byte // 's', 'd', 'c', 'z', 'h' (Half), 'b' (BFloat16)
	name    string
	size    int
	complex bool
	dt      cublas.DataType
}

func elemOf[T Scalar | MatmulScalar]() elem {
	var z T
	switch any(z).(type) {
	case float32:
		return elem{'s', "float32", 4, false, cublas.R32F}
	case float64:
		return elem{'d', "float64", 8, false, cublas.R64F}
	case complex64:
		return elem{'c', "complex64", 8, true, cublas.C32F}
	case complex128:
		return elem{'z', "complex128", 16, true, cublas.C64F}
	case Half:
		return elem{'h', "Half", 2, false, cublas.R16F}
	default: // BFloat16
		return elem{'b', "BFloat16", 2, false, cublas.R16bf}
	}
}

// dev converts a device address to the typed pointer a binding takes.
func dev[E any](p driver.Deviceptr) *E {
	return (*E)(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
}

// ptr converts a device address to an unsafe.Pointer.
func ptr(p driver.Deviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// scalars is host memory for one call's alpha and beta, or its result.
// The bindings' C calls are not marked nocallback, so the compiler cannot
// see that a pointer passed to them does not outlive the call: a Go
// variable passed by address would be moved to the heap on every call.
// cuBLAS reads host-mode scalars (and writes results) before it returns,
// so a slot goes back to the pool right after the call.
type scalars [2]complex128

var scalarPool = sync.Pool{New: func() any { return new(scalars) }}

// getScalars returns a slot holding alpha and beta, as T each.
func getScalars[T any](alpha, beta T) *scalars {
	s := scalarPool.Get().(*scalars)
	*(*T)(unsafe.Pointer(&s[0])) = alpha
	*(*T)(unsafe.Pointer(&s[1])) = beta
	return s
}

func (s *scalars) ptrs() (unsafe.Pointer, unsafe.Pointer) {
	return unsafe.Pointer(&s[0]), unsafe.Pointer(&s[1])
}
