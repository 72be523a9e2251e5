package cudaheaders

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates the files (relative to dir) with the given contents.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// isolate runs the test in an empty folder with none of the variables
// set, so that only the places it makes are found (versions 98.x and 99.x,
// which no real CUDA install has).
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, v := range []string{Env, "CUDA_HOME", "CUDA_PATH"} {
		t.Setenv(v, "")
	}
	t.Setenv("CUDAGO_LOCAL_CUDA", filepath.Join(dir, "nolocal"))
	return dir
}

func cudaH(v int) string { return fmt.Sprintf("/* cuda.h */\n#define CUDA_VERSION %d\n", v) }

func TestFindOrder(t *testing.T) {
	dir := isolate(t)
	// A folder of version folders, an include folder (its version from
	// cuda.h), a folder with neither, and a local install.
	write(t, dir, map[string]string{
		"tree/99.0/cuda.h":              "",
		"tree/99.0/only-tree.h":         "",
		"tree/98.4/nvvm.h":              "",
		"inc/cuda.h":                    cudaH(99000),
		"inc/only-inc.h":                "",
		"inc/only-tree.h":               "",
		"empty/x.h":                     "",
		"nolocal/usr/include/cuda.h":    cudaH(98040),
		"nolocal/usr/include/nvvm.h":    "",
		"nolocal/usr/include/curand.h":  "",
		"home/include/cuda.h":           cudaH(99000),
		"home/include/only-home.h":      "",
		"repo/sub/placeholder":          "",
		"shared/cuda-headers/99.0/s.h":  "",
		"shared/cuda-headers/98.4/s2.h": "",
	})
	t.Setenv(Env, strings.Join([]string{filepath.Join(dir, "empty"), filepath.Join(dir, "tree"), filepath.Join(dir, "inc")}, string(os.PathListSeparator)))
	t.Setenv("CUDA_HOME", filepath.Join(dir, "home"))
	t.Chdir(filepath.Join(dir, "repo", "sub"))

	s := Find("")
	if !s.Explicit {
		t.Error("Explicit is false with " + Env + " set")
	}
	for _, c := range []struct {
		v, file, want string
	}{
		{"99.0", "only-tree.h", "tree/99.0"},         // the first folder of the variable with it
		{"99.0", "cuda.h", "tree/99.0"},              //
		{"99.0", "only-inc.h", "inc"},                // an include folder, version from cuda.h
		{"99.0", "s.h", "shared/cuda-headers/99.0"},  // shared/cuda-headers, walking up
		{"98.4", "s2.h", "shared/cuda-headers/98.4"}, //
		{"98.4", "nvvm.h", "tree/98.4"},              // the variable before the local install
		{"98.4", "curand.h", "nolocal/usr/include"},  // CUDAGO_LOCAL_CUDA
		{"98.4", "cuda.h", "nolocal/usr/include"},    //
		{"99.0", "only-home.h", "home/include"},      // CUDA_HOME
		{"98.4", "only-home.h", ""},                  // CUDA_HOME is 99.0, not 98.4
		{"99.0", "x.h", ""},                          // empty/ is neither kind of folder
		{"99.0", "nowhere.h", ""},                    //
	} {
		got, ok := s.Dir(c.v, c.file)
		want := ""
		if c.want != "" {
			want = filepath.Join(dir, c.want)
		}
		if got != want || ok != (c.want != "") {
			t.Errorf("Dir(%s, %q) = %q, %v; want %q", c.v, c.file, got, ok, want)
		}
	}
	if d, ok := s.Dir("99.0", "cuda.h", "only-inc.h"); !ok || d != filepath.Join(dir, "inc") {
		t.Errorf("Dir(99.0, cuda.h, only-inc.h) = %q, %v: want the first place holding both", d, ok)
	}
	searched := strings.Join(s.Searched, "\n")
	for _, want := range []string{filepath.Join(dir, "empty") + " (" + Env + "): no cuda.h", "CUDA_PATH unset", "(CUDA_HOME): CUDA 99.0"} {
		if !strings.Contains(searched, want) {
			t.Errorf("Searched lacks %q:\n%s", want, searched)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := isolate(t)
	write(t, dir, map[string]string{"h/99.0/cuda.h": ""})
	s := Find(filepath.Join(dir, "h")) // as the generator's -headers
	if !s.Explicit {
		t.Error("Explicit is false with -headers")
	}
	if err := s.Check(Header{"99.0", "cuda.h"}); err != nil {
		t.Errorf("Check(a header that is there): %v", err)
	}
	err := s.Check(Header{"99.0", "cuda.h"}, Header{"99.0", "cusolverDn.h"}, Header{"99.0", "cusolverDn.h"}, Header{"12.4", "nvml.h"})
	if err == nil {
		t.Fatal("Check(missing headers) = nil")
	}
	msg := err.Error()
	for _, want := range []string{
		"needs CUDA 12.4's nvml.h; CUDA 99.0's cusolverDn.h:",
		"run scripts/setup-cuda.sh",
		"set " + Env + " to a CUDA 99.0 include folder or to a folder holding 99.0/",
		Env + " unset",
		filepath.Join(dir, "h", "99.0") + " (-headers): CUDA 99.0",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check's error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, "cusolverDn.h") != 1 {
		t.Errorf("a header asked for twice is named twice:\n%s", msg)
	}
}

// fakeTB records what Require does to a test.
type fakeTB struct{ skipped, failed string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = fmt.Sprintf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

// TestRequire: a missing header skips the test, unless CUDAGO_CUDA_HEADERS
// is set, where it fails it; a header that is there does neither.
func TestRequire(t *testing.T) {
	dir := isolate(t)
	write(t, dir, map[string]string{"inc/cuda.h": cudaH(99000)})
	t.Setenv("CUDA_PATH", dir)
	t.Setenv("CUDA_HOME", "")
	t.Chdir(dir)
	if err := os.Rename(filepath.Join(dir, "inc"), filepath.Join(dir, "include")); err != nil {
		t.Fatal(err)
	}

	var f fakeTB
	if s := Require(&f, Header{"99.0", "cuda.h"}); f.skipped != "" || f.failed != "" || s == nil {
		t.Errorf("Require(a header CUDA_PATH has): skipped %q, failed %q", f.skipped, f.failed)
	}
	f = fakeTB{}
	Require(&f, Header{"99.0", "cufile.h"})
	if !strings.Contains(f.skipped, "CUDA 99.0's cufile.h") || f.failed != "" {
		t.Errorf("Require(a missing header): skipped %q, failed %q; want a skip naming it", f.skipped, f.failed)
	}
	t.Setenv(Env, filepath.Join(dir, "nothing-here"))
	f = fakeTB{}
	Require(&f, Header{"99.0", "cufile.h"})
	if !strings.Contains(f.failed, "CUDA 99.0's cufile.h") || f.skipped != "" {
		t.Errorf("Require(a missing header) with %s set: skipped %q, failed %q; want a failure naming it", Env, f.skipped, f.failed)
	}
}

// TestRealPlaces: where this checkout has its headers, each place's
// version agrees with its cuda.h (the local install is CUDA 12.4).
func TestRealPlaces(t *testing.T) {
	s := Find("")
	for _, p := range s.Places {
		if p.Source == "the local install" || p.Source == "CUDAGO_LOCAL_CUDA" {
			if p.Version != "12.4" {
				t.Errorf("the local install %s is CUDA %s, want 12.4", p.Dir, p.Version)
			}
		}
		t.Logf("%s: CUDA %s (%s)", p.Dir, p.Version, p.Source)
	}
}
