package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/pathfinder"
)

// runCmd runs cudago in-process and returns its exit status and output.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// doctorJSON runs `cudago doctor -json` (plus extra flags) and decodes the
// report into the documented field names, not into doctorReport, so a
// renamed field breaks the test.
func doctorJSON(t *testing.T, extra ...string) (int, map[string]any) {
	t.Helper()
	code, stdout, stderr := runCmd(t, append([]string{"doctor", "--json"}, extra...)...)
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor --json printed invalid JSON: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return code, rep
}

func TestDoctorJSON(t *testing.T) {
	code, rep := doctorJSON(t)
	if code != exitOK {
		t.Fatalf("doctor --json exited %d, want 0", code)
	}
	for _, k := range []string{"schema", "go", "os", "arch", "libraries", "files", "warnings", "driver", "gpus", "no_gpu_reason", "gds"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report lacks field %q", k)
		}
	}
	if rep["schema"] != float64(1) {
		t.Errorf("schema = %v, want 1", rep["schema"])
	}

	libs, _ := rep["libraries"].([]any)
	byName := map[string]map[string]any{}
	for _, l := range libs {
		m := l.(map[string]any)
		byName[m["name"].(string)] = m
		for _, k := range []string{"description", "env_var", "sonames", "found", "ok", "path", "soname", "found_by",
			"version", "version_error", "check_error", "notes", "error", "tried", "cause", "fix", "cuda", "unavailable"} {
			if _, ok := m[k]; !ok {
				t.Errorf("library %v lacks field %q", m["name"], k)
			}
		}
		if m["found"] == false && m["unavailable"] == "" && (m["fix"] == "" || len(m["tried"].([]any)) == 0) {
			t.Errorf("missing library %v has no fix or no list of places tried: %v", m["name"], m)
		}
	}
	for _, want := range []string{"cuda", "nvrtc", "nvJitLink", "nvfatbin", "nvvm", "cufile",
		"cudart", "cublasLt", "cublas", "cufft", "curand", "cusparse", "cusolver", "nvToolsExt", "nccl",
		"cupti", "cudnn", "cutensor", "cudla"} {
		if byName[want] == nil {
			t.Errorf("no entry for library %q", want)
		} else if byName[want]["description"] == "" {
			t.Errorf("library %q has no description", want)
		}
	}

	// The runtime and math libraries: CI's local install has them all, with
	// versions asked of the libraries themselves (no GPU needed).
	localVersions := map[string]string{"cudart": "12.4", "cublasLt": "12.4.5", "cublas": "12.4.5", "cufft": "11.2.1",
		"curand": "10.3.5", "cusparse": "12.3.1", "cusolver": "11.6.1", "nvToolsExt": "1.0.0", "nccl": "2.22.3"}
	for name, want := range localVersions {
		m := byName[name]
		if m == nil || m["found_by"] != "local install" {
			continue // a GPU machine's own CUDA: whatever it has
		}
		if m["ok"] != true || m["version"] != want {
			t.Errorf("%s from the local install: ok %v, version %q, want %s (%v)", name, m["ok"], m["version"], want, m["version_error"])
		}
	}
	if m := byName["cusolver"]; m != nil && m["found_by"] == "local install" {
		notes := fmt.Sprint(m["notes"])
		for _, dep := range []string{"libcublas.so.12", "libcublasLt.so.12", "libcusparse.so.12", "libnvJitLink.so.12"} {
			if !strings.Contains(notes, dep) {
				t.Errorf("cusolver's notes do not say %s was loaded with it: %s", dep, notes)
			}
		}
	}

	checkFilesReport(t, rep)
	if m := byName["nvrtc"]; m != nil && m["found_by"] == "local install" && m["cuda"] != "12.4" {
		t.Errorf("nvrtc of the local install: cuda %q, want 12.4", m["cuda"])
	}
	// cuDLA exists only on Tegra: elsewhere it is unavailable, with no
	// places searched.
	if m := byName["cudla"]; m != nil && runtime.GOARCH != "arm64" && os.Getenv("CUDAGO_CUDLA_PATH") == "" {
		if u, _ := m["unavailable"].(string); m["found"] != false || !strings.Contains(u, "Tegra") || len(m["tried"].([]any)) != 2 {
			t.Errorf("cudla on %s: %v", runtime.GOARCH, m)
		}
	}
	// The guard rails: one CUDA 12.4 install says nothing; anything they
	// say names its kind and libraries.
	warnings, ok := rep["warnings"].([]any)
	if !ok {
		t.Fatalf("warnings = %#v, want a list (never null)", rep["warnings"])
	}
	for _, w := range warnings {
		m := w.(map[string]any)
		t.Logf("warning: %v", m["text"])
		switch m["kind"] {
		case "newer-than-driver", "cuda-mix", "cuda-path-home":
		default:
			t.Errorf("warning of kind %v: %v", m["kind"], m)
		}
		if libs, _ := m["libraries"].([]any); libs == nil || m["text"] == "" {
			t.Errorf("warning without libraries or text: %v", m)
		}
	}
	if m := byName["nvrtc"]; m != nil && m["found_by"] == "local install" && os.Getenv("CUDA_PATH") == "" && os.Getenv("CUDA_HOME") == "" && len(warnings) != 0 {
		t.Errorf("the local CUDA 12.4 install alone has warnings: %v", warnings)
	}

	// NVRTC: CI installs CUDA 12.4 with scripts/setup-cuda.sh; a GPU machine
	// has its own toolkit, whose version may differ.
	nvrtc := byName["nvrtc"]
	if nvrtc == nil {
		t.FailNow()
	}
	if nvrtc["found"] != true || nvrtc["ok"] != true {
		t.Fatalf("nvrtc not found or failed its check (run scripts/setup-cuda.sh): %v", nvrtc)
	}
	ver, _ := nvrtc["version"].(string)
	if nvrtc["found_by"] == "local install" {
		if ver != "12.4" {
			t.Errorf("nvrtc from the local install has version %q, want 12.4", ver)
		}
	} else if major, _, _ := strings.Cut(ver, "."); atoi(major) < 12 {
		t.Errorf("nvrtc version %q (found by %v), want 12 or newer", ver, nvrtc["found_by"])
	}
	if p, _ := nvrtc["path"].(string); !strings.Contains(p, "libnvrtc") {
		t.Errorf("nvrtc path = %q", p)
	}

	gpus, ok := rep["gpus"].([]any)
	if !ok {
		t.Fatalf("gpus = %#v, want a list (never null)", rep["gpus"])
	}
	checkGDSReport(t, rep, byName["cufile"], len(gpus) > 0)
	reason, _ := rep["no_gpu_reason"].(string)
	drv, _ := rep["driver"].(map[string]any)
	if len(gpus) == 0 {
		if os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
			t.Fatalf("CUDAGO_REQUIRE_GPU=1 but doctor found no GPU: %s", reason)
		}
		// Without a GPU, cuInit fails with CUDA_ERROR_NO_DEVICE whenever a
		// libcuda loads (the local install provides one).
		if drv["loaded"] == true && !strings.Contains(reason, "CUDA_ERROR_NO_DEVICE") {
			t.Errorf("no GPU, and the reason %q does not mention CUDA_ERROR_NO_DEVICE (driver: %v)", reason, drv)
		}
		if reason == "" {
			t.Error("no GPU and no reason given")
		}
		t.Logf("no GPU: %s", reason)
		return
	}
	if reason != "" {
		t.Errorf("%d GPUs but no_gpu_reason = %q", len(gpus), reason)
	}
	if v, _ := drv["cuda_version"].(string); v == "" {
		t.Errorf("GPUs present but the driver's CUDA version is unknown: %v", drv)
	}
	for _, g := range gpus {
		m := g.(map[string]any)
		t.Logf("GPU %v: %v, compute capability %v, %.0f bytes, %v SMs, PCI %v, %v",
			m["index"], m["name"], m["compute_capability"], m["total_memory_bytes"], m["multiprocessors"], m["pci_bus_id"], m["uuid"])
		if name, _ := m["name"].(string); name == "" {
			t.Errorf("GPU %v has no name: %v", m["index"], m)
		}
		major, _ := m["cc_major"].(float64)
		minor, _ := m["cc_minor"].(float64)
		if major*10+minor < 70 {
			t.Errorf("GPU %v compute capability %v.%v, want >= 7.0", m["index"], major, minor)
		}
		if mem, _ := m["total_memory_bytes"].(float64); mem <= 0 {
			t.Errorf("GPU %v total memory %v", m["index"], m["total_memory_bytes"])
		}
		if u, _ := m["uuid"].(string); !strings.HasPrefix(u, "GPU-") || len(u) != len("GPU-")+36 {
			t.Errorf("GPU %v UUID %q", m["index"], u)
		}
		if errs, _ := m["errors"].([]any); len(errs) > 0 {
			t.Errorf("GPU %v queries failed: %v", m["index"], errs)
		}
	}
}

// checkGDSReport checks doctor's GPUDirect Storage section: every field,
// a version where libcufile loaded, and a driver opened only with a GPU.
func checkGDSReport(t *testing.T, rep map[string]any, cufileLib map[string]any, withGPU bool) {
	t.Helper()
	g, ok := rep["gds"].(map[string]any)
	if !ok {
		t.Fatalf("gds = %#v, want an object", rep["gds"])
	}
	for _, k := range []string{"cufile_version", "cufile_error", "nvidia_fs", "nvidia_fs_version", "config_path", "config_found",
		"config_error", "allow_compat_mode", "force_compat_mode", "mode", "summary", "driver_opened", "driver_error", "max_direct_io_size"} {
		if _, ok := g[k]; !ok {
			t.Errorf("gds lacks field %q", k)
		}
	}
	switch g["mode"] {
	case "gpudirect", "compat", "unavailable":
	default:
		t.Errorf("gds mode %q", g["mode"])
	}
	if g["summary"] == "" || g["config_path"] == "" {
		t.Errorf("gds: no summary or config path: %v", g)
	}
	if cufileLib != nil && cufileLib["found"] == true && (g["cufile_version"] == "" || g["cufile_error"] != "") {
		t.Errorf("libcufile loaded but gds has no version: %v", g)
	}
	if cufileLib != nil && cufileLib["found_by"] == "local install" && g["cufile_version"] != "1.9" {
		t.Errorf("libcufile of the local install: gds version %v, want 1.9", g["cufile_version"])
	}
	if !withGPU && (g["driver_opened"] != false || g["driver_error"] != "") {
		t.Errorf("no GPU, but the cuFile driver was opened or tried: %v", g)
	}
	if withGPU && g["driver_opened"] != true && g["driver_error"] == "" {
		t.Errorf("a GPU, but the cuFile driver neither opened nor said why: %v", g)
	}
	t.Logf("GPUDirect Storage: %v", g["summary"])
	checkUdevReport(t, g["udev"])
}

// checkUdevReport checks doctor's udev entries against sysfs and the udev
// database itself: the device under each folder is a real block device,
// the record is named by its numbers, and a missing record comes with the
// fix, its file and its two lines.
func checkUdevReport(t *testing.T, v any) {
	t.Helper()
	entries, ok := v.([]any)
	if !ok || len(entries) == 0 {
		t.Fatalf("gds udev = %#v, want entries for the current and the temporary folder", v)
	}
	for _, e := range entries {
		u, _ := e.(map[string]any)
		for _, k := range []string{"dir", "device", "fs_type", "source", "record", "ok", "problem", "fix"} {
			if _, ok := u[k]; !ok {
				t.Errorf("udev entry lacks %q: %v", k, u)
			}
		}
		dev, _ := u["device"].(string)
		rec, _ := u["record"].(string)
		fix, _ := u["fix"].(string)
		if dev == "" {
			if u["ok"] != false || u["problem"] == "" || rec != "" {
				t.Errorf("no block device, but: %v", u)
			}
			continue
		}
		if _, err := os.Stat("/sys/dev/block/" + dev); err != nil {
			t.Errorf("udev entry names device %s, which sysfs lacks: %v", dev, err)
		}
		if rec != "/run/udev/data/b"+dev {
			t.Errorf("record %q for device %s", rec, dev)
		}
		b, err := os.ReadFile(rec)
		complete := err == nil && strings.Contains(string(b), "E:ID_FS_USAGE=") && strings.Contains(string(b), "E:ID_FS_TYPE=")
		if u["ok"] != complete {
			t.Errorf("udev entry ok=%v, but %s complete=%t: %v", u["ok"], rec, complete, u)
		}
		if !complete {
			for _, w := range []string{rec, "E:ID_FS_USAGE=filesystem", fmt.Sprintf("E:ID_FS_TYPE=%v", u["fs_type"])} {
				if !strings.Contains(fix, w) {
					t.Errorf("udev fix lacks %q: %s", w, fix)
				}
			}
		}
	}
}

func TestDoctorRequireGPU(t *testing.T) {
	code, rep := doctorJSON(t, "--require-gpu")
	want := exitOK
	if gpus, _ := rep["gpus"].([]any); len(gpus) == 0 {
		want = exitFail
	}
	if code != want {
		t.Errorf("doctor --require-gpu exited %d, want %d (gpus: %v)", code, want, rep["gpus"])
	}
}

func TestDoctorText(t *testing.T) {
	code, stdout, stderr := runCmd(t, "doctor")
	if code != exitOK {
		t.Fatalf("doctor exited %d; stderr:\n%s", code, stderr)
	}
	t.Log(stdout) // the whole report, with -v
	for _, want := range []string{"Libraries", "nvrtc", "Headers, tools and device libraries", "  nvcc ", "  libdevice ", "Compatibility\n",
		"Driver", "GPUs", "libraries found", "GPUDirect Storage", "  mode:", "  udev:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "no GPU: ") && !strings.Contains(stdout, "compute capability:") {
		t.Errorf("doctor output neither lists a GPU nor says why there is none:\n%s", stdout)
	}
}

// checkFilesReport checks doctor's headers, tools and device libraries:
// every field, in pathfinder's order; the local install's are found with
// their versions, and a missing one lists the places searched and a fix.
func checkFilesReport(t *testing.T, rep map[string]any) {
	t.Helper()
	files, ok := rep["files"].([]any)
	if !ok || len(files) != len(pathfinder.Artifacts()) {
		t.Fatalf("files = %#v, want %d entries", rep["files"], len(pathfinder.Artifacts()))
	}
	local := map[string]string{"cuda-headers": "12.4", "nccl-headers": "2.22.3", "nvcc": "12.4.", "nvdisasm": "12.4.", "cuobjdump": "12.4.", "cudadevrt": "", "libdevice": ""}
	for i, f := range files {
		m := f.(map[string]any)
		for _, k := range []string{"name", "description", "env_var", "file", "found", "path", "found_by", "version", "version_error", "error", "tried", "fix"} {
			if _, ok := m[k]; !ok {
				t.Errorf("file %v lacks field %q", m["name"], k)
			}
		}
		if m["name"] != pathfinder.Artifacts()[i].String() || m["description"] == "" {
			t.Errorf("file %d is %v (%v), want %s", i, m["name"], m["description"], pathfinder.Artifacts()[i])
		}
		if m["found"] == false && (m["fix"] == "" || len(m["tried"].([]any)) == 0) {
			t.Errorf("missing %v has no fix or no places: %v", m["name"], m)
		}
		want, ok := local[m["name"].(string)]
		if ok && m["found_by"] == "local install" {
			if v, _ := m["version"].(string); !strings.HasPrefix(v, want) || (want == "" && v != "") {
				t.Errorf("%v of the local install: version %q, want %s", m["name"], v, want)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK || !strings.Contains(stdout, "doctor") || !strings.Contains(stdout, "Usage:") || stderr != "" {
			t.Errorf("cudago %v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"doctor", "-h"}, {"doctor", "--help"}, {"help", "doctor"}} {
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK || !strings.Contains(stdout, "usage: cudago doctor") || !strings.Contains(stdout, "-json") ||
			!strings.Contains(stdout, "-require-gpu") || stderr != "" {
			t.Errorf("cudago %v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "Usage:"},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand"`},
		{[]string{"help", "nosuchcommand"}, `unknown command "nosuchcommand"`},
		{[]string{"-json"}, "flag -json before a command"},
		{[]string{"doctor", "-nosuchflag"}, "flag provided but not defined: -nosuchflag"},
		{[]string{"doctor", "extra"}, `unexpected argument "extra"`},
	} {
		code, stdout, stderr := runCmd(t, tc.args...)
		if code != exitUsage {
			t.Errorf("cudago %q exited %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("cudago %q: stderr lacks %q:\n%s", tc.args, tc.want, stderr)
		}
		if stdout != "" {
			t.Errorf("cudago %q wrote to stdout on a usage error:\n%s", tc.args, stdout)
		}
	}
}

func TestFormatUUID(t *testing.T) {
	var b [16]byte
	for i := range b {
		b[i] = byte(i * 17)
	}
	const want = "GPU-00112233-4455-6677-8899-aabbccddeeff"
	if got := formatUUID(b); got != want {
		t.Errorf("formatUUID = %q, want %q", got, want)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// TestDoctorCountsEveryLibrary: doctor's help, its report and the README
// name the same libraries, as many as pathfinder knows (NCCL included).
func TestDoctorCountsEveryLibrary(t *testing.T) {
	libs := pathfinder.Libs()
	_, help, _ := runCmd(t, "doctor", "-h")
	flat := strings.Join(strings.Fields(help), " ")
	if want := fmt.Sprintf("Doctor loads the %d CUDA libraries", len(libs)); !strings.Contains(flat, want) {
		t.Errorf("doctor -h does not say %q:\n%s", want, help)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	m := regexp.MustCompile(`For each of the (\d+) libraries \(([^)]*)\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md has no sentence \"For each of the N libraries (...)\" in its doctor section")
	}
	if n := atoi(m[1]); n != len(libs) {
		t.Errorf("README.md counts %d libraries, pathfinder knows %d", n, len(libs))
	}
	for _, l := range libs {
		name := libNames[l]
		if name == "" {
			t.Errorf("%s has no name in doctor's help", l)
			continue
		}
		if !strings.Contains(flat, name) {
			t.Errorf("doctor -h does not name %s (%s)", name, l)
		}
		if !strings.Contains(m[2], name) {
			t.Errorf("README.md's doctor section does not name %s (%s): %q", name, l, m[2])
		}
		if libDescriptions[l] == "" {
			t.Errorf("%s has no description in doctor's report", l)
		}
	}
}

// TestDoctorRefusedLibrary: a library the loader refused is CANNOT LOAD,
// with the cause and its fix before the places searched, and no advice to
// run the setup script that put it there. The local install's NCCL
// (Debian trixie's) needs glibc 2.38: on Debian 12 (2.36) it is refused.
func TestDoctorRefusedLibrary(t *testing.T) {
	_, err := pathfinder.Load(pathfinder.NCCL)
	var nf *pathfinder.NotFoundError
	if !errors.As(err, &nf) || nf.Cause == nil {
		t.Skipf("NCCL is not refused by the loader here (%v)", err)
	}
	_, rep := doctorJSON(t)
	var nccl map[string]any
	for _, l := range rep["libraries"].([]any) {
		if m := l.(map[string]any); m["name"] == "nccl" {
			nccl = m
		}
	}
	if nccl == nil {
		t.Fatal("no nccl entry")
	}
	cause, _ := nccl["cause"].(string)
	fix, _ := nccl["fix"].(string)
	if nccl["found"] != false || cause != nf.Cause.String() || fix != nf.Cause.Fix || fix == "" {
		t.Errorf("nccl: found %v, cause %q, fix %q; want the pathfinder's cause %q", nccl["found"], cause, fix, nf.Cause)
	}
	if strings.Contains(fix, "setup-cuda.sh") {
		t.Errorf("the fix sends the user to the setup script that installed the refused file: %q", fix)
	}
	_, stdout, _ := runCmd(t, "doctor")
	i := strings.Index(stdout, "  nccl       CANNOT LOAD")
	if i < 0 {
		t.Fatalf("doctor does not say CANNOT LOAD for nccl:\n%s", stdout)
	}
	entry := stdout[i:]
	c, s := strings.Index(entry, "    cause: "+cause), strings.Index(entry, "    searched for")
	if c < 0 || s < 0 || c > s || !strings.Contains(entry[:s], "    fix:   ") {
		t.Errorf("doctor's nccl entry does not give the cause and the fix before the places searched:\n%s", entry)
	}
	if strings.Contains(nf.Cause.Err, "GLIBC_") && !strings.Contains(cause, "needs glibc") {
		t.Errorf("a glibc refusal is not said as such: %q", cause)
	}
}

// TestDoctorGuardRails runs doctor in a child process with a CUPTI of a
// CUDA 14 no driver supports yet (a fake libcupti.so.14, through
// CUDAGO_CUPTI_PATH) beside NVRTC of CUDA 12 or 13: the guard rails report
// the mix and a library newer than the driver, in JSON and in text.
func TestDoctorGuardRails(t *testing.T) {
	if os.Getenv("CUDAGO_DOCTOR_GUARD_CHILD") == "1" {
		doctorGuardRailsChild(t)
		return
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build the fake library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "cupti.c")
	if err := os.WriteFile(src, []byte("int cuptiGetVersion(unsigned *v) { *v = 140; return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libcupti.so.14")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDoctorGuardRails$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGO_DOCTOR_GUARD_CHILD=1", "CUDAGO_CUPTI_PATH="+lib)
	out, err := cmd.CombinedOutput()
	if _, why, skipped := strings.Cut(string(out), "child skip: "); skipped && err == nil {
		t.Skip(strings.SplitN(why, "\n", 2)[0])
	}
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func doctorGuardRailsChild(t *testing.T) {
	_, rep := doctorJSON(t)
	drv, _ := rep["driver"].(map[string]any)
	var nvrtc map[string]any
	for _, l := range rep["libraries"].([]any) {
		if m := l.(map[string]any); m["name"] == "nvrtc" {
			nvrtc = m
		}
	}
	nvrtcCUDA, _ := nvrtc["cuda"].(string)
	driverCUDA, _ := drv["cuda_version"].(string)
	if nvrtc == nil || nvrtcCUDA == "" || driverCUDA == "" {
		why := fmt.Sprintf("no NVRTC or no driver version (nvrtc %v, driver %v)", nvrtc["cuda"], drv["cuda_version"])
		fmt.Println("child skip: " + why)
		t.Skip(why)
	}
	kinds := map[string]string{}
	for _, w := range rep["warnings"].([]any) {
		m := w.(map[string]any)
		kinds[m["kind"].(string)] = m["text"].(string)
	}
	major, _, _ := strings.Cut(nvrtcCUDA, ".")
	if w := kinds["cuda-mix"]; !strings.Contains(w, "CUDA "+major+": ") || !strings.Contains(w, "libnvrtc.so."+major) || !strings.Contains(w, "CUDA 14: libcupti.so.14") {
		t.Errorf("cuda-mix warning %q", w)
	}
	if w := kinds["newer-than-driver"]; !strings.Contains(w, "libcupti.so.14 (CUDA 14.x") || !strings.Contains(w, "supports CUDA "+driverCUDA) {
		t.Errorf("newer-than-driver warning %q", w)
	}
	_, stdout, _ := runCmd(t, "doctor")
	for _, want := range []string{"WARNING (cuda-mix): ", "WARNING (newer-than-driver): "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor's text lacks %q", want)
		}
	}
	if n := len(rep["warnings"].([]any)); !strings.Contains(stdout, fmt.Sprintf(", %d compatibility warning(s),", n)) {
		t.Errorf("doctor's summary does not count %d warnings", n)
	}
	if !t.Failed() {
		fmt.Println("child ok")
	}
}
