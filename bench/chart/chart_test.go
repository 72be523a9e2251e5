package chart

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden chart in ../testdata and docs/benchmarks.svg")

const (
	fixture    = "../testdata/cudagobench-2026-11-23.json"
	pyFixture  = "../testdata/python-2026-11-23.json"
	golden     = "../testdata/chart-2026-11-23.svg"
	libFixture = "../testdata/libraries-2026-11-27.json"

	// The chart of docs/benchmarks.md: the core run of round two and the
	// math libraries.
	docsFixture   = "../testdata/cudagobench-2026-11-23-1744.json"
	docsPyFixture = "../testdata/python-2026-11-23-1743.json"
	docsChart     = "../../docs/benchmarks.svg"
)

func fixtures(t *testing.T) (*Report, *Python) {
	t.Helper()
	return readBoth(t, fixture, pyFixture)
}

// readBoth reads a Report and a Python file, failing t on an error.
func readBoth(t *testing.T, report, python string) (*Report, *Python) {
	t.Helper()
	r, err := ReadReport(report)
	if err != nil {
		t.Fatal(err)
	}
	py, err := ReadPython(python)
	if err != nil {
		t.Fatal(err)
	}
	return r, py
}

func libFixtures(t *testing.T) *LibReport {
	t.Helper()
	l, err := ReadLibReport(libFixture)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// texts parses b as XML and returns the root element's name and
// attributes and the content of every <text> element, in order.
func texts(t *testing.T, b []byte) (root xml.StartElement, out []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root.Name.Local == "" {
				root = tok.Copy()
			}
			in = tok.Name.Local == "text"
			if in {
				out = append(out, "")
			}
		case xml.CharData:
			if in {
				out[len(out)-1] += string(tok)
			}
		case xml.EndElement:
			in = false
		}
	}
	return root, out
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func TestSVGFixture(t *testing.T) {
	r, py := fixtures(t)
	b, err := SVG(r, py, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, txt := texts(t, b)
	if root.Name.Local != "svg" {
		t.Fatalf("root element %q, want svg", root.Name.Local)
	}
	for _, a := range root.Attr {
		if a.Name.Local == "width" && a.Value != "600pt" {
			t.Errorf("width %q, want 600pt (800 px)", a.Value)
		}
	}
	for _, s := range Series {
		if count(txt, s) != 1 {
			t.Errorf("series label %q appears %d times, want once (the legend)", s, count(txt, s))
		}
	}
	for _, c := range r.Cases {
		want := 1
		if c.OffChart {
			want = 0
		}
		if got := count(txt, c.Name); got != want {
			t.Errorf("case %s labels the axis %d times, want %d", c.Name, got, want)
		}
	}
	// Figures of every series, as the table rounds them.
	for _, v := range []string{"3.80", "3.42", "5.35", "6.44", "0.90", "54.9", "6.6", "50.6", "10.5"} {
		if !slices.Contains(txt, v) {
			t.Errorf("no bar labelled %s", v)
		}
	}
	// cuda.core has no copies and no MemPoolNoReuse, CuPy neither
	// MemPoolNoReuse nor Graph100: 4 + 1 + 2 absent bars.
	if got := count(txt, "n/a"); got != 7 {
		t.Errorf("%d bars marked n/a, want 7", got)
	}
	all := strings.Join(txt, "\n")
	for _, want := range []string{
		"lower is better", "higher is better", "Copies of 256 MiB",
		r.Line[:40], "bench_cuda_python 2026-11-23", "Written by hand", "MemAllocFree.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q", want)
		}
	}
	if bytes.Contains(b, []byte("font-family:Liberation Sans;")) {
		t.Error("a font-family without a fallback is left")
	}

	again, err := SVG(r, py, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Fatal("two charts of the same input differ")
	}
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("chart differs from %s (go test ./bench/chart -update rewrites it)", golden)
	}
}

func TestSVGWithoutPython(t *testing.T) {
	r, _ := fixtures(t)
	b, err := SVG(r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, txt := texts(t, b)
	for _, s := range Series {
		if !slices.Contains(txt, s) {
			t.Errorf("no legend entry %q", s)
		}
	}
	// Two libraries times the 11 drawn cases.
	if got := count(txt, "n/a"); got != 22 {
		t.Errorf("%d bars marked n/a, want 22", got)
	}
	if slices.Contains(txt, "5.35") {
		t.Error("a cuda.core figure without the python figures")
	}
	if !slices.Contains(txt, "n/a: no figures of cuda.core and CuPy were given (cudagobench -python).") {
		t.Error("the caption does not say why cuda.core and CuPy are n/a")
	}
}

func TestSVGFailedCaseAndOnePanel(t *testing.T) {
	r := &Report{Line: "run", Cases: []Case{
		{Name: "LaunchEmpty", GoNs: 3800, CNs: 3400},
		{Name: "LaunchSync", Error: "core: boom"},
	}}
	b, err := SVG(r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, txt := texts(t, b)
	if got := count(txt, "n/a"); got != 2+2*2 {
		t.Errorf("%d bars marked n/a, want 6 (both sides of LaunchSync, both libraries of each case)", got)
	}
	all := strings.Join(txt, "\n")
	if strings.Contains(all, "GB/s") {
		t.Error("a copy panel without copy cases")
	}
	if !slices.Contains(txt, "3.80") || !slices.Contains(txt, "LaunchSync") {
		t.Errorf("missing figures or case names: %q", txt)
	}
}

func TestSVGBadInput(t *testing.T) {
	good := func() *Report {
		return &Report{Cases: []Case{
			{Name: "LaunchEmpty", GoNs: 3800, CNs: 3400},
			{Name: "CopyH2D", GoNs: 5e6, CNs: 5e6, Bytes: 256 << 20},
		}}
	}
	for _, tc := range []struct {
		name string
		r    func() *Report
		py   *Python
		want string
	}{
		{"no cases", func() *Report { return &Report{} }, nil, "no cases"},
		{"no name", func() *Report { r := good(); r.Cases[0].Name = ""; return r }, nil, "no name"},
		{"twice", func() *Report { r := good(); r.Cases[1].Name = "LaunchEmpty"; return r }, nil, "twice"},
		{"zero time", func() *Report { r := good(); r.Cases[0].CNs = 0; return r }, nil, "not a positive"},
		{"negative bytes", func() *Report { r := good(); r.Cases[1].Bytes = -1; return r }, nil, "negative"},
		{"all off", func() *Report {
			r := good()
			r.Cases[0].OffChart, r.Cases[1].OffChart = true, true
			return r
		}, nil, "off the chart"},
		{"unknown library", good, &Python{Results: map[string]map[string]Figure{"cupy": {}}}, `unknown library "cupy"`},
		{"two figures", good, &Python{Results: map[string]map[string]Figure{"CuPy": {"LaunchEmpty": {US: 1, GBps: 2}}}}, "one positive figure"},
		{"no figure", good, &Python{Results: map[string]map[string]Figure{"CuPy": {"LaunchEmpty": {}}}}, "one positive figure"},
		{"wrong unit", good, &Python{Results: map[string]map[string]Figure{"CuPy": {"CopyH2D": {US: 3}}}}, "wrong unit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := SVG(tc.r(), tc.py, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SVG: %d bytes, error %v; want an error with %q", len(b), err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "chart: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r, py := fixtures(t)
	dir := t.TempDir()
	rp, pp := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.json")
	if err := WriteJSON(rp, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(pp, py); err != nil {
		t.Fatal(err)
	}
	r2, py2 := readBoth(t, rp, pp)
	if !reflect.DeepEqual(r, r2) {
		t.Errorf("report changed in a round trip:\n%+v\n%+v", r, r2)
	}
	if !reflect.DeepEqual(py, py2) {
		t.Errorf("python figures changed in a round trip:\n%+v\n%+v", py, py2)
	}
	if len(r.Cases) != 12 || r.Cases[4].Name != "MemAllocFree" || !r.Cases[4].OffChart || r.Cases[9].Baseline == "" {
		t.Errorf("fixture read wrongly: %+v", r.Cases)
	}
	if got := py.Results["CuPy"]["CopyH2DPinned_256MiB"].GBps; got != 50.6 {
		t.Errorf("CuPy CopyH2DPinned_256MiB = %v GB/s, want 50.6", got)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	os.WriteFile(empty, []byte(`{"line": "x", "cases": []}`), 0o644)
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "none.json"), "no such file"},
		{bad, "bad.json"},
		{empty, "no cases"},
	} {
		if _, err := ReadReport(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadReport(%s): %v, want an error with %q", tc.path, err, tc.want)
		}
	}
	if _, err := ReadPython(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("ReadPython(bad): %v", err)
	}
}

func TestSVGLibraries(t *testing.T) {
	r, py := fixtures(t)
	libs := libFixtures(t)
	b, err := SVG(r, py, libs)
	if err != nil {
		t.Fatal(err)
	}
	_, txt := texts(t, b)
	title := slices.Index(txt, "Math libraries against CuPy and PyTorch")
	if title < 0 {
		t.Fatalf("no title of the math libraries: %q", txt)
	}
	// The core section comes first, unchanged; the libraries' below it.
	caption := slices.IndexFunc(txt, func(s string) bool { return strings.HasPrefix(s, "Not drawn") })
	if i := caption; i < 0 || i > title {
		t.Errorf("the core section's caption is at %d, the libraries' title at %d", i, title)
	}
	core, lib := txt[:title], txt[title:]
	for _, s := range Series {
		if count(core, s) != 1 {
			t.Errorf("core legend label %q appears %d times, want once", s, count(core, s))
		}
	}
	for _, s := range LibSeries {
		if count(lib, s) != 1 {
			t.Errorf("library legend label %q appears %d times, want once", s, count(lib, s))
		}
	}
	for _, c := range libs.Cases {
		if got := count(lib, c.Name); got != 1 {
			t.Errorf("case %s labels the axis %d times, want once", c.Name, got)
		}
	}
	// Each library's figures, four significant digits: cudago, CuPy,
	// PyTorch of float16; FP8 against _scaled_mm; float32's three; the
	// FFTs of cudago and CuPy.
	for _, v := range []string{"868.6", "800.0", "788.1", "1612", "1583", "51.66", "51.65", "0.2770", "0.2774", "0.1904", "0.1899"} {
		if !slices.Contains(lib, v) {
			t.Errorf("no library bar labelled %s", v)
		}
	}
	// CuPy has no bfloat16, bias+GELU or FP8; PyTorch no FFT here.
	if got := count(lib, "n/a"); got != 3+3 {
		t.Errorf("%d library bars marked n/a, want 6", got)
	}
	if got := count(core, "n/a"); got != 7 {
		t.Errorf("%d core bars marked n/a, want 7", got)
	}
	all := strings.Join(lib, "\n")
	for _, want := range []string{
		"GEMM 8192³, constant inputs, TFLOP/s: higher is better", "TFLOP/s (higher is better)",
		"FFT, single precision, ms per transform: lower is better", "ms per transform (lower is better)",
		"gemm-bench 2026-11-27T02:06:03Z", "fft-bench: 3 rounds", "GEMM in TFLOP/s",
		"bfloat16+bias+GELU against PyTorch's fused torch._addmm_activation",
		"torch._scaled_mm", "n/a: the library has no such case here",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("library section lacks %q", want)
		}
	}
	without, err := SVG(r, py, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) <= len(without) || bytes.Contains(without, []byte("PyTorch")) {
		t.Error("the library section is not added by libs alone")
	}
	again, err := SVG(r, py, libs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Fatal("two charts of the same input differ")
	}
}

// TestDocsChart: docs/benchmarks.svg is what its command draws.
func TestDocsChart(t *testing.T) {
	r, py := readBoth(t, docsFixture, docsPyFixture)
	b, err := SVG(r, py, libFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	_, txt := texts(t, b)
	for _, want := range []string{"LaunchPreparedEmpty", "CopyD2HFresh_16MiB", "0.57", "20.8", "FP8 E4M3→bfloat16", "1612"} {
		if !slices.Contains(txt, want) {
			t.Errorf("no text %q", want)
		}
	}
	if *update {
		if err := os.WriteFile(docsChart, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(docsChart)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from its fixtures' chart: go run ./bench/cmd/cudagobench -from %s -python %s -libs %s -svg docs/benchmarks.svg",
			docsChart, docsFixture[3:], docsPyFixture[3:], libFixture[3:])
	}
}

func TestSVGLibrariesBadInput(t *testing.T) {
	r, _ := fixtures(t)
	good := func() *LibReport {
		return &LibReport{Cases: []LibCase{
			{Name: "float16", Panel: "GEMM", Unit: "TFLOP/s", Higher: true, Figures: map[string]float64{"cudago": 868, "CuPy": 800}},
			{Name: "C2C", Panel: "FFT", Unit: "ms", Figures: map[string]float64{"cudago": 0.277}},
		}}
	}
	for _, tc := range []struct {
		name string
		edit func(*LibReport)
		want string
	}{
		{"no cases", func(l *LibReport) { l.Cases = nil }, "no cases"},
		{"no name", func(l *LibReport) { l.Cases[1].Name = "" }, "case 1 has no name"},
		{"twice", func(l *LibReport) { l.Cases[1].Name = "float16" }, "case float16 appears twice"},
		{"no panel", func(l *LibReport) { l.Cases[0].Panel = "" }, "case float16 has no panel"},
		{"no unit", func(l *LibReport) { l.Cases[1].Unit = "" }, "case C2C has no unit"},
		{"no figures", func(l *LibReport) { l.Cases[1].Figures = nil }, "case C2C has no figures"},
		{"unknown library", func(l *LibReport) { l.Cases[0].Figures["torch"] = 1 }, `case float16: unknown library "torch"`},
		{"zero", func(l *LibReport) { l.Cases[0].Figures["CuPy"] = 0 }, "case float16: CuPy's figure 0 is not a positive number"},
		{"negative", func(l *LibReport) { l.Cases[1].Figures["cudago"] = -1 }, "case C2C: cudago's figure -1 is not"},
		{"infinite", func(l *LibReport) { l.Cases[1].Figures["cudago"] = math.Inf(1) }, "case C2C: cudago's figure +Inf is not"},
		{"unit of the panel", func(l *LibReport) { l.Cases[1].Panel = "GEMM" }, `case C2C: unit ms (lower is better) differs from TFLOP/s (higher is better) of panel "GEMM"'s case float16`},
		{"direction of the panel", func(l *LibReport) { l.Cases[1].Panel, l.Cases[1].Unit = "GEMM", "TFLOP/s" }, "differs from TFLOP/s (higher is better)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := good()
			tc.edit(l)
			b, err := SVG(r, nil, l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SVG: %d bytes, error %v; want an error with %q", len(b), err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "chart: library figures: ") {
				t.Errorf("error %q lacks the prefix", err)
			}
		})
	}
	if _, err := SVG(r, nil, good()); err != nil {
		t.Errorf("the good input: %v", err)
	}
}

func TestLibJSONRoundTrip(t *testing.T) {
	l := libFixtures(t)
	p := filepath.Join(t.TempDir(), "l.json")
	if err := WriteJSON(p, l); err != nil {
		t.Fatal(err)
	}
	l2, err := ReadLibReport(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, l2) {
		t.Errorf("library figures changed in a round trip:\n%+v\n%+v", l, l2)
	}
	if len(l.Cases) != 9 || l.Cases[0].Name != "float16" || l.Cases[5].Name != "FP8 E4M3→bfloat16" || l.Cases[8].Name != "R2C 2^24" {
		t.Fatalf("fixture read wrongly: %+v", l.Cases)
	}
	if f := l.Cases[0].Figures; f["cudago"] != 868.6 || math.Round(f["CuPy"]*10) != 8000 || math.Round(f["PyTorch"]*10) != 7881 {
		t.Errorf("float16's figures %v, want cudago 868.6, CuPy 800.0, PyTorch 788.1", f)
	}
	if c := l.Cases[7]; c.Higher || c.Unit != "ms per transform" || c.Figures["cudago"] != 0.1993 {
		t.Errorf("C2C 2-D: %+v, want 0.1993 ms per transform, lower is better", c)
	}
	if _, ok := l.Cases[6].Figures["PyTorch"]; ok {
		t.Error("a PyTorch figure for an FFT")
	}
}

func TestReadLibErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	unknown := filepath.Join(dir, "unknown.json")
	os.WriteFile(bad, []byte(`{"cases": 1}`), 0o644)
	os.WriteFile(unknown, []byte(`{"cases": [{"name": "x", "panel": "p", "unit": "u", "figures": {"cupy": 1}}]}`), 0o644)
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "none.json"), "no such file"},
		{bad, "bad.json: json: cannot unmarshal number"},
		{unknown, `unknown.json: case x: unknown library "cupy"`},
	} {
		if _, err := ReadLibReport(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadLibReport(%s): %v, want an error with %q", tc.path, err, tc.want)
		}
	}
}
