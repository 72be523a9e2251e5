//go:build linux && cgo

package pathfinder

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
static const char *cudago_libc_version(void) { return gnu_get_libc_version(); }
#else
static const char *cudago_libc_version(void) { return ""; }
#endif

// dlerror is per thread and a goroutine may change threads between cgo
// calls, so each helper calls dlerror in the same C call as dlopen/dlsym.

static void cudago_copyerr(char *buf, size_t len, const char *fallback) {
	const char *e = dlerror();
	if (e == NULL) e = fallback;
	strncpy(buf, e, len - 1);
	buf[len - 1] = 0;
}

static void *cudago_dlopen(const char *name, int global, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(name, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (h == NULL) cudago_copyerr(err, errlen, "dlopen failed");
	return h;
}

static void *cudago_dlnoload(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	dlerror();
	return h;
}

static void *cudago_dlsym(void *h, const char *name, char *err, size_t errlen) {
	dlerror();
	void *p = dlsym(h, name);
	if (p == NULL) cudago_copyerr(err, errlen, "symbol resolves to NULL");
	return p;
}

static const char *cudago_dlpath(void *h) {
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL) {
		dlerror();
		return NULL;
	}
	return lm->l_name;
}

// Function pointer types for the version queries; all CUDA result enums
// are int-sized.
typedef int (*cudago_fn_i1)(int *);
typedef int (*cudago_fn_i2)(int *, int *);
typedef int (*cudago_fn_u2)(unsigned int *, unsigned int *);
typedef int (*cudago_fn_i4)(int *, int *, int *, int *);
typedef int (*cudago_fn_errname)(int, const char **);
typedef const char *(*cudago_fn_errstr)(int);
typedef struct { int err; int cu_err; } cudago_cufile_error; // CUfileError_t
typedef cudago_cufile_error (*cudago_fn_cufile_version)(int *);
typedef int (*cudago_fn_str)(char *, unsigned int);

static int cudago_call_i1(void *f, int *a) { return ((cudago_fn_i1)f)(a); }
static int cudago_call_i2(void *f, int *a, int *b) { return ((cudago_fn_i2)f)(a, b); }
static int cudago_call_u2(void *f, unsigned int *a, unsigned int *b) { return ((cudago_fn_u2)f)(a, b); }
static int cudago_call_i4(void *f, int *a, int *b, int *c, int *d) { return ((cudago_fn_i4)f)(a, b, c, d); }
static const char *cudago_call_errname(void *f, int rc) {
	const char *s = NULL;
	if (((cudago_fn_errname)f)(rc, &s) != 0) return NULL;
	return s;
}
static const char *cudago_call_errstr(void *f, int rc) { return ((cudago_fn_errstr)f)(rc); }
static int cudago_call_str(void *f, char *buf, unsigned int len) { return ((cudago_fn_str)f)(buf, len); }
static int cudago_call_cufile_version(void *f, int *v, int *cu_err) {
	cudago_cufile_error e = ((cudago_fn_cufile_version)f)(v);
	*cu_err = e.cu_err;
	return e.err;
}

// NVRTC check: compile an empty kernel, which needs libnvrtc-builtins.
typedef int (*cudago_nvrtc_create)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*cudago_nvrtc_compile)(void *, int, const char *const *);
typedef int (*cudago_nvrtc_destroy)(void **);
typedef int (*cudago_nvrtc_logsize)(void *, size_t *);
typedef int (*cudago_nvrtc_log)(void *, char *);

static int cudago_nvrtc_check(void *create, void *compile, void *destroy, void *logsize, void *getlog,
		int *stage, char *log, size_t loglen) {
	void *prog = NULL;
	static const char src[] = "extern \"C\" __global__ void cudago_check(float *x) { x[threadIdx.x] = 1.0f; }\n";
	*stage = 0;
	int rc = ((cudago_nvrtc_create)create)(&prog, src, "cudago_check.cu", 0, NULL, NULL);
	if (rc != 0) return rc;
	*stage = 1;
	rc = ((cudago_nvrtc_compile)compile)(prog, 0, NULL);
	if (rc != 0) {
		size_t n = 0;
		if (((cudago_nvrtc_logsize)logsize)(prog, &n) == 0 && n > 0 && n <= loglen) {
			((cudago_nvrtc_log)getlog)(prog, log);
		}
	}
	((cudago_nvrtc_destroy)destroy)(&prog);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/cudago/cudago/internal/version"
)

const supported = true

var errUnsupported = errors.New("pathfinder: unsupported platform")

const errBufLen = 1024

func dlopen(name string, global bool) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var buf [errBufLen]C.char
	g := C.int(0)
	if global {
		g = 1
	}
	h := C.cudago_dlopen(cname, g, &buf[0], errBufLen)
	if h == nil {
		return nil, errors.New(C.GoString(&buf[0]))
	}
	return h, nil
}

func dlnoload(name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.cudago_dlnoload(cname)
}

func dlsym(h unsafe.Pointer, name string) (unsafe.Pointer, error) {
	if h == nil {
		return nil, errors.New("library not loaded")
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var buf [errBufLen]C.char
	p := C.cudago_dlsym(h, cname, &buf[0], errBufLen)
	if p == nil {
		return nil, errors.New(C.GoString(&buf[0]))
	}
	return p, nil
}

// libcVersion returns the version of the glibc the process runs on ("2.36"),
// or "" for another C library.
func libcVersion() string { return C.GoString(C.cudago_libc_version()) }

// dlpath returns the path the loader recorded for a handle ("" if none).
func dlpath(h unsafe.Pointer) string {
	s := C.cudago_dlpath(h)
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// Version returns the library's own version, asked of the library itself:
//
//	Driver     cuDriverGetVersion: the CUDA version the driver supports, "13.0"
//	NVML       the driver's version, "550.163.01": from the file name, else
//	           nvmlSystemGetNVMLVersion (no nvmlInit)
//	NVRTC      nvrtcVersion, "12.4"
//	NVJitLink  nvJitLinkVersion, "12.4" (before 12.3: from the file name)
//	NVFatbin   nvFatbinVersion, "12.4"
//	NVVM       nvvmVersion: NVVM's own version, "2.0" for CUDA 12
//	CuFile     cuFileGetVersion, "1.9.0" (if absent: from the file name)
//	CUDART     cudaRuntimeGetVersion, "12.4"
//	CuBLAS …   the math libraries' XxxGetProperty: their own versions,
//	           "12.4.5" for cuBLAS and "11.6.1" for cuSOLVER of CUDA 12.4
//	NVTX       none: from the file name, "1.0.0"
//	NCCL       ncclGetVersion (its code 22203 is "2.22.3")
//
// The file-name fallback gives the suffix of the file the soname link points
// to, e.g. "12.1.105". No query needs a GPU.
func (l *Library) Version() (string, error) {
	if v, ok, err := mathVersion(l); ok {
		return v, err
	}
	switch l.Lib {
	case Driver:
		f, err := l.Symbol("cuDriverGetVersion")
		if err != nil {
			return "", err
		}
		var v C.int
		if rc := C.cudago_call_i1(f, &v); rc != 0 {
			return "", l.resultError("cuDriverGetVersion", int(rc))
		}
		ver, err := version.FromCUDA(int(v))
		if err != nil {
			return "", fmt.Errorf("pathfinder: cuDriverGetVersion in %s: %w", l.Path, err)
		}
		return ver.String(), nil
	case NVRTC:
		maj, min, err := nvrtcVersion(l)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d.%d", maj, min), nil
	case NVJitLink, NVFatbin:
		name := "nvJitLinkVersion"
		if l.Lib == NVFatbin {
			name = "nvFatbinVersion"
		}
		f, err := l.Symbol(name)
		if err != nil {
			if l.Lib == NVJitLink {
				return fileVersion(l.Path)
			}
			return "", err
		}
		var maj, min C.uint
		if rc := C.cudago_call_u2(f, &maj, &min); rc != 0 {
			return "", l.resultError(name, int(rc))
		}
		return fmt.Sprintf("%d.%d", maj, min), nil
	case NVML:
		return nvmlVersion(l)
	case NVVM:
		f, err := l.Symbol("nvvmVersion")
		if err != nil {
			return "", err
		}
		var maj, min C.int
		if rc := C.cudago_call_i2(f, &maj, &min); rc != 0 {
			return "", l.resultError("nvvmVersion", int(rc))
		}
		return fmt.Sprintf("%d.%d", maj, min), nil
	case CuFile:
		f, err := l.Symbol("cuFileGetVersion")
		if err != nil {
			return fileVersion(l.Path)
		}
		var v, cuErr C.int
		if rc := C.cudago_call_cufile_version(f, &v, &cuErr); rc != 0 {
			return "", fmt.Errorf("pathfinder: cuFileGetVersion in %s failed: cuFile error %d (driver error %d)", l.Path, rc, cuErr)
		}
		return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/10, v%10), nil
	}
	return fileVersion(l.Path)
}

// resultError describes a failed call, using the library's own error
// names where it has them.
func (l *Library) resultError(fn string, rc int) error {
	var name string
	switch l.Lib {
	case Driver:
		if f, err := l.Symbol("cuGetErrorName"); err == nil {
			if s := C.cudago_call_errname(f, C.int(rc)); s != nil {
				name = C.GoString(s)
			}
		}
	case NVRTC, NVVM:
		sym := "nvrtcGetErrorString"
		if l.Lib == NVVM {
			sym = "nvvmGetErrorString"
		}
		if f, err := l.Symbol(sym); err == nil {
			if s := C.cudago_call_errstr(f, C.int(rc)); s != nil {
				name = C.GoString(s)
			}
		}
	case NVML:
		if f, err := l.Symbol("nvmlErrorString"); err == nil {
			if s := C.cudago_call_errstr(f, C.int(rc)); s != nil {
				name = C.GoString(s)
			}
		}
	}
	if name == "" {
		return fmt.Errorf("pathfinder: %s in %s failed: error %d", fn, l.Path, rc)
	}
	return fmt.Errorf("pathfinder: %s in %s failed: %s (%d)", fn, l.Path, name, rc)
}

// nvmlVersion returns the driver version NVML belongs to, "550.163.01":
// the real file's name (libnvidia-ml.so.550.163.01, as every driver
// install names it), else nvmlSystemGetNVMLVersion without the NVML API
// major before it ("12.550.163.01"), which needs no nvmlInit. Neither
// touches a GPU.
func nvmlVersion(l *Library) (string, error) {
	if v, err := fileVersion(l.Path); err == nil && strings.Contains(v, ".") {
		return v, nil // not a copy named libnvidia-ml.so.1: its "1" is no driver version
	}
	f, err := l.Symbol("nvmlSystemGetNVMLVersion")
	if err != nil {
		return "", err
	}
	var buf [96]C.char // NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE is 80
	if rc := C.cudago_call_str(f, &buf[0], C.uint(len(buf))); rc != 0 {
		return "", l.resultError("nvmlSystemGetNVMLVersion", int(rc))
	}
	s := C.GoString(&buf[0])
	_, v, ok := strings.Cut(s, ".")
	if _, err := version.Parse(v); !ok || err != nil {
		return "", fmt.Errorf("pathfinder: nvmlSystemGetNVMLVersion in %s returned %q, not <API>.<driver version>", l.Path, s)
	}
	return v, nil
}

func nvrtcVersion(l *Library) (major, minor int, err error) {
	f, err := l.Symbol("nvrtcVersion")
	if err != nil {
		return 0, 0, err
	}
	var maj, min C.int
	if rc := C.cudago_call_i2(f, &maj, &min); rc != 0 {
		return 0, 0, l.resultError("nvrtcVersion", int(rc))
	}
	return int(maj), int(min), nil
}

// nvvmIRVersion describes the NVVM IR and debug metadata versions NVVM
// accepts.
func nvvmIRVersion(l *Library) (string, error) {
	f, err := l.Symbol("nvvmIRVersion")
	if err != nil {
		return "", err
	}
	var a, b, c, d C.int
	if rc := C.cudago_call_i4(f, &a, &b, &c, &d); rc != 0 {
		return "", l.resultError("nvvmIRVersion", int(rc))
	}
	return fmt.Sprintf("NVVM IR %d.%d, debug metadata %d.%d", a, b, c, d), nil
}

// nvrtcCompileCheck compiles a trivial kernel with NVRTC, which fails when
// libnvrtc-builtins cannot be loaded.
func nvrtcCompileCheck(l *Library) error {
	var fns [5]unsafe.Pointer
	for i, name := range []string{"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcDestroyProgram",
		"nvrtcGetProgramLogSize", "nvrtcGetProgramLog"} {
		f, err := l.Symbol(name)
		if err != nil {
			return err
		}
		fns[i] = f
	}
	var stage C.int
	var log [4096]C.char
	rc := C.cudago_nvrtc_check(fns[0], fns[1], fns[2], fns[3], fns[4], &stage, &log[0], C.size_t(len(log)))
	if rc == 0 {
		return nil
	}
	fn := "nvrtcCreateProgram"
	if stage == 1 {
		fn = "nvrtcCompileProgram"
	}
	err := l.resultError(fn, int(rc))
	if s := C.GoString(&log[0]); s != "" {
		err = fmt.Errorf("%w; log: %s", err, s)
	}
	return err
}
