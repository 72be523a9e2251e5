// Package fakelib builds stand-ins for NVIDIA's shared libraries (libcuda,
// libcublas, libcublasLt, libcufft) from C, for tests and benchmarks that
// run cudago's library packages end to end without a GPU: core opens a
// device, a context and a stream, blas and fft make their handles and
// plans and call the library, every call crossing cgo into the fake
// exactly as into NVIDIA's. The fakes return at once, so what such a
// benchmark times is cudago's own work per call, and its C twin
// (internal/testing/ctwin) times a C loop over the same fake: their
// difference is what the Go side costs. Internal/testing/fakecuda does the
// same for core's hot paths from inside core; this package works through
// pathfinder's override variables (CUDAGO_DRIVER_PATH and the others), so
// that it serves packages that only see core's exported API.
//
// The variables must be set before the process loads any CUDA library:
// a test binary that uses the fakes sets them in TestMain, and uses
// nothing else. Building needs a C compiler (CC, or gcc), as cgo does.
package fakelib

/*
#include <stdint.h>

typedef long long (*calls_t)(void);
typedef int (*last_t)(long long *, int);

static long long fake_calls(void *f) { return ((calls_t)f)(); }
static int fake_last(void *f, long long *out, int n) { return ((last_t)f)(out, n); }
*/
import "C"

import (
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/cudago/cudago/pathfinder"
)

//go:embed csrc/*.c
var csrc embed.FS

// Handle is the cuBLAS handle that the fake cublasCreate returns.
const Handle = 0xb1a5

// The fakes, by the source in csrc, the file name each is built as and the
// pathfinder variable that points at it.
var libs = []struct {
	src, file string
	lib       pathfinder.Lib
}{
	{"cuda.c", "libcuda.so.1", pathfinder.Driver},
	{"cublasLt.c", "libcublasLt.so.13", pathfinder.CuBLASLt},
	{"cublas.c", "libcublas.so.13", pathfinder.CuBLAS},
	{"cufft.c", "libcufft.so.12", pathfinder.CuFFT},
}

// Build compiles the fakes into dir and returns the environment that
// makes pathfinder load them (NAME=value entries), with the search of
// Python's site-packages turned off (it would start python3).
func Build(dir string) ([]string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	cc, _, _ = strings.Cut(cc, " ")
	env := []string{"CUDAGO_PYTHON_SITE=off"}
	for _, l := range libs {
		src, err := csrc.ReadFile("csrc/" + l.src)
		if err != nil {
			return nil, err
		}
		c := filepath.Join(dir, l.src)
		if err := os.WriteFile(c, src, 0o644); err != nil {
			return nil, err
		}
		out := filepath.Join(dir, l.file)
		// No DT_SONAME: a soname would make the fake "already loaded" for
		// the real library's search in this process.
		if b, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", out, c).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("fakelib: building %s: %v\n%s", l.file, err, b)
		}
		env = append(env, l.lib.EnvVar()+"="+out)
	}
	return env, nil
}

// Setenv builds the fakes into dir and sets the environment of the
// process to load them.
func Setenv(dir string) error {
	env, err := Build(dir)
	if err != nil {
		return err
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Calls returns how many times the fake library l's counted entry point
// (cublasSgemm_v2; cublasLtMatmul; cuFFT's exec calls) has been called.
func Calls(l pathfinder.Lib) (int64, error) {
	f, err := symbol(l, "cudago_fake_calls")
	if err != nil {
		return 0, err
	}
	return int64(C.fake_calls(f)), nil
}

// Last returns the arguments of the last counted call, as the fake kept
// them (csrc/cublas.c, cublasLt.c and cufft.c say in which order; a float is its
// bits, a pointer its address).
func Last(l pathfinder.Lib) ([]int64, error) {
	f, err := symbol(l, "cudago_fake_last")
	if err != nil {
		return nil, err
	}
	var v [16]C.longlong
	n := int(C.fake_last(f, &v[0], C.int(len(v))))
	out := make([]int64, min(n, len(v)))
	for i := range out {
		out[i] = int64(v[i])
	}
	return out, nil
}

func symbol(l pathfinder.Lib, name string) (unsafe.Pointer, error) {
	lib, err := pathfinder.Load(l)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(lib.Found, "env ") {
		return nil, fmt.Errorf("fakelib: %s came from %s, not from the fakes' variable %s", lib.Path, lib.Found, l.EnvVar())
	}
	return lib.Symbol(name)
}
