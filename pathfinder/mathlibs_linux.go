//go:build linux && cgo

package pathfinder

/*
// XxxGetProperty(libraryPropertyType, int *) of the math libraries, and
// cudaRuntimeGetVersion(int *); the status enums and libraryPropertyType
// are int-sized.
typedef int (*cudago_fn_property)(int, int *);
typedef int (*cudago_fn_version)(int *);
typedef const char *(*cudago_fn_statusname)(int);

static int cudago_call_property(void *f, int type, int *v) { return ((cudago_fn_property)f)(type, v); }
static int cudago_call_version(void *f, int *v) { return ((cudago_fn_version)f)(v); }
static const char *cudago_call_statusname(void *f, int rc) { return ((cudago_fn_statusname)f)(rc); }
*/
import "C"

import "fmt"

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
		f, err := l.Symbol("ncclGetVersion")
		if err != nil {
			return "", true, err
		}
		var n C.int
		if rc := C.cudago_call_version(f, &n); rc != 0 {
			return "", true, l.statusError("ncclGetVersion", int(rc))
		}
		return ncclVersion(int(n)), true, nil
	case CUDART:
		f, err := l.Symbol("cudaRuntimeGetVersion")
		if err != nil {
			return "", true, err
		}
		var n C.int
		if rc := C.cudago_call_version(f, &n); rc != 0 {
			return "", true, l.statusError("cudaRuntimeGetVersion", int(rc))
		}
		return fmt.Sprintf("%d.%d", n/1000, n%1000/10), true, nil
	case NVTX:
		v, err := fileVersion(l.Path)
		return v, true, err
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
