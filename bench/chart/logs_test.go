package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The folders gemm-bench.sh and fft-bench.sh wrote in the H100 session of
// 2026-11-27, the files LibReportFromLogs reads.
const (
	gemmLogs = "../testdata/logs-2026-11-27/gemm-bench"
	fftLogs  = "../testdata/logs-2026-11-27/fft-bench"
)

// TestLibReportFromLogs: the committed fixture is the conversion of the
// committed logs, and its figures are the medians the scripts' tables
// give (table.txt and summary.md of that session).
func TestLibReportFromLogs(t *testing.T) {
	l, err := LibReportFromLogs(gemmLogs, fftLogs)
	if err != nil {
		t.Fatal(err)
	}
	if want := libFixtures(t); !reflect.DeepEqual(l, want) {
		t.Errorf("the logs give\n%+v\nthe fixture %s holds\n%+v", l, libFixture, want)
	}
	figs := map[string]map[string]float64{}
	for _, c := range l.Cases {
		figs[c.Name] = c.Figures
	}
	for _, tc := range []struct {
		name, lib string
		want      float64
	}{
		// go test's three runs 931.9, 830.8, 868.6: the median, not the
		// mean (877.1) nor the first.
		{"float16", "cudago", 868.6},
		{"bfloat16", "cudago", 882.7},
		{"bfloat16", "PyTorch", 839.7054207562707},
		{"bfloat16+bias+GELU", "cudago", 908.7},
		{"bfloat16+bias+GELU", "PyTorch", 810.2154424554298}, // torch_fused, not torch_unfused
		{"FP8 E4M3→bfloat16", "cudago", 1612},                // of 1612, 1611, 1619: not the last
		{"FP8 E4M3→bfloat16", "PyTorch", 1582.501074549999},
		{"float64", "CuPy", 64.80694739815875},
		// Rounds 0.2764, 0.2770, 0.2772 and CuPy's 0.27737, 0.27688, 0.27750.
		{"C2C 2^24", "cudago", 0.2770},
		{"C2C 2^24", "CuPy", 0.2773734511405238},
		{"R2C 2^24", "cudago", 0.1904},
	} {
		if got := figs[tc.name][tc.lib]; got != tc.want {
			t.Errorf("%s %s = %v, want %v", tc.name, tc.lib, got, tc.want)
		}
	}
	for name, lib := range map[string]string{"bfloat16": "CuPy", "FP8 E4M3→bfloat16": "CuPy", "R2C 2^24": "PyTorch"} {
		if v, ok := figs[name][lib]; ok {
			t.Errorf("%s has a %s figure %v; the logs have none", name, lib, v)
		}
	}
	for _, want := range []string{"NVIDIA H100 80GB HBM3, driver 580.159.04", "median of 3 runs", "PyTorch 2.11.0+cu130", "3 rounds", "cuFFT 12000 on both sides"} {
		if !strings.Contains(l.Line, want) {
			t.Errorf("line %q lacks %q", l.Line, want)
		}
	}
	if !strings.Contains(l.Cases[5].What, "torch._scaled_mm") {
		t.Errorf("FP8's comparison %q does not name torch._scaled_mm (py.json's torch_api)", l.Cases[5].What)
	}
}

func TestLibReportFromOneFolder(t *testing.T) {
	g, err := LibReportFromLogs(gemmLogs, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := LibReportFromLogs("", fftLogs)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) != 6 || len(f.Cases) != 3 || g.Cases[0].Panel != gemmPanel || f.Cases[0].Panel != fftPanel {
		t.Errorf("GEMM alone: %d cases, FFT alone: %d cases; want 6 and 3", len(g.Cases), len(f.Cases))
	}
	if strings.Contains(g.Line, "fft-bench") || strings.Contains(f.Line, "gemm-bench") {
		t.Errorf("lines name the other folder: %q, %q", g.Line, f.Line)
	}
}

func TestLibReportFromLogsErrors(t *testing.T) {
	read := func(t *testing.T, path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	goTxt := read(t, filepath.Join(gemmLogs, "go.txt"))
	pyJSON := read(t, filepath.Join(gemmLogs, "py.json"))
	goFFT := read(t, filepath.Join(fftLogs, "go-fft-1.log"))
	cupy := read(t, filepath.Join(fftLogs, "cupy-1.json"))
	for _, tc := range []struct {
		name      string
		gemm, fft map[string]string // files of a folder; nil: no folder
		want      string
	}{
		{"no folder", nil, nil, "no log folder given"},
		{"no go.txt", map[string]string{"py.json": pyJSON}, nil, "go.txt: no such file"},
		{"no py.json", map[string]string{"go.txt": goTxt}, nil, "py.json: no such file"},
		{"bad py.json", map[string]string{"go.txt": goTxt, "py.json": "{"}, nil, "py.json: unexpected end"},
		{"a string for a figure", map[string]string{"go.txt": goTxt, "py.json": strings.Replace(pyJSON, `"torch": 839.7054207562707`, `"torch": "fast"`, 1)}, nil,
			"py.json: bfloat16/8192x8192x8192/const torch: json: cannot unmarshal string"},
		{"no results", map[string]string{"go.txt": "PASS\n", "py.json": pyJSON}, nil, "go.txt: no benchmark results"},
		{"a case missing", map[string]string{"go.txt": strings.ReplaceAll(goTxt, "BenchmarkGEMM/float64/8192x8192x8192/const", "x"), "py.json": pyJSON}, nil,
			"go.txt: no BenchmarkGEMM/float64/8192x8192x8192/const"},
		{"no TFLOP/s", map[string]string{"go.txt": strings.Replace(goTxt, "TFLOP/s", "GB/s", 1), "py.json": pyJSON}, nil,
			"go.txt: BenchmarkGEMM/float16/8192x8192x8192/const: run 1 has no TFLOP/s"},
		{"not a number", map[string]string{"go.txt": strings.Replace(goTxt, "931.9 TFLOP/s", "x TFLOP/s", 1), "py.json": pyJSON}, nil,
			`go.txt: BenchmarkGEMM/float16/8192x8192x8192/const: "x" is not a number`},
		{"no fft logs", nil, map[string]string{"summary.md": "#"}, "want fft-bench's go-fft-N.log and cupy-N.json, found 0 and 0"},
		{"no cupy", nil, map[string]string{"go-fft-1.log": goFFT}, "found 1 and 0"},
		{"bad cupy", nil, map[string]string{"go-fft-1.log": goFFT, "cupy-1.json": "[]"}, "cupy-1.json: json: cannot unmarshal array"},
		{"an fft case missing", nil, map[string]string{"go-fft-1.log": strings.ReplaceAll(goFFT, "BenchmarkFFTR2C2e24/cudago", "x"), "cupy-1.json": cupy},
			"no BenchmarkFFTR2C2e24/cudago in go-fft-N.log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{}
			for i, files := range []map[string]string{tc.gemm, tc.fft} {
				if files == nil {
					continue
				}
				dirs[i] = t.TempDir()
				for name, body := range files {
					if err := os.WriteFile(filepath.Join(dirs[i], name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			l, err := LibReportFromLogs(dirs[0], dirs[1])
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LibReportFromLogs: %+v, %v; want an error with %q", l, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "chart: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{931.9, 830.8, 868.6}, 868.6},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tc.vs...)
		if got := median(tc.vs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.vs, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.vs) {
			t.Errorf("median reordered its input: %v", tc.vs)
		}
	}
}
