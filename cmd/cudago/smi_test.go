package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/system"
)

// nvmlDriver reports whether NVML initializes here (a driver is loaded).
func nvmlDriver(t *testing.T) bool {
	_, err := system.DeviceCount()
	if err != nil && testenv.OnGPUMachine() {
		t.Fatalf("CUDAGO_REQUIRE_GPU=1 but NVML: %v", err)
	}
	return err == nil
}

const noDriverLine = "cudago smi: no GPU: the NVIDIA driver is not loaded (nvml: nvmlInit: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded))\n"

// TestSmi runs cudago smi: a table with a driver; one clear line and exit
// status 1 without (CI: Debian's libnvidia-ml1, no kernel module).
func TestSmi(t *testing.T) {
	code, stdout, stderr := runCmd(t, "smi")
	if nvmlDriver(t) {
		if code != exitOK || !strings.Contains(stdout, "NVIDIA driver ") || !strings.Contains(stdout, "Memory used/total") || stderr != "" {
			t.Fatalf("smi = %d\n%s%s", code, stdout, stderr)
		}
		t.Logf("\n%s", stdout)
		return
	}
	if code != exitFail || stdout != "" || stderr != noDriverLine {
		t.Errorf("smi without a driver = %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, noDriverLine)
	}
	// -json: one object saying why.
	code, stdout, _ = runCmd(t, "smi", "-json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitFail {
		t.Fatalf("smi -json = %d, %q (%v)", code, stdout, err)
	}
	if rep["error"] != strings.TrimSuffix(strings.TrimPrefix(noDriverLine, "cudago smi: "), "\n") || len(rep["gpus"].([]any)) != 0 {
		t.Errorf("smi -json without a driver: %v", rep)
	}
	// -watch: each refresh says it again, on stdout (not a terminal: no escape codes).
	code, stdout, _ = runCmd(t, "smi", "-watch", "10ms", "-count", "3")
	if code != exitFail || stdout != noDriverLine+"\n"+noDriverLine+"\n"+noDriverLine {
		t.Errorf("smi -watch without a driver = %d, %q", code, stdout)
	}
}

func TestSmiUsage(t *testing.T) {
	for _, args := range [][]string{
		{"smi", "x"}, {"smi", "-watch", "1ms"}, {"smi", "-watch", "-1s"}, {"smi", "-count", "2"},
		{"smi", "-watch", "1s", "-count", "-1"}, {"smi", "-watch", "soon"},
	} {
		if code, _, stderr := runCmd(t, args...); code != exitUsage || !strings.Contains(stderr, "usage: cudago smi") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
}

// TestSmiTable formats a report: values, N/A for what a GPU does not
// report, and JSON nulls with the reasons.
func TestSmiTable(t *testing.T) {
	notSupported := errors.New("system: GPU 1: PowerUsage: " + system.ErrNotSupported.Error())
	ok := system.Status{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-a", PCIBusID: "00000000:18:00.0",
		Memory: system.MemoryInfo{Total: 81559 << 20, Used: 1 << 20}, Temperature: 34, PowerUsage: 70123, PowerLimit: 700000,
		SMClock: 345, MaxSMClock: 1980, MemoryClock: 2619, MaxMemoryClock: 2619,
		Utilization: system.Utilization{GPU: 7, Memory: 3}, Errs: map[string]error{}}
	partial := ok
	partial.Index, partial.Name = 1, "A very long product name that does not fit"
	partial.Errs = map[string]error{"PowerUsage": notSupported, "MaxSMClock": notSupported}
	r := &smiReport{Time: "2026-01-02T03:04:05Z", DriverVersion: "550.163.01", CUDAVersion: "12.4",
		GPUs: []smiGPU{gpuRow(ok), gpuRow(partial)}}
	var out, errb bytes.Buffer
	if code := r.write(&out, &errb, false, false); code != exitOK || errb.Len() != 0 {
		t.Fatalf("write = %d, %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	t.Logf("\n%s", out.String())
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NVIDIA driver 550.163.01, CUDA 12.4") || !strings.HasSuffix(lines[0], "2026-01-02T03:04:05Z") {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"  0  NVIDIA H100 80GB HBM3", "34C", "70W / 700W", "1MiB / 81559MiB", "7%", "3%", "345/1980", "2619/2619"},
		{"  1  A very long product name th~", "N/A / 700W", "345/N/A"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[2+i], w) {
				t.Errorf("row %d lacks %q: %q", i, w, lines[2+i])
			}
		}
	}
	if len(lines[2]) != len(lines[1]) {
		t.Errorf("row and header widths differ:\n%s\n%s", lines[1], lines[2])
	}
	out.Reset()
	if code := r.write(&out, &errb, true, false); code != exitOK {
		t.Fatal(code)
	}
	var rep struct {
		GPUs []map[string]any `json:"gpus"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.GPUs) != 2 {
		t.Fatalf("JSON %s: %v", out.String(), err)
	}
	g := rep.GPUs[1]
	if g["power_usage_w"] != nil || g["max_sm_clock_mhz"] != nil || g["power_limit_w"] != 700.0 || g["temperature_c"] != 34.0 ||
		g["errors"].(map[string]any)["PowerUsage"] != notSupported.Error() {
		t.Errorf("JSON of a GPU without power usage: %v", g)
	}
}

// TestDoctorNVML: doctor's NVML section, in JSON and text.
func TestDoctorNVML(t *testing.T) {
	_, rep := doctorJSON(t)
	n, ok := rep["nvml"].(map[string]any)
	if !ok {
		t.Fatalf("no nvml object: %v", rep["nvml"])
	}
	for _, k := range []string{"initialized", "driver_version", "driver_branch", "cuda_version", "gpus", "error"} {
		if _, ok := n[k]; !ok {
			t.Errorf("nvml lacks %q", k)
		}
	}
	_, stdout, _ := runCmd(t, "doctor")
	if nvmlDriver(t) {
		gpus, _ := n["gpus"].([]any)
		if n["initialized"] != true || n["driver_version"] == "" || len(gpus) == 0 || n["error"] != "" {
			t.Errorf("nvml with a driver: %v", n)
		}
		for _, g := range gpus {
			if m := g.(map[string]any); m["name"] == "" || !strings.HasPrefix(m["uuid"].(string), "GPU-") || m["memory_total_bytes"] == 0.0 {
				t.Errorf("nvml GPU: %v", m)
			}
		}
		if !strings.Contains(stdout, "NVML (no CUDA context)\n  driver ") {
			t.Errorf("doctor's NVML section:\n%s", stdout)
		}
		return
	}
	want := strings.TrimSuffix(strings.TrimPrefix(noDriverLine, "cudago smi: "), "\n")
	if n["initialized"] != false || n["error"] != want {
		t.Errorf("nvml without a driver: %v", n)
	}
	if !strings.Contains(stdout, "NVML (no CUDA context)\n  "+want+"\n") {
		t.Errorf("doctor's NVML section without a driver:\n%s", stdout)
	}
}
