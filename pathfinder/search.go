package pathfinder

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cudago/cudago/internal/version"
)

// Depths of the tree walks that back up the known subdirectories.
const (
	localDepth  = 6 // the project-local install
	debianDepth = 4 // /usr/lib/nvidia-cuda-toolkit
	maxWalked   = 200000
)

// searcher holds what a search depends on, so that tests can run it with a
// fake environment and file system root.
type searcher struct {
	getenv func(string) string
	cwd    string
	// sysroot prefixes the fixed system directories (/usr/local/cuda,
	// /usr/lib/...); empty means "/".
	sysroot string
	// python asks python3 for its site-packages; nil means the process's
	// own probe, which asks once per process.
	python *pythonProbe
	// lookup returns the spec of a dependency; nil means specOf.
	lookup func(Lib) *spec
	// goarch is the architecture the search is for; empty means
	// runtime.GOARCH.
	goarch string
}

func (s *searcher) arch() string {
	if s.goarch != "" {
		return s.goarch
	}
	return runtime.GOARCH
}

// notTegra says why this machine is no NVIDIA Tegra system (Jetson, DRIVE),
// or "" when it is one: an arm64 machine with /etc/nv_tegra_release
// (JetPack's L4T) or "nvidia,tegra" in its device tree.
func (s *searcher) notTegra() string {
	if a := s.arch(); a != "arm64" {
		return fmt.Sprintf("it exists only on NVIDIA Tegra systems (Jetson, DRIVE: arm64), and this machine is %s", a)
	}
	if exists(s.sys("/etc/nv_tegra_release")) {
		return ""
	}
	if b, err := os.ReadFile(s.sys("/proc/device-tree/compatible")); err == nil && strings.Contains(string(b), "nvidia,tegra") {
		return ""
	}
	return "it exists only on NVIDIA Tegra systems (Jetson, DRIVE), and this arm64 machine has neither /etc/nv_tegra_release nor nvidia,tegra in its device tree"
}

func (s *searcher) spec(l Lib) *spec {
	if s.lookup != nil {
		return s.lookup(l)
	}
	return specOf(l)
}

// archDirs returns the Debian multiarch triple and the CUDA targets
// directories for the running architecture.
func archDirs() (multiarch string, targets []string) {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64-linux-gnu", []string{"sbsa-linux", "aarch64-linux"}
	case "ppc64le":
		return "powerpc64le-linux-gnu", []string{"ppc64le-linux"}
	default:
		return "x86_64-linux-gnu", []string{"x86_64-linux"}
	}
}

// toolkitSubdirs are the library directories of a CUDA toolkit root.
func toolkitSubdirs() []string {
	_, targets := archDirs()
	dirs := []string{"lib64", "lib", "nvvm/lib64"}
	for _, t := range targets {
		dirs = append(dirs, "targets/"+t+"/lib")
	}
	return dirs
}

// rootSubdirs are the directories of a toolkit root where sp may be.
func rootSubdirs(sp *spec) []string {
	return append(toolkitSubdirs(), sp.rootDirs...)
}

// localSubdirs are the library directories of the project-local install,
// which holds unpacked Debian packages and/or NVIDIA's redistributables.
func localSubdirs(sp *spec) []string {
	ma, _ := archDirs()
	dirs := append(localBaseSubdirs(), sp.rootDirs...)
	for _, d := range sp.sysDirs {
		dirs = append(dirs, "usr/lib/"+ma+"/"+d)
	}
	return dirs
}

func localBaseSubdirs() []string {
	ma, targets := archDirs()
	dirs := []string{
		"usr/lib/" + ma,
		"usr/lib/" + ma + "/nvidia/current",
		"usr/lib/nvidia-cuda-toolkit/lib64",
		"usr/lib/nvidia-cuda-toolkit/nvvm/lib64",
		"usr/local/cuda/lib64",
		"usr/local/cuda/nvvm/lib64",
	}
	for _, t := range targets {
		dirs = append(dirs, "usr/local/cuda/targets/"+t+"/lib")
	}
	return append(dirs, toolkitSubdirs()...)
}

func (s *searcher) sys(p string) string {
	if s.sysroot == "" {
		return p
	}
	return filepath.Join(s.sysroot, p)
}

func (s *searcher) abs(p string) string {
	if filepath.IsAbs(p) || s.cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(s.cwd, p)
}

// localRoot returns the project-local install: $CUDAGO_LOCAL_CUDA, or the
// first .cuda/root found walking up from the working directory.
func (s *searcher) localRoot() (root, why string) {
	if v := s.getenv("CUDAGO_LOCAL_CUDA"); v != "" {
		return s.abs(v), ""
	}
	if s.cwd == "" {
		return "", "CUDAGO_LOCAL_CUDA not set and working directory unknown"
	}
	for dir := filepath.Clean(s.cwd); ; {
		cand := filepath.Join(dir, ".cuda", "root")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return cand, ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Sprintf("CUDAGO_LOCAL_CUDA not set and no .cuda/root in %s or above", s.cwd)
}

// run is one search for one library.
type run struct {
	s     *searcher
	sp    *spec
	tried []Attempt
	seen  map[string]bool
	// depth counts the dependencies being loaded above this run (a guard
	// against a cycle in the specs).
	depth int
	// cause is the first file the loader refused.
	cause *LoadFailure
}

// place is where a file was found: a root directory and the directories
// below it where each library may be. A library's dependencies are looked
// up in the same place before it is opened.
type place struct {
	where   string
	root    string
	subdirs func(*spec) []string
}

// fixed returns subdirectories that are the same for every library.
func fixed(dirs []string) func(*spec) []string {
	return func(*spec) []string { return dirs }
}

// wheelSubdirs are the directories of a library's pip wheels below a
// site-packages directory.
func wheelSubdirs(sp *spec) []string { return sp.wheel }

func (s *searcher) find(sp *spec) (*Library, error) {
	if !supported {
		return nil, errUnsupported
	}
	r := &run{s: s, sp: sp, seen: map[string]bool{}}
	if v := s.getenv(sp.env); v != "" {
		if lib := r.override(v); lib != nil {
			return lib, nil
		}
		return nil, &NotFoundError{Lib: sp.lib, Tried: r.tried, Override: sp.env, Cause: r.cause, names: sp.names(), env: sp.env}
	}
	r.note("", "env "+sp.env, "not set")
	if sp.platform != nil {
		if why := sp.platform(s); why != "" {
			r.note("", "platform", why)
			return nil, &NotFoundError{Lib: sp.lib, Tried: r.tried, Unavailable: why, names: sp.names(), env: sp.env}
		}
	}

	usrLocal := func() *Library {
		return r.root(place{"/usr/local/cuda", s.sys("/usr/local/cuda"), rootSubdirs}, 0)
	}
	multiarch := func() *Library {
		ma, _ := archDirs()
		return r.root(place{"debian multiarch", s.sys("/usr/lib/" + ma), func(sp *spec) []string {
			return append([]string{".", "nvidia/current"}, sp.sysDirs...)
		}}, 0)
	}
	debian := func() *Library {
		return r.root(place{"debian nvidia-cuda-toolkit", s.sys("/usr/lib/nvidia-cuda-toolkit"),
			fixed([]string{".", "lib64", "lib", "nvvm/lib64", "nvvm/lib"})}, debianDepth)
	}
	cudaHome := func() *Library { return r.envRoot("CUDA_HOME") }
	cudaPath := func() *Library { return r.envRoot("CUDA_PATH") }
	// CUDA_PATH ranks above CUDA_HOME, as in NVIDIA's cuda.pathfinder 1.8:
	// it is the variable NVIDIA's installers and documentation name.
	steps := []func() *Library{r.loaded, cudaPath, cudaHome, r.local, r.pip, r.conda, r.loader, usrLocal, multiarch, debian}
	if sp.systemFirst {
		// The driver must match the kernel module: prefer the system's.
		steps = []func() *Library{r.loaded, r.loader, cudaPath, cudaHome, r.local, usrLocal, multiarch, debian}
	}
	for _, step := range steps {
		if lib := step(); lib != nil {
			return lib, nil
		}
	}
	return nil, &NotFoundError{Lib: sp.lib, Tried: r.tried, Cause: r.cause, Hint: s.hint(sp), names: sp.names(), env: sp.env}
}

// refused records that the loader refused file p found in where; the first
// such file is the run's cause.
func (r *run) refused(p, where, dlerr string) {
	if r.cause == nil {
		r.cause = explain(r.sp, p, where, dlerr, libcVersion())
	}
}

func (r *run) note(path, where, err string) {
	r.tried = append(r.tried, Attempt{Path: path, Where: where, Err: err})
}

func (r *run) namesText() string {
	n := r.sp.names()
	if len(n) == 1 {
		return n[0]
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// override handles CUDAGO_<NAME>_PATH: a file, a directory holding the
// library, or a toolkit root.
func (r *run) override(v string) *Library {
	where := "env " + r.sp.env
	p := r.s.abs(v)
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		return r.root(place{where, p, func(sp *spec) []string { return append([]string{"."}, rootSubdirs(sp)...) }}, 0)
	case err == nil:
		return r.open(p, place{where, filepath.Dir(p), fixed([]string{"."})}, "")
	default:
		r.note(p, where, errText(err))
		return nil
	}
}

// loaded checks whether a soname is already loaded into the process.
func (r *run) loaded() *Library {
	where := "already loaded"
	for _, name := range r.sp.names() {
		if h := dlnoload(name); h != nil {
			p := dlpath(h)
			if w, ok := depOrigins.Load(realpath(p)); ok {
				where = w.(string) // loaded earlier as another library's dependency
			}
			lib := r.library(h, p, name, where)
			lib.Companions = append(r.usedDeps(p), lib.Companions...)
			return lib
		}
	}
	r.note(strings.Join(r.sp.names(), ", "), where, "not loaded in this process")
	return nil
}

// loader asks the system loader for each soname.
func (r *run) loader() *Library {
	const where = "system loader"
	for _, name := range r.sp.names() {
		h, err := dlopen(name, false)
		if err == nil {
			return r.library(h, dlpath(h), name, where)
		}
		r.note(name, where, err.Error())
		if msg := err.Error(); !strings.HasPrefix(msg, name+": cannot open shared object file") {
			// The loader found a file and refused it: say which.
			p := name
			if m := requiredBy.FindStringSubmatch(msg); m != nil {
				p = m[1]
			}
			r.refused(p, where, msg)
		}
	}
	return nil
}

func (r *run) envRoot(name string) *Library {
	v := r.s.getenv(name)
	if v == "" {
		r.note("", name, "not set")
		return nil
	}
	return r.root(place{name, r.s.abs(v), rootSubdirs}, 0)
}

func (r *run) local() *Library {
	const where = "local install"
	root, why := r.s.localRoot()
	if root == "" {
		r.note("", where, why)
		return nil
	}
	return r.root(place{where, root, localSubdirs}, localDepth)
}

// conda searches the active conda environment, laid out like a toolkit
// root (lib64, lib, nvvm/lib64, targets/<arch>/lib).
func (r *run) conda() *Library {
	const where = "CONDA_PREFIX"
	v := r.s.getenv(where)
	if v == "" {
		r.note("", where, "not set")
		return nil
	}
	return r.root(place{where, r.s.abs(v), rootSubdirs}, 0)
}

// root searches the subdirectories of pl.root (newest soname first across
// all of them), then, if depth > 0 and nothing was there, the tree below.
func (r *run) root(pl place, depth int) *Library {
	where, root, subdirs := pl.where, pl.root, pl.subdirs(r.sp)
	if why := notDir(root); why != "" {
		r.note(root, where, why)
		return nil
	}
	var dirs, rel []string
	seenDir := map[string]bool{}
	for _, sub := range subdirs {
		d := filepath.Join(root, sub)
		if seenDir[d] {
			continue
		}
		seenDir[d] = true
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
			rel = append(rel, sub)
		}
	}
	seenFile := false
	for _, name := range r.sp.names() {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			seenFile = true
			if lib := r.open(p, pl, name); lib != nil {
				return lib
			}
		}
	}
	if !seenFile && depth > 0 {
		for _, p := range r.walk(root, depth) {
			seenFile = true
			if lib := r.open(p, pl, ""); lib != nil {
				return lib
			}
		}
	}
	if !seenFile {
		msg := fmt.Sprintf("no %s in ", r.namesText())
		if len(rel) == 0 {
			msg = fmt.Sprintf("no %s: none of %s exists", r.namesText(), strings.Join(subdirs, ", "))
		} else {
			msg += strings.Join(rel, ", ")
		}
		if depth > 0 {
			msg += fmt.Sprintf(", nor anywhere %d levels deep", depth)
		}
		r.note(root, where, msg)
	}
	return nil
}

// walk lists the files below root, at most depth levels deep, named like
// one of the library's names, best first: exact names in order of
// preference, then versioned files (libnvvm.so.4.0.0) behind missing soname
// links.
func (r *run) walk(root string, depth int) []string {
	names := r.sp.names()
	type hit struct {
		rank int
		path string
	}
	var hits []hit
	walked := 0
	skip := map[string]bool{"include": true, "share": true, "doc": true, "man": true, "bin": true,
		"src": true, "samples": true, "stubs": true, "python": true, "site-packages": true, ".git": true}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		walked++
		if err != nil || walked > maxWalked {
			if walked > maxWalked {
				return filepath.SkipAll
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			// rel has Count(sep)+1 levels: enter at most depth of them.
			if p != root && (skip[d.Name()] || strings.Count(rel, string(filepath.Separator)) >= depth) {
				return filepath.SkipDir
			}
			return nil
		}
		base := d.Name()
		for i, n := range names {
			if base == n {
				hits = append(hits, hit{i, p})
				return nil
			}
		}
		for i, n := range r.sp.sonames {
			if strings.HasPrefix(base, n+".") {
				hits = append(hits, hit{len(names) + i, p})
				return nil
			}
		}
		return nil
	})
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank < hits[j].rank
		}
		return hits[i].path < hits[j].path
	})
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.path
	}
	return out
}

// open dlopens a file by absolute path, after the libraries it needs from
// the same place; name is the soname it was looked up under, or "".
func (r *run) open(p string, pl place, name string) *Library {
	key := p
	if real, err := filepath.EvalSymlinks(p); err == nil {
		key = real
	}
	if r.seen[key] {
		return nil
	}
	r.seen[key] = true
	deps := r.loadDeps(p, pl)
	h, err := dlopen(p, false)
	if err != nil {
		msg := err.Error()
		if len(deps.missing) > 0 {
			msg += fmt.Sprintf(" (needs %s, not found in %s)", strings.Join(deps.missing, ", "), pl.where)
		}
		r.note(p, pl.where, msg)
		r.refused(p, pl.where, msg)
		return nil
	}
	lib := r.library(h, p, name, pl.where)
	if len(r.sp.subs) > 0 {
		deps.merge(r.loadSubs(filepath.Dir(p), pl))
	}
	if r.sp.opens != nil {
		// Libraries it opens by soname itself: load them from this place
		// first, or the loader would look for them elsewhere.
		names := r.sp.opens(h)
		d := r.loadNeeded(p, pl, names, true)
		for _, n := range d.missing {
			if loadedAs([]string{n}) == "" {
				d.warnings = append(d.warnings, fmt.Sprintf(
					"%s opens %s when it needs it, and %s (%s) has none: it is left to the system loader", r.sp.lib, n, pl.where, pl.root))
			}
		}
		d.missing = nil
		deps.merge(d)
	}
	lib.Companions = append(deps.loaded, lib.Companions...)
	lib.Warnings = append(deps.warnings, lib.Warnings...)
	for _, n := range deps.missing {
		// The loader found it by itself (RUNPATH, LD_LIBRARY_PATH, ld.so.cache).
		if h := dlnoload(n); h != nil {
			lp := dlpath(h)
			lib.Companions = append(lib.Companions, lp)
			lib.Warnings = append(lib.Warnings, fmt.Sprintf("%s is not in %s (%s): the system loader supplied %s", n, pl.where, pl.root, lp))
		}
	}
	return lib
}

// library builds the Library for a handle.
func (r *run) library(h unsafe.Pointer, path, name, where string) *Library {
	if path == "" {
		path = name
	}
	lib := &Library{Lib: r.sp.lib, Path: path, Found: where, handle: h}
	lib.Soname = elfSoname(path)
	if lib.Soname == "" {
		lib.Soname = name
	}
	if lib.Soname == "" {
		lib.Soname = filepath.Base(path)
	}
	lib.Major = sonameMajor(lib.Soname)
	if lib.Major < 0 {
		lib.Major = sonameMajor(filepath.Base(realpath(path)))
	}
	if lib.Major < 0 {
		lib.Major = 0
	}
	if r.sp.lib == NVRTC {
		preloadBuiltins(lib)
	}
	return lib
}

// preloadBuiltins opens libnvrtc-builtins.so.N.M, which libnvrtc opens by
// soname when it compiles, so that the loader finds it already loaded.
func preloadBuiltins(lib *Library) {
	var dirs []string
	for _, d := range []string{filepath.Dir(lib.Path), filepath.Dir(realpath(lib.Path))} {
		if filepath.IsAbs(d) && (len(dirs) == 0 || dirs[0] != d) {
			dirs = append(dirs, d)
		}
	}
	var name string
	if maj, min, err := nvrtcVersion(lib); err == nil {
		name = fmt.Sprintf("libnvrtc-builtins.so.%d.%d", maj, min)
	} else {
		name = newestBuiltins(dirs, lib.Major)
		if name == "" {
			lib.Warnings = append(lib.Warnings, fmt.Sprintf(
				"cannot tell which libnvrtc-builtins to load (%v) and none is next to %s: compiling will fail", err, lib.Path))
			return
		}
	}
	var errs []string
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if _, err := dlopen(p, true); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		lib.Companions = append(lib.Companions, p)
		return
	}
	if h := dlnoload(name); h != nil {
		p := dlpath(h)
		if p == "" {
			p = name
		}
		lib.Companions = append(lib.Companions, p)
		return
	}
	h, err := dlopen(name, true)
	if err == nil {
		p := dlpath(h)
		if p == "" {
			p = name
		}
		lib.Companions = append(lib.Companions, p)
		return
	}
	errs = append(errs, err.Error())
	lib.Warnings = append(lib.Warnings, fmt.Sprintf(
		"%s is neither next to %s nor found by the system loader (%s): nvrtcCompileProgram will fail",
		name, lib.Path, strings.Join(errs, "; ")))
}

// newestBuiltins returns the libnvrtc-builtins.so.<major>.<minor> with the
// highest minor in dirs, or "".
func newestBuiltins(dirs []string, major int) string {
	best, bestMinor := "", -1
	prefix := fmt.Sprintf("libnvrtc-builtins.so.%d.", major)
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok {
				continue
			}
			if m, err := strconv.Atoi(rest); err == nil && m > bestMinor {
				best, bestMinor = e.Name(), m
			}
		}
	}
	return best
}

// elfSoname reads a shared object's DT_SONAME, or returns "".
func elfSoname(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(s) == 0 {
		return ""
	}
	return s[0]
}

// sonameMajor returns the first number after ".so." in a library name
// ("libnvrtc.so.12" -> 12, "libnvrtc-builtins.so.12.4" -> 12), or -1.
func sonameMajor(name string) int {
	_, v, ok := strings.Cut(name, ".so.")
	if !ok {
		return -1
	}
	v, _, _ = strings.Cut(v, ".")
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// fileVersion returns the version in the name of the file that path
// resolves to ("libcufile.so.1.9.1" -> "1.9.1"); a suffix that is not a
// dotted version ("libfoo.so.1.debug") is no version.
func fileVersion(path string) (string, error) {
	real := realpath(path)
	_, v, ok := strings.Cut(filepath.Base(real), ".so.")
	if _, err := version.Parse(v); !ok || err != nil {
		return "", fmt.Errorf("no version in file name %s", real)
	}
	return v, nil
}

func realpath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// notDir says why root is no directory to search in, or "" when it is one.
func notDir(root string) string {
	fi, err := os.Stat(root)
	if err != nil {
		return errText(err)
	}
	if !fi.IsDir() {
		return "not a directory"
	}
	return ""
}

// errText shortens a file system error to its cause.
func errText(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file or directory"
	case os.IsPermission(err):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
