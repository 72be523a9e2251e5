package lib

import "strconv"

// Transpose is what an operation does to a matrix operand before it uses
// it: op(A) is A, Aᵀ or Aᴴ. It is cuBLAS's cublasOperation_t and
// cuSPARSE's cusparseOperation_t, one type for both.
type Transpose uint8

const (
	NoTrans   Transpose = iota // op(A) = A
	Trans                      // op(A) = Aᵀ
	ConjTrans                  // op(A) = Aᴴ (Aᵀ for real types)
)

// Valid reports whether t is NoTrans, Trans or ConjTrans.
func (t Transpose) Valid() bool { return t <= ConjTrans }

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
	return "Transpose(" + strconv.Itoa(int(t)) + ")"
}

// Dims returns the shape of op(A) for a rows×cols matrix A.
func (t Transpose) Dims(rows, cols int) (r, c int) {
	if t == NoTrans {
		return rows, cols
	}
	return cols, rows
}
