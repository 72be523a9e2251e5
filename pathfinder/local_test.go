//go:build linux && cgo

package pathfinder

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/internal/testing/newglibc"
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
	return l != Driver && l != NVML // the driver and NVML ask the system loader first
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

// mustVersion returns lib's Version, failing t on an error.
func mustVersion(t *testing.T, lib *Library) string {
	t.Helper()
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// hasSymbols checks that lib resolves each of syms.
func hasSymbols(t *testing.T, lib *Library, syms ...string) {
	t.Helper()
	for _, sym := range syms {
		if _, err := lib.Symbol(sym); err != nil {
			t.Error(err)
		}
	}
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
	v := mustVersion(t, lib)
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
	hasSymbols(t, lib, "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetPTX")
}

func TestLocalNVJitLink(t *testing.T) {
	lib := loadLocal(t, NVJitLink)
	v := mustVersion(t, lib)
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
	v := mustVersion(t, lib)
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
	v := mustVersion(t, lib)
	if !regexp.MustCompile(`^1\d\.\d$`).MatchString(v) {
		t.Errorf("driver Version() = %q, want e.g. 12.4", v)
	}
	t.Logf("driver supports CUDA %s", v)
	hasSymbols(t, lib, "cuInit", "cuGetProcAddress", "cuGetErrorName")
}

// TestLocalNVML loads NVML (Debian's libnvidia-ml1 in the local install,
// or the system's) and reads its version without nvmlInit.
func TestLocalNVML(t *testing.T) {
	if !inLocal(t, localInstall(t), NVML) && os.Getenv(NVML.EnvVar()) == "" {
		t.Skip("scripts/setup-cuda.sh did not install libnvidia-ml")
	}
	lib := loadLocal(t, NVML)
	if lib.Major != 1 || lib.Soname != "libnvidia-ml.so.1" {
		t.Errorf("Soname %q, Major %d; want libnvidia-ml.so.1, 1", lib.Soname, lib.Major)
	}
	v := mustVersion(t, lib)
	if !regexp.MustCompile(`^\d{3}\.\d+(\.\d+)?$`).MatchString(v) {
		t.Errorf("NVML Version() = %q, want a driver version such as 550.163.01", v)
	}
	t.Logf("NVML of driver %s (%s)", v, lib.Found)
	hasSymbols(t, lib, "nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlErrorString", "nvmlShutdown")
}

func TestLocalNVFatbin(t *testing.T) {
	if !inLocal(t, localInstall(t), NVFatbin) && os.Getenv(NVFatbin.EnvVar()) == "" {
		t.Skip("scripts/setup-cuda.sh did not install libnvfatbin")
	}
	lib := loadLocal(t, NVFatbin)
	v := mustVersion(t, lib)
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

// The versions of the runtime and math libraries of the local install
// (Debian's CUDA 12.4 packages): each library's own numbering.
var localMathVersions = map[Lib]string{
	CUDART:   "12.4",
	CuBLASLt: "12.4.5",
	CuBLAS:   "12.4.5",
	CuFFT:    "11.2.1",
	CuRAND:   "10.3.5",
	CuSPARSE: "12.3.1",
	CuSOLVER: "11.6.1",
	NVTX:     "1.0.0", // from the file name: libnvToolsExt has no version function
}

// TestLocalMathLibs loads the runtime and the math libraries and asks their
// versions, which needs no GPU; the libraries they need come from the same
// place.
func TestLocalMathLibs(t *testing.T) {
	root := localInstall(t)
	deps := map[Lib][]string{
		CuBLAS:   {"libcublasLt.so.12"},
		CuSPARSE: {"libnvJitLink.so.12"},
		CuSOLVER: {"libnvJitLink.so.12", "libcusparse.so.12", "libcublasLt.so.12", "libcublas.so.12"},
	}
	// cuSOLVER first, so that it loads its dependencies itself.
	for _, l := range []Lib{CuSOLVER, CUDART, CuBLASLt, CuBLAS, CuFFT, CuRAND, CuSPARSE, NVTX} {
		t.Run(string(l), func(t *testing.T) {
			lib := loadLocal(t, l)
			v := mustVersion(t, lib)
			t.Logf("%s %s, companions %q", l, v, lib.Companions)
			if !regexp.MustCompile(`^\d+\.\d+(\.\d+)?$`).MatchString(v) {
				t.Errorf("Version() = %q", v)
			}
			if !expectLocal(l) {
				return
			}
			if want := localMathVersions[l]; v != want {
				t.Errorf("Version() = %q, want %s", v, want)
			}
			if len(lib.Warnings) != 0 {
				t.Errorf("Warnings %q", lib.Warnings)
			}
			var names []string
			for _, c := range lib.Companions {
				names = append(names, filepath.Base(c))
				if real := realpath(c); !strings.HasPrefix(real, realpath(root)+"/") {
					t.Errorf("dependency %s is outside the local install %s", real, root)
				}
			}
			if !reflect.DeepEqual(names, deps[l]) {
				t.Errorf("dependencies loaded %q, want %q", names, deps[l])
			}
		})
	}
}

// TestLocalWheelLayout lays the local install's cuSOLVER and the libraries
// it needs out as CUDA 12's pip wheels do, one directory per wheel in a
// virtual environment, and loads cuSOLVER from there in a child process
// (this one has loaded them from the local install already).
func TestLocalWheelLayout(t *testing.T) {
	if venv := os.Getenv("CUDAGO_PATHFINDER_WHEEL_CHILD"); venv != "" {
		wheelLayoutChild(t, venv)
		return
	}
	root := localInstall(t)
	ma, _ := archDirs()
	venv := t.TempDir()
	site := filepath.Join(venv, "lib/python3.12/site-packages")
	for _, f := range []string{"cusolver/lib/libcusolver.so.11", "cusparse/lib/libcusparse.so.12", "cublas/lib/libcublas.so.12",
		"cublas/lib/libcublasLt.so.12", "nvjitlink/lib/libnvJitLink.so.12"} {
		p := filepath.Join(site, "nvidia", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "usr/lib", ma, filepath.Base(f)), p); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalWheelLayout$", "-test.v")
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CONDA_PREFIX", "CUDAGO_PYTHON_SITE", "CUDAGO_LOCAL_CUDA":
		default:
			if !strings.HasPrefix(k, "CUDAGO_") || !strings.HasSuffix(k, "_PATH") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	cmd.Env = append(cmd.Env, "CUDAGO_PATHFINDER_WHEEL_CHILD="+venv, "VIRTUAL_ENV="+venv,
		"CUDAGO_LOCAL_CUDA="+filepath.Join(venv, "no-local-install"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

func wheelLayoutChild(t *testing.T, venv string) {
	nvidia := filepath.Join(venv, "lib/python3.12/site-packages/nvidia")
	lib, err := Load(CuSOLVER)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(nvidia, "cusolver/lib/libcusolver.so.11"); lib.Path != want || lib.Found != "VIRTUAL_ENV" {
		t.Errorf("cusolver: got %s (%s), want %s (VIRTUAL_ENV)", lib.Path, lib.Found, want)
	}
	want := []string{filepath.Join(nvidia, "nvjitlink/lib/libnvJitLink.so.12"), filepath.Join(nvidia, "cusparse/lib/libcusparse.so.12"),
		filepath.Join(nvidia, "cublas/lib/libcublasLt.so.12"), filepath.Join(nvidia, "cublas/lib/libcublas.so.12")}
	if !reflect.DeepEqual(lib.Companions, want) || len(lib.Warnings) != 0 {
		t.Errorf("cusolver: Companions %q, Warnings %q; want %q", lib.Companions, lib.Warnings, want)
	}
	if v, err := lib.Version(); err != nil || v != localMathVersions[CuSOLVER] {
		t.Errorf("cusolver Version() = %q, %v", v, err)
	}
	// cuBLAS, loaded as cuSOLVER's dependency, says where it came from.
	blas, err := Load(CuBLAS)
	if err != nil {
		t.Fatal(err)
	}
	if blas.Path != want[3] || blas.Found != "VIRTUAL_ENV" || !reflect.DeepEqual(blas.Companions, want[2:3]) {
		t.Errorf("cublas: got %s (%s) with %q, want %s (VIRTUAL_ENV) with %s", blas.Path, blas.Found, blas.Companions, want[3], want[2])
	}
	if !t.Failed() {
		fmt.Println("child ok")
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

// TestLocalNCCL loads Debian trixie's NCCL 2.22.3 from the local install
// and asks its version. It needs glibc 2.38: on an older system (CI's
// Debian 12) the test runs again under the glibc that setup-cuda.sh
// unpacks into .cuda/glibc.
func TestLocalNCCL(t *testing.T) {
	localInstall(t)
	if newglibc.Rerun(t, func() error { _, err := Load(NCCL); return err }) {
		return
	}
	lib := loadLocal(t, NCCL)
	v := mustVersion(t, lib)
	t.Logf("nccl %s, companions %q", v, lib.Companions)
	if !regexp.MustCompile(`^2\.\d+\.\d+$`).MatchString(v) || lib.Soname != "libnccl.so.2" || lib.Major != 2 {
		t.Errorf("Version() = %q, Soname %q, Major %d", v, lib.Soname, lib.Major)
	}
	if expectLocal(NCCL) && (v != "2.22.3" || len(lib.Companions) != 0 || len(lib.Warnings) != 0) {
		t.Errorf("Version() = %q, Companions %q, Warnings %q; want 2.22.3 (Debian's libnccl2), alone", v, lib.Companions, lib.Warnings)
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
		// The driver, NVRTC, nvJitLink, NVVM, the runtime and the math libraries.
		// NCCL needs a newer glibc than CI's (TestLocalNCCL).
		// CUPTI, cuDNN, cuTENSOR and cuDLA are not in the local install.
		optional := s.Lib == CuFile || s.Lib == CUPTI || s.Lib == CuDNN || s.Lib == CuTENSOR || s.Lib == CuDLA
		required := !optional && (s.Lib != NVFatbin || inLocal(t, root, NVFatbin)) && !(s.Lib == NCCL && newglibc.Needed(s.Err))
		if required && !s.OK() {
			t.Errorf("%s: %v %v", s.Lib, s.Err, s.CheckErr)
		}
		// The CUDA release each library of the local install says it
		// belongs to: 12.4 where its version tells the minor.
		if want, ok := localCUDA[s.Lib]; ok && s.Err == nil && s.Library.Found == "local install" && s.CUDA != want {
			t.Errorf("%s: CUDA %q, want %q", s.Lib, s.CUDA, want)
		}
		if s.Lib == CuDLA && (&searcher{getenv: os.Getenv}).notTegra() != "" && os.Getenv("CUDAGO_CUDLA_PATH") == "" {
			var nf *NotFoundError
			if !errors.As(s.Err, &nf) || nf.Unavailable == "" {
				t.Errorf("cudla off Tegra: %v, want it reported unavailable", s.Err)
			}
		}
	}
	// One CUDA 12.4 install and its driver: the guard rails have nothing to say.
	if os.Getenv("CUDA_PATH") == "" && os.Getenv("CUDA_HOME") == "" && expectLocal(NVRTC) {
		if ws := Check(); len(ws) != 0 {
			t.Errorf("Check() on the local install = %v, want nothing", ws)
		}
	}
}

// localCUDA is what Status.CUDA says of the local install's libraries.
var localCUDA = map[Lib]string{NVRTC: "12.4", NVJitLink: "12.4", NVFatbin: "12.4", CUDART: "12.4", CuBLAS: "12.4", CuBLASLt: "12.4",
	CuFFT: "12.x", CuSOLVER: "12.x", CuSPARSE: "12.x", CuRAND: "", NVVM: "", NCCL: "", Driver: "", NVTX: ""}
