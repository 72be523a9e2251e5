package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
)

const saxpySrc = `
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = a * x[i] + y[i];
}
`

// writeFile writes content to dir/name and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustRun runs cudago in-process and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCmd(t, args...)
	if code != exitOK {
		t.Fatalf("cudago %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// tool runs an NVIDIA tool in dir and returns its standard output.
func tool(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, name), args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

func TestCompileFatbin(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	out := filepath.Join(dir, "k.fatbin")
	// Flags after the file, as in the documented synopsis.
	mustRun(t, "compile", src, "-arch", "sm_80,sm_90", "-o", out)

	want := "ELF file    1: saxpy.sm_80.cubin\n" +
		"ELF file    2: saxpy.sm_90.cubin\n" +
		"PTX file    1: saxpy.sm_90.ptx\n"
	ls := mustRun(t, "ls", out)
	if ls != want {
		t.Errorf("cudago ls:\n%s\nwant:\n%s", ls, want)
	}
	cuobjdump := tool(t, dir, "cuobjdump", "-lelf", "-lptx", out)
	if cuobjdump != ls {
		t.Errorf("cuobjdump -lelf -lptx:\n%s\ncudago ls:\n%s", cuobjdump, ls)
	}

	// The extracted images are what they claim to be.
	xdir := filepath.Join(dir, "x")
	mustRun(t, "extract", out, "-o", xdir)
	for name, sm := range map[string]int{"saxpy.sm_80.cubin": 80, "saxpy.sm_90.cubin": 90} {
		checkSaxpyCubin(t, filepath.Join(xdir, name), sm)
	}
	ptx, err := os.ReadFile(filepath.Join(xdir, "saxpy.sm_90.ptx"))
	if err != nil || !bytes.Contains(ptx, []byte(".target sm_90")) || !bytes.Contains(ptx, []byte(".entry saxpy")) {
		t.Errorf("saxpy.sm_90.ptx is not the sm_90 PTX of saxpy (%v):\n%.300s", err, ptx)
	}

	// Same result with the file last, the arches repeated and other forms.
	out2 := filepath.Join(dir, "k2.fatbin")
	mustRun(t, "compile", "--fatbin", "-arch", "compute_90", "-arch", "80", "-o", out2, src)
	if ls2 := mustRun(t, "ls", out2); strings.ReplaceAll(ls2, "k2", "k") != want {
		t.Errorf("compile -arch compute_90 -arch 80: ls:\n%s", ls2)
	}
}

// checkSaxpyCubin checks that the file at path is a CUBIN for sm_<sm>
// that defines saxpy.
func checkSaxpyCubin(t *testing.T, path string, sm int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, got := testenv.CubinELF(t, b)
	if got != sm {
		t.Errorf("%s is for sm_%d", filepath.Base(path), got)
	}
	if !testenv.HasFunc(t, f, "saxpy") {
		t.Errorf("%s has no saxpy", filepath.Base(path))
	}
}

func TestCompileCubinPerArch(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	mustRun(t, "compile", src, "--cubin", "-arch", "sm_80,sm_90", "-mkdir", "-o", filepath.Join(dir, "out", "k.cubin"))
	for _, sm := range []int{80, 90} {
		checkSaxpyCubin(t, filepath.Join(dir, "out", fmt.Sprintf("k.sm_%d.cubin", sm)), sm)
	}
	// One architecture: -o is the file name.
	one := filepath.Join(dir, "one.cubin")
	mustRun(t, "compile", "--cubin", "-arch", "sm_86", "-o", one, src)
	b, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	if _, sm := testenv.CubinELF(t, b); sm != 86 {
		t.Errorf("one.cubin is for sm_%d, want sm_86", sm)
	}
}

func TestCompilePTX(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	out := filepath.Join(dir, "saxpy.ptx")
	mustRun(t, "compile", src, "--ptx", "-arch", "sm_90", "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(".target sm_90")) {
		t.Errorf("PTX has no .target sm_90:\n%.400s", b)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		t.Error("PTX file holds a NUL")
	}
}

func TestCompileIncludeDefineOptions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "inc/scale.h", "__device__ inline float scale(float v) { return v * SCALE; }\n")
	writeFile(t, dir, "src/near.h", "#define NEAR 1\n")
	src := writeFile(t, dir, "src/k.cu", `
#include <scale.h>
#include "near.h"
int hits; // a device variable only with -default-device
extern "C" __global__ void KNAME(float *x) { x[threadIdx.x] = scale(x[threadIdx.x]) + NEAR; hits++; }
`)
	out := filepath.Join(dir, "k.ptx")
	mustRun(t, "compile", src, "--ptx", "-arch", "sm_80", "-I", filepath.Join(dir, "inc"),
		"-D", "KNAME=scaled", "-D", "SCALE=3.0f", "--std", "c++17", "--use-fast-math", "--lineinfo", "-X", "-default-device", "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(".entry scaled")) {
		t.Errorf("-D KNAME=scaled: no .entry scaled in the PTX:\n%.600s", b)
	}
	if !bytes.Contains(b, []byte(".loc")) {
		t.Error("--lineinfo: no .loc in the PTX")
	}
	if !bytes.Contains(b, []byte(".global .align 4 .u32 hits")) {
		t.Error("-X -default-device: no .global hits in the PTX")
	}
	// Without -I the header is not found, and the log says so.
	code, _, stderr := runCmd(t, "compile", src, "--ptx", "-arch", "sm_80", "-o", out)
	if code != exitFail || !strings.Contains(stderr, "scale.h") {
		t.Errorf("without -I: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestCompileError(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "broken.cu", "extern \"C\" __global__ void k(float *x) {\n\tx[0] = undefined_thing;\n}\n")
	out := filepath.Join(dir, "broken.fatbin")
	code, stdout, stderr := runCmd(t, "compile", src, "-arch", "sm_80,sm_90", "-o", out)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	for _, want := range []string{
		src + `(2): error: identifier "undefined_thing" is undefined`,
		"cudago compile: " + src + ": compilation for sm_80, sm_90 failed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Count(stderr, "undefined_thing\" is undefined") != 1 {
		t.Errorf("the log of the two identical failures is not printed once:\n%s", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed compile wrote its output")
	}
}

func TestToolchainHelp(t *testing.T) {
	for _, name := range []string{"compile", "link", "fatbin", "ls", "extract", "build"} {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			code, stdout, stderr := runCmd(t, args...)
			if code != exitOK || !strings.HasPrefix(stdout, "usage: cudago "+name+" ") || stderr != "" {
				t.Errorf("cudago %s: exit %d, stderr %q, stdout:\n%.200s", strings.Join(args, " "), code, stderr, stdout)
			}
			if !strings.Contains(stdout, "\nFlags:\n") {
				t.Errorf("cudago %s: no flags listed", strings.Join(args, " "))
			}
		}
	}
	// -h after an argument works too.
	if code, stdout, _ := runCmd(t, "compile", "x.cu", "-h"); code != exitOK || !strings.HasPrefix(stdout, "usage: cudago compile") {
		t.Errorf("compile x.cu -h: exit %d\n%s", code, stdout)
	}
	_, stdout, _ := runCmd(t, "-h")
	for _, name := range []string{"compile", "link", "fatbin", "ls", "extract", "build", "doctor"} {
		if !strings.Contains(stdout, "\t"+name+" ") {
			t.Errorf("cudago -h does not list %s:\n%s", name, stdout)
		}
	}
}

func TestToolchainUsageErrors(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	unknown := writeFile(t, dir, "x.bin", "x")
	for _, args := range [][]string{
		{"compile"},
		{"compile", src},                                    // no -arch
		{"compile", src, "-arch", "sm_xx"},                  // bad arch
		{"compile", src, src, "-arch", "sm_90"},             // two files
		{"compile", src, "-arch", "90", "--ptx", "--cubin"}, // two output kinds
		{"compile", src, "-arch", "90", "-nope"},            // unknown flag after the file
		{"compile", "-nope", src},                           // unknown flag before it
		{"link", "-arch", "sm_90"},                          // no inputs
		{"link", "a.ltoir"},                                 // no -arch
		{"link", "-arch", "sm_90", unknown},                 // kind unknown
		{"link", "-arch", "sm_90", "--kind", "wat", unknown},
		{"link", "-arch", "sm_90", unknown, "--kind", "wat"}, // checked with no input after it
		{"link", "-arch", "sm_90", "--", "a.ltoir", "-nope"}, // after "--": arguments, kind unknown
		{"doctor", "--", "stray"},
		{"link", "-arch", "sm_90", "--ptx", "a.cubin"}, // --ptx without LTO
		{"fatbin", "--cubin", "sm_90:a.cubin"},         // no -o
		{"fatbin", "-o", "x.fatbin"},                   // no images
		{"fatbin", "-o", "x.fatbin", "--cubin", "a.cubin"},
		{"fatbin", "-o", "x.fatbin", "--ptx", "sm_9x:a.ptx"},
		{"fatbin", "-o", "x.fatbin", "stray"},
		{"ls"},
		{"ls", "a", "b"},
		{"ls", "--bogus", "a"},
		{"extract"},
		{"build", src},                   // no -o
		{"build", "-o", "x.fatbin", src}, // no -arch
		{"build", "-o", "x.fatbin", "-arch", "sm_90"},
	} {
		code, stdout, stderr := runCmd(t, args...)
		if code != exitUsage || stderr == "" || stdout != "" {
			t.Errorf("cudago %s: exit %d (want 2), stdout %q, stderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
		}
		if !strings.Contains(stderr, "usage: cudago "+args[0]) {
			t.Errorf("cudago %s: stderr has no usage line:\n%s", strings.Join(args, " "), stderr)
		}
	}
}

// TestPerArchName: architectures themselves are parsed by core.ParseArch
// (tested in core, lto_90 and SM_90 included).
func TestPerArchName(t *testing.T) {
	for _, c := range []struct {
		out, src string
		several  bool
		want     string
	}{
		{"", "d/x.cu", false, "x.cubin"},
		{"", "d/x.cu", true, "x.sm_80.cubin"},
		{"o/k.cubin", "x.cu", true, "o/k.sm_80.cubin"},
		{"o/k", "x.cu", true, "o/k.sm_80.cubin"},
		{"o/k.bin", "x.cu", false, "o/k.bin"},
	} {
		if got := perArchName(c.out, c.src, ".cubin", core.Arch{Number: 80}, c.several); got != c.want {
			t.Errorf("perArchName(%q, %q, %v) = %q, want %q", c.out, c.src, c.several, got, c.want)
		}
	}
}

// heavySrc is a kernel big enough that compiling it takes measurable time.
// Each salt gives different code, so that no compilation cache (NVRTC 13
// seems to have one) can answer.
func heavySrc(salt int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#define SALT %d\n", salt)
	for i := range 8 {
		fmt.Fprintf(&b, `extern "C" __global__ void k%d(float *x, int n) {
	float acc = 0;
	#pragma unroll 8
	for (int j = 0; j < n; j++) acc += sinf(x[j] * %d.5f) * expf(-x[(j*7) %% n]) + sqrtf(fabsf(x[(j+%d) %% n]));
	x[threadIdx.x] = acc + SALT;
}
`, i, i, i)
	}
	return b.String()
}

// BenchmarkCompile4Archs compiles one file for four architectures, with one
// goroutine per architecture (parallel, what compile does) and one after the
// other (sequential).
func BenchmarkCompile4Archs(b *testing.B) {
	archs, _ := core.ParseArchList("sm_75,sm_80,sm_86,sm_90")
	opts := &core.ProgramOptions{Name: "heavy.cu", NoCache: true}
	salt := 0
	for _, mode := range []string{"parallel", "sequential"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				salt++
				src := heavySrc(salt)
				var res []core.ArchCode
				if mode == "parallel" {
					res = core.CompileArchs(src, archs, opts, core.CodeCubin)
				} else {
					for _, a := range archs {
						res = append(res, core.CompileArchs(src, []core.Arch{a}, opts, core.CodeCubin)...)
					}
				}
				for _, r := range res {
					if r.Err != nil {
						b.Fatal(r.Err, r.Log)
					}
				}
			}
		})
	}
}
