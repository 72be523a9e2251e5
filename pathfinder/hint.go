package pathfinder

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cudago/cudago/internal/version"
)

// LoadFailure is a file named like a library that was found but that the
// dynamic loader refused. [NotFoundError.Cause] holds the first one: when a
// file was there, why it did not load matters more than the places where
// none was.
type LoadFailure struct {
	Path  string // the file (for the system loader, the soname it was asked for)
	Where string // the place it was found in, as in [Library.Found]
	Err   string // dlopen's message
	// Reason says in words why the loader refused the file, as far as
	// pathfinder can tell from Err: "needs glibc 2.38 or newer
	// (GLIBC_2.38), and this system has glibc 2.36".
	Reason string
	// Fix says what to do about it.
	Fix string
}

func (f *LoadFailure) String() string {
	return fmt.Sprintf("%s (%s) %s", f.Path, f.Where, f.Reason)
}

// installNames are the packages that ship a library: NVIDIA's pip wheels
// for CUDA 13 (installed into nvidia/cu13/lib) and CUDA 12 (into
// nvidia/<name>/lib), and the conda package.
var installNames = map[Lib]struct{ pip13, pip12, conda string }{
	NVRTC:     {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12", "cuda-nvrtc"},
	NVJitLink: {"nvidia-nvjitlink", "nvidia-nvjitlink-cu12", "libnvjitlink"},
	NVFatbin:  {"nvidia-nvfatbin", "nvidia-nvfatbin-cu12", "libnvfatbin"},
	NVVM:      {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12", "cuda-nvvm"},
	CuFile:    {"nvidia-cufile", "nvidia-cufile-cu12", "libcufile"},
	CUDART:    {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "cuda-cudart"},
	CuBLASLt:  {"nvidia-cublas", "nvidia-cublas-cu12", "libcublas"},
	CuBLAS:    {"nvidia-cublas", "nvidia-cublas-cu12", "libcublas"},
	CuFFT:     {"nvidia-cufft", "nvidia-cufft-cu12", "libcufft"},
	CuRAND:    {"nvidia-curand", "nvidia-curand-cu12", "libcurand"},
	CuSPARSE:  {"nvidia-cusparse", "nvidia-cusparse-cu12", "libcusparse"},
	CuSOLVER:  {"nvidia-cusolver", "nvidia-cusolver-cu12", "libcusolver"},
	NVTX:      {"", "nvidia-nvtx-cu12", "cuda-nvtx"}, // CUDA 13 has no libnvToolsExt
	NCCL:      {"nvidia-nccl-cu13", "nvidia-nccl-cu12", "nccl"},
	CUPTI:     {"nvidia-cuda-cupti", "nvidia-cuda-cupti-cu12", "cuda-cupti"},
	CuDNN:     {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "cudnn"},
	CuTENSOR:  {"cutensor-cu13", "cutensor-cu12", "cutensor"},
	// cuDLA comes with CUDA for Tegra (JetPack, DRIVE OS): see hint.
	CuDLA: {"", "", ""},
}

// pipText is the pip command line that installs l's wheels: "pip install
// nvidia-cuda-nvrtc for CUDA 13, nvidia-cuda-nvrtc-cu12 for CUDA 12".
func pipText(l Lib) string {
	n, ok := installNames[l]
	switch {
	case !ok, n.pip13 == "" && n.pip12 == "":
		return ""
	case n.pip13 == "":
		return "pip install " + n.pip12
	case n.pip12 == "":
		return "pip install " + n.pip13 + " (CUDA 13)"
	}
	return fmt.Sprintf("pip install %s for CUDA 13, %s for CUDA 12", n.pip13, n.pip12)
}

// clone returns the root of the cudago repository the program runs in or
// near: the directory above the local install (.cuda/root) when it has
// scripts/setup-cuda.sh, else the first directory at or above the working
// directory that has it. "" when there is none: then the program runs
// outside the repository (from a module that uses cudago), where the
// script cannot be run by its relative name.
func (s *searcher) clone() string {
	has := func(dir string) bool {
		fi, err := os.Stat(filepath.Join(dir, "scripts", "setup-cuda.sh"))
		return err == nil && fi.Mode().IsRegular()
	}
	if root, _ := s.localRoot(); root != "" {
		if dir := filepath.Dir(filepath.Dir(root)); has(dir) {
			return dir
		}
	}
	if s.cwd == "" {
		return ""
	}
	for dir := filepath.Clean(s.cwd); ; dir = filepath.Dir(dir) {
		if has(dir) {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// hint says how to make sp's library available, for where the program
// runs: in a clone of cudago its setup script, elsewhere a CUDA toolkit,
// NVIDIA's pip wheels, conda or the environment file of a clone.
func (s *searcher) hint(sp *spec) string {
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	clone := s.clone()
	if sp.systemFirst { // the driver and NVML come with the NVIDIA driver
		add("install the NVIDIA driver (it brings %s) to use a GPU", strings.Join(sp.sonames, ", "))
		add("without a GPU, only to load cudago's bindings: set %s to a %s", sp.env, sp.sonames[0])
		if clone != "" {
			add("or bash %s (its %s loads but finds no GPU)", filepath.Join(clone, "scripts", "setup-cuda.sh"), sp.sonames[0])
		} else {
			add("or source <cudago clone>/.cuda/env.sh, made by the clone's scripts/setup-cuda.sh (its %s loads but finds no GPU)", sp.sonames[0])
		}
		return strings.Join(lines, "\n")
	}
	if sp.notLocal {
		clone = "" // the setup script does not install it: the general advice
	}
	if clone != "" {
		add("bash %s: it installs CUDA 12.4 into %s", filepath.Join(clone, "scripts", "setup-cuda.sh"), filepath.Join(clone, ".cuda"))
		add("or make %s available another way:", sp.lib)
	} else {
		add("make %s available one of these ways, then run the program again:", sp.lib)
	}
	if sp.platform != nil {
		add("  - CUDA for Tegra: JetPack (Jetson) or DRIVE OS installs %s with CUDA, in /usr/local/cuda", strings.Join(sp.sonames, ", "))
	}
	add("  - a CUDA toolkit: set CUDA_PATH (or CUDA_HOME) to its root, the directory holding lib64")
	if p := pipText(sp.lib); p != "" {
		add("  - NVIDIA's pip wheel: %s, in the active virtual environment (VIRTUAL_ENV) or for the python3 on PATH", p)
	}
	if n := installNames[sp.lib]; n.conda != "" {
		add("  - conda: conda install %s, in the active environment (CONDA_PREFIX)", n.conda)
	}
	if clone == "" && !sp.notLocal {
		add("  - a clone of cudago: bash <clone>/scripts/setup-cuda.sh once, then source <clone>/.cuda/env.sh")
	}
	add("  - the file itself: set %s to the library file or the directory holding it", sp.env)
	return strings.Join(lines, "\n")
}

var (
	glibcRefused  = regexp.MustCompile("version `GLIBC_([0-9.]+)' not found")
	cxxRefused    = regexp.MustCompile("version `((?:GLIBCXX|CXXABI)_[0-9.]+)' not found")
	symbolMissing = regexp.MustCompile(`undefined symbol: (\S+)`)
	depMissing    = regexp.MustCompile(`^(\S+): cannot open shared object file`)
	requiredBy    = regexp.MustCompile(`\(required by (\S+)\)`)
)

// explain turns dlopen's refusal of file p (the library sp, found in
// where) into a LoadFailure with the reason in words and its fix. libc is
// the system's glibc version ("" when unknown).
func explain(sp *spec, p, where, dlerr, libc string) *LoadFailure {
	f := &LoadFailure{Path: p, Where: where, Err: dlerr}
	file := filepath.Base(p)
	short := strings.TrimPrefix(dlerr, p+": ") // dlopen's message starts with the file
	// wheel offers NVIDIA's pip wheel, with why it fits (note), or "".
	wheel := func(note string) string {
		pip := pipText(sp.lib)
		if pip == "" {
			return ""
		}
		return fmt.Sprintf("NVIDIA's pip wheel (%s%s), which pathfinder finds by itself in the active virtual environment or python3's site-packages, or ", pip, note)
	}
	other := fmt.Sprintf("use another %s: %sone from a CUDA toolkit (CUDA_PATH or CUDA_HOME) or your distribution, with %s set to it if it is elsewhere", file, wheel(""), sp.env)
	if m := glibcRefused.FindStringSubmatch(dlerr); m != nil {
		has, older := "an older glibc", "this system's glibc"
		if libc != "" {
			has, older = "glibc "+libc, "glibc "+libc+" or older"
			if v, err := version.Parse(libc); err == nil {
				if w, err := version.Parse(m[1]); err == nil && v.Compare(w) >= 0 {
					has += " (yet the loader says it lacks that version: is another libc.so.6 first on LD_LIBRARY_PATH?)"
				}
			}
		}
		f.Reason = fmt.Sprintf("needs glibc %s or newer (GLIBC_%s), and this system has %s", m[1], m[1], has)
		f.Fix = fmt.Sprintf("install a %s built for %s: %sthe package of your distribution, with %s set to it if it is elsewhere; or run on a system with glibc %s or newer",
			file, older, wheel(": built for old glibc versions"), sp.env, m[1])
		return f
	}
	if m := cxxRefused.FindStringSubmatch(dlerr); m != nil {
		f.Reason = fmt.Sprintf("needs a newer C++ runtime (%s) than the system's libstdc++.so.6", m[1])
		f.Fix = fmt.Sprintf("install a newer libstdc++ (that of a newer gcc, or conda's libstdcxx-ng, first on LD_LIBRARY_PATH), or %s", other)
		return f
	}
	switch {
	case strings.Contains(dlerr, "wrong ELF class"):
		f.Reason = "is built for another word size (" + short + ")"
		f.Fix = fmt.Sprintf("use the 64-bit library; %s", other)
	case strings.Contains(dlerr, "invalid ELF header"), strings.Contains(dlerr, "file too short"):
		f.Reason = "is not a shared library (" + short + "): damaged, truncated, or a text file such as a Git LFS pointer or a linker script"
		f.Fix = fmt.Sprintf("reinstall it, or %s", other)
	case strings.Contains(dlerr, "Permission denied"):
		f.Reason = "cannot be read: permission denied"
		f.Fix = fmt.Sprintf("make it and its directories readable (chmod a+rX), or %s", other)
	case symbolMissing.MatchString(dlerr):
		m := symbolMissing.FindStringSubmatch(dlerr)
		f.Reason = fmt.Sprintf("needs the symbol %s, which the libraries loaded with it lack: they come from another version", m[1])
		f.Fix = fmt.Sprintf("use the libraries of one install together (CUDA_PATH, or %s for each), or %s", "CUDAGO_<LIB>_PATH", other)
	case depMissing.MatchString(short) && depMissing.FindStringSubmatch(short)[1] != file:
		dep := depMissing.FindStringSubmatch(short)[1]
		f.Reason = fmt.Sprintf("needs %s, which the loader cannot find", dep)
		f.Fix = fmt.Sprintf("install %s beside it or where the loader looks (LD_LIBRARY_PATH, ldconfig), or %s", dep, other)
	default:
		f.Reason = "is refused by the loader: " + short
		f.Fix = other
	}
	return f
}
