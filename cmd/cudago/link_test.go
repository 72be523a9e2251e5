package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/testenv"
)

const (
	callerSrc = `
extern __device__ float helper(float);
extern "C" __global__ void k(float *x) { x[threadIdx.x] = helper(x[threadIdx.x]); }
`
	helperSrc = `
__device__ float helper(float v) { return v * 2.0f + 1.0f; }
`
)

// ltoirPair compiles the caller and the helper to LTO-IR for sm_90 with
// cudago compile and returns their paths.
func ltoirPair(t *testing.T, dir string) (a, b string) {
	t.Helper()
	a, b = filepath.Join(dir, "a.ltoir"), filepath.Join(dir, "b.ltoir")
	mustRun(t, "compile", writeFile(t, dir, "a.cu", callerSrc), "--ltoir", "-dlto", "-rdc", "-arch", "sm_90", "-o", a)
	mustRun(t, "compile", writeFile(t, dir, "b.cu", helperSrc), "--ltoir", "-dlto", "-rdc", "-arch", "sm_90", "-o", b)
	return a, b
}

func TestLinkLTOIR(t *testing.T) {
	dir := t.TempDir()
	a, b := ltoirPair(t, dir)
	out := filepath.Join(dir, "ab.cubin")
	mustRun(t, "link", a, b, "-arch", "sm_90", "-o", out)
	cubin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, sm := testenv.CubinELF(t, cubin)
	if sm != 90 {
		t.Errorf("linked cubin is for sm_%d, want sm_90", sm)
	}
	if !testenv.HasFunc(t, f, "k") {
		t.Error("linked cubin has no function k")
	}
	// The helper was inlined by link-time optimisation: no call remains.
	if testenv.HasFunc(t, f, "_Z6helperf") {
		t.Error("linked cubin still has helper as a function: was it optimised at link time?")
	}

	// --ptx gives the linked PTX.
	ptx := filepath.Join(dir, "ab.ptx")
	mustRun(t, "link", "--lto", "--ptx", "-arch", "sm_90", "-o", ptx, a, b)
	p, err := os.ReadFile(ptx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p, []byte(".target sm_90")) || !bytes.Contains(p, []byte(".entry k")) {
		t.Errorf("linked PTX lacks .target sm_90 or .entry k:\n%.500s", p)
	}

	// --kind overrides the extension of the inputs after it.
	odd := filepath.Join(dir, "a.bin")
	data, _ := os.ReadFile(a)
	if err := os.WriteFile(odd, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "kind.cubin")
	mustRun(t, "link", "-arch", "sm_90", "-o", out2, b, "--kind", "ltoir", odd)
	if c, err := os.ReadFile(out2); err != nil || !bytes.Equal(c, cubin) {
		t.Errorf("link with --kind ltoir a.bin: %v; output differs from the first link", err)
	}

	// After "--" everything is an input, even what looks like a flag, and
	// the flag -X -lto counts as --lto for --ptx.
	dash := filepath.Join(dir, "-b.ltoir")
	bdata, _ := os.ReadFile(b)
	if err := os.WriteFile(dash, bdata, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out3 := filepath.Join(dir, "dash.ptx")
	mustRun(t, "link", "-arch", "sm_90", "-X", "-lto", "--ptx", "-o", out3, "--", a, "-b.ltoir")
	if p, err := os.ReadFile(out3); err != nil || !bytes.Contains(p, []byte(".entry k")) {
		t.Errorf("link -- a -b.ltoir with -X -lto --ptx: %v\n%.300s", err, p)
	}
}

func TestLinkError(t *testing.T) {
	dir := t.TempDir()
	a, _ := ltoirPair(t, dir)
	out := filepath.Join(dir, "a.cubin")
	code, stdout, stderr := runCmd(t, "link", "-arch", "sm_90", "-o", out, a)
	if code != exitFail || stdout != "" {
		t.Errorf("link of an unresolved helper: exit %d (want 1), stdout %q", code, stdout)
	}
	for _, want := range []string{"cudago link: ", "Unresolved extern function '_Z6helperf'"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed link wrote its output")
	}
	// A missing input fails with exit 1 and names it.
	code, _, stderr = runCmd(t, "link", "-arch", "sm_90", "-o", out, filepath.Join(dir, "missing.ltoir"))
	if code != exitFail || !strings.Contains(stderr, "missing.ltoir") {
		t.Errorf("missing input: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestLinkCubins links relocatable cubins and a fatbin of the helper, the
// inputs of a link without LTO.
func TestLinkCubinsAndFatbin(t *testing.T) {
	dir := t.TempDir()
	ca, cb := filepath.Join(dir, "a.cubin"), filepath.Join(dir, "b.cubin")
	mustRun(t, "compile", writeFile(t, dir, "a.cu", callerSrc), "--cubin", "-rdc", "-arch", "sm_80", "-o", ca)
	mustRun(t, "compile", writeFile(t, dir, "b.cu", helperSrc), "--cubin", "-rdc", "-arch", "sm_80", "-o", cb)
	out := filepath.Join(dir, "ab.cubin")
	mustRun(t, "link", "-arch", "sm_80", "-o", out, ca, cb)
	c, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, sm := testenv.CubinELF(t, c)
	if sm != 80 || !testenv.HasFunc(t, f, "k") || !testenv.HasFunc(t, f, "_Z6helperf") {
		t.Errorf("linked cubin: sm_%d, k %v, helper %v", sm, testenv.HasFunc(t, f, "k"), testenv.HasFunc(t, f, "_Z6helperf"))
	}
	fb := filepath.Join(dir, "b.fatbin")
	mustRun(t, "fatbin", "-o", fb, "--cubin", "sm_80:"+cb)
	out2 := filepath.Join(dir, "ab2.cubin")
	mustRun(t, "link", "-arch", "sm_80", "-o", out2, ca, fb)
	c2, err := os.ReadFile(out2)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := testenv.CubinELF(t, c2); !testenv.HasFunc(t, f, "_Z6helperf") {
		t.Error("link with the helper from a fatbin: no helper in the cubin")
	}
}
