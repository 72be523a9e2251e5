package blas

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/lib"
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

// FP8 is an element type of MatmulFP8's A and B.
type FP8 interface {
	E4M3 | E5M2
}

// FP8Result is an element type of MatmulFP8's C.
type FP8Result interface {
	Half | BFloat16 | float32 | E4M3 | E5M2
}

// anyType is every element type of the package.
type anyType interface {
	Scalar | MatmulScalar | FP8
}

// Transpose says what a routine does to a matrix before multiplying it.
// It is lib.Transpose, the type sparse takes too.
type Transpose = lib.Transpose

const (
	NoTrans   = lib.NoTrans   // op(A) = A
	Trans     = lib.Trans     // op(A) = Aᵀ
	ConjTrans = lib.ConjTrans // op(A) = Aᴴ (Aᵀ for real types)
)

// cublasOp is t as cuBLAS's operation; real types take ConjTrans as Trans.
func cublasOp(t Transpose, complex bool) cublas.Operation {
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

// ArgError is lib.ArgError, the error of every library package for a bad
// argument; it is returned before any library call.
//
// Deprecated: match *lib.ArgError, which every library package returns;
// this name goes in the next release.
type ArgError = lib.ArgError

// elem describes an element type.
type elem struct {
	kind    byte // 's', 'd', 'c', 'z', 'h' (Half), 'b' (BFloat16), '4' (E4M3), '5' (E5M2)
	name    string
	size    int
	complex bool
	dt      cublas.DataType
}

func elemOf[T anyType]() elem {
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
		return halfElem
	case BFloat16:
		return bfloat16Elem
	case E4M3:
		return elem{'4', "E4M3", 1, false, cublas.R8FE4M3}
	default: // E5M2
		return elem{'5', "E5M2", 1, false, cublas.R8FE5M2}
	}
}

var (
	halfElem     = elem{'h', "Half", 2, false, cublas.R16F}
	bfloat16Elem = elem{'b', "BFloat16", 2, false, cublas.R16bf}
)

func (e elem) fp8() bool { return e.kind == '4' || e.kind == '5' }

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
