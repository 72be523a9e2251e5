package pathfinder

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Artifact is one of NVIDIA's files that pathfinder finds without loading
// it: a directory of headers, a tool, or a library linked into device code.
type Artifact string

// The artifacts pathfinder knows how to find.
const (
	CUDAHeaders  Artifact = "cuda-headers"  // the toolkit's include directory: cuda_runtime.h (and cuda.h)
	CuDNNHeaders Artifact = "cudnn-headers" // cuDNN's include directory: cudnn.h
	NCCLHeaders  Artifact = "nccl-headers"  // NCCL's include directory: nccl.h
	NVCC         Artifact = "nvcc"          // the CUDA compiler driver
	NVDisasm     Artifact = "nvdisasm"      // the SASS disassembler
	CuObjDump    Artifact = "cuobjdump"     // lists and extracts the code of fat binaries
	Cudadevrt    Artifact = "cudadevrt"     // libcudadevrt.a: the device runtime that relocatable device code links with
	Libdevice    Artifact = "libdevice"     // libdevice.10.bc: CUDA's math functions as NVVM IR, for libNVVM
)

// artifactSpec says how to find one artifact. Directories are relative to
// each place's root.
type artifactSpec struct {
	a   Artifact
	env string
	// file is the name looked for; the answer is its directory when dir
	// is set (headers: the -I directory), else the file.
	file string
	dir  bool
	// tool: an executable, also searched on PATH.
	tool bool
	// root: below a toolkit root (CUDA_PATH, CUDA_HOME, /usr/local/cuda);
	// conda: below CONDA_PREFIX; local: below the local install's root;
	// wheel: below a site-packages directory; system: absolute
	// directories (below the searcher's sysroot), tried last.
	root, conda, local, wheel, system []string
	// version reads the version the files declare, from the found path.
	version func(path string) string
	// pip and condaPkg install it.
	pip, condaPkg string
}

func targetsDirs(sub string) []string {
	_, targets := archDirs()
	var out []string
	for _, t := range targets {
		out = append(out, "targets/"+t+"/"+sub)
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var artifactSpecs = func() []*artifactSpec {
	ma, _ := archDirs()
	tools := func(a Artifact, wheelDir, pip, condaPkg string) *artifactSpec {
		return &artifactSpec{a: a, env: "CUDAGO_" + strings.ToUpper(string(a)) + "_PATH", file: string(a), tool: true,
			root: []string{"bin"}, conda: []string{"bin"},
			// The clone's .cuda/bin (what .cuda/env.sh puts on PATH), then
			// Debian's layout inside the local install.
			local:  []string{"../bin", "usr/bin", "usr/lib/nvidia-cuda-toolkit/bin"},
			wheel:  []string{"nvidia/cu13/bin", wheelDir},
			system: []string{"/usr/lib/nvidia-cuda-toolkit/bin", "/usr/bin"},
			pip:    pip, condaPkg: condaPkg}
	}
	return []*artifactSpec{
		{a: CUDAHeaders, env: "CUDAGO_CUDA_HEADERS_PATH", file: "cuda_runtime.h", dir: true,
			root: concat([]string{"include"}, targetsDirs("include")), conda: concat(targetsDirs("include"), []string{"include"}),
			local: []string{"usr/include", "usr/local/cuda/include"}, wheel: []string{"nvidia/cu13/include", "nvidia/cuda_runtime/include"},
			system: []string{"/usr/include"}, version: cudaHeaderVersion,
			pip: "nvidia-cuda-runtime for CUDA 13, nvidia-cuda-runtime-cu12 for CUDA 12", condaPkg: "cuda-cudart-dev"},
		{a: CuDNNHeaders, env: "CUDAGO_CUDNN_HEADERS_PATH", file: "cudnn.h", dir: true,
			root: concat([]string{"include"}, targetsDirs("include")), conda: []string{"include"},
			local: []string{"usr/include", "usr/include/" + ma}, wheel: []string{"nvidia/cudnn/include", "nvidia/cu13/include"},
			system: []string{"/usr/include", "/usr/include/" + ma}, version: cudnnHeaderVersion,
			pip: "nvidia-cudnn-cu13 for CUDA 13, nvidia-cudnn-cu12 for CUDA 12", condaPkg: "cudnn"},
		{a: NCCLHeaders, env: "CUDAGO_NCCL_HEADERS_PATH", file: "nccl.h", dir: true,
			root: concat([]string{"include"}, targetsDirs("include")), conda: []string{"include"},
			local: []string{"usr/include"}, wheel: []string{"nvidia/nccl/include"},
			system: []string{"/usr/include", "/usr/local/include"}, version: ncclHeaderVersion,
			pip: "nvidia-nccl-cu13 for CUDA 13, nvidia-nccl-cu12 for CUDA 12", condaPkg: "nccl"},
		tools(NVCC, "nvidia/cuda_nvcc/bin", "nvidia-cuda-nvcc for CUDA 13, nvidia-cuda-nvcc-cu12 for CUDA 12", "cuda-nvcc"),
		tools(NVDisasm, "nvidia/cuda_nvdisasm/bin", "nvidia-cuda-nvdisasm for CUDA 13, nvidia-cuda-nvdisasm-cu12 for CUDA 12", "cuda-nvdisasm"),
		tools(CuObjDump, "nvidia/cuda_cuobjdump/bin", "nvidia-cuda-cuobjdump for CUDA 13, nvidia-cuda-cuobjdump-cu12 for CUDA 12", "cuda-cuobjdump"),
		{a: Cudadevrt, env: "CUDAGO_CUDADEVRT_PATH", file: "libcudadevrt.a",
			root: concat([]string{"lib64", "lib"}, targetsDirs("lib")), conda: concat([]string{"lib"}, targetsDirs("lib")),
			local: []string{"usr/lib/" + ma, "usr/lib/nvidia-cuda-toolkit/lib64", "usr/local/cuda/lib64"},
			wheel: []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}, system: []string{"/usr/lib/" + ma, "/usr/lib/nvidia-cuda-toolkit/lib64"},
			pip: "nvidia-cuda-runtime for CUDA 13, nvidia-cuda-runtime-cu12 for CUDA 12", condaPkg: "cuda-cudart-static"},
		{a: Libdevice, env: "CUDAGO_LIBDEVICE_PATH", file: "libdevice.10.bc",
			root: []string{"nvvm/libdevice"}, conda: []string{"nvvm/libdevice"},
			// Debian keeps it in nvidia-cuda-toolkit/libdevice and links
			// /usr/lib/cuda/nvvm/libdevice to it.
			local:  []string{"usr/lib/nvidia-cuda-toolkit/libdevice", "usr/lib/cuda/nvvm/libdevice", "usr/local/cuda/nvvm/libdevice"},
			wheel:  []string{"nvidia/cu13/nvvm/libdevice", "nvidia/cuda_nvcc/nvvm/libdevice"},
			system: []string{"/usr/lib/nvidia-cuda-toolkit/libdevice", "/usr/lib/cuda/nvvm/libdevice"},
			pip:    "nvidia-cuda-nvcc for CUDA 13, nvidia-cuda-nvcc-cu12 for CUDA 12", condaPkg: "cuda-nvvm"},
	}
}()

func (s *artifactSpec) id() Artifact { return s.a }

func artifactSpecOf(a Artifact) *artifactSpec { return lookup(artifactSpecs, (*artifactSpec).id, a) }

// Artifacts returns every artifact pathfinder knows, in a fixed order.
func Artifacts() []Artifact { return ids(artifactSpecs, (*artifactSpec).id) }

// String returns the artifact's id, e.g. "nvcc".
func (a Artifact) String() string { return string(a) }

// EnvVar returns the variable that overrides the search for a, e.g.
// "CUDAGO_NVCC_PATH", or "" for an unknown artifact.
func (a Artifact) EnvVar() string {
	if s := artifactSpecOf(a); s != nil {
		return s.env
	}
	return ""
}

// FileName returns the name of the file a is found by: "cuda_runtime.h",
// "nvcc", "libdevice.10.bc".
func (a Artifact) FileName() string {
	if s := artifactSpecOf(a); s != nil {
		return s.file
	}
	return ""
}

// Located is an artifact found by Find.
type Located struct {
	Artifact Artifact
	// Path is the file, or for headers the directory that holds them
	// (what to pass with -I).
	Path string
	// Found says where it was found, as Library.Found does: "env
	// CUDAGO_NVCC_PATH", "CUDA_PATH", "CUDA_HOME", "local install",
	// "CUDAGO_PYTHON_SITE", "VIRTUAL_ENV", "python3 site-packages",
	// "CONDA_PREFIX", "PATH" (tools), "/usr/local/cuda" or "system".
	Found string
	// Version is the version the headers declare: CUDA's (CUDART_VERSION
	// of cuda_runtime_api.h, "12.4"), cuDNN's (cudnn_version.h, "9.1.0"),
	// NCCL's (nccl.h, "2.22.3"); "" for the others (ToolVersion asks a
	// tool).
	Version string
}

func (l *Located) String() string { return fmt.Sprintf("%s %s (%s)", l.Artifact, l.Path, l.Found) }

// ArtifactNotFoundError is returned by Find when no place has the artifact.
type ArtifactNotFoundError struct {
	Artifact Artifact
	Tried    []Attempt
	// Override is the override variable when it was set and failed; then
	// nothing else was searched.
	Override string
	// Hint says how to install it, for where the program runs.
	Hint string
}

func (e *ArtifactNotFoundError) Error() string {
	var b strings.Builder
	if e.Override != "" {
		fmt.Fprintf(&b, "pathfinder: cannot find %s from %s (set, so nothing else was searched); tried:", e.Artifact, e.Override)
	} else {
		fmt.Fprintf(&b, "pathfinder: cannot find %s (%s); tried:", e.Artifact, e.Artifact.FileName())
	}
	for _, a := range e.Tried {
		b.WriteString("\n\t")
		b.WriteString(a.String())
	}
	b.WriteString("\nhint: ")
	b.WriteString(e.Fix())
	return b.String()
}

// Fix says how to make the artifact available.
func (e *ArtifactNotFoundError) Fix() string {
	switch {
	case e.Override != "":
		return fmt.Sprintf("point %s at %s or the directory holding it, or unset it to search the usual places", e.Override, e.Artifact.FileName())
	case e.Hint != "":
		return e.Hint
	}
	return fmt.Sprintf("set CUDA_PATH to a CUDA toolkit, or %s to %s", e.Artifact.EnvVar(), e.Artifact.FileName())
}

type artifactEntry struct {
	once sync.Once
	loc  *Located
	err  error
}

var artifactCache = newCache[artifactEntry](artifactSpecs, (*artifactSpec).id)

// Find finds artifact a, once per process, searching as Load does:
//
//  1. its override variable, CUDAGO_<NAME>_PATH (CUDAGO_NVCC_PATH,
//     CUDAGO_CUDA_HEADERS_PATH, CUDAGO_LIBDEVICE_PATH, ...): the file, or
//     the directory holding it; if set and wrong, nothing else is tried;
//  2. CUDA_PATH, then CUDA_HOME: bin, include, lib64, nvvm/libdevice and
//     targets/<arch>/{include,lib};
//  3. the local install of scripts/setup-cuda.sh (Debian's layout:
//     usr/include, usr/bin, usr/lib/nvidia-cuda-toolkit/{bin,libdevice},
//     usr/lib/<multiarch>), and for tools the clone's .cuda/bin;
//  4. NVIDIA's pip wheels in the Python environment's site-packages
//     (nvidia/cu13/{include,bin,lib,nvvm/libdevice} for CUDA 13, the
//     wheel's own nvidia/<name>/... for CUDA 12: nvidia/cuda_nvcc/bin,
//     nvidia/cudnn/include, nvidia/nccl/include);
//  5. CONDA_PREFIX (include, targets/<arch>/include, bin, lib,
//     nvvm/libdevice);
//  6. for tools, PATH;
//  7. /usr/local/cuda;
//  8. the system's directories: /usr/include (and its multiarch
//     directory, for cuDNN), /usr/lib/<multiarch>,
//     /usr/lib/nvidia-cuda-toolkit/{bin,libdevice}, /usr/bin.
//
// Headers are found by one file (cuda_runtime.h, cudnn.h, nccl.h) and
// reported as its directory; tools must be executable. The result, or the
// *ArtifactNotFoundError, is cached for the life of the process.
func Find(a Artifact) (*Located, error) {
	e := artifactCache[a]
	if e == nil {
		return nil, fmt.Errorf("pathfinder: unknown artifact %q (known: %v)", string(a), Artifacts())
	}
	e.once.Do(func() {
		e.loc, e.err = (&searcher{getenv: os.Getenv, cwd: workDir()}).findArtifact(artifactSpecOf(a))
	})
	return e.loc, e.err
}

// artifactRun is one search for one artifact.
type artifactRun struct {
	s     *searcher
	sp    *artifactSpec
	tried []Attempt
}

func (r *artifactRun) note(path, where, err string) {
	r.tried = append(r.tried, Attempt{Path: path, Where: where, Err: err})
}

// ok reports whether p is the artifact: a regular file (executable, for a
// tool).
func (r *artifactRun) ok(p string) (bool, string) {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return false, errText(err)
	case !fi.Mode().IsRegular():
		return false, "not a regular file"
	case r.sp.tool && fi.Mode()&0o111 == 0:
		return false, "not executable"
	}
	return true, ""
}

func (r *artifactRun) located(p, where string) *Located {
	l := &Located{Artifact: r.sp.a, Path: p, Found: where}
	if r.sp.dir {
		l.Path = filepath.Dir(p)
	}
	if r.sp.version != nil {
		l.Version = r.sp.version(l.Path)
	}
	return l
}

// in looks for the file in the directories dirs below root.
func (r *artifactRun) in(where, root string, dirs []string) *Located {
	if why := notDir(root); why != "" {
		r.note(root, where, why)
		return nil
	}
	var why []string
	for _, d := range dirs {
		p := filepath.Join(root, d, r.sp.file)
		if ok, msg := r.ok(p); ok {
			return r.located(p, where)
		} else if msg != "no such file or directory" {
			why = append(why, p+": "+msg)
		}
	}
	msg := fmt.Sprintf("no %s in %s", r.sp.file, strings.Join(dirs, ", "))
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	r.note(root, where, msg)
	return nil
}

func (s *searcher) findArtifact(sp *artifactSpec) (*Located, error) {
	r := &artifactRun{s: s, sp: sp}
	if v := s.getenv(sp.env); v != "" {
		where := "env " + sp.env
		p := s.abs(v)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			r.note(p, where, errText(err))
		case fi.IsDir():
			// The directory holding it, or a root it is below.
			if loc := r.in(where, p, append([]string{"."}, sp.root...)); loc != nil {
				return loc, nil
			}
		default:
			if ok, msg := r.ok(p); !ok {
				r.note(p, where, msg)
			} else if filepath.Base(p) != sp.file {
				r.note(p, where, "not named "+sp.file)
			} else {
				return r.located(p, where), nil
			}
		}
		return nil, &ArtifactNotFoundError{Artifact: sp.a, Tried: r.tried, Override: sp.env}
	}
	r.note("", "env "+sp.env, "not set")

	envRoot := func(name string) func() *Located {
		return func() *Located {
			v := s.getenv(name)
			if v == "" {
				r.note("", name, "not set")
				return nil
			}
			return r.in(name, s.abs(v), sp.root)
		}
	}
	local := func() *Located {
		root, why := s.localRoot()
		if root == "" {
			r.note("", "local install", why)
			return nil
		}
		return r.in("local install", root, sp.local)
	}
	pip := func() *Located {
		var loc *Located
		s.eachSite(r.note, func(where, dir string) bool {
			loc = r.in(where, dir, sp.wheel)
			return loc != nil
		})
		return loc
	}
	conda := func() *Located {
		v := s.getenv("CONDA_PREFIX")
		if v == "" {
			r.note("", "CONDA_PREFIX", "not set")
			return nil
		}
		return r.in("CONDA_PREFIX", s.abs(v), sp.conda)
	}
	path := func() *Located {
		if !sp.tool {
			return nil
		}
		if p := findInPath(s.getenv("PATH"), sp.file); p != "" {
			return r.located(p, "PATH")
		}
		r.note("", "PATH", "no executable "+sp.file+" in "+s.getenv("PATH"))
		return nil
	}
	usrLocal := func() *Located { return r.in("/usr/local/cuda", s.sys("/usr/local/cuda"), sp.root) }
	system := func() *Located {
		for _, d := range sp.system {
			p := filepath.Join(s.sys(d), sp.file)
			if ok, _ := r.ok(p); ok {
				return r.located(p, "system")
			}
		}
		dirs := make([]string, len(sp.system))
		for i, d := range sp.system {
			dirs[i] = s.sys(d)
		}
		r.note("", "system", fmt.Sprintf("no %s in %s", sp.file, strings.Join(dirs, ", ")))
		return nil
	}
	for _, step := range []func() *Located{envRoot("CUDA_PATH"), envRoot("CUDA_HOME"), local, pip, conda, path, usrLocal, system} {
		if loc := step(); loc != nil {
			return loc, nil
		}
	}
	return nil, &ArtifactNotFoundError{Artifact: sp.a, Tried: r.tried, Hint: s.artifactHint(sp)}
}

// artifactHint says how to install an artifact, for where the program runs.
func (s *searcher) artifactHint(sp *artifactSpec) string {
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	clone := s.clone()
	if clone != "" && sp.a != CuDNNHeaders {
		add("bash %s: it installs CUDA 12.4 (headers, tools, libdevice, libcudadevrt.a) into %s", filepath.Join(clone, "scripts", "setup-cuda.sh"), filepath.Join(clone, ".cuda"))
		add("or make %s available another way:", sp.file)
	} else {
		add("make %s available one of these ways:", sp.file)
	}
	add("  - a CUDA toolkit: set CUDA_PATH (or CUDA_HOME) to its root")
	add("  - NVIDIA's pip wheel: pip install %s, in the active virtual environment (VIRTUAL_ENV) or for the python3 on PATH", sp.pip)
	add("  - conda: conda install %s, in the active environment (CONDA_PREFIX)", sp.condaPkg)
	add("  - the file itself: set %s to it or the directory holding it", sp.env)
	return strings.Join(lines, "\n")
}

// headerDefines reads the #define NAME value lines of a header.
func headerDefines(path string, names ...string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[0] == "#define" {
			for _, n := range names {
				if fields[1] == n {
					if _, seen := out[n]; !seen {
						out[n] = fields[2]
					}
				}
			}
		}
	}
	return out
}

// cudaHeaderVersion reads CUDART_VERSION (12040: "12.4") from
// cuda_runtime_api.h, else CUDA_VERSION from cuda.h, in dir.
func cudaHeaderVersion(dir string) string {
	for _, c := range [][2]string{{"cuda_runtime_api.h", "CUDART_VERSION"}, {"cuda.h", "CUDA_VERSION"}} {
		if v := headerDefines(filepath.Join(dir, c[0]), c[1])[c[1]]; v != "" {
			var n int
			if _, err := fmt.Sscan(v, &n); err == nil && n >= 1000 {
				return fmt.Sprintf("%d.%d", n/1000, n%1000/10)
			}
		}
	}
	return ""
}

// cudnnHeaderVersion reads CUDNN_MAJOR, _MINOR and _PATCHLEVEL from
// cudnn_version.h (cuDNN 8 and 9), else cudnn.h.
func cudnnHeaderVersion(dir string) string {
	for _, h := range []string{"cudnn_version.h", "cudnn.h"} {
		d := headerDefines(filepath.Join(dir, h), "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL")
		if d["CUDNN_MAJOR"] != "" && d["CUDNN_MINOR"] != "" && d["CUDNN_PATCHLEVEL"] != "" {
			return d["CUDNN_MAJOR"] + "." + d["CUDNN_MINOR"] + "." + d["CUDNN_PATCHLEVEL"]
		}
	}
	return ""
}

// ncclHeaderVersion reads NCCL_MAJOR, _MINOR and _PATCH from nccl.h.
func ncclHeaderVersion(dir string) string {
	d := headerDefines(filepath.Join(dir, "nccl.h"), "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")
	if d["NCCL_MAJOR"] == "" || d["NCCL_MINOR"] == "" || d["NCCL_PATCH"] == "" {
		return ""
	}
	return d["NCCL_MAJOR"] + "." + d["NCCL_MINOR"] + "." + d["NCCL_PATCH"]
}

// toolRelease matches the version line of NVIDIA's tools: "Cuda
// compilation tools, release 12.4, V12.4.131".
var toolRelease = regexp.MustCompile(`release (\d+\.\d+), V(\d+\.\d+\.\d+)`)

// ToolVersion runs a tool found by Find with --version (killed after
// timeout) and returns its version, "12.4.131".
func ToolVersion(l *Located, timeout time.Duration) (string, error) {
	if sp := artifactSpecOf(l.Artifact); sp == nil || !sp.tool {
		return "", fmt.Errorf("pathfinder: %s is not a tool", l.Artifact)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Path, "--version")
	var out cappedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	killProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("pathfinder: %s --version: no answer within %v", l.Path, timeout)
	}
	if m := toolRelease.FindSubmatch(out.b); m != nil {
		return string(m[2]), nil
	}
	if err != nil {
		return "", fmt.Errorf("pathfinder: %s --version: %v: %s", l.Path, err, strings.TrimSpace(string(out.b)))
	}
	return "", fmt.Errorf("pathfinder: %s --version printed no version: %q", l.Path, strings.TrimSpace(string(out.b)))
}

// FileStatus is the outcome of finding one artifact, as reported by
// ReportFiles.
type FileStatus struct {
	Artifact Artifact
	// File is what Find returned; nil when Err is set.
	File *Located
	Err  error
	// Version is the headers' version (Located.Version) or the tool's
	// (ToolVersion); VersionErr says why a tool's is unknown.
	Version    string
	VersionErr error
}

// ReportFiles finds every artifact (see Artifacts) and asks each tool its
// version, for cudago doctor.
func ReportFiles() []FileStatus {
	out := make([]FileStatus, 0, len(artifactSpecs))
	for _, a := range Artifacts() {
		st := FileStatus{Artifact: a}
		st.File, st.Err = Find(a)
		if st.File != nil {
			st.Version = st.File.Version
			if artifactSpecOf(a).tool {
				st.Version, st.VersionErr = ToolVersion(st.File, 10*time.Second)
			}
		}
		out = append(out, st)
	}
	return out
}
