//go:build linux && cgo

package pathfinder

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Fake libraries are built without a DT_SONAME unless a test needs one: a
// soname would make later searches in this process find the fake as
// "already loaded" (and a fake libnvrtc.so.12 would shadow the real one).

const (
	fakeNVRTC = `
int nvrtcVersion(int *maj, int *min) { *maj = 12; *min = 4; return 0; }
const char *nvrtcGetErrorString(int rc) { return "NVRTC_ERROR_FAKE"; }
`
	fakeBuiltins = `int cudago_fake_builtins(void) { return 1; }`
	fakeGeneric  = `int cudago_fake(void) { return 1; }`
)

func fakeJitLink(maj, min int) string {
	return fmt.Sprintf(`int nvJitLinkVersion(unsigned *a, unsigned *b) { *a = %d; *b = %d; return 0; }`, maj, min)
}

// buildLib compiles src into a shared library at path (creating its
// directory), with the given DT_SONAME unless soname is "", passing extra
// to gcc after the source (libraries to link with).
func buildLib(t *testing.T, path, soname, src string, extra ...string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(t.TempDir(), "fake.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-shared", "-fPIC", "-o", path, c}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	args = append(args, extra...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return path
}

// mustFindLib is find, failing t on an error.
func mustFindLib(t *testing.T, l Lib, env func(string) string, cwd string) *Library {
	t.Helper()
	lib, err := find(l, env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func copyFile(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return to
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// isolated returns a searcher that sees only env, with cwd and the system
// directories inside a fresh temporary directory.
func isolated(t *testing.T, env map[string]string) *searcher {
	tmp := t.TempDir()
	return &searcher{getenv: envOf(env), cwd: tmp, sysroot: filepath.Join(tmp, "sysroot")}
}

func notFound(t *testing.T, err error) *NotFoundError {
	t.Helper()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v (%T) is not a *NotFoundError", err, err)
	}
	return nf
}

func TestOverrideFile(t *testing.T) {
	dir := t.TempDir()
	p := buildLib(t, filepath.Join(dir, "libnvrtc.so.12"), "", fakeNVRTC)
	builtins := buildLib(t, filepath.Join(dir, "libnvrtc-builtins.so.12.4"), "", fakeBuiltins)

	lib := mustFindLib(t, NVRTC, envOf(map[string]string{"CUDAGO_NVRTC_PATH": p}), "/")
	if lib.Lib != NVRTC || lib.Path != p || lib.Found != "env CUDAGO_NVRTC_PATH" {
		t.Errorf("got %+v, want nvrtc from %s via env CUDAGO_NVRTC_PATH", lib, p)
	}
	if lib.Soname != "libnvrtc.so.12" || lib.Major != 12 {
		t.Errorf("Soname, Major = %q, %d; want libnvrtc.so.12, 12", lib.Soname, lib.Major)
	}
	if lib.Handle() == nil {
		t.Error("nil Handle")
	}
	if v, err := lib.Version(); err != nil || v != "12.4" {
		t.Errorf("Version() = %q, %v; want 12.4", v, err)
	}
	if !reflect.DeepEqual(lib.Companions, []string{builtins}) || len(lib.Warnings) != 0 {
		t.Errorf("Companions %q, Warnings %q; want the builtins %s preloaded", lib.Companions, lib.Warnings, builtins)
	}
	if sym, err := lib.Symbol("nvrtcVersion"); err != nil || sym == nil {
		t.Errorf("Symbol(nvrtcVersion) = %v, %v", sym, err)
	}
	_, err := lib.Symbol("nvrtcNoSuchFunction")
	if err == nil || !strings.Contains(err.Error(), "nvrtcNoSuchFunction") || !strings.Contains(err.Error(), p) {
		t.Errorf("missing symbol error %q should name the symbol and %s", err, p)
	}
}

func TestOverrideDirectoryNewestFirst(t *testing.T) {
	dir := t.TempDir()
	buildLib(t, filepath.Join(dir, "libnvJitLink.so.12"), "", fakeJitLink(12, 4))
	p13 := buildLib(t, filepath.Join(dir, "libnvJitLink.so.13"), "", fakeJitLink(13, 1))
	lib := mustFindLib(t, NVJitLink, envOf(map[string]string{"CUDAGO_NVJITLINK_PATH": dir}), "/")
	if lib.Path != p13 || lib.Major != 13 || lib.Found != "env CUDAGO_NVJITLINK_PATH" {
		t.Errorf("got %+v; want %s (major 13)", lib, p13)
	}
	if v, err := lib.Version(); err != nil || v != "13.1" {
		t.Errorf("Version() = %q, %v; want 13.1", v, err)
	}

	// A toolkit root: the library is in its lib64.
	root := t.TempDir()
	p12 := buildLib(t, filepath.Join(root, "lib64", "libnvJitLink.so.12"), "", fakeJitLink(12, 4))
	lib = mustFindLib(t, NVJitLink, envOf(map[string]string{"CUDAGO_NVJITLINK_PATH": root}), "/")
	if lib.Path != p12 {
		t.Errorf("Path = %s, want %s", lib.Path, p12)
	}
}

func TestOverrideRelative(t *testing.T) {
	dir := t.TempDir()
	p := buildLib(t, filepath.Join(dir, "sub", "libnvJitLink.so.12"), "", fakeJitLink(12, 4))
	lib := mustFindLib(t, NVJitLink, envOf(map[string]string{"CUDAGO_NVJITLINK_PATH": "sub/libnvJitLink.so.12"}), dir)
	if lib.Path != p {
		t.Errorf("Path = %s, want %s", lib.Path, p)
	}
}

func TestOverrideBad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "libnvrtc.so.12")
	_, err := find(NVRTC, envOf(map[string]string{"CUDAGO_NVRTC_PATH": missing, "CUDA_HOME": dir}), "/")
	nf := notFound(t, err)
	if nf.Lib != NVRTC || nf.Override != "CUDAGO_NVRTC_PATH" {
		t.Errorf("got Lib %q Override %q", nf.Lib, nf.Override)
	}
	if len(nf.Tried) != 1 || nf.Tried[0].Path != missing || nf.Tried[0].Where != "env CUDAGO_NVRTC_PATH" {
		t.Errorf("Tried = %+v; want only %s", nf.Tried, missing)
	}
	msg := err.Error()
	for _, want := range []string{"nvrtc", "CUDAGO_NVRTC_PATH", missing, "no such file or directory"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}

	// A file that is not a shared library: dlopen's own error is reported.
	junk := filepath.Join(dir, "libnvrtc.so.12")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not an ELF file\n", 16)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = find(NVRTC, envOf(map[string]string{"CUDAGO_NVRTC_PATH": junk}), "/")
	nf = notFound(t, err)
	if len(nf.Tried) != 1 || !strings.Contains(nf.Tried[0].Err, "invalid ELF header") {
		t.Errorf("Tried = %+v; want dlopen's 'invalid ELF header'", nf.Tried)
	}
	if !strings.Contains(err.Error(), junk) || !strings.Contains(err.Error(), "invalid ELF header") {
		t.Errorf("error lacks the path or dlopen's message:\n%v", err)
	}

	// A directory without the library.
	_, err = find(NVRTC, envOf(map[string]string{"CUDAGO_NVRTC_PATH": t.TempDir()}), "/")
	nf = notFound(t, err)
	if len(nf.Tried) != 1 || !strings.Contains(nf.Tried[0].Err, "no libnvrtc.so.13 or libnvrtc.so.12 in .") {
		t.Errorf("Tried = %+v", nf.Tried)
	}
}

func TestBuiltinsMissingIsAWarning(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(fakeNVRTC, "*min = 4", "*min = 99", 1)
	p := buildLib(t, filepath.Join(dir, "libnvrtc.so.12"), "", src)
	lib := mustFindLib(t, NVRTC, envOf(map[string]string{"CUDAGO_NVRTC_PATH": p}), "/")
	if len(lib.Companions) != 0 || len(lib.Warnings) != 1 || !strings.Contains(lib.Warnings[0], "libnvrtc-builtins.so.12.99") {
		t.Errorf("Companions %q, Warnings %q; want one warning about libnvrtc-builtins.so.12.99", lib.Companions, lib.Warnings)
	}
}

func TestVersionQueries(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		lib  Lib
		file string
		src  string
		want string
		err  string
	}{
		{Driver, "libcuda.so.1", `int cuDriverGetVersion(int *v) { *v = 13010; return 0; }`, "13.1", ""},
		{Driver, "d12100/libcuda.so.1", `int cuDriverGetVersion(int *v) { *v = 12100; return 0; }`, "12.10", ""},
		{Driver, "bad/libcuda.so.1", `
int cuDriverGetVersion(int *v) { return 100; }
int cuGetErrorName(int rc, const char **s) { *s = rc == 100 ? "CUDA_ERROR_NO_DEVICE" : "?"; return 0; }`,
			"", "cuDriverGetVersion"},
		{NVFatbin, "libnvfatbin.so.12", `int nvFatbinVersion(unsigned *a, unsigned *b) { *a = 12; *b = 4; return 0; }`, "12.4", ""},
		{NVVM, "libnvvm.so.4", `
int nvvmVersion(int *a, int *b) { *a = 2; *b = 0; return 0; }
int nvvmIRVersion(int *a, int *b, int *c, int *d) { *a = 2; *b = 0; *c = 3; *d = 1; return 0; }`, "2.0", ""},
		{CuFile, "libcufile.so.0", `
typedef struct { int err; int cu_err; } e_t;
e_t cuFileGetVersion(int *v) { e_t e = {0, 0}; *v = 1090; return e; }`, "1.9.0", ""},
		// No nvJitLinkVersion (nvJitLink before 12.3): the file name's version.
		{NVJitLink, "libnvJitLink.so.12.1.105", fakeGeneric, "12.1.105", ""},
		{CuFile, "old/libcufile.so.1.6.1", fakeGeneric, "1.6.1", ""},
	}
	for _, c := range cases {
		lib, v, err := fakeVersion(t, dir, c.lib, c.file, c.src)
		if lib == nil {
			continue
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "CUDA_ERROR_NO_DEVICE") {
				t.Errorf("%s: Version() = %q, %v; want an error naming %s and CUDA_ERROR_NO_DEVICE", c.file, v, err, c.err)
			}
		case err != nil || v != c.want:
			t.Errorf("%s: Version() = %q, %v; want %s", c.file, v, err, c.want)
		}
		if c.lib == NVVM {
			if ir, err := nvvmIRVersion(lib); err != nil || ir != "NVVM IR 2.0, debug metadata 3.1" {
				t.Errorf("nvvmIRVersion = %q, %v", ir, err)
			}
		}
	}
}

func TestSonameFromELF(t *testing.T) {
	dir := t.TempDir()
	p := buildLib(t, filepath.Join(dir, "libsomething.so"), "libcudagofake0.so.7", fakeGeneric)
	sp := &spec{lib: "cudagofake0", env: "CUDAGO_FAKE0_PATH", sonames: []string{"libcudagofake0.so.7"}}
	lib, err := isolated(t, map[string]string{"CUDAGO_FAKE0_PATH": p}).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if lib.Soname != "libcudagofake0.so.7" || lib.Major != 7 {
		t.Errorf("Soname, Major = %q, %d; want libcudagofake0.so.7, 7", lib.Soname, lib.Major)
	}
}

// TestSearchOrder puts a copy of a fake library in every place and removes
// them one place at a time.
func TestSearchOrder(t *testing.T) {
	tmp := t.TempDir()
	ma, _ := archDirs()
	sp := &spec{lib: "cudagofake1", env: "CUDAGO_FAKE1_PATH", sonames: []string{"libcudagofake1.so.3", "libcudagofake1.so.2"}}
	src := buildLib(t, filepath.Join(tmp, "src", "fake.so"), "", fakeGeneric)
	put := func(rel string) string { return copyFile(t, src, filepath.Join(tmp, rel)) }

	home := put("home/lib64/libcudagofake1.so.2")
	cpath := put("cpath/lib/libcudagofake1.so.3")
	local3 := put("proj/.cuda/root/usr/lib/" + ma + "/libcudagofake1.so.3")
	put("proj/.cuda/root/usr/lib/" + ma + "/libcudagofake1.so.2")
	other := put("other/nvvm/lib64/libcudagofake1.so.2")
	usrLocal := put("sys/usr/local/cuda/lib64/libcudagofake1.so.2")
	multi := put("sys/usr/lib/" + ma + "/nvidia/current/libcudagofake1.so.2")
	deep := put("sys/usr/lib/nvidia-cuda-toolkit/a/b/libcudagofake1.so.2.0.1")
	if err := os.MkdirAll(filepath.Join(tmp, "proj/sub/dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	s := &searcher{cwd: filepath.Join(tmp, "proj/sub/dir"), sysroot: filepath.Join(tmp, "sys")}
	steps := []struct {
		env   map[string]string
		rm    string
		path  string
		found string
	}{
		// CUDA_PATH ranks above CUDA_HOME (as in cuda.pathfinder 1.8).
		{map[string]string{"CUDA_HOME": filepath.Join(tmp, "home"), "CUDA_PATH": filepath.Join(tmp, "cpath")}, "", cpath, "CUDA_PATH"},
		{map[string]string{"CUDA_HOME": filepath.Join(tmp, "home")}, "", home, "CUDA_HOME"},
		{nil, "", local3, "local install"},
		{map[string]string{"CUDAGO_LOCAL_CUDA": filepath.Join(tmp, "other")}, "", other, "local install"},
		{map[string]string{"CUDAGO_LOCAL_CUDA": filepath.Join(tmp, "nowhere")}, "", usrLocal, "/usr/local/cuda"},
		{map[string]string{"CUDAGO_LOCAL_CUDA": filepath.Join(tmp, "nowhere")}, "sys/usr/local", multi, "debian multiarch"},
		{map[string]string{"CUDAGO_LOCAL_CUDA": filepath.Join(tmp, "nowhere")}, "sys/usr/lib/" + ma, deep, "debian nvidia-cuda-toolkit"},
	}
	for i, st := range steps {
		if st.rm != "" {
			if err := os.RemoveAll(filepath.Join(tmp, st.rm)); err != nil {
				t.Fatal(err)
			}
		}
		s.getenv = envOf(st.env)
		lib, err := s.find(sp)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if lib.Path != st.path || lib.Found != st.found {
			t.Errorf("step %d: got %s (%s), want %s (%s)", i, lib.Path, lib.Found, st.path, st.found)
		}
		if i == 2 {
			if v, err := lib.Version(); err != nil || v != "3" || lib.Major != 3 {
				t.Errorf("Version() = %q, %v, Major %d; want 3 from the file name", v, err, lib.Major)
			}
		}
	}
}

// TestNotFoundListsEveryPlace checks the attempts and the message when the
// library is nowhere.
func TestNotFoundListsEveryPlace(t *testing.T) {
	tmp := t.TempDir()
	sp := &spec{lib: "cudagofake2", env: "CUDAGO_FAKE2_PATH", sonames: []string{"libcudagofake2.so.13", "libcudagofake2.so.12"},
		wheel: []string{"nvidia/cu13/lib", "nvidia/fake2/lib"}}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file that exists but does not load.
	broken := filepath.Join(home, "lib64", "libcudagofake2.so.12")
	if err := os.WriteFile(broken, []byte(strings.Repeat("junk", 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &searcher{
		getenv:  envOf(map[string]string{"CUDA_HOME": home}),
		cwd:     tmp,
		sysroot: filepath.Join(tmp, "sys"),
	}
	_, err := s.find(sp)
	nf := notFound(t, err)

	ma, _ := archDirs()
	local := Attempt{"", "local install", "CUDAGO_LOCAL_CUDA not set and no .cuda/root in " + tmp + " or above"}
	if root, _ := s.localRoot(); root != "" { // TMPDIR is inside a project with .cuda/root
		local = Attempt{root, "local install", ""}
	}
	want := []Attempt{
		{"", "env CUDAGO_FAKE2_PATH", "not set"},
		{"libcudagofake2.so.13, libcudagofake2.so.12", "already loaded", "not loaded in this process"},
		{"", "CUDA_PATH", "not set"},
		{broken, "CUDA_HOME", ""}, // dlopen's error
		local,
		{"", "VIRTUAL_ENV", "not set"},
		{"", "python3 site-packages", "no python3 on PATH"},
		{"", "CONDA_PREFIX", "not set"},
		{"libcudagofake2.so.13", "system loader", ""},
		{"libcudagofake2.so.12", "system loader", ""},
		{filepath.Join(tmp, "sys/usr/local/cuda"), "/usr/local/cuda", "no such file or directory"},
		{filepath.Join(tmp, "sys/usr/lib", ma), "debian multiarch", "no such file or directory"},
		{filepath.Join(tmp, "sys/usr/lib/nvidia-cuda-toolkit"), "debian nvidia-cuda-toolkit", "no such file or directory"},
	}
	if len(nf.Tried) != len(want) {
		t.Fatalf("tried %d places, want %d:\n%v", len(nf.Tried), len(want), err)
	}
	for i, w := range want {
		g := nf.Tried[i]
		if g.Path != w.Path || g.Where != w.Where || (w.Err != "" && g.Err != w.Err) || g.Err == "" {
			t.Errorf("attempt %d = %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(nf.Tried[3].Err, "invalid ELF header") {
		t.Errorf("dlopen error for %s = %q", broken, nf.Tried[3].Err)
	}
	if !strings.Contains(nf.Tried[8].Err, "cannot open shared object file") {
		t.Errorf("system loader error = %q", nf.Tried[8].Err)
	}

	msg := err.Error()
	for _, a := range nf.Tried {
		if !strings.Contains(msg, a.String()) {
			t.Errorf("message lacks attempt %q:\n%s", a, msg)
		}
	}
	// The file that was there and did not load is the cause, said first.
	if c := nf.Cause; c == nil || c.Path != broken || c.Where != "CUDA_HOME" || !strings.Contains(c.Reason, "is not a shared library (invalid ELF header)") {
		t.Errorf("Cause = %+v, want %s (CUDA_HOME), not a shared library", c, broken)
	}
	for _, want := range []string{"pathfinder: cannot load cudagofake2: " + broken + " (CUDA_HOME) is not a shared library",
		"\nfix: reinstall it, or use another libcudagofake2.so.12", "CUDAGO_FAKE2_PATH", "CUDA_HOME", "\ntried:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	// An existing CUDA_HOME without the library is reported with what was searched.
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	_, err = s.find(sp)
	nf = notFound(t, err)
	if g := nf.Tried[3]; g.Path != home || g.Where != "CUDA_HOME" || g.Err != "no libcudagofake2.so.13 or libcudagofake2.so.12 in lib64" {
		t.Errorf("CUDA_HOME attempt = %+v", g)
	}
	// Nothing was there: the message says how to install it, for a
	// program outside a clone of cudago.
	msg = err.Error()
	install := "source <clone>/.cuda/env.sh"
	if c := s.clone(); c != "" { // TMPDIR is inside a clone of cudago
		install = "bash " + filepath.Join(c, "scripts", "setup-cuda.sh")
	}
	for _, want := range []string{"cannot find cudagofake2 (libcudagofake2.so.13, libcudagofake2.so.12); tried:",
		"\nhint: ", "available", "CUDAGO_FAKE2_PATH", "CUDA_HOME", install} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if nf.Cause != nil {
		t.Errorf("Cause = %+v with no file found", nf.Cause)
	}
}

func TestDriverOrder(t *testing.T) {
	sp := &spec{lib: "cudagofake3", env: "CUDAGO_FAKE3_PATH", sonames: []string{"libcudagofake3.so.1"}, systemFirst: true}
	_, err := isolated(t, nil).find(sp)
	nf := notFound(t, err)
	var got []string
	for _, a := range nf.Tried {
		got = append(got, a.Where)
	}
	want := []string{"env CUDAGO_FAKE3_PATH", "already loaded", "system loader", "CUDA_PATH", "CUDA_HOME",
		"local install", "/usr/local/cuda", "debian multiarch", "debian nvidia-cuda-toolkit"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("places tried:\n got %q\nwant %q", got, want)
	}
	if specOf(Driver).systemFirst != true {
		t.Error("the driver should ask the system loader first")
	}
}

var alreadyLoadedRuns int

func TestAlreadyLoaded(t *testing.T) {
	dir := t.TempDir()
	// A fresh soname on each run (go test -count=N runs in one process).
	alreadyLoadedRuns++
	soname := fmt.Sprintf("libcudagofake4run%d.so.1", alreadyLoadedRuns)
	p := buildLib(t, filepath.Join(dir, "lib64", soname), soname, fakeGeneric)
	sp := &spec{lib: "cudagofake4", env: "CUDAGO_FAKE4_PATH", sonames: []string{soname}}
	first, err := isolated(t, map[string]string{"CUDA_HOME": dir}).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if first.Found != "CUDA_HOME" || first.Path != p {
		t.Fatalf("first load: %+v", first)
	}
	again, err := isolated(t, nil).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if again.Found != "already loaded" || again.Path != p || again.Handle() != first.Handle() || again.Soname != soname {
		t.Errorf("second load: %+v, want %s already loaded with the same handle", again, p)
	}
}

func TestDeepSearchNVVM(t *testing.T) {
	tmp := t.TempDir()
	// An NVVM spec under a fake soname, so that a real libnvvm.so.4 loaded
	// by other tests is not "already loaded" here.
	sp := &spec{lib: NVVM, env: "CUDAGO_FAKENVVM_PATH", sonames: []string{"libcudagofakenvvm.so.4"}, extra: []string{"libcudagofakenvvm.so"}}
	root := filepath.Join(tmp, "root")
	p := buildLib(t, filepath.Join(root, "usr/lib/nvidia-cuda-toolkit/x/nvvm/lib64/libcudagofakenvvm.so.4"), "",
		`int nvvmVersion(int *a, int *b) { *a = 2; *b = 0; return 0; }`)
	lib, err := isolated(t, map[string]string{"CUDAGO_LOCAL_CUDA": root}).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != p || lib.Found != "local install" {
		t.Errorf("got %s (%s), want %s (local install)", lib.Path, lib.Found, p)
	}
	if v, err := lib.Version(); err != nil || v != "2.0" {
		t.Errorf("Version() = %q, %v", v, err)
	}

	// Deeper than localDepth: not found, and the message says how deep we looked.
	root2 := filepath.Join(tmp, "root2")
	copyFile(t, p, filepath.Join(root2, "a/b/c/d/e/f/g/libcudagofakenvvm.so.4"))
	_, err = isolated(t, map[string]string{"CUDAGO_LOCAL_CUDA": root2}).find(sp)
	nf := notFound(t, err)
	var local *Attempt
	for i := range nf.Tried {
		if nf.Tried[i].Where == "local install" {
			local = &nf.Tried[i]
		}
	}
	if local == nil || local.Path != root2 || !strings.Contains(local.Err, "6 levels deep") {
		t.Errorf("local install attempt = %+v", local)
	}
}

// TestSystemLoader runs the test binary again with LD_LIBRARY_PATH set
// (the loader reads it only at start-up).
func TestSystemLoader(t *testing.T) {
	if dir := os.Getenv("CUDAGO_PATHFINDER_CHILD"); dir != "" {
		systemLoaderChild(t, dir)
		return
	}
	dir := t.TempDir()
	buildLib(t, filepath.Join(dir, "ld/libcudagofake5.so.1"), "", fakeGeneric)
	buildLib(t, filepath.Join(dir, "home/lib64/libcudagofake5.so.1"), "", fakeGeneric)
	buildLib(t, filepath.Join(dir, "ld/libcudagofake6.so.1"), "", fakeGeneric)
	buildLib(t, filepath.Join(dir, "home/lib64/libcudagofake6.so.1"), "", fakeGeneric)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSystemLoader$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGO_PATHFINDER_CHILD="+dir, "LD_LIBRARY_PATH="+filepath.Join(dir, "ld"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func systemLoaderChild(t *testing.T, dir string) {
	env := map[string]string{"CUDA_HOME": filepath.Join(dir, "home")}
	// A toolkit library: CUDA_HOME comes before the system loader.
	sp := &spec{lib: "cudagofake5", env: "CUDAGO_FAKE5_PATH", sonames: []string{"libcudagofake5.so.1"}}
	lib, err := isolated(t, env).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "home/lib64/libcudagofake5.so.1"); lib.Found != "CUDA_HOME" || lib.Path != want {
		t.Errorf("toolkit library: got %s (%s), want %s (CUDA_HOME)", lib.Path, lib.Found, want)
	}
	// Without CUDA_HOME the system loader finds it through LD_LIBRARY_PATH.
	sp.sonames = []string{"libcudagofake6.so.1"}
	lib, err = isolated(t, nil).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "ld/libcudagofake6.so.1"); lib.Found != "system loader" || lib.Path != want {
		t.Errorf("got %s (%s), want %s (system loader)", lib.Path, lib.Found, want)
	}
	// The driver asks the system loader before CUDA_HOME.
	sp = &spec{lib: "cudagofake5", env: "CUDAGO_FAKE5_PATH", sonames: []string{"libcudagofake5.so.1"}, systemFirst: true}
	sp.sonames = []string{"libcudagofake5.so.1"}
	lib, err = isolated(t, env).find(sp)
	if err != nil {
		t.Fatal(err)
	}
	// libcudagofake5.so.1 has no soname, so the copy from CUDA_HOME loaded
	// above is not "already loaded" under that name.
	if want := filepath.Join(dir, "ld/libcudagofake5.so.1"); lib.Found != "system loader" || lib.Path != want {
		t.Errorf("driver-like library: got %s (%s), want %s (system loader)", lib.Path, lib.Found, want)
	}
	if !t.Failed() {
		fmt.Println("child ok")
	}
}

func TestUnknownLib(t *testing.T) {
	if _, err := Load("cudnn8"); err == nil || !strings.Contains(err.Error(), "unknown library") {
		t.Errorf("Load(cudnn8) error = %v", err)
	}
	if _, err := find("cudnn8", os.Getenv, "/"); err == nil {
		t.Error("find(cudnn8) succeeded")
	}
}

// fakeVersion builds src as dir/file, finds it as lib through its override
// variable and asks its Version; l is nil (and the test failed) when it
// could not be found.
func fakeVersion(t *testing.T, dir string, lib Lib, file, src string) (l *Library, v string, err error) {
	t.Helper()
	p := buildLib(t, filepath.Join(dir, file), "", src)
	if l, err = find(lib, envOf(map[string]string{lib.EnvVar(): p}), "/"); err != nil {
		t.Errorf("%s: %v", file, err)
		return nil, "", nil
	}
	v, err = l.Version()
	return l, v, err
}

// TestNVMLVersion: NVML's version is the driver's, from the file name the
// soname points to, else from nvmlSystemGetNVMLVersion without its NVML API
// major; a failure names the call and nvmlErrorString's text.
func TestNVMLVersion(t *testing.T) {
	dir := t.TempDir()
	query := `#include <string.h>
int nvmlSystemGetNVMLVersion(char *b, unsigned n) { strncpy(b, "12.560.35.03", n); return 0; }`
	failing := `
int nvmlSystemGetNVMLVersion(char *b, unsigned n) { return 7; }
const char *nvmlErrorString(int r) { return r == 7 ? "Insufficient Size" : "?"; }`
	for _, c := range []struct{ file, src, want, err string }{
		{"libnvidia-ml.so.550.163.01", fakeGeneric, "550.163.01", ""},
		// A copy named by its soname: "1" is no driver version.
		{"q/libnvidia-ml.so.1", query, "560.35.03", ""},
		{"f/libnvidia-ml.so.1", failing, "", "nvmlSystemGetNVMLVersion in " + filepath.Join(dir, "f/libnvidia-ml.so.1") + " failed: Insufficient Size (7)"},
	} {
		_, v, err := fakeVersion(t, dir, NVML, c.file, c.src)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: Version() = %q, %v; want an error saying %q", c.file, v, err, c.err)
		case c.err == "" && (err != nil || v != c.want):
			t.Errorf("%s: Version() = %q, %v; want %s", c.file, v, err, c.want)
		}
	}
}
