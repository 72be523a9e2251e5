package lib_test

import (
	"errors"
	"fmt"

	"github.com/cudago/cudago/lib"
)

// Every library package reports a bad argument as a *lib.ArgError, which
// names the package, the function and the argument.
func ExampleArgError() {
	var err error = &lib.ArgError{Package: "blas", Func: "Gemm", Arg: "lda", Msg: "lda = 3 must be at least 5: A is 5×4, column-major"}
	err = fmt.Errorf("layer 2: %w", err)

	var ae *lib.ArgError
	if errors.As(err, &ae) {
		fmt.Println(ae.Package, ae.Func, ae.Arg)
		fmt.Println(ae)
	}
	// Output:
	// blas Gemm lda
	// blas: Gemm: lda = 3 must be at least 5: A is 5×4, column-major
}

// A package with a sentinel for bad arguments keeps it matching: Err is
// what errors.Is sees through the ArgError.
func ExampleArgError_Err() {
	errInvalid := errors.New("invalid option")
	var err error = &lib.ArgError{Package: "core", Func: "NewProgram", Arg: "opts.Arch", Msg: `unknown architecture "sm_9x"`, Err: errInvalid}
	fmt.Println(errors.Is(err, errInvalid))
	// Output:
	// true
}

// op(A) of a 2×3 matrix is 2×3, or 3×2 transposed.
func ExampleTranspose_Dims() {
	for _, t := range []lib.Transpose{lib.NoTrans, lib.Trans, lib.ConjTrans, 7} {
		r, c := t.Dims(2, 3)
		fmt.Printf("%v: %d×%d valid=%v\n", t, r, c, t.Valid())
	}
	// Output:
	// NoTrans: 2×3 valid=true
	// Trans: 3×2 valid=true
	// ConjTrans: 3×2 valid=true
	// Transpose(7): 3×2 valid=false
}
