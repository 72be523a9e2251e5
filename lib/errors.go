package lib

// ArgError reports an argument that is invalid, or that does not fit the
// Buffers or the object it is given with. Every library package returns
// one before it calls its library, so a call that gives an *ArgError has
// queued nothing. Match it with errors.As:
//
//	var ae *lib.ArgError
//	if errors.As(err, &ae) && ae.Arg == "lda" { ... }
type ArgError struct {
	Package string // the package: "blas"
	Func    string // its function or method: "Gemm", "Plan.Forward"
	Arg     string // the argument: "lda", "b", "a[3]", "opts.Seed"
	Msg     string // what is wrong, naming the argument
	// Err, when not nil, is a sentinel the error also matches with
	// errors.Is (core.ErrInvalidOption, for a package that has one).
	Err error
}

// Error returns "package: function: message".
func (e *ArgError) Error() string { return e.Package + ": " + e.Func + ": " + e.Msg }

// Unwrap returns Err.
func (e *ArgError) Unwrap() error { return e.Err }
