package pathfinder

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CUDAVersion is the CUDA release a library belongs to. Minor is -1 when
// only the major is known (from the soname).
type CUDAVersion struct {
	Major, Minor int
}

// String returns "12.4", or "13.x" when the minor is unknown.
func (v CUDAVersion) String() string {
	if v.Minor < 0 {
		return fmt.Sprintf("%d.x", v.Major)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// parseCUDA reads "12.4" or "12.4.5" as 12.4.
func parseCUDA(s string) (CUDAVersion, bool) {
	maj, rest, _ := strings.Cut(s, ".")
	min, _, _ := strings.Cut(rest, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil {
		return CUDAVersion{}, false
	}
	return CUDAVersion{a, b}, true
}

// CUDA returns the CUDA release the library belongs to, and false for
// those that tell none:
//
//	NVRTC, nvJitLink, nvFatbin, the runtime    their version, the CUDA version ("12.4")
//	cuBLAS, cuBLASLt                           their version's major.minor (cuBLAS 12.4.5: CUDA 12.4)
//	cuDNN, cuTENSOR                            the CUDA runtime they were built with
//	cuFFT, cuSOLVER                            the soname's major plus one (libcufft.so.11: CUDA 12)
//	cuSPARSE                                   the major of the nvJitLink it needs (DT_NEEDED)
//	CUPTI                                      the soname's major
//
// The driver and NVML follow the driver; cuRAND (libcurand.so.10 in CUDA
// 11 to 13), NVVM (libnvvm.so.4 in 12 and 13), cuFile, NVTX, NCCL and cuDLA
// do not say. The answer is computed once.
func (l *Library) CUDA() (CUDAVersion, bool) {
	l.cudaOnce.Do(func() { l.cuda, l.cudaOK = l.findCUDA() })
	return l.cuda, l.cudaOK
}

func (l *Library) findCUDA() (CUDAVersion, bool) {
	switch l.Lib {
	case NVRTC, NVJitLink, NVFatbin, CUDART, CuBLAS, CuBLASLt:
		v, err := l.Version()
		if err != nil {
			break
		}
		if c, ok := parseCUDA(v); ok {
			return c, true
		}
	case CuDNN, CuTENSOR:
		if n := cudartVersion(l.handle, l.Lib); n >= 1000 {
			return CUDAVersion{n / 1000, n % 1000 / 10}, true
		}
	case CuFFT, CuSOLVER:
		if l.Major > 0 {
			return CUDAVersion{l.Major + 1, -1}, true
		}
	case CuSPARSE:
		needed, _ := elfNeeded(realpath(l.Path))
		for _, n := range needed {
			if rest, ok := strings.CutPrefix(n, "libnvJitLink.so."); ok {
				if m, err := strconv.Atoi(rest); err == nil {
					return CUDAVersion{m, -1}, true
				}
			}
		}
	case CUPTI:
		if l.Major > 0 {
			return CUDAVersion{l.Major, -1}, true
		}
	}
	return CUDAVersion{}, false
}

// Warning is a condition that does not stop libraries from loading but
// makes them fail later, found by Check.
type Warning struct {
	// Kind is "newer-than-driver" (a library of a newer CUDA than the
	// driver supports), "cuda-mix" (CUDA 12 and 13 libraries in one
	// process) or "cuda-path-home" (CUDA_PATH and CUDA_HOME differ).
	Kind string
	// Libs are the libraries concerned.
	Libs []Lib
	// Text says what is wrong, what will fail, and what to do.
	Text string
}

func (w Warning) String() string { return w.Text }

// loadedLib is what the guard rails need of one loaded library.
type loadedLib struct {
	lib    Lib
	soname string
	path   string
	cuda   CUDAVersion
}

func (l loadedLib) String() string {
	return fmt.Sprintf("%s (CUDA %s, %s)", l.soname, l.cuda, l.path)
}

// Check applies the guard rails to the libraries this process has loaded
// through Load so far, and to the environment, and returns what they
// found:
//
//   - a library newer than the driver (Driver, when loaded) supports:
//     one of a newer CUDA major fails outright (its calls return
//     CUDA_ERROR_INSUFFICIENT_DRIVER or cudaErrorInsufficientDriver, and
//     the code it makes does not load); NVRTC or nvJitLink of the same
//     major but a newer minor make PTX of a newer ISA than the driver can
//     compile (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), while the other
//     libraries run by CUDA's minor version compatibility and are fine;
//   - libraries of CUDA 12 and CUDA 13 in one process (libcublas.so.12
//     with libcudart.so.13): each works only with its own major's
//     companions, and code made by one major's compiler is not for the
//     other's linker;
//   - CUDA_PATH and CUDA_HOME set to different directories (CUDA_PATH is
//     the one searched first).
//
// These are warnings, not errors: the libraries loaded, and a program may
// never reach the calls that would fail. cudago doctor prints them; core
// logs them (see core.SetLogger) when it loads a library.
func Check() []Warning {
	var libs []loadedLib
	var drv *CUDAVersion
	for _, s := range specs {
		lib := cache[s.lib].loaded.Load()
		if lib == nil {
			continue
		}
		if s.lib == Driver {
			if v, err := lib.Version(); err == nil {
				if c, ok := parseCUDA(v); ok {
					drv = &c
				}
			}
			continue
		}
		if c, ok := lib.CUDA(); ok {
			libs = append(libs, loadedLib{lib: s.lib, soname: lib.Soname, path: lib.Path, cuda: c})
		}
	}
	w := check(drv, libs)
	if p, h := os.Getenv("CUDA_PATH"), os.Getenv("CUDA_HOME"); p != "" && h != "" && realpath(filepath.Clean(p)) != realpath(filepath.Clean(h)) {
		w = append(w, Warning{Kind: "cuda-path-home",
			Text: fmt.Sprintf("CUDA_PATH=%s and CUDA_HOME=%s name different toolkits: pathfinder searches CUDA_PATH first (as cuda.pathfinder 1.8 does), so libraries come from the first one that has them; unset one or make them agree", p, h)})
	}
	return w
}

// check is Check's logic: drv is the CUDA version the driver supports
// (nil when unknown), libs the loaded libraries that tell their CUDA.
func check(drv *CUDAVersion, libs []loadedLib) []Warning {
	var out []Warning
	if drv != nil {
		for _, l := range libs {
			switch {
			case l.cuda.Major > drv.Major:
				out = append(out, Warning{Kind: "newer-than-driver", Libs: []Lib{l.lib}, Text: fmt.Sprintf(
					"%s is newer than the driver, which supports CUDA %s: %s; update the NVIDIA driver to one for CUDA %d (%s), or use the CUDA %d %s",
					l, drv, newerMajorEffect(l.lib), l.cuda.Major, driverBranch(l.cuda.Major), drv.Major, l.lib)})
			case l.cuda.Major == drv.Major && l.cuda.Minor > drv.Minor && (l.lib == NVRTC || l.lib == NVJitLink):
				out = append(out, Warning{Kind: "newer-than-driver", Libs: []Lib{l.lib}, Text: fmt.Sprintf(
					"%s is newer than the driver, which supports CUDA %s: the PTX it %s targets a newer PTX ISA than the driver can compile (CUDA_ERROR_UNSUPPORTED_PTX_VERSION); compile to a cubin for the GPU's architecture (sm_XX, not compute_XX), use %s %s or older, or update the driver",
					l, drv, ptxVerb(l.lib), l.lib, drv)})
			}
		}
	}
	byMajor := map[int][]loadedLib{}
	var majors []int
	for _, l := range libs {
		if _, seen := byMajor[l.cuda.Major]; !seen {
			majors = append(majors, l.cuda.Major)
		}
		byMajor[l.cuda.Major] = append(byMajor[l.cuda.Major], l)
	}
	if len(majors) > 1 {
		slices.Sort(majors)
		var parts []string
		var ids []Lib
		for _, m := range majors {
			var names []string
			for _, l := range byMajor[m] {
				names = append(names, l.soname+" ("+l.path+")")
				ids = append(ids, l.lib)
			}
			parts = append(parts, fmt.Sprintf("CUDA %d: %s", m, strings.Join(names, ", ")))
		}
		out = append(out, Warning{Kind: "cuda-mix", Libs: ids, Text: fmt.Sprintf(
			"libraries of several CUDA majors are loaded in this process (%s): each works only with its own major's companions (cuBLAS %d needs cuBLASLt %d, code compiled by NVRTC %d is not for nvJitLink %d), and the driver must support the newest; install one major's libraries (NVIDIA's wheels: the -cu12 ones or those for CUDA 13, not both) or point CUDA_PATH at one toolkit",
			strings.Join(parts, "; "), majors[0], majors[0], majors[len(majors)-1], majors[0])})
	}
	return out
}

// newerMajorEffect says what fails with a library of a newer CUDA major
// than the driver's.
func newerMajorEffect(l Lib) string {
	switch l {
	case NVRTC, NVJitLink, NVFatbin:
		return "the code it makes does not load (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, or no kernel image for the device)"
	case CUDART:
		return "its calls fail with cudaErrorInsufficientDriver"
	}
	return "its calls fail (the CUDA runtime it uses reports cudaErrorInsufficientDriver)"
}

func ptxVerb(l Lib) string {
	if l == NVJitLink {
		return "links to (Link(\"ptx\"))"
	}
	return "makes"
}

// driverBranch is the first driver branch of a CUDA major.
func driverBranch(major int) string {
	switch major {
	case 12:
		return "525 or newer"
	case 13:
		return "580 or newer"
	}
	return "a newer branch"
}
