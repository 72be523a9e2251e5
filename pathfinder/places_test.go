//go:build linux && cgo

package pathfinder

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of the Python environments (pip wheels, conda), of loading
// dependencies from the same place, and of the math libraries' versions.

// fakeRun numbers the sonames of fake dependencies: a library loaded under
// a soname stays loaded for the life of the test process (go test -count=N).
var fakeRun atomic.Int32

// wheelSpec is a fake toolkit library that NVIDIA's wheels would ship in
// nvidia/cu13/lib and nvidia/<name>/lib.
func wheelSpec(name string, sonames ...string) *spec {
	return &spec{lib: Lib(name), env: "CUDAGO_" + strings.ToUpper(name) + "_PATH", sonames: sonames,
		wheel: []string{"nvidia/cu13/lib", "nvidia/" + name + "/lib"}}
}

// wheelSetup gives a test a temporary folder, the spec of the fake wheel
// library name (its sonames), and a fake library built in the folder
// (src.so) to copy where the search should find it.
func wheelSetup(t *testing.T, name string, sonames ...string) (tmp string, sp *spec, src string) {
	t.Helper()
	tmp = t.TempDir()
	return tmp, wheelSpec(name, sonames...), buildLib(t, filepath.Join(tmp, "src.so"), "", fakeGeneric)
}

// attemptsAt returns the attempts made at one place.
func attemptsAt(nf *NotFoundError, where string) []Attempt {
	var out []Attempt
	for _, a := range nf.Tried {
		if a.Where == where {
			out = append(out, a)
		}
	}
	return out
}

// writeScript writes an executable shell script dir/name.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustFind(t *testing.T, s *searcher, sp *spec) *Library {
	t.Helper()
	lib, err := s.find(sp)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestPipWheelLayouts(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofakew", "libcudagofakew.so.13", "libcudagofakew.so.12")
	site := filepath.Join(tmp, "site")
	// CUDA 12's wheels: one directory per library.
	p12 := copyFile(t, src, filepath.Join(site, "nvidia/cudagofakew/lib/libcudagofakew.so.12"))
	s := isolated(t, map[string]string{"CUDAGO_PYTHON_SITE": site})
	lib := mustFind(t, s, sp)
	if lib.Path != p12 || lib.Found != "CUDAGO_PYTHON_SITE" || lib.Major != 12 {
		t.Errorf("got %s (%s, major %d), want %s (CUDAGO_PYTHON_SITE, 12)", lib.Path, lib.Found, lib.Major, p12)
	}

	// CUDA 13's wheels put every library in nvidia/cu13/lib: the newer major wins.
	p13 := copyFile(t, src, filepath.Join(site, "nvidia/cu13/lib/libcudagofakew.so.13"))
	if lib := mustFind(t, s, sp); lib.Path != p13 || lib.Major != 13 {
		t.Errorf("got %s (major %d), want %s", lib.Path, lib.Major, p13)
	}

	// A list of directories; a relative one is taken from the working directory.
	if err := os.MkdirAll(filepath.Join(s.cwd, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.getenv = envOf(map[string]string{"CUDAGO_PYTHON_SITE": "empty:" + site})
	if lib := mustFind(t, s, sp); lib.Path != p13 {
		t.Errorf("got %s, want %s from the second directory", lib.Path, p13)
	}

	// CUDAGO_PYTHON_SITE replaces VIRTUAL_ENV and python3, whatever they hold.
	venv := filepath.Join(tmp, "venv")
	copyFile(t, src, filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cudagofakew/lib/libcudagofakew.so.12"))
	python := writeScript(t, filepath.Join(tmp, "bin"), "python3", "echo "+site+"\n")
	s.getenv = envOf(map[string]string{"CUDAGO_PYTHON_SITE": "empty", "VIRTUAL_ENV": venv, "PATH": filepath.Dir(python)})
	_, err := s.find(sp)
	nf := notFound(t, err)
	want := []Attempt{{filepath.Join(s.cwd, "empty"), "CUDAGO_PYTHON_SITE",
		"no libcudagofakew.so.13 or libcudagofakew.so.12: none of nvidia/cu13/lib, nvidia/cudagofakew/lib exists"}}
	if got := attemptsAt(nf, "CUDAGO_PYTHON_SITE"); !reflect.DeepEqual(got, want) {
		t.Errorf("CUDAGO_PYTHON_SITE attempts %q, want %q", got, want)
	}
	if len(attemptsAt(nf, "VIRTUAL_ENV"))+len(attemptsAt(nf, "python3 site-packages")) != 0 {
		t.Errorf("VIRTUAL_ENV or python3 searched although CUDAGO_PYTHON_SITE is set:\n%v", err)
	}

	// off: no pip wheel is searched.
	s.getenv = envOf(map[string]string{"CUDAGO_PYTHON_SITE": "off", "VIRTUAL_ENV": venv, "PATH": filepath.Dir(python)})
	_, err = s.find(sp)
	nf = notFound(t, err)
	want = []Attempt{{"", "CUDAGO_PYTHON_SITE", "off: pip wheels are not searched"}}
	if got := attemptsAt(nf, "CUDAGO_PYTHON_SITE"); !reflect.DeepEqual(got, want) || len(attemptsAt(nf, "VIRTUAL_ENV")) != 0 {
		t.Errorf("with CUDAGO_PYTHON_SITE=off:\n%v", err)
	}
}

func TestVirtualEnv(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofakev", "libcudagofakev.so.12")
	venv := filepath.Join(tmp, "venv")
	copyFile(t, src, filepath.Join(venv, "lib/python3.9/site-packages/nvidia/cudagofakev/lib/libcudagofakev.so.12"))
	newest := copyFile(t, src, filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cudagofakev/lib/libcudagofakev.so.12"))
	s := isolated(t, map[string]string{"VIRTUAL_ENV": venv})
	if lib := mustFind(t, s, sp); lib.Path != newest || lib.Found != "VIRTUAL_ENV" {
		t.Errorf("got %s (%s), want %s (VIRTUAL_ENV): the newest Python's site-packages first", lib.Path, lib.Found, newest)
	}

	// A VIRTUAL_ENV that is no virtual environment.
	s.getenv = envOf(map[string]string{"VIRTUAL_ENV": tmp})
	_, err := s.find(sp)
	want := []Attempt{{tmp, "VIRTUAL_ENV", "no lib/python3.*/site-packages"}}
	if got := attemptsAt(notFound(t, err), "VIRTUAL_ENV"); !reflect.DeepEqual(got, want) {
		t.Errorf("VIRTUAL_ENV attempts %q, want %q", got, want)
	}
}

func TestPython3OnPath(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofakep", "libcudagofakep.so.12")
	site := filepath.Join(tmp, "site")
	p := copyFile(t, src, filepath.Join(site, "nvidia/cudagofakep/lib/libcudagofakep.so.12"))
	count := filepath.Join(tmp, "count")
	bin := filepath.Join(tmp, "bin")
	writeScript(t, bin, "python3", fmt.Sprintf("echo run >>'%s'\necho /nonexistent/site-packages\necho relative/site-packages\necho '%s'\n", count, site))
	// Skipped on the way: a relative PATH entry and a python3 that is not executable.
	noexec := filepath.Join(tmp, "noexec")
	if err := os.MkdirAll(noexec, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noexec, "python3"), []byte("#!/bin/sh\nexit 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := isolated(t, map[string]string{"PATH": "rel:" + noexec + ":" + bin})
	writeScript(t, filepath.Join(s.cwd, "rel"), "python3", "exit 3\n")
	s.python = &pythonProbe{timeout: 10 * time.Second}
	if lib := mustFind(t, s, sp); lib.Path != p || lib.Found != "python3 site-packages" {
		t.Errorf("got %s (%s), want %s (python3 site-packages)", lib.Path, lib.Found, p)
	}

	// Another search asks no more: python3 answers once per process.
	_, err := s.find(wheelSpec("cudagofakep2", "libcudagofakep2.so.12"))
	want := []Attempt{{site, "python3 site-packages", "no libcudagofakep2.so.12: none of nvidia/cu13/lib, nvidia/cudagofakep2/lib exists"}}
	if got := attemptsAt(notFound(t, err), "python3 site-packages"); !reflect.DeepEqual(got, want) {
		t.Errorf("python3 attempts %q, want %q", got, want)
	}
	if b, err := os.ReadFile(count); err != nil || string(b) != "run\n" {
		t.Errorf("python3 ran %q times (%v), want once", b, err)
	}

	// A python3 that fails: its last line of stderr is reported.
	bad := writeScript(t, filepath.Join(tmp, "bad"), "python3",
		"echo 'Traceback (most recent call last):' >&2\necho 'ModuleNotFoundError: No module named site' >&2\nexit 1\n")
	s.getenv = envOf(map[string]string{"PATH": filepath.Dir(bad)})
	_, err = s.find(sp)
	got := attemptsAt(notFound(t, err), "python3 site-packages")
	if len(got) != 1 || got[0].Path != bad || !strings.Contains(got[0].Err, "exit status 1") ||
		!strings.Contains(got[0].Err, "ModuleNotFoundError: No module named site") {
		t.Errorf("failing python3: attempts %q", got)
	}
}

// TestPython3Timeout runs a python3 that never answers: it is killed with
// the process it started, and the search goes on.
func TestPython3Timeout(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofaket", "libcudagofaket.so.12")
	conda := filepath.Join(tmp, "conda")
	p := copyFile(t, src, filepath.Join(conda, "lib/libcudagofaket.so.12"))
	pidfile, count := filepath.Join(tmp, "pid"), filepath.Join(tmp, "count")
	bin := filepath.Join(tmp, "bin")
	writeScript(t, bin, "python3", fmt.Sprintf("echo run >>'%s'\nsleep 60 &\necho $! >'%s'\nwait\n", count, pidfile))
	s := isolated(t, map[string]string{"PATH": bin})
	s.python = &pythonProbe{timeout: 300 * time.Millisecond}

	start := time.Now()
	_, err := s.find(sp)
	elapsed := time.Since(start)
	got := attemptsAt(notFound(t, err), "python3 site-packages")
	if len(got) != 1 || got[0].Path != filepath.Join(bin, "python3") || got[0].Err != "no answer within 300ms (killed)" {
		t.Errorf("python3 attempts %q", got)
	}
	if elapsed > 3*time.Second {
		t.Errorf("the search took %v with a 300ms limit on python3", elapsed)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the sleep python3 started (pid %d) still runs", pid)
			break
		}
	}

	// The failure is remembered: the next search does not ask again, and
	// goes on to CONDA_PREFIX.
	s.getenv = envOf(map[string]string{"PATH": bin, "CONDA_PREFIX": conda})
	if lib := mustFind(t, s, sp); lib.Path != p || lib.Found != "CONDA_PREFIX" {
		t.Errorf("got %s (%s), want %s (CONDA_PREFIX)", lib.Path, lib.Found, p)
	}
	if b, err := os.ReadFile(count); err != nil || string(b) != "run\n" {
		t.Errorf("python3 ran %q times (%v), want once", b, err)
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// TestRealPython3 runs pythonScript with the python3 on PATH, if any.
func TestRealPython3(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	dirs, err := askPython(py, 20*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	t.Logf("%s: site-packages %q", py, dirs)
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || !filepath.IsAbs(d) {
			t.Errorf("%q is not an absolute directory", d)
		}
	}
}

func TestConda(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofakec", "libcudagofakec.so.12")
	_, targets := archDirs()
	for _, rel := range []string{"lib", "targets/" + targets[0] + "/lib"} {
		prefix := filepath.Join(tmp, rel)
		p := copyFile(t, src, filepath.Join(prefix, rel, "libcudagofakec.so.12"))
		if lib := mustFind(t, isolated(t, map[string]string{"CONDA_PREFIX": prefix}), sp); lib.Path != p || lib.Found != "CONDA_PREFIX" {
			t.Errorf("got %s (%s), want %s (CONDA_PREFIX)", lib.Path, lib.Found, p)
		}
	}
}

// TestPythonPlacesOrder puts a copy of a fake library in every place from
// CUDA_HOME to /usr/local/cuda and removes them one place at a time.
func TestPythonPlacesOrder(t *testing.T) {
	tmp, sp, src := wheelSetup(t, "cudagofakeo", "libcudagofakeo.so.12")
	put := func(rel string) string { return copyFile(t, src, filepath.Join(tmp, rel, "libcudagofakeo.so.12")) }
	home := put("home/lib64")
	local := put("local/lib64")
	pysite := put("pysite/nvidia/cudagofakeo/lib")
	venv := put("venv/lib/python3.12/site-packages/nvidia/cu13/lib")
	py := put("pysite2/nvidia/cudagofakeo/lib")
	conda := put("conda/lib")
	usrLocal := put("sys/usr/local/cuda/lib64")
	bin := filepath.Join(tmp, "bin")
	writeScript(t, bin, "python3", "echo "+filepath.Join(tmp, "pysite2")+"\n")

	env := map[string]string{
		"CUDA_HOME":          filepath.Join(tmp, "home"),
		"CUDAGO_LOCAL_CUDA":  filepath.Join(tmp, "local"),
		"CUDAGO_PYTHON_SITE": filepath.Join(tmp, "pysite"),
		"VIRTUAL_ENV":        filepath.Join(tmp, "venv"),
		"PATH":               bin,
		"CONDA_PREFIX":       filepath.Join(tmp, "conda"),
	}
	s := &searcher{cwd: tmp, sysroot: filepath.Join(tmp, "sys"), python: &pythonProbe{timeout: 10 * time.Second}}
	for _, st := range []struct {
		drop  string // the variable unset from this step on
		path  string
		found string
	}{
		{"", home, "CUDA_HOME"},
		{"CUDA_HOME", local, "local install"},
		{"CUDAGO_LOCAL_CUDA", pysite, "CUDAGO_PYTHON_SITE"},
		{"CUDAGO_PYTHON_SITE", venv, "VIRTUAL_ENV"},
		{"VIRTUAL_ENV", py, "python3 site-packages"},
		{"PATH", conda, "CONDA_PREFIX"},
		{"CONDA_PREFIX", usrLocal, "/usr/local/cuda"},
	} {
		if st.drop == "CUDAGO_LOCAL_CUDA" {
			env[st.drop] = filepath.Join(tmp, "nowhere")
		} else if st.drop != "" {
			delete(env, st.drop)
		}
		s.getenv = envOf(env)
		lib := mustFind(t, s, sp)
		if lib.Path != st.path || lib.Found != st.found {
			t.Errorf("without %s: got %s (%s), want %s (%s)", st.drop, lib.Path, lib.Found, st.path, st.found)
		}
	}
}

// depFakes are a fake "cuBLASLt" with fresh sonames and a fake "cuBLAS"
// that needs its .so.12. The fake cuBLAS is given the id CUDART so that
// Version calls its cudaRuntimeGetVersion, which reports the marker of the
// cuBLASLt the loader bound it to: which copy it uses, not only which one
// was loaded.
type depFakes struct {
	lt12, lt13, primName string
	lt, prim             *spec
	ltBuilt              string // the copy linked against, in no searched place
}

func newDepFakes(t *testing.T) *depFakes {
	n := fakeRun.Add(1)
	f := &depFakes{
		lt12:     fmt.Sprintf("libcudagofakelt%d.so.12", n),
		lt13:     fmt.Sprintf("libcudagofakelt%d.so.13", n),
		primName: fmt.Sprintf("libcudagofakeprim%d.so.12", n),
	}
	f.lt = &spec{lib: "cudagofakelt", env: "CUDAGO_FAKELT_PATH", sonames: []string{f.lt13, f.lt12},
		wheel: []string{"nvidia/cu13/lib", "nvidia/fakelt/lib"}}
	f.prim = &spec{lib: CUDART, env: "CUDAGO_FAKEPRIM_PATH", sonames: []string{f.primName},
		wheel: []string{"nvidia/cu13/lib", "nvidia/fakeprim/lib"}, deps: []Lib{"cudagofakelt"}}
	f.ltBuilt = f.buildLt(t, filepath.Join(t.TempDir(), f.lt12), f.lt12, 1)
	return f
}

func (f *depFakes) lookup(l Lib) *spec {
	if l == f.lt.lib {
		return f.lt
	}
	return nil
}

func (f *depFakes) searcher(t *testing.T, env map[string]string) *searcher {
	s := isolated(t, env)
	s.lookup = f.lookup
	return s
}

// buildLt builds a fake cuBLASLt whose marker is mark.
func (f *depFakes) buildLt(t *testing.T, path, soname string, mark int) string {
	return buildLib(t, path, soname, fmt.Sprintf("int cudago_lt_marker(void) { return %d; }\n", mark))
}

// buildPrim builds the fake cuBLAS, whose DT_NEEDED names f.lt12.
func (f *depFakes) buildPrim(t *testing.T, dir string, extra ...string) string {
	src := "extern int cudago_lt_marker(void);\nint cudaRuntimeGetVersion(int *v) { *v = cudago_lt_marker(); return 0; }\n"
	args := append([]string{"-L" + filepath.Dir(f.ltBuilt), "-l:" + f.lt12}, extra...)
	return buildLib(t, filepath.Join(dir, f.primName), "", src, args...)
}

// wantMarker checks the version the fake reports, which tells which copy of
// its dependency the loader bound; why says which copy that is.
func wantMarker(t *testing.T, lib *Library, want, why string) {
	t.Helper()
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if v != want {
		t.Errorf("marker %s, want %s %s", v, want, why)
	}
}

// TestDepsFromSamePlace loads a library whose dependency is in the same
// site-packages, in its own wheel directory, and also in CUDA_HOME, which
// comes first in the search order: the same place's copy is the one used.
func TestDepsFromSamePlace(t *testing.T) {
	f := newDepFakes(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	homeLt := f.buildLt(t, filepath.Join(home, "lib64", f.lt12), f.lt12, 11080)
	site := filepath.Join(tmp, "site")
	siteLt := f.buildLt(t, filepath.Join(site, "nvidia/fakelt/lib", f.lt12), f.lt12, 12040)
	f.buildLt(t, filepath.Join(site, "nvidia/fakelt/lib", f.lt13), f.lt13, 13000) // a major it does not need
	prim := f.buildPrim(t, filepath.Join(site, "nvidia/fakeprim/lib"))
	s := f.searcher(t, map[string]string{"CUDA_HOME": home, "CUDAGO_PYTHON_SITE": site})

	// Without its dependencies loaded first, it does not load: nothing on
	// the loader's path has them.
	noDeps := *f.prim
	noDeps.deps = nil
	_, err := s.find(&noDeps)
	got := attemptsAt(notFound(t, err), "CUDAGO_PYTHON_SITE")
	if len(got) != 1 || got[0].Path != prim || !strings.Contains(got[0].Err, f.lt12+": cannot open shared object file") {
		t.Fatalf("without dependencies: attempts %q", got)
	}

	lib := mustFind(t, s, f.prim)
	if lib.Path != prim || lib.Found != "CUDAGO_PYTHON_SITE" {
		t.Errorf("got %s (%s), want %s (CUDAGO_PYTHON_SITE)", lib.Path, lib.Found, prim)
	}
	if !reflect.DeepEqual(lib.Companions, []string{siteLt}) || len(lib.Warnings) != 0 {
		t.Errorf("Companions %q, Warnings %q; want only %s", lib.Companions, lib.Warnings, siteLt)
	}
	wantMarker(t, lib, "12.4", "(the one beside it; CUDA_HOME's "+homeLt+" is 11.8)")
	if dlnoload(f.lt13) != nil {
		t.Errorf("%s was loaded, though the library needs only %s", f.lt13, f.lt12)
	}

	// A later search for the dependency finds it loaded, and says where from.
	dep := mustFind(t, s, f.lt)
	if dep.Path != siteLt || dep.Found != "CUDAGO_PYTHON_SITE" {
		t.Errorf("dependency: got %s (%s), want %s (CUDAGO_PYTHON_SITE)", dep.Path, dep.Found, siteLt)
	}
}

// TestDepMissingFromPlace: a place holding the library without its
// dependency is passed over, and the attempt says why.
func TestDepMissingFromPlace(t *testing.T) {
	f := newDepFakes(t)
	tmp := t.TempDir()
	venv := filepath.Join(tmp, "venv")
	venvPrim := f.buildPrim(t, filepath.Join(venv, "lib/python3.12/site-packages/nvidia/fakeprim/lib"))
	conda := filepath.Join(tmp, "conda")
	condaLt := f.buildLt(t, filepath.Join(conda, "lib", f.lt12), f.lt12, 12030)
	condaPrim := copyFile(t, venvPrim, filepath.Join(conda, "lib", f.primName))

	_, err := f.searcher(t, map[string]string{"VIRTUAL_ENV": venv}).find(f.prim)
	got := attemptsAt(notFound(t, err), "VIRTUAL_ENV")
	if len(got) != 1 || got[0].Path != venvPrim || !strings.Contains(got[0].Err, "(needs "+f.lt12+", not found in VIRTUAL_ENV)") {
		t.Errorf("VIRTUAL_ENV attempts %q", got)
	}

	lib := mustFind(t, f.searcher(t, map[string]string{"VIRTUAL_ENV": venv, "CONDA_PREFIX": conda}), f.prim)
	if lib.Path != condaPrim || lib.Found != "CONDA_PREFIX" || !reflect.DeepEqual(lib.Companions, []string{condaLt}) {
		t.Errorf("got %s (%s) with %q, want %s (CONDA_PREFIX) with %s", lib.Path, lib.Found, lib.Companions, condaPrim, condaLt)
	}
	wantMarker(t, lib, "12.3", "")
}

// TestDepAlreadyLoadedElsewhere: a dependency already in the process is the
// one the loader binds, so a copy beside the library cannot be used: a
// warning says so.
func TestDepAlreadyLoadedElsewhere(t *testing.T) {
	f := newDepFakes(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	homeLt := f.buildLt(t, filepath.Join(home, "lib64", f.lt12), f.lt12, 11080)
	site := filepath.Join(tmp, "site")
	siteLt := f.buildLt(t, filepath.Join(site, "nvidia/cu13/lib", f.lt12), f.lt12, 12040)
	prim := f.buildPrim(t, filepath.Join(site, "nvidia/cu13/lib"))
	s := f.searcher(t, map[string]string{"CUDA_HOME": home, "CUDAGO_PYTHON_SITE": site})
	if dep := mustFind(t, s, f.lt); dep.Path != homeLt {
		t.Fatalf("dependency from %s, want %s", dep.Path, homeLt)
	}
	lib := mustFind(t, s, f.prim)
	if lib.Path != prim || !reflect.DeepEqual(lib.Companions, []string{homeLt}) {
		t.Errorf("got %s with %q, want %s with %s", lib.Path, lib.Companions, prim, homeLt)
	}
	if len(lib.Warnings) != 1 || !strings.Contains(lib.Warnings[0], "already loaded from "+homeLt) || !strings.Contains(lib.Warnings[0], siteLt) {
		t.Errorf("Warnings %q; want one naming %s and %s", lib.Warnings, homeLt, siteLt)
	}
	wantMarker(t, lib, "11.8", "(the copy already loaded)")
}

// TestDepOverride: the dependency's own override variable wins over the
// copy beside the library.
func TestDepOverride(t *testing.T) {
	f := newDepFakes(t)
	tmp := t.TempDir()
	ovr := f.buildLt(t, filepath.Join(tmp, "ovr", f.lt12), f.lt12, 12060)
	f.buildLt(t, filepath.Join(tmp, "ovr", f.lt13), f.lt13, 13000) // newer, but not the one needed
	site := filepath.Join(tmp, "site")
	f.buildLt(t, filepath.Join(site, "nvidia/cu13/lib", f.lt12), f.lt12, 12040)
	f.buildPrim(t, filepath.Join(site, "nvidia/cu13/lib"))
	lib := mustFind(t, f.searcher(t, map[string]string{"CUDAGO_FAKELT_PATH": filepath.Join(tmp, "ovr"), "CUDAGO_PYTHON_SITE": site}), f.prim)
	if !reflect.DeepEqual(lib.Companions, []string{ovr}) {
		t.Errorf("Companions %q, want %s", lib.Companions, ovr)
	}
	wantMarker(t, lib, "12.6", "")
}

// TestDepLoaderSupplied: a dependency missing from the place but found by
// the loader itself (here through the library's RUNPATH) is reported.
func TestDepLoaderSupplied(t *testing.T) {
	f := newDepFakes(t)
	tmp := t.TempDir()
	elsewhere := filepath.Join(tmp, "elsewhere")
	lt := f.buildLt(t, filepath.Join(elsewhere, f.lt12), f.lt12, 12010)
	site := filepath.Join(tmp, "site")
	f.buildPrim(t, filepath.Join(site, "nvidia/fakeprim/lib"), "-Wl,-rpath,"+elsewhere)
	lib := mustFind(t, f.searcher(t, map[string]string{"CUDAGO_PYTHON_SITE": site}), f.prim)
	if !reflect.DeepEqual(lib.Companions, []string{lt}) {
		t.Errorf("Companions %q, want %s", lib.Companions, lt)
	}
	if len(lib.Warnings) != 1 || !strings.Contains(lib.Warnings[0], f.lt12+" is not in CUDAGO_PYTHON_SITE") ||
		!strings.Contains(lib.Warnings[0], "the system loader supplied "+lt) {
		t.Errorf("Warnings %q", lib.Warnings)
	}
	wantMarker(t, lib, "12.1", "")
}

// TestDepChain loads a → b → c from one directory (CUDA 13's wheel layout):
// dependencies of dependencies first.
func TestDepChain(t *testing.T) {
	n := fakeRun.Add(1)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "site/nvidia/cu13/lib")
	cName, bName := fmt.Sprintf("libcudagofakec%d.so.1", n), fmt.Sprintf("libcudagofakeb%d.so.1", n)
	c := buildLib(t, filepath.Join(dir, cName), cName, "int cudago_c(void) { return 3; }\n")
	b := buildLib(t, filepath.Join(dir, bName), bName, "extern int cudago_c(void);\nint cudago_b(void) { return cudago_c() + 1; }\n",
		"-L"+dir, "-l:"+cName)
	a := buildLib(t, filepath.Join(dir, "libcudagofakea.so.1"), "",
		"extern int cudago_b(void);\nint cudaRuntimeGetVersion(int *v) { *v = cudago_b() * 1000; return 0; }\n", "-L"+dir, "-l:"+bName)
	wheel := []string{"nvidia/cu13/lib"}
	specs := map[Lib]*spec{
		"cudagofakec": {lib: "cudagofakec", env: "CUDAGO_FAKEC_PATH", sonames: []string{cName}, wheel: wheel},
		"cudagofakeb": {lib: "cudagofakeb", env: "CUDAGO_FAKEB_PATH", sonames: []string{bName}, wheel: wheel, deps: []Lib{"cudagofakec"}},
	}
	sa := &spec{lib: CUDART, env: "CUDAGO_FAKEA_PATH", sonames: []string{"libcudagofakea.so.1"}, wheel: wheel, deps: []Lib{"cudagofakeb"}}
	s := isolated(t, map[string]string{"CUDAGO_PYTHON_SITE": filepath.Join(tmp, "site")})
	s.lookup = func(l Lib) *spec { return specs[l] }
	lib := mustFind(t, s, sa)
	if lib.Path != a || !reflect.DeepEqual(lib.Companions, []string{c, b}) || len(lib.Warnings) != 0 {
		t.Errorf("got %s with %q (warnings %q), want %s with [%s %s]", lib.Path, lib.Companions, lib.Warnings, a, c, b)
	}
	wantMarker(t, lib, "4.0", "")
}

// TestMathVersions checks the version queries of the runtime and the math
// libraries on fakes, failures included.
func TestMathVersions(t *testing.T) {
	dir := t.TempDir()
	prop := func(fn string, maj, min, patch int) string {
		return fmt.Sprintf("int %s(int type, int *v) { if (type > 2) return 99; *v = type == 0 ? %d : type == 1 ? %d : %d; return 0; }\n",
			fn, maj, min, patch)
	}
	cases := []struct {
		lib       Lib
		file, src string
		want      string
		errs      []string // in the error, when one is expected
	}{
		{CuBLAS, "libcublas.so.12", prop("cublasGetProperty", 12, 4, 5), "12.4.5", nil},
		{CuBLASLt, "libcublasLt.so.13", prop("cublasLtGetProperty", 13, 0, 2), "13.0.2", nil},
		{CuFFT, "libcufft.so.11", prop("cufftGetProperty", 11, 2, 1), "11.2.1", nil},
		{CuRAND, "libcurand.so.10", prop("curandGetProperty", 10, 3, 5), "10.3.5", nil},
		{CuSPARSE, "libcusparse.so.12", prop("cusparseGetProperty", 12, 3, 1), "12.3.1", nil},
		{CuSOLVER, "libcusolver.so.11", prop("cusolverGetProperty", 11, 6, 1), "11.6.1", nil},
		{CUDART, "libcudart.so.13", "int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }\n", "13.0", nil},
		{NVTX, "libnvToolsExt.so.1.0.0", fakeGeneric, "1.0.0", nil},
		{NCCL, "libnccl.so.2", "int ncclGetVersion(int *v) { *v = 22803; return 0; }\n", "2.28.3", nil},
		{NCCL, "old/libnccl.so.2", "int ncclGetVersion(int *v) { *v = 2708; return 0; }\n", "2.7.8", nil},
		{NCCL, "bad/libnccl.so.2", `
int ncclGetVersion(int *v) { return 4; }
const char *ncclGetErrorString(int r) { return r == 4 ? "invalid argument (run with NCCL_DEBUG=WARN for details)" : "?"; }`,
			"", []string{"ncclGetVersion", "invalid argument (run with NCCL_DEBUG=WARN for details) (4)", "bad/libnccl.so.2"}},
		{CuBLAS, "bad/libcublas.so.12", `
int cublasGetProperty(int type, int *v) { if (type == 1) return 7; *v = 12; return 0; }
const char *cublasGetStatusName(int s) { return s == 7 ? "CUBLAS_STATUS_INVALID_VALUE" : "?"; }`,
			"", []string{"cublasGetProperty(1)", "CUBLAS_STATUS_INVALID_VALUE (7)", "bad/libcublas.so.12"}},
		{CuRAND, "bad/libcurand.so.10", "int curandGetProperty(int type, int *v) { return 100 + type; }\n",
			"", []string{"curandGetProperty(0)", "status 100"}},
		{CUDART, "bad/libcudart.so.12", `
int cudaRuntimeGetVersion(int *v) { return 35; }
const char *cudaGetErrorName(int e) { return e == 35 ? "cudaErrorInsufficientDriver" : "?"; }`,
			"", []string{"cudaRuntimeGetVersion", "cudaErrorInsufficientDriver (35)"}},
		{CuFFT, "nofunc/libcufft.so.11", fakeGeneric, "", []string{"cufftGetProperty", "nofunc/libcufft.so.11"}},
	}
	for _, c := range cases {
		lib, v, err := fakeVersion(t, dir, c.lib, c.file, c.src)
		if lib == nil {
			continue
		}
		if c.errs == nil {
			if err != nil || v != c.want {
				t.Errorf("%s: Version() = %q, %v; want %s", c.file, v, err, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Version() = %q, want an error", c.file, v)
			continue
		}
		for _, w := range c.errs {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.file, err, w)
			}
		}
	}
}
