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
// driver, from the list of calls in the driver's config (driverCore in
// config.go; see corecalls.go): drivercalls_gen.h/.c/.go in DIR. core's
// go:generate line runs it.
//
// With -calls DIR it writes the library calls of the package in folder DIR
// (blas, rng, fft, sparse, solver: the packages over the math libraries),
// from that package's list in layerCalls (config.go; see layercalls.go):
// calls_gen.h/.c/.go in DIR, one unexported Go function per listed C
// function, named <C prefix><Go name> (cublasSgemm for cublas.Sgemm,
// cublasLtMatmul for cublaslt.Matmul), taking ctx driver.Context and then
// the bindings function's own parameters, returning its results and errors:
// one cgo call makes ctx current (0: the thread's current one) and calls
// the entry point the bindings package resolves (its Proc). A package adds
// its list there and the line
//
//	//go:generate go run ../internal/bindgen -calls .
//
// Every bindings package therefore exports Proc and StatusError, through
// which package internal/cgx resolves the entry points and makes the errors;
// internal/cgx/cgx.h holds the C helpers core and the packages share.
//
// Usage (from a bindings package directory, through go generate):
//
//	go run ../../internal/bindgen -lib driver
//	go run ../internal/bindgen -lib driver -core .   (from core)
//	go run ../internal/bindgen -calls .              (from blas, rng, ...)
//
// The headers are CUDA 13.0's and 12.4's, found as package
// internal/cudaheaders says: -headers DIR first, then CUDAGO_CUDA_HEADERS,
// shared/cuda-headers beside the repository, the local install of
// scripts/setup-cuda.sh (12.4) and a CUDA install. DIR (like each folder of
// CUDAGO_CUDA_HEADERS, separated by ':') is a folder of version folders
// (12.4/, 13.0/) or a CUDA include folder. A missing header is an error
// naming it and every place searched.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cudago/cudago/internal/cudaheaders"
)

func main() {
	lib := flag.String("lib", "", "library to generate: "+libNames())
	headers := flag.String("headers", "", "header folders searched first, separated by ':': each a folder of version folders (12.4/, 13.0/) or a CUDA include folder (then "+cudaheaders.Env+", shared/cuda-headers, .cuda, CUDA_HOME, /usr/local/cuda)")
	out := flag.String("out", ".", "output folder (the bindings package)")
	core := flag.String("core", "", "write package core's driver calls (the config's core list) into this folder instead of the bindings")
	calls := flag.String("calls", "", "write the library calls of the package in this folder (its list in the config's layerCalls) instead of the bindings")
	flag.Parse()
	if *calls != "" {
		if *lib != "" || *core != "" {
			fmt.Fprintln(os.Stderr, "bindgen: -calls takes no -lib or -core: the config's list names the libraries")
			os.Exit(2)
		}
		if err := generateCalls(*calls, cudaheaders.Find(*headers)); err != nil {
			fmt.Fprintln(os.Stderr, "bindgen:", err)
			os.Exit(1)
		}
		return
	}
	cfg, ok := configs[*lib]
	if !ok {
		fmt.Fprintf(os.Stderr, "bindgen: unknown -lib %q (want one of %s)\n", *lib, libNames())
		os.Exit(2)
	}
	gen := generate
	if *core != "" {
		gen, *out = generateCore, *core
	}
	if err := gen(cfg, cudaheaders.Find(*headers), *out); err != nil {
		fmt.Fprintln(os.Stderr, "bindgen:", err)
		os.Exit(1)
	}
}
