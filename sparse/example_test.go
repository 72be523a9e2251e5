package sparse_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/lib"
	"github.com/cudago/cudago/sparse"
)

// y = A·x for a 3×3 matrix in CSR form. NewCSR checks the arrays on the
// CPU and copies them to the device; SpMV is queued on the Handle's
// stream. (It needs a GPU, so it has no Output.)
func ExampleSpMV() {
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	s := dev.DefaultStream() // the legacy default stream; any Stream will do
	// A = [[2, 0, 1], [0, 3, 0], [0, 0, 4]]
	a, err := sparse.NewCSR(s, 3, 3, []int32{0, 2, 3, 4}, []int32{0, 2, 1, 2}, []float32{2, 1, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	h, err := sparse.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	xb, err := dev.Allocate(3*4, s)
	if err != nil {
		log.Fatal(err)
	}
	defer xb.Close()
	yb, err := dev.Allocate(3*4, s)
	if err != nil {
		log.Fatal(err)
	}
	defer yb.Close()
	if err := core.CopyToDevice(xb, []float32{1, 1, 1}); err != nil {
		log.Fatal(err)
	}
	if err := sparse.SpMV(h, sparse.NoTrans, 1, a, xb, 0, yb); err != nil { // y = 1·A·x + 0·y
		log.Fatal(err)
	}
	y := make([]float32, 3)
	if err := core.CopyFromDevice(y, yb); err != nil {
		log.Fatal(err)
	}
	fmt.Println(y) // [3 3 4]
}

// The arrays of a matrix are checked on the CPU before the stream is
// used: a malformed matrix is a *lib.ArgError naming the array, and
// cuSPARSE never sees it.
func ExampleNewCSR_errors() {
	// Row 0's columns are not sorted.
	_, err := sparse.NewCSR[float64, int32](nil, 2, 3, []int32{0, 2, 3}, []int32{2, 0, 1}, []float64{1, 2, 3})
	var ae *lib.ArgError
	if errors.As(err, &ae) {
		fmt.Println(ae.Arg)
	}
	fmt.Println(err)
	// Output:
	// colInd
	// sparse: NewCSR: colInd[1] = 0 (row 0) does not follow colInd[0] = 2: the columns of a row must increase (sorted, no duplicates)
}

// Transpose is the type blas takes too: the same constants serve both.
func ExampleTranspose() {
	fmt.Println(sparse.ConjTrans, sparse.Transpose(1))
	r, c := sparse.Trans.Dims(2, 5) // op(A) of a 2×5 matrix
	fmt.Println(r, c)
	// Output:
	// ConjTrans Trans
	// 5 2
}
