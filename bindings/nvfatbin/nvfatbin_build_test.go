package nvfatbin_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// compileSaxpy returns NVRTC's CUBIN for arch sm_XX, or its PTX for compute_XX.
func compileSaxpy(t *testing.T, arch string) []byte {
	t.Helper()
	p, err := nvrtc.CreateProgram(testenv.SeedSaxpy, "fatbin_saxpy.cu", 0, nil, nil)
	if err != nil {
		t.Fatalf("nvrtc.CreateProgram: %v", err)
	}
	defer nvrtc.DestroyProgram(&p)
	if err := nvrtc.CompileProgram(p, 1, []string{"-arch=" + arch}); err != nil {
		t.Fatalf("nvrtc.CompileProgram(-arch=%s): %v", arch, err)
	}
	var out []byte
	if strings.HasPrefix(arch, "sm_") {
		out, err = nvrtc.CUBIN(p)
	} else {
		out, err = nvrtc.PTX(p)
	}
	if err != nil || len(out) == 0 {
		t.Fatalf("nvrtc output for %s: %d bytes, %v", arch, len(out), err)
	}
	return out
}

// session creates a handle, holds the OS thread for it, and destroys it
// when the test ends.
func session(t *testing.T, opts ...string) nvfatbin.Handle {
	t.Helper()
	runtime.LockOSThread()
	h, err := nvfatbin.Create(opts, uint64(len(opts)))
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("Create(%q): %v", opts, err)
	}
	t.Cleanup(func() {
		defer runtime.UnlockOSThread()
		if err := nvfatbin.Destroy(&h); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	})
	return h
}

// cuobjdump finds the tool on PATH, else in <repo>/.cuda/bin (made by
// scripts/setup-cuda.sh), walking up from the package directory.
func cuobjdump(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("cuobjdump"); err == nil {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".cuda", "bin", "cuobjdump")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	t.Fatalf("cuobjdump is neither on PATH nor in a .cuda/bin above %s: run scripts/setup-cuda.sh", dir)
	return ""
}

var listRE = regexp.MustCompile(`^(ELF|PTX) file\s+\d+:\s+(\S+)$`)

func TestFatbinTwoCubinsOnePTX(t *testing.T) {
	sm80, sm90 := compileSaxpy(t, "sm_80"), compileSaxpy(t, "sm_90")
	ptx90 := string(compileSaxpy(t, "compute_90"))

	h := session(t, "-cuda")
	if err := nvfatbin.AddCubin(h, unsafe.Pointer(&sm80[0]), uint64(len(sm80)), "80", "saxpy_80.cubin"); err != nil {
		t.Fatalf("AddCubin(80): %v", err)
	}
	if err := nvfatbin.AddCubin(h, unsafe.Pointer(&sm90[0]), uint64(len(sm90)), "90", "saxpy_90.cubin"); err != nil {
		t.Fatalf("AddCubin(90): %v", err)
	}
	if err := nvfatbin.AddPTX(h, ptx90, uint64(len(ptx90)), "90", "saxpy_90.ptx", ""); err != nil {
		t.Fatalf("AddPTX(90): %v", err)
	}
	fatbin, err := nvfatbin.Bytes(h)
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	// A fatbin starts with the magic 0xBA55ED50, little-endian.
	if len(fatbin) < 16 || string(fatbin[:4]) != "\x50\xed\x55\xba" {
		t.Fatalf("fatbin has no fatbin magic: % x", fatbin[:min(16, len(fatbin))])
	}

	file := filepath.Join(t.TempDir(), "saxpy.fatbin")
	if err := os.WriteFile(file, fatbin, 0o644); err != nil {
		t.Fatal(err)
	}
	tool := cuobjdump(t)
	out, err := exec.Command(tool, "-lelf", "-lptx", file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -lelf -lptx: %v\n%s", tool, err, out)
	}
	t.Logf("cuobjdump:\n%s", out)
	var elfs, ptxs []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		m := listRE.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		if m[1] == "ELF" {
			elfs = append(elfs, m[2])
		} else {
			ptxs = append(ptxs, m[2])
		}
	}
	// Entries are named <file>.<n>.sm_XX.{cubin,ptx}.
	archOf := func(name string) string {
		parts := strings.Split(name, ".")
		if len(parts) < 2 {
			return name
		}
		return parts[len(parts)-2]
	}
	var elfArchs, ptxArchs []string
	for _, e := range elfs {
		elfArchs = append(elfArchs, archOf(e))
	}
	for _, p := range ptxs {
		ptxArchs = append(ptxArchs, archOf(p))
	}
	slices.Sort(elfArchs)
	if !slices.Equal(elfArchs, []string{"sm_80", "sm_90"}) {
		t.Errorf("ELF entries %v (archs %v), want exactly sm_80 and sm_90", elfs, elfArchs)
	}
	for _, id := range []string{"saxpy_80.sm_80.cubin", "saxpy_90.sm_90.cubin"} {
		if !slices.Contains(elfs, id) {
			t.Errorf("ELF entries %v lack %s (identifier.arch.cubin)", elfs, id)
		}
	}
	if !slices.Equal(ptxArchs, []string{"sm_90"}) {
		t.Errorf("PTX entries %v (archs %v), want exactly one for sm_90", ptxs, ptxArchs)
	}
}

func TestAddTileIRNeeds131(t *testing.T) {
	major, minor, err := nvfatbin.Version()
	if err != nil {
		t.Fatal(err)
	}
	h := session(t)
	code := []byte("not tile IR")
	err = nvfatbin.AddTileIR(h, unsafe.Pointer(&code[0]), uint64(len(code)), "tile", "")
	if major < 13 || major == 13 && minor < 1 {
		var m *nvfatbin.MissingFunctionError
		if !errors.As(err, &m) {
			t.Fatalf("AddTileIR with nvFatbin %d.%d: %v (%T), want *MissingFunctionError", major, minor, err, err)
		}
		if m.Need != "13.1" || m.Func != "nvFatbinAddTileIR" {
			t.Errorf("MissingFunctionError Func %q Need %q, want nvFatbinAddTileIR 13.1", m.Func, m.Need)
		}
		if want := fmt.Sprintf("%d.%d", major, minor); m.Have != want {
			t.Errorf("MissingFunctionError Have %q, want %q", m.Have, want)
		}
		if !strings.Contains(m.Error(), "13.1") {
			t.Errorf("message %q does not name 13.1", m.Error())
		}
		return
	}
	var m *nvfatbin.MissingFunctionError
	if errors.As(err, &m) {
		t.Errorf("AddTileIR with nvFatbin %d.%d: %v", major, minor, err)
	}
}

func TestAddCubinBadArch(t *testing.T) {
	cubin := compileSaxpy(t, "sm_80")
	h := session(t)
	err := nvfatbin.AddCubin(h, unsafe.Pointer(&cubin[0]), uint64(len(cubin)), "sm_eighty", "bad.cubin")
	if !errors.Is(err, nvfatbin.ErrorInvalidArch) {
		t.Fatalf("AddCubin with arch %q: %v, want NVFATBIN_ERROR_INVALID_ARCH", "sm_eighty", err)
	}
	var e *nvfatbin.Error
	if !errors.As(err, &e) || e.Func != "nvFatbinAddCubin" || e.Message == "" {
		t.Errorf("error %#v: want *Error from nvFatbinAddCubin with a message", err)
	}
	// An arch that is valid but not the CUBIN's: ELF arch mismatch.
	err = nvfatbin.AddCubin(h, unsafe.Pointer(&cubin[0]), uint64(len(cubin)), "90", "wrong.cubin")
	if !errors.Is(err, nvfatbin.ErrorElfArchMismatch) {
		t.Errorf("AddCubin of an sm_80 CUBIN as 90: %v, want NVFATBIN_ERROR_ELF_ARCH_MISMATCH", err)
	}
}

func TestVersion(t *testing.T) {
	// CI installs CUDA 12.4 (scripts/setup-cuda.sh); another install must be 12.4+.
	major, minor := bindtest.AtLeast(t, "nvFatbin", nvfatbin.Version, 12, 4)
	if os.Getenv("CUDAGO_LOCAL_CUDA") != "" || localInstall(t) {
		if major != 12 || minor != 4 {
			t.Errorf("Version = %d.%d from the project's CUDA 12.4 install, want 12.4", major, minor)
		}
	}
}

// localInstall says whether a .cuda/root above the package directory will
// supply the libraries (no CUDA_HOME/CUDA_PATH/override in the way).
func localInstall(t *testing.T) bool {
	for _, v := range []string{"CUDAGO_NVFATBIN_PATH", "CUDA_HOME", "CUDA_PATH"} {
		if os.Getenv(v) != "" {
			return false
		}
	}
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".cuda", "root")); err == nil && fi.IsDir() {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
