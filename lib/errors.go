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
}

// Error returns "package: function: message".
func (e *ArgError) Error() string { return e.Package + ": " + e.Func + ": " + e.Msg }
