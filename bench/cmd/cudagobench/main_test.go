package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudago/cudago/bench/chart"
)

const (
	fixture   = "../../testdata/cudagobench-2026-11-23.json"
	pyFixture = "../../testdata/python-2026-11-23.json"
	golden    = "../../testdata/chart-2026-11-23.svg"

	libFixture = "../../testdata/libraries-2026-11-27.json"
	gemmLogs   = "../../testdata/logs-2026-11-27/gemm-bench"
	fftLogs    = "../../testdata/logs-2026-11-27/fft-bench"
	// docs/benchmarks.svg and what it is drawn from.
	docsFixture   = "../../testdata/cudagobench-2026-11-23-1744.json"
	docsPyFixture = "../../testdata/python-2026-11-23-1743.json"
	docsChart     = "../../../docs/benchmarks.svg"
)

// TestFrom draws the chart of a saved run: no GPU, nothing measured.
func TestFrom(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "chart.svg")
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"-from", fixture, "-python", pyFixture, "-svg", svg}, &stdout, &stderr); rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr.String())
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid SVG: %v", err)
		}
		if c, ok := tok.(xml.CharData); ok {
			text = append(text, strings.TrimSpace(string(c)))
		}
	}
	all := "\n" + strings.Join(text, "\n") + "\n"
	for _, want := range append(chart.Series[:], "LaunchEmpty", "Graph100", "CopyD2HPageable_256MiB") {
		if !strings.Contains(all, "\n"+want+"\n") {
			t.Errorf("chart has no text %q", want)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("-from's chart differs from %s", golden)
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("-from printed %q, %q; want nothing", stdout.String(), stderr.String())
	}
}

// TestLibs converts the GPU scripts' logs into the fixture, byte for
// byte, and draws docs/benchmarks.svg from the fixtures: the commands of
// docs/benchmarks.md, with no GPU.
func TestLibs(t *testing.T) {
	dir := t.TempDir()
	libs, svg := filepath.Join(dir, "libs.json"), filepath.Join(dir, "chart.svg")
	for _, args := range [][]string{
		{"-gemm-logs", gemmLogs, "-fft-logs", fftLogs, "-libs-json", libs},
		{"-from", docsFixture, "-python", docsPyFixture, "-libs", libs, "-svg", svg},
	} {
		var stdout, stderr bytes.Buffer
		if rc := run(args, &stdout, &stderr); rc != 0 || stdout.Len() != 0 || stderr.Len() != 0 {
			t.Fatalf("cudagobench %q: exit %d, %q, %q; want 0 and nothing printed", args, rc, stdout.String(), stderr.String())
		}
	}
	for got, want := range map[string]string{libs: libFixture, svg: docsChart} {
		g, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from %s", filepath.Base(got), want)
		}
	}

	// The logs straight onto the chart, without a file between.
	svg2 := filepath.Join(dir, "chart2.svg")
	var stderr bytes.Buffer
	if rc := run([]string{"-from", docsFixture, "-python", docsPyFixture, "-gemm-logs", gemmLogs, "-fft-logs", fftLogs, "-svg", svg2}, io.Discard, &stderr); rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr.String())
	}
	a, _ := os.ReadFile(svg)
	b, _ := os.ReadFile(svg2)
	if !bytes.Equal(a, b) {
		t.Error("the chart from the logs differs from the chart from their JSON")
	}
}

func TestFromErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"-from", fixture}, 1, "-from needs -svg"},
		{[]string{"-from", filepath.Join(dir, "none.json"), "-svg", filepath.Join(dir, "a.svg")}, 1, "none.json"},
		// Read before anything is measured: the error is the file's.
		{[]string{"-python", filepath.Join(dir, "py.json")}, 1, "py.json"},
		{[]string{"-from", fixture, "-svg", filepath.Join(dir, "no", "a.svg")}, 1, "no such file"},
		{[]string{"-from", fixture, "-svg", filepath.Join(dir, "a.svg"), "extra"}, 1, "unexpected arguments"},
		{[]string{"-nosuchflag"}, 2, "nosuchflag"},
		// The library figures: read or converted before anything runs.
		{[]string{"-libs", filepath.Join(dir, "libs.json")}, 1, "libs.json"},
		{[]string{"-libs", fixture}, 1, "case LaunchEmpty has no panel"}, // a Report is not a LibReport
		{[]string{"-gemm-logs", gemmLogs}, 1, "-gemm-logs and -fft-logs need -libs-json or -from"},
		{[]string{"-libs-json", filepath.Join(dir, "l.json")}, 1, "-libs-json needs -gemm-logs or -fft-logs"},
		{[]string{"-gemm-logs", gemmLogs, "-libs-json", filepath.Join(dir, "l.json"), "-svg", filepath.Join(dir, "a.svg")}, 1, "-svg needs -from"},
		{[]string{"-libs", libFixture, "-fft-logs", fftLogs, "-libs-json", filepath.Join(dir, "l.json")}, 1, "give one source"},
		{[]string{"-fft-logs", dir, "-libs-json", filepath.Join(dir, "l.json")}, 1, "found 0 and 0"},
	} {
		var stdout, stderr bytes.Buffer
		rc := run(tc.args, &stdout, &stderr)
		if rc != tc.rc || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("cudagobench %q: exit %d, %q; want exit %d and %q", tc.args, rc, stderr.String(), tc.rc, tc.want)
		}
	}
}
