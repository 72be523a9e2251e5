//go:build linux && cgo

package pathfinder

/*
// XxxGetProperty(libraryPropertyType, int *) of the math libraries, and
// cudaRuntimeGetVersion(int *); the status enums and libraryPropertyType
// are int-sized.
typedef int (*cudago_fn_property)(int, int *);
typedef int (*cudago_fn_version)(int *);
typedef const char *(*cudago_fn_statusname)(int);
// cudnnGetVersion, cudnnGetCudartVersion, cutensorGetVersion and
// cutensorGetCudartVersion take nothing and return a size_t.
typedef size_t (*cudago_fn_size)(void);
// cuptiGetVersion(uint32_t *).
typedef int (*cudago_fn_u32)(unsigned int *);

static int cudago_call_property(void *f, int type, int *v) { return ((cudago_fn_property)f)(type, v); }
static int cudago_call_version(void *f, int *v) { return ((cudago_fn_version)f)(v); }
static const char *cudago_call_statusname(void *f, int rc) { return ((cudago_fn_statusname)f)(rc); }
static unsigned long long cudago_call_size(void *f) { return ((cudago_fn_size)f)(); }
static int cudago_call_u32(void *f, unsigned int *v) { return ((cudago_fn_u32)f)(v); }
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// propertyFuncs are the functions that give the math libraries' versions
// without a handle, a context or a GPU.
var propertyFuncs = map[Lib]string{
	CuBLAS:   "cublasGetProperty",
	CuBLASLt: "cublasLtGetProperty",
	CuFFT:    "cufftGetProperty",
	CuRAND:   "curandGetProperty",
	CuSPARSE: "cusparseGetProperty",
	CuSOLVER: "cusolverGetProperty",
}

// statusNames are the functions that name a library's status codes.
var statusNames = map[Lib]string{
	CUDART:   "cudaGetErrorName",
	NCCL:     "ncclGetErrorString",
	CuBLAS:   "cublasGetStatusName",
	CuSPARSE: "cusparseGetErrorName",
}

// libraryPropertyType's values (library_types.h).
const (
	propMajor = 0
	propMinor = 1
	propPatch = 2
)

// callVersion calls the library's int name(int *version) and returns the
// version it wrote, or its status as an error.
func (l *Library) callVersion(name string) (int, error) {
	f, err := l.Symbol(name)
	if err != nil {
		return 0, err
	}
	var n C.int
	if rc := C.cudago_call_version(f, &n); rc != 0 {
		return 0, l.statusError(name, int(rc))
	}
	return int(n), nil
}

// mathVersion returns the version of the CUDA runtime, the math libraries
// and NVTX; ok is false for the other libraries.
//
//	CUDART     cudaRuntimeGetVersion, "12.4"
//	CuBLAS …   XxxGetProperty(MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL):
//	           the library's own version, "12.4.5" for cuBLAS of CUDA 12.4
//	NVTX       none exists: the version in the file name, "1.0.0"
//	NCCL       ncclGetVersion: NCCL's version code, "2.22.3"
func mathVersion(l *Library) (v string, ok bool, err error) {
	switch l.Lib {
	case NCCL:
		n, err := l.callVersion("ncclGetVersion")
		if err != nil {
			return "", true, err
		}
		return ncclVersion(n), true, nil
	case CUDART:
		n, err := l.callVersion("cudaRuntimeGetVersion")
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("%d.%d", n/1000, n%1000/10), true, nil
	case NVTX, CuDLA:
		v, err := fileVersion(l.Path)
		return v, true, err
	case CuDNN, CuTENSOR:
		fn := "cudnnGetVersion"
		if l.Lib == CuTENSOR {
			fn = "cutensorGetVersion"
		}
		f, err := l.Symbol(fn)
		if err != nil {
			return "", true, err
		}
		return libVersion(l.Lib, uint64(C.cudago_call_size(f))), true, nil
	case CUPTI:
		// libcupti.so.12 links to a file named by CUPTI's own version
		// (libcupti.so.2024.1.1); cuptiGetVersion gives only its API's.
		if v, err := fileVersion(l.Path); err == nil && strings.Contains(v, ".") {
			return v, true, nil
		}
		f, err := l.Symbol("cuptiGetVersion")
		if err != nil {
			return "", true, err
		}
		var n C.uint
		if rc := C.cudago_call_u32(f, &n); rc != 0 {
			return "", true, fmt.Errorf("pathfinder: cuptiGetVersion in %s failed: CUptiResult %d", l.Path, rc)
		}
		return fmt.Sprintf("API %d", n), true, nil
	}
	name, ok := propertyFuncs[l.Lib]
	if !ok {
		return "", false, nil
	}
	f, err := l.Symbol(name)
	if err != nil {
		return "", true, err
	}
	var parts [3]C.int
	for i, prop := range []C.int{propMajor, propMinor, propPatch} {
		if rc := C.cudago_call_property(f, prop, &parts[i]); rc != 0 {
			return "", true, l.statusError(fmt.Sprintf("%s(%d)", name, prop), int(rc))
		}
	}
	return fmt.Sprintf("%d.%d.%d", parts[0], parts[1], parts[2]), true, nil
}

// statusError describes a failed call of a runtime or math library
// function, with the status's name where the library can give it.
func (l *Library) statusError(fn string, rc int) error {
	if sym, ok := statusNames[l.Lib]; ok {
		if f, err := l.Symbol(sym); err == nil {
			if s := C.cudago_call_statusname(f, C.int(rc)); s != nil {
				return fmt.Errorf("pathfinder: %s in %s failed: %s (%d)", fn, l.Path, C.GoString(s), rc)
			}
		}
	}
	return fmt.Errorf("pathfinder: %s in %s failed: status %d", fn, l.Path, rc)
}

// libVersion formats the version code of cuDNN or cuTENSOR: cuDNN 9's
// 90100 is "9.1.0" (cuDNN 8's 8907 is "8.9.7"), cuTENSOR's 20301 is
// "2.3.1".
func libVersion(l Lib, code uint64) string {
	if l == CuDNN && code < 90000 {
		return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
}

// cudartVersion asks cuDNN or cuTENSOR (by its handle) for the CUDA
// runtime version it was built with, 12090 for CUDA 12.9; 0 when it
// cannot say.
func cudartVersion(h unsafe.Pointer, l Lib) int {
	fn := "cudnnGetCudartVersion"
	if l == CuTENSOR {
		fn = "cutensorGetCudartVersion"
	}
	f, err := dlsym(h, fn)
	if err != nil {
		return 0
	}
	return int(C.cudago_call_size(f))
}

// cudnnOpens names the cuBLASLt that cuDNN opens when it needs it: that
// of the CUDA major it was built for.
func cudnnOpens(h unsafe.Pointer) []string {
	v := cudartVersion(h, CuDNN)
	if v < 1000 {
		return nil
	}
	return []string{fmt.Sprintf("libcublasLt.so.%d", v/1000)}
}
