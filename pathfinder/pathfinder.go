package pathfinder

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Lib identifies one of NVIDIA's libraries.
type Lib string

// The libraries pathfinder knows how to find.
const (
	Driver    Lib = "cuda"       // CUDA driver API: libcuda.so.1
	NVML      Lib = "nvidia-ml"  // NVIDIA Management Library, the driver's monitoring API: libnvidia-ml.so.1
	NVRTC     Lib = "nvrtc"      // runtime compiler: libnvrtc.so.13, libnvrtc.so.12
	NVJitLink Lib = "nvJitLink"  // JIT linker: libnvJitLink.so.13, libnvJitLink.so.12
	NVFatbin  Lib = "nvfatbin"   // fatbin creation: libnvfatbin.so.13, libnvfatbin.so.12
	NVVM      Lib = "nvvm"       // NVVM IR compiler: libnvvm.so.4
	CuFile    Lib = "cufile"     // GPUDirect Storage: libcufile.so.0
	CUDART    Lib = "cudart"     // CUDA runtime API: libcudart.so.13, libcudart.so.12
	CuBLASLt  Lib = "cublasLt"   // cuBLASLt: libcublasLt.so.13, libcublasLt.so.12
	CuBLAS    Lib = "cublas"     // cuBLAS: libcublas.so.13, libcublas.so.12 (needs cuBLASLt)
	CuFFT     Lib = "cufft"      // cuFFT: libcufft.so.12, libcufft.so.11
	CuRAND    Lib = "curand"     // cuRAND: libcurand.so.10
	CuSPARSE  Lib = "cusparse"   // cuSPARSE: libcusparse.so.12 (needs nvJitLink)
	CuSOLVER  Lib = "cusolver"   // cuSOLVER: libcusolver.so.12, libcusolver.so.11 (needs cuBLAS, cuBLASLt, cuSPARSE, nvJitLink)
	NVTX      Lib = "nvToolsExt" // NVTX v2 markers: libnvToolsExt.so.1 (CUDA 12 and older; NVTX 3 is header-only)
	NCCL      Lib = "nccl"       // collective communication: libnccl.so.2
	CUPTI     Lib = "cupti"      // profiling tools interface: libcupti.so.13, libcupti.so.12
	CuDNN     Lib = "cudnn"      // deep neural networks: libcudnn.so.9 and its sub-libraries
	CuTENSOR  Lib = "cutensor"   // tensor contractions: libcutensor.so.2 (needs cuBLASLt)
	CuDLA     Lib = "cudla"      // deep learning accelerator of Tegra SoCs: libcudla.so.1 (Jetson, DRIVE only)
)

// spec says how to find one library.
type spec struct {
	lib Lib
	// env is the override variable, e.g. CUDAGO_NVRTC_PATH.
	env string
	// sonames, newest major first.
	sonames []string
	// extra names tried after the sonames, in the same places (libnvvm.so).
	extra []string
	// systemFirst moves the system loader ahead of CUDA_PATH, CUDA_HOME and
	// the local install (the driver must match the kernel module), and
	// leaves out the Python environments, which never ship the driver.
	systemFirst bool
	// wheel lists the directories below site-packages where NVIDIA's pip
	// wheels put the library: nvidia/cu13/lib for CUDA 13's, then
	// CUDA 12's own wheel directory.
	wheel []string
	// deps are the libraries this one needs (its DT_NEEDED entries), which
	// are loaded first from the place it is found in.
	deps []Lib
	// subs are the library's sub-libraries, opened from its directory in
	// this order (each after those it needs) before it: cuDNN 9's, which
	// libcudnn.so.9 opens by soname when first needed, where the loader
	// would not look for a pip wheel's.
	subs []string
	// optSubs are the sub-libraries that older versions lack, whose absence
	// is no warning: cuDNN's tensor IR engines arrived in 9.10.
	optSubs []string
	// rootDirs are further library directories below a toolkit root
	// (CUDA_PATH, CUDA_HOME, CONDA_PREFIX, /usr/local/cuda, the local
	// install, an override directory): CUPTI's extras/CUPTI/lib64.
	rootDirs []string
	// sysDirs are further directories below the system's multiarch
	// directory: cuTENSOR's libcutensor/13 and libcutensor/12.
	sysDirs []string
	// platform, when set, says why the library cannot exist on this
	// machine ("" when it may): cuDLA is only on Tegra.
	platform func(*searcher) string
	// notLocal: scripts/setup-cuda.sh does not install it, so the hint
	// does not offer it.
	notLocal bool
	// opens, when set, returns the sonames of the libraries the loaded
	// library (its handle) opens itself with dlopen, which are loaded
	// from the same place as its dependencies: cuDNN's cuBLASLt.
	opens func(unsafe.Pointer) []string
}

// wheelDirs is the wheel layout of a CUDA 12 library in wheel directory
// dir, after CUDA 13's single nvidia/cu13/lib.
func wheelDirs(dir string) []string { return []string{"nvidia/cu13/lib", dir} }

// specs lists dependencies before the libraries that need them, so that
// Report loads each of them by its own search first.
var specs = []*spec{
	{lib: Driver, env: "CUDAGO_DRIVER_PATH", sonames: []string{"libcuda.so.1"}, systemFirst: true},
	// NVML is part of the driver: it must match the kernel module as libcuda does.
	{lib: NVML, env: "CUDAGO_NVML_PATH", sonames: []string{"libnvidia-ml.so.1"}, systemFirst: true},
	{lib: NVRTC, env: "CUDAGO_NVRTC_PATH", sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12"},
		wheel: wheelDirs("nvidia/cuda_nvrtc/lib")},
	{lib: NVJitLink, env: "CUDAGO_NVJITLINK_PATH", sonames: []string{"libnvJitLink.so.13", "libnvJitLink.so.12"},
		wheel: wheelDirs("nvidia/nvjitlink/lib")},
	{lib: NVFatbin, env: "CUDAGO_NVFATBIN_PATH", sonames: []string{"libnvfatbin.so.13", "libnvfatbin.so.12"},
		wheel: wheelDirs("nvidia/nvfatbin/lib")},
	{lib: NVVM, env: "CUDAGO_NVVM_PATH", sonames: []string{"libnvvm.so.4"}, extra: []string{"libnvvm.so"},
		wheel: wheelDirs("nvidia/cuda_nvcc/nvvm/lib64")},
	{lib: CuFile, env: "CUDAGO_CUFILE_PATH", sonames: []string{"libcufile.so.0"},
		wheel: wheelDirs("nvidia/cufile/lib")},
	{lib: CUDART, env: "CUDAGO_CUDART_PATH", sonames: []string{"libcudart.so.13", "libcudart.so.12"},
		wheel: wheelDirs("nvidia/cuda_runtime/lib")},
	{lib: CuBLASLt, env: "CUDAGO_CUBLASLT_PATH", sonames: []string{"libcublasLt.so.13", "libcublasLt.so.12"},
		wheel: wheelDirs("nvidia/cublas/lib")},
	{lib: CuBLAS, env: "CUDAGO_CUBLAS_PATH", sonames: []string{"libcublas.so.13", "libcublas.so.12"},
		wheel: wheelDirs("nvidia/cublas/lib"), deps: []Lib{CuBLASLt}},
	{lib: CuFFT, env: "CUDAGO_CUFFT_PATH", sonames: []string{"libcufft.so.12", "libcufft.so.11"},
		wheel: wheelDirs("nvidia/cufft/lib")},
	{lib: CuRAND, env: "CUDAGO_CURAND_PATH", sonames: []string{"libcurand.so.10"},
		wheel: wheelDirs("nvidia/curand/lib")},
	{lib: CuSPARSE, env: "CUDAGO_CUSPARSE_PATH", sonames: []string{"libcusparse.so.12"},
		wheel: wheelDirs("nvidia/cusparse/lib"), deps: []Lib{NVJitLink}},
	{lib: CuSOLVER, env: "CUDAGO_CUSOLVER_PATH", sonames: []string{"libcusolver.so.12", "libcusolver.so.11"},
		wheel: wheelDirs("nvidia/cusolver/lib"), deps: []Lib{NVJitLink, CuSPARSE, CuBLASLt, CuBLAS}},
	{lib: NVTX, env: "CUDAGO_NVTOOLSEXT_PATH", sonames: []string{"libnvToolsExt.so.1"},
		wheel: wheelDirs("nvidia/nvtx/lib")},
	// NCCL is no part of the toolkit: its CUDA 13 wheel (nvidia-nccl-cu13)
	// keeps CUDA 12's nvidia/nccl/lib rather than nvidia/cu13/lib. It links
	// the CUDA runtime statically: no dependencies.
	{lib: NCCL, env: "CUDAGO_NCCL_PATH", sonames: []string{"libnccl.so.2"},
		wheel: []string{"nvidia/nccl/lib"}},
	// CUPTI lives apart in a toolkit (extras/CUPTI/lib64; lib64 holds a
	// link to it since CUDA 12).
	{lib: CUPTI, env: "CUDAGO_CUPTI_PATH", sonames: []string{"libcupti.so.13", "libcupti.so.12"},
		wheel: wheelDirs("nvidia/cuda_cupti/lib"), rootDirs: []string{"extras/CUPTI/lib64", "extras/CUPTI/lib"}, notLocal: true},
	// cuDNN 9 is a shim, libcudnn.so.9, that opens its sub-libraries by
	// soname on first use; the graph library comes first, the others need
	// it (and ops before cnn and adv). Both its wheels, nvidia-cudnn-cu12
	// and -cu13, install into nvidia/cudnn/lib. It opens cuBLASLt itself
	// (dlopen): Load loads the one of its CUDA major from the same place.
	{lib: CuDNN, env: "CUDAGO_CUDNN_PATH", sonames: []string{"libcudnn.so.9"},
		wheel: []string{"nvidia/cudnn/lib", "nvidia/cu13/lib"}, deps: []Lib{CuBLASLt}, opens: cudnnOpens,
		subs: []string{"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
			"libcudnn_engines_tensor_ir.so.9", "libcudnn_heuristic.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9"},
		optSubs: []string{"libcudnn_engines_tensor_ir.so.9"}, notLocal: true},
	// cuTENSOR 2: its wheels (cutensor-cu12, cutensor-cu13) install into
	// site-packages/cutensor/lib, its archive into lib/<CUDA major>, NVIDIA's
	// Debian package into <multiarch>/libcutensor/<CUDA major>.
	{lib: CuTENSOR, env: "CUDAGO_CUTENSOR_PATH", sonames: []string{"libcutensor.so.2"},
		wheel: []string{"cutensor/lib"}, deps: []Lib{CuBLASLt},
		rootDirs: []string{"lib/13", "lib/12"}, sysDirs: []string{"libcutensor/13", "libcutensor/12"}, notLocal: true},
	// cuDLA drives the deep learning accelerator of Tegra SoCs: it ships
	// with CUDA for Tegra (JetPack) and CUDA 13's aarch64 wheels only.
	{lib: CuDLA, env: "CUDAGO_CUDLA_PATH", sonames: []string{"libcudla.so.1"},
		wheel: []string{"nvidia/cu13/lib"}, platform: (*searcher).notTegra, notLocal: true},
}

// names returns the file names to look for, in order of preference.
func (s *spec) names() []string {
	return append(append([]string(nil), s.sonames...), s.extra...)
}

func (s *spec) id() Lib { return s.lib }

func specOf(l Lib) *spec { return lookup(specs, (*spec).id, l) }

// Libs returns every library pathfinder knows, in a fixed order.
func Libs() []Lib { return ids(specs, (*spec).id) }

// lookup returns the spec whose id is k, or the zero S (nil) for an
// unknown one: specOf and artifactSpecOf.
func lookup[S any, K comparable](specs []S, id func(S) K, k K) S {
	for _, s := range specs {
		if id(s) == k {
			return s
		}
	}
	var none S
	return none
}

// ids returns the id of every spec, in order: Libs and Artifacts.
func ids[S, K any](specs []S, id func(S) K) []K {
	out := make([]K, len(specs))
	for i, s := range specs {
		out[i] = id(s)
	}
	return out
}

// String returns the library id, e.g. "nvrtc".
func (l Lib) String() string { return string(l) }

// EnvVar returns the name of the variable that overrides the search for l,
// e.g. "CUDAGO_NVRTC_PATH", or "" for an unknown library.
func (l Lib) EnvVar() string {
	if s := specOf(l); s != nil {
		return s.env
	}
	return ""
}

// Sonames returns the names l is searched under, newest major first.
func (l Lib) Sonames() []string {
	if s := specOf(l); s != nil {
		return s.names()
	}
	return nil
}

// Library is a loaded NVIDIA library. It is never unloaded.
type Library struct {
	Lib Lib
	// Path is the absolute path of the file that was loaded (as found: a
	// soname symlink is not resolved).
	Path string
	// Soname is the library's DT_SONAME, e.g. "libnvrtc.so.12" (the file
	// name when the file has none).
	Soname string
	// Major is the major version in the soname: 12 or 13 for NVRTC,
	// nvJitLink and nvFatbin, 4 for NVVM, 1 for the driver and NVML, 0 for cuFile
	// (11 for cuSOLVER of CUDA 12: the math libraries number their own).
	Major int
	// Found says where the library was found: "env CUDAGO_NVRTC_PATH",
	// "already loaded", "CUDA_PATH", "CUDA_HOME", "local install",
	// "CUDAGO_PYTHON_SITE", "VIRTUAL_ENV", "python3 site-packages",
	// "CONDA_PREFIX", "system loader", "/usr/local/cuda", "debian multiarch"
	// or "debian nvidia-cuda-toolkit". A library that was first loaded as
	// another's dependency reports the place it was loaded from then.
	Found string
	// Companions lists other files loaded along with this library: for
	// NVRTC, its libnvrtc-builtins.so.N.M; for a library with dependencies
	// (cuBLAS, cuSPARSE, cuSOLVER), the libraries it uses, dependencies of
	// dependencies first (for one found already loaded, those it names in
	// DT_NEEDED that are loaded).
	Companions []string
	// Warnings holds problems that did not stop the load, such as NVRTC's
	// builtins library not being found, or a dependency that came from
	// another install than the library.
	Warnings []string

	handle unsafe.Pointer

	cudaOnce sync.Once
	cuda     CUDAVersion
	cudaOK   bool
}

// Handle returns the handle dlopen returned for the library.
func (l *Library) Handle() unsafe.Pointer { return l.handle }

// Symbol looks up a symbol (normally a function) in the library with dlsym.
// The error names the symbol and the library's path.
func (l *Library) Symbol(name string) (unsafe.Pointer, error) {
	p, err := dlsym(l.handle, name)
	if err != nil {
		return nil, fmt.Errorf("pathfinder: symbol %s not found in %s (%s): %v", name, l.Path, l.Lib, err)
	}
	return p, nil
}

// String describes the library in one line.
func (l *Library) String() string {
	return fmt.Sprintf("%s %s (%s)", l.Lib, l.Path, l.Found)
}

// Attempt is one place tried while searching for a library.
type Attempt struct {
	// Path is the file, directory or soname tried (empty when the place was
	// not configured, e.g. CUDA_HOME unset).
	Path string
	// Where is the place in the search order, as in Library.Found.
	Where string
	// Err says why nothing was loaded from there: dlopen's error for a file
	// that exists, otherwise what was missing.
	Err string
}

func (a Attempt) String() string {
	if a.Path == "" {
		return a.Where + ": " + a.Err
	}
	return a.Where + ": " + a.Path + ": " + a.Err
}

// NotFoundError is returned by Load when no place yielded the library.
type NotFoundError struct {
	Lib   Lib
	Tried []Attempt
	// Override is the override variable (e.g. CUDAGO_NVRTC_PATH) when it was
	// set and failed, in which case nothing else was tried.
	Override string
	// Cause is set when a file named like the library was there but the
	// loader refused it (a library built for a newer glibc, a damaged file):
	// the first such file, with the reason in words and its fix.
	Cause *LoadFailure
	// Unavailable is set when the library cannot exist on this machine,
	// and says why (cuDLA off Tegra); nothing was searched then.
	Unavailable string
	// Hint says how to make the library available, for where the program
	// runs: inside a clone of cudago its scripts/setup-cuda.sh; elsewhere
	// CUDA_HOME, NVIDIA's pip wheel, conda, the env.sh of a clone, or the
	// override variable. It may span several lines.
	Hint string

	names []string // the names searched for
	env   string   // the override variable
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	names := e.names
	if names == nil {
		names = e.Lib.Sonames()
	}
	switch {
	case e.Unavailable != "":
		fmt.Fprintf(&b, "pathfinder: %s is not available on this machine: %s", e.Lib, e.Unavailable)
		return b.String()
	case e.Cause != nil:
		fmt.Fprintf(&b, "pathfinder: cannot load %s", e.Lib)
		if e.Override != "" {
			fmt.Fprintf(&b, " from %s", e.Override)
		}
		fmt.Fprintf(&b, ": %s\nfix: %s\ntried:", e.Cause, e.Cause.Fix)
	case e.Override != "":
		fmt.Fprintf(&b, "pathfinder: cannot load %s from %s (set, so nothing else was searched); tried:", e.Lib, e.Override)
	default:
		fmt.Fprintf(&b, "pathfinder: cannot find %s", e.Lib)
		if len(names) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
		}
		b.WriteString("; tried:")
	}
	for _, a := range e.Tried {
		b.WriteString("\n\t")
		b.WriteString(a.String())
	}
	if e.Cause == nil {
		b.WriteString("\nhint: ")
		b.WriteString(e.Fix())
	}
	return b.String()
}

// Fix says how to make the library load: the fix of the Cause when a file
// was refused, else the Hint.
func (e *NotFoundError) Fix() string {
	switch {
	case e.Unavailable != "":
		env := e.env
		if env == "" {
			env = e.Lib.EnvVar()
		}
		return fmt.Sprintf("nothing to install here; to load a %s anyway, set %s to it", strings.Join(e.Lib.Sonames(), " or "), env)
	case e.Cause != nil:
		return e.Cause.Fix
	case e.Override != "":
		return fmt.Sprintf("point %s at the library file or the directory holding it, or unset it to search the usual places", e.Override)
	case e.Hint != "":
		return e.Hint
	}
	// A NotFoundError made by hand, without the search's context.
	env := e.env
	if env == "" {
		env = e.Lib.EnvVar()
	}
	var b strings.Builder
	if env != "" {
		fmt.Fprintf(&b, "set %s to the library file or its directory, ", env)
	}
	b.WriteString("set CUDA_PATH (or CUDA_HOME) to a CUDA toolkit, install NVIDIA's pip wheel or conda package of it, or source the .cuda/env.sh that scripts/setup-cuda.sh makes in a clone of cudago")
	return b.String()
}

type entry struct {
	once sync.Once
	lib  *Library
	err  error
	// loaded is lib once loaded, for Check, which must not wait on once.
	loaded atomic.Pointer[Library]
}

var cache = newCache[entry](specs, (*spec).id)

// newCache makes the entry of each spec, keyed by its id: the caches of
// Load and Find, complete from the start so that reading them needs no
// lock.
func newCache[E any, S any, K comparable](specs []S, id func(S) K) map[K]*E {
	m := make(map[K]*E, len(specs))
	for _, s := range specs {
		m[id(s)] = new(E)
	}
	return m
}

// workDir is the directory relative paths are taken from: the working
// directory, or "" (none) when it cannot be had.
func workDir() string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return cwd
}

// Load finds and opens library l, once per process: later calls, from any
// goroutine, return the same *Library or the same error. A failure is cached
// too; fix the environment and restart the program.
func Load(l Lib) (*Library, error) {
	e := cache[l]
	if e == nil {
		return nil, fmt.Errorf("pathfinder: unknown library %q (known: %v)", string(l), Libs())
	}
	e.once.Do(func() {
		e.lib, e.err = find(l, os.Getenv, workDir())
		if e.lib != nil {
			e.loaded.Store(e.lib)
		}
	})
	return e.lib, e.err
}

// find searches for l without caching, with the environment read through env
// and relative paths taken from cwd. Tests call it directly.
func find(l Lib, env func(string) string, cwd string) (*Library, error) {
	s := specOf(l)
	if s == nil {
		return nil, fmt.Errorf("pathfinder: unknown library %q (known: %v)", string(l), Libs())
	}
	return (&searcher{getenv: env, cwd: cwd}).find(s)
}

// Status is the outcome of loading one library, as reported by Report.
type Status struct {
	Lib Lib
	// Library is the loaded library; nil when Err is set.
	Library *Library
	// Err is Load's error, usually a *NotFoundError.
	Err error
	// Version is the library's own version (Library.Version), when it could
	// be read; VersionErr says why not.
	Version    string
	VersionErr error
	// Notes holds extra facts: companion files, NVVM's IR version,
	// the result of NVRTC's compile check, warnings.
	Notes []string
	// CheckErr is set when a functional check failed: NVRTC compiling an
	// empty kernel (which needs libnvrtc-builtins).
	CheckErr error
	// CUDA is the CUDA release the library belongs to (Library.CUDA):
	// "12.4", "13.x" when only the major is known, "" when it tells none.
	CUDA string
}

// OK reports whether the library loaded and passed its checks.
func (s Status) OK() bool { return s.Err == nil && s.CheckErr == nil }

// String describes the status in one line (plus the error's lines).
func (s Status) String() string {
	if s.Err != nil {
		return fmt.Sprintf("%-10s  MISSING  %v", s.Lib, s.Err)
	}
	v := s.Version
	if s.VersionErr != nil {
		v = "version unknown: " + s.VersionErr.Error()
	}
	line := fmt.Sprintf("%-10s  %-7s  %s (%s)", s.Lib, v, s.Library.Path, s.Library.Found)
	for _, n := range s.Notes {
		line += "; " + n
	}
	if s.CheckErr != nil {
		line += "; CHECK FAILED: " + s.CheckErr.Error()
	}
	return line
}

// Report loads every library (see Libs) and returns, for each in order, the
// loaded library with its version and CUDA release, or the error. Check
// then gives the guard rails' warnings about what was loaded.
func Report() []Status {
	out := make([]Status, 0, len(specs))
	for _, l := range Libs() {
		st := Status{Lib: l}
		st.Library, st.Err = Load(l)
		if st.Err == nil {
			lib := st.Library
			st.Version, st.VersionErr = lib.Version()
			if c, ok := lib.CUDA(); ok {
				st.CUDA = c.String()
			}
			for _, c := range lib.Companions {
				st.Notes = append(st.Notes, "loaded "+c)
			}
			switch l {
			case NVVM:
				if ir, err := nvvmIRVersion(lib); err == nil {
					st.Notes = append(st.Notes, ir)
				}
			case NVRTC:
				if st.CheckErr = nvrtcCompileCheck(lib); st.CheckErr == nil {
					st.Notes = append(st.Notes, "compiles a test kernel")
				}
			}
			for _, w := range lib.Warnings {
				st.Notes = append(st.Notes, "warning: "+w)
			}
		}
		out = append(out, st)
	}
	return out
}

// ncclVersion formats an NCCL version code (NCCL_VERSION_CODE, what
// ncclGetVersion returns): 22203 is "2.22.3". Before 2.9 the code was
// X*1000 + Y*100 + Z (2708 is "2.7.8"), since then X*10000 + Y*100 + Z.
func ncclVersion(code int) string {
	if code < 10000 {
		return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
}
