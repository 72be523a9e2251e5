// Command bindgen generates cudago's low-level bindings from NVIDIA's C
// headers. It parses the headers with a real C front end (modernc.org/cc/v4),
// never with regular expressions, and writes for one library:
//
//   - types_gen.go: enums (typed constants with String), structs and unions with
//     the C layout, handles, aliases and the header's integer macros;
//   - funcs_gen.go: one Go function per C function, output parameters turned into
//     results and the error last; a count parameter that its name pairs with
//     slice parameters (numOptions and options) is checked against their
//     lengths, and a *CountError is returned instead of calling C with a
//     count larger than a slice;
//   - shims_gen.h / shims_gen.c: the C declarations and call shims cgo needs, so no
//     CUDA header is needed to build;
//   - layout_gen_test.go: sizes and field offsets that a test checks against
//     the C compiler (only for libraries with structs).
//
// Status types get String, Error and Explanation (the header's doc of each
// value); the driver's Result also gets Sticky. Every file opens with the
// standard "Code generated ... DO NOT EDIT." line naming this command and the
// headers it read.
//
// With -core DIR it writes instead package core's own C layer over the
// driver, from the calls listed in the //cudago: lines of package DIR
// (core/calls.go; see calllist.go and corecalls.go): drivercalls_gen.h/.c/.go
// in DIR. core's go:generate line runs it.
//
// With -calls DIR it writes the library calls of the package in folder DIR
// (blas, rng, fft, sparse, solver, nccl, gds: the packages over the
// libraries), from the //cudago:libs and //cudago:call lines of that
// package (its calls.go; see calllist.go and layercalls.go):
// calls_gen.h/.c/.go in DIR, one unexported Go function per listed C
// function, named <C prefix><Go name> (cublasSgemm for cublas.Sgemm,
// cublasLtMatmul for cublaslt.Matmul), taking ctx driver.Context and then
// the bindings function's own parameters, returning its results and errors:
// one cgo call makes ctx current (0: the thread's current one) and calls
// the entry point the bindings package resolves (its Proc). A new package
// writes its calls.go and the line
//
//	//go:generate go run ../internal/bindgen -calls .
//
// and adding a call to a package touches that package only.
//
// Every bindings package therefore exports Proc and StatusError, through
// which package internal/cgx resolves the entry points and makes the errors;
// internal/cgx/cgx.h holds the C helpers core and the packages share.
//
// Usage (from a bindings package directory, through go generate):
//
//	go run ../../internal/bindgen -lib driver -headers ../../../shared/cuda-headers
//	go run ../internal/bindgen -lib driver -core .   (from core)
//	go run ../internal/bindgen -calls .              (from blas, rng, ...)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cudago/cudago/internal/fsutil"
)

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		if _, ok := err.(usageError); ok {
			fmt.Fprintln(os.Stderr, "bindgen:", err)
		} // else the flag package has said what was wrong
		os.Exit(2)
	}
	dir, err := headersDir(o.headers)
	if err == nil {
		err = o.run("", buildLoader(dir))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bindgen:", err)
		os.Exit(1)
	}
}

// options are bindgen's flags: what one run, one go:generate line, asks for.
type options struct {
	lib, headers, out, core, calls string
}

// usageError is a wrong combination of flags.
type usageError string

func (e usageError) Error() string { return string(e) }

// parseOptions parses bindgen's command line.
func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bindgen", flag.ContinueOnError)
	fs.StringVar(&o.lib, "lib", "", "library to generate: "+libNames())
	fs.StringVar(&o.headers, "headers", "", "folder holding the 12.4/ and 13.0/ header folders (default: ../shared/cuda-headers beside the repository)")
	fs.StringVar(&o.out, "out", ".", "output folder (the bindings package)")
	fs.StringVar(&o.core, "core", "", "write package core's driver calls (the //cudago: lines of the package in this folder) into it instead of the bindings")
	fs.StringVar(&o.calls, "calls", "", "write the library calls of the package in this folder (its //cudago: lines) into it instead of the bindings")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError(fmt.Sprintf("unexpected arguments %q", fs.Args()))
	case o.calls != "" && (o.lib != "" || o.core != ""):
		return o, usageError("-calls takes no -lib or -core: the package's //cudago:libs line names the libraries")
	case o.calls == "" && configs[o.lib] == nil:
		return o, usageError(fmt.Sprintf("unknown -lib %q (want one of %s)", o.lib, libNames()))
	}
	return o, nil
}

// dest is the folder o's files belong in.
func (o options) dest() string {
	switch {
	case o.calls != "":
		return o.calls
	case o.core != "":
		return o.core
	}
	return o.out
}

// loader returns a library's model (configs' key), built from the headers.
type loader func(lib string) (*model, error)

// buildLoader builds each model asked for from the headers in folder dir.
func buildLoader(dir string) loader {
	return func(lib string) (*model, error) {
		cfg, ok := configs[lib]
		if !ok {
			return nil, fmt.Errorf("unknown library %q (want one of %s)", lib, libNames())
		}
		return buildModel(cfg, dir)
	}
}

// run generates what o asks for, with the models load gives, into folder
// to ("": o.dest(); the tests pass a temporary folder and reuse models).
func (o options) run(to string, load loader) error {
	if to == "" {
		to = o.dest()
	}
	switch {
	case o.calls != "":
		return generateCalls(o.calls, to, load)
	case o.core != "":
		return generateCore(o.lib, o.core, to, load)
	}
	m, err := load(o.lib)
	if err != nil {
		return err
	}
	return writeBindings(m, to)
}

// headersDir is the -headers folder, or the one findHeaders finds.
func headersDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	return findHeaders()
}

// findHeaders finds ../shared/cuda-headers beside the repository.
func findHeaders() (string, error) { return fsutil.FindShared("cuda-headers", "13.0/cuda.h") }
