package chart

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The cases of the math libraries' chart, as the GPU scripts name them.
var (
	// gemmCases are BenchmarkGEMM's cases at 8192³ on constant inputs,
	// with the keys of bench_torch_gemm.py's figures: py.json's
	// cases[case/shape/const][key].
	gemmCases = []struct {
		bench, name, cupy, torch, what string
		torchAPI                       bool // What is PyTorch's call, py.json's torch_api
	}{
		{bench: "float16", name: "float16", cupy: "cupy", torch: "torch"},
		{bench: "bfloat16", name: "bfloat16", cupy: "cupy", torch: "torch"},
		{bench: "float32", name: "float32", cupy: "cupy", torch: "torch"},
		{bench: "float64", name: "float64", cupy: "cupy", torch: "torch"},
		{bench: "bfloat16-bias-gelu", name: "bfloat16+bias+GELU", torch: "torch_fused", what: "PyTorch's fused torch._addmm_activation"},
		{bench: "fp8-e4m3-bf16", name: "FP8 E4M3→bfloat16", torch: "torch", torchAPI: true},
	}
	// fftCases are fft's benchmarks, also bench_cupy_fft.py's case names.
	fftCases = []struct{ bench, name string }{
		{"FFTC2C2e24", "C2C 2^24"},
		{"FFTC2C2D1024x16", "C2C 2-D 1024²×16"},
		{"FFTR2C2e24", "R2C 2^24"},
	}
)

const (
	gemmShape = "8192x8192x8192"
	gemmPanel = "GEMM 8192³, constant inputs"
	fftPanel  = "FFT, single precision"
	libNote   = "GEMM in TFLOP/s (higher is better); FFT in ms per transform (lower is better), " +
		"the unit of the issue's targets. CuPy has no bfloat16 or FP8 types; " +
		"the FFTs were measured against CuPy only."
)

// LibReportFromLogs makes the math libraries' figures from the folders
// that scripts/gpu/gemm-bench.sh (go.txt: BenchmarkGEMM with
// -test.count 3, py.json: bench_torch_gemm.py's figures, gpu.txt) and
// scripts/gpu/fft-bench.sh (go-fft-N.log and cupy-N.json of each round)
// write; "" leaves that part out. cudago's figure is the median of its
// runs (rounds), CuPy's of its rounds, as the scripts' own comparisons
// (bench_torch_gemm.py --compare, bench_cupy_fft.py --compare) take them.
func LibReportFromLogs(gemmDir, fftDir string) (*LibReport, error) {
	if gemmDir == "" && fftDir == "" {
		return nil, errors.New("chart: no log folder given")
	}
	l := &LibReport{Note: libNote}
	var lines []string
	if gemmDir != "" {
		line, cases, err := gemmFromLogs(gemmDir)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		lines = append(lines, line)
		l.Cases = append(l.Cases, cases...)
	}
	if fftDir != "" {
		line, cases, err := fftFromLogs(fftDir)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		lines = append(lines, line)
		l.Cases = append(l.Cases, cases...)
	}
	l.Line = strings.Join(lines, " ")
	if err := l.Check(); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return l, nil
}

func gemmFromLogs(dir string) (string, []LibCase, error) {
	goPath := filepath.Join(dir, "go.txt")
	res, _, err := parseBench(goPath)
	if err != nil {
		return "", nil, err
	}
	var py struct {
		Meta  string                                `json:"meta"`
		Cases map[string]map[string]json.RawMessage `json:"cases"`
	}
	if err := readJSON(filepath.Join(dir, "py.json"), &py); err != nil {
		return "", nil, err
	}
	var cases []LibCase
	count := 0 // runs of a case
	for _, g := range gemmCases {
		key := g.bench + "/" + gemmShape + "/const"
		c := LibCase{Name: g.name, Panel: gemmPanel, Unit: "TFLOP/s", Higher: true, Figures: map[string]float64{}}
		runs := res["BenchmarkGEMM/"+key]
		if len(runs) == 0 {
			return "", nil, fmt.Errorf("%s: no BenchmarkGEMM/%s", goPath, key)
		}
		tf, err := unitRuns(runs, "TFLOP/s")
		if err != nil {
			return "", nil, fmt.Errorf("%s: BenchmarkGEMM/%s: %w", goPath, key, err)
		}
		c.Figures["cudago"] = median(tf)
		count = max(count, len(tf))
		figs := py.Cases[key]
		for lib, k := range map[string]string{"CuPy": g.cupy, "PyTorch": g.torch} {
			if k == "" || figs[k] == nil {
				continue
			}
			var v float64
			if err := json.Unmarshal(figs[k], &v); err != nil {
				return "", nil, fmt.Errorf("%s: %s %s: %w", filepath.Join(dir, "py.json"), key, k, err)
			}
			c.Figures[lib] = v
		}
		c.What = g.what
		if g.torchAPI {
			api := "torch._scaled_mm" // what bench_torch_gemm.py calls, if py.json does not say
			if raw := figs["torch_api"]; raw != nil {
				if err := json.Unmarshal(raw, &api); err != nil {
					return "", nil, fmt.Errorf("%s: %s torch_api: %w", filepath.Join(dir, "py.json"), key, err)
				}
			}
			c.What = "PyTorch's " + api
		}
		cases = append(cases, c)
	}
	line := fmt.Sprintf("gemm-bench%s: cudago's BenchmarkGEMM, median of %d runs; CuPy and PyTorch %s.",
		gpuLine(filepath.Join(dir, "gpu.txt")), count, py.Meta)
	return line, cases, nil
}

// gpuLine is " date, GPU, driver D" from the gpu.txt of gemm-bench.sh
// (the date, then nvidia-smi's name, driver, clock and power limit), or
// "" without one.
func gpuLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var parts []string
	for l := range strings.Lines(string(b)) {
		f := strings.Split(strings.TrimSpace(l), ", ")
		switch {
		case f[0] == "":
		case len(f) >= 2: // name, driver_version, ...
			parts = append(parts, f[0], "driver "+f[1])
		default:
			parts = append(parts, f[0])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

var cufftVersion = regexp.MustCompile(`cufftGetVersion (\d+)`)

func fftFromLogs(dir string) (string, []LibCase, error) {
	goLogs, err := filepath.Glob(filepath.Join(dir, "go-fft-[0-9]*.log"))
	if err != nil {
		return "", nil, err
	}
	cupyFiles, err := filepath.Glob(filepath.Join(dir, "cupy-[0-9]*.json"))
	if err != nil {
		return "", nil, err
	}
	if len(goLogs) == 0 || len(cupyFiles) == 0 {
		return "", nil, fmt.Errorf("%s: want fft-bench's go-fft-N.log and cupy-N.json, found %d and %d", dir, len(goLogs), len(cupyFiles))
	}
	res := map[string][]map[string]float64{}
	var goLib []string
	for _, p := range goLogs {
		r, libs, err := parseBench(p)
		if err != nil {
			return "", nil, err
		}
		for k, v := range r {
			res[k] = append(res[k], v...)
		}
		goLib = append(goLib, libs...)
	}
	type cupyCase struct {
		MS float64 `json:"ms"`
	}
	var ident struct {
		CuPy   string `json:"cupy"`
		Device string `json:"device"`
		CuFFT  int    `json:"cufft_version"`
	}
	cupy := map[string][]float64{} // ms per round, by case
	for i, p := range cupyFiles {
		var j struct {
			Identity json.RawMessage     `json:"identity"`
			Cases    map[string]cupyCase `json:"cases"`
		}
		if err := readJSON(p, &j); err != nil {
			return "", nil, err
		}
		if i == 0 && j.Identity != nil {
			if err := json.Unmarshal(j.Identity, &ident); err != nil {
				return "", nil, fmt.Errorf("%s: identity: %w", p, err)
			}
		}
		for k, v := range j.Cases {
			if v.MS != 0 {
				cupy[k] = append(cupy[k], v.MS)
			}
		}
	}
	var cases []LibCase
	for _, f := range fftCases {
		c := LibCase{Name: f.name, Panel: fftPanel, Unit: "ms per transform", Figures: map[string]float64{}}
		runs := res["Benchmark"+f.bench+"/cudago"]
		if len(runs) == 0 {
			return "", nil, fmt.Errorf("%s: no Benchmark%s/cudago in go-fft-N.log", dir, f.bench)
		}
		ms, err := unitRuns(runs, "ms/transform")
		if err != nil {
			return "", nil, fmt.Errorf("%s: Benchmark%s/cudago: %w", dir, f.bench, err)
		}
		c.Figures["cudago"] = median(ms)
		if ms := cupy[f.bench]; len(ms) > 0 {
			c.Figures["CuPy"] = median(ms)
		}
		cases = append(cases, c)
	}
	// The cuFFT each side ran: a gap can be the library's.
	var versions []string
	for _, l := range goLib {
		if m := cufftVersion.FindStringSubmatch(l); m != nil && !slices.Contains(versions, m[1]) {
			versions = append(versions, m[1])
		}
	}
	lib := fmt.Sprintf("cuFFT %s (cudago), %d (CuPy)", strings.Join(versions, ", "), ident.CuFFT)
	if len(versions) == 1 && versions[0] == strconv.Itoa(ident.CuFFT) {
		lib = "cuFFT " + versions[0] + " on both sides"
	}
	line := fmt.Sprintf("fft-bench: %d rounds of cudago's go test and CuPy in turn, medians; %s, CuPy %s, %s.",
		len(cupyFiles), ident.Device, ident.CuPy, lib)
	return line, cases, nil
}

// benchLine is one result line of go test -bench: the name without its
// GOMAXPROCS suffix, the iterations, then value and unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// parseBench reads the benchmark results in go test's output at path:
// each run's figures by unit, under the benchmark's name; and the
// libcufft lines fft's benchmarks log.
func parseBench(path string) (map[string][]map[string]float64, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	res := map[string][]map[string]float64{}
	var libs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if _, lib, ok := strings.Cut(line, "libcufft:"); ok {
			libs = append(libs, strings.TrimSpace(lib))
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		run := map[string]float64{}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %q is not a number", path, m[1], fields[i])
			}
			run[fields[i+1]] = v
		}
		res[m[1]] = append(res[m[1]], run)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(res) == 0 {
		return nil, nil, fmt.Errorf("%s: no benchmark results", path)
	}
	return res, libs, nil
}

// unitRuns is unit's figure of each run, or an error naming the first
// run without it.
func unitRuns(runs []map[string]float64, unit string) ([]float64, error) {
	vs := make([]float64, len(runs))
	for i, r := range runs {
		v, ok := r[unit]
		if !ok {
			return nil, fmt.Errorf("run %d has no %s", i+1, unit)
		}
		vs[i] = v
	}
	return vs, nil
}

// median is the median of vs, not empty: the mean of the two middle ones
// for an even count, as Python's statistics.median.
func median(vs []float64) float64 {
	vs = slices.Sorted(slices.Values(vs))
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
