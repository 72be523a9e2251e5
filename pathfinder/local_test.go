//go:build linux && cgo

package pathfinder

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// These tests use the real CUDA 12.4 libraries that scripts/setup-cuda.sh
// installs into .cuda/root (CI runs it before the tests).

const localVersion = "12.4"

// localInstall returns the project-local CUDA root the way Load finds it.
func localInstall(t *testing.T) string {
	t.Helper()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, why := (&searcher{getenv: os.Getenv, cwd: cwd}).localRoot()
	if _, err := os.Stat(root); (root == "" || err != nil) && os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
		// The GPU machine has its own CUDA and no local install: CI runs these.
		t.Skip("uses the local CUDA 12.4 install, which the GPU machine does not have (it runs in CI)")
	}
	if root == "" {
		t.Fatalf("no local CUDA install (%s): run scripts/setup-cuda.sh", why)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("local CUDA install: %v: run scripts/setup-cuda.sh", err)
	}
	return root
}

// expectLocal reports whether l should come from the local install: nothing
// earlier in the search order is configured.
func expectLocal(l Lib) bool {
	if os.Getenv(l.EnvVar()) != "" || os.Getenv("CUDA_HOME") != "" || os.Getenv("CUDA_PATH") != "" {
		return false
	}
	return l != Driver // the driver asks the system loader first
}

// inLocal reports whether the local install holds one of l's sonames.
func inLocal(t *testing.T, root string, l Lib) bool {
	found := false
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		for _, n := range l.Sonames() {
			if err == nil && d.Name() == n {
				found = true
			}
		}
		return nil
	})
	return found
}

// loadLocal loads l and checks what is common to every library.
func loadLocal(t *testing.T, l Lib) *Library {
	t.Helper()
	root := localInstall(t)
	lib, err := Load(l)
	if err != nil {
		t.Fatalf("Load(%s): %v", l, err)
	}
	t.Logf("%s: %s (%s, soname %s, major %d)", l, lib.Path, lib.Found, lib.Soname, lib.Major)
	if !filepath.IsAbs(lib.Path) || lib.Handle() == nil {
		t.Errorf("Path %q not absolute or nil handle", lib.Path)
	}
	if expectLocal(l) {
		if lib.Found != "local install" && lib.Found != "already loaded" {
			t.Errorf("%s found by %q, want local install", l, lib.Found)
		}
		if real := realpath(lib.Path); !strings.HasPrefix(real, realpath(root)+"/") {
			t.Errorf("%s loaded from %s, outside the local install %s", l, real, root)
		}
	}
	if lib.Soname != l.Sonames()[len(l.Sonames())-1] && lib.Soname != l.Sonames()[0] {
		t.Errorf("Soname = %q, want one of %q", lib.Soname, l.Sonames())
	}
	if again, err := Load(l); again != lib || err != nil {
		t.Errorf("second Load(%s) = %p, %v; want the same *Library %p", l, again, err, lib)
	}
	return lib
}

func TestLocalNVRTC(t *testing.T) {
	lib := loadLocal(t, NVRTC)
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if expectLocal(NVRTC) && (v != localVersion || lib.Major != 12 || lib.Soname != "libnvrtc.so.12") {
		t.Errorf("Version %q, Major %d, Soname %q; want %s, 12, libnvrtc.so.12", v, lib.Major, lib.Soname, localVersion)
	}
	if len(lib.Companions) != 1 || !strings.Contains(filepath.Base(lib.Companions[0]), "libnvrtc-builtins.so."+v) || len(lib.Warnings) != 0 {
		t.Errorf("Companions %q, Warnings %q; want libnvrtc-builtins.so.%s loaded", lib.Companions, lib.Warnings, v)
	}
	// Compiling needs the builtins, which are not on the loader's path.
	if err := nvrtcCompileCheck(lib); err != nil {
		t.Errorf("NVRTC cannot compile: %v", err)
	}
	for _, sym := range []string{"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetPTX"} {
		if _, err := lib.Symbol(sym); err != nil {
			t.Error(err)
		}
	}
}

func TestLocalNVJitLink(t *testing.T) {
	lib := loadLocal(t, NVJitLink)
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if expectLocal(NVJitLink) && (v != localVersion || lib.Major != 12) {
		t.Errorf("Version %q, Major %d; want %s, 12", v, lib.Major, localVersion)
	}
	if _, err := lib.Symbol("nvJitLinkVersion"); err != nil {
		t.Error(err)
	}
}

func TestLocalNVVM(t *testing.T) {
	lib := loadLocal(t, NVVM)
	if lib.Major != 4 {
		t.Errorf("Major = %d, want 4", lib.Major)
	}
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d+\.\d+$`).MatchString(v) {
		t.Errorf("Version() = %q, want major.minor", v)
	}
	if expectLocal(NVVM) && v != "2.0" { // NVVM's own version in CUDA 12.x
		t.Errorf("Version() = %q, want 2.0", v)
	}
	ir, err := nvvmIRVersion(lib)
	if err != nil || !strings.HasPrefix(ir, "NVVM IR ") {
		t.Errorf("nvvmIRVersion = %q, %v", ir, err)
	}
	t.Logf("nvvm %s, %s", v, ir)
}

func TestLocalDriver(t *testing.T) {
	lib := loadLocal(t, Driver)
	if lib.Major != 1 || lib.Soname != "libcuda.so.1" {
		t.Errorf("Soname %q, Major %d; want libcuda.so.1, 1", lib.Soname, lib.Major)
	}
	// cuDriverGetVersion needs neither cuInit nor a GPU.
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^1\d\.\d$`).MatchString(v) {
		t.Errorf("driver Version() = %q, want e.g. 12.4", v)
	}
	t.Logf("driver supports CUDA %s", v)
	for _, sym := range []string{"cuInit", "cuGetProcAddress", "cuGetErrorName"} {
		if _, err := lib.Symbol(sym); err != nil {
			t.Error(err)
		}
	}
}

func TestLocalNVFatbin(t *testing.T) {
	if !inLocal(t, localInstall(t), NVFatbin) && os.Getenv(NVFatbin.EnvVar()) == "" {
		t.Skip("scripts/setup-cuda.sh did not install libnvfatbin")
	}
	lib := loadLocal(t, NVFatbin)
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if expectLocal(NVFatbin) && v != localVersion {
		t.Errorf("Version() = %q, want %s", v, localVersion)
	}
}

func TestLocalCuFile(t *testing.T) {
	if !inLocal(t, localInstall(t), CuFile) && os.Getenv(CuFile.EnvVar()) == "" {
		t.Skip("scripts/setup-cuda.sh did not install libcufile")
	}
	lib := loadLocal(t, CuFile)
	v, err := lib.Version()
	t.Logf("cufile version %q, %v", v, err)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("Version() = %q", v)
	}
}

func TestLoadConcurrent(t *testing.T) {
	localInstall(t)
	for _, l := range Libs() {
		var wg sync.WaitGroup
		libs := make([]*Library, 16)
		errs := make([]error, 16)
		for i := range libs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				libs[i], errs[i] = Load(l)
			}()
		}
		wg.Wait()
		for i := range libs {
			if libs[i] != libs[0] || errs[i] != errs[0] {
				t.Errorf("%s: goroutine %d got %p, %v; goroutine 0 got %p, %v", l, i, libs[i], errs[i], libs[0], errs[0])
			}
		}
		if (libs[0] == nil) == (errs[0] == nil) {
			t.Errorf("%s: got %v and %v", l, libs[0], errs[0])
		}
	}
}

func TestReport(t *testing.T) {
	root := localInstall(t)
	st := Report()
	if len(st) != len(Libs()) {
		t.Fatalf("Report() has %d entries, want %d", len(st), len(Libs()))
	}
	for i, s := range st {
		t.Log(s)
		if s.Lib != Libs()[i] {
			t.Errorf("entry %d is %s, want %s", i, s.Lib, Libs()[i])
		}
		lib, err := Load(s.Lib)
		if s.Library != lib || s.Err != err {
			t.Errorf("%s: Report disagrees with Load", s.Lib)
		}
		if s.Err == nil && (s.VersionErr != nil || s.Version == "") {
			t.Errorf("%s: no version: %v", s.Lib, s.VersionErr)
		}
		required := s.Lib != CuFile && (s.Lib != NVFatbin || inLocal(t, root, NVFatbin))
		if required && !s.OK() {
			t.Errorf("%s: %v %v", s.Lib, s.Err, s.CheckErr)
		}
	}
}
