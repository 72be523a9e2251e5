package fatbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// setupCUDA finds the toolkit that scripts/setup-cuda.sh installs in .cuda at
// the repository root (searched upwards from the package directory) and
// puts its tools on PATH for the test. On the GPU machine
// (CUDAGO_REQUIRE_GPU=1), which has no local install, the machine's own
// toolkit in /usr/local/cuda is used instead. It returns the toolkit's major
// version.
func setupCUDA(t *testing.T) int {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	path := ""
	for d := dir; path == ""; d = filepath.Dir(d) {
		root := filepath.Join(d, ".cuda")
		if st, err := os.Stat(filepath.Join(root, "bin", "nvcc")); err == nil && !st.IsDir() {
			path = filepath.Join(root, "bin")
			for _, extra := range []string{"root/usr/lib/nvidia-cuda-toolkit/bin", "root/usr/bin"} {
				if st, err := os.Stat(filepath.Join(root, extra)); err == nil && st.IsDir() {
					path += string(os.PathListSeparator) + filepath.Join(root, extra)
				}
			}
			t.Setenv("CUDAGO_LOCAL_CUDA", filepath.Join(root, "root"))
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if path == "" && os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
		if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
			path = "/usr/local/cuda/bin"
		}
	}
	if path == "" {
		t.Fatalf("no CUDA toolkit in .cuda/ above %s: run scripts/setup-cuda.sh first (it installs nvcc, cuobjdump and fatbinary into .cuda)", dir)
	}
	t.Setenv("PATH", path+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, tool := range []string{"nvcc", "cuobjdump", "fatbinary"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found in %s: run scripts/setup-cuda.sh", tool, path)
		}
	}
	out := run(t, ".", "nvcc", "--version")
	t.Logf("%s", strings.TrimSpace(out))
	m := regexp.MustCompile(`release (\d+)\.`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no release in nvcc --version output:\n%s", out)
	}
	major, _ := strconv.Atoi(m[1])
	return major
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runAll runs each command (a name and its arguments) in dir, two at a
// time, and fails t with the output of every one that failed.
func runAll(t *testing.T, dir string, cmds [][]string) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	errs := make([]error, len(cmds))
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command(c[0], c[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

const testKernels = `
__device__ int counter;
__constant__ float table[4] = {1, 2, 3, 4};
__global__ void scale(float *a, float b) { a[threadIdx.x] *= b + table[threadIdx.x % 4]; }
__global__ void count(int *out) { out[blockIdx.x] = atomicAdd(&counter, 1); }
int main() { scale<<<1, 1>>>(0, 1.0f); count<<<1, 1>>>(0); return 0; }
`

const testRDC = `
extern __device__ int counter;
__global__ void other(int *a) { a[threadIdx.x] = counter; }
`

// TestAgainstCuobjdump builds fat binaries and host ELF files with the CUDA
// toolkit and checks List and Data against cuobjdump -lelf -lptx and
// cuobjdump -xelf all -xptx all.
func TestAgainstCuobjdump(t *testing.T) {
	major := setupCUDA(t)
	// nvcc compresses with LZ4 up to CUDA 12, with zstd from CUDA 13 on.
	comp := "lz4"
	if major >= 13 {
		comp = "zstd"
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.cu"), []byte(testKernels), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "y.cu"), []byte(testRDC), 0o644); err != nil {
		t.Fatal(err)
	}
	gencode := []string{
		"-gencode", "arch=compute_75,code=sm_75",
		"-gencode", "arch=compute_80,code=[sm_80,compute_80]",
		"-gencode", "arch=compute_90,code=[sm_90,compute_90]",
	}
	nvcc := func(args ...string) []string { return append(append([]string{"nvcc"}, gencode...), args...) }
	type build struct {
		out      string
		cmd      []string
		wantComp string // compression expected on at least one entry
		minELF   int
		minPTX   int
	}
	builds := []build{
		{"multi.fatbin", nvcc("-fatbin", "x.cu", "-o", "multi.fatbin"), comp, 3, 2},
		{"compall.fatbin", nvcc("-fatbin", "-Xfatbin", "-compress-all", "x.cu", "-o", "compall.fatbin"), comp, 3, 2},
		{"nocomp.fatbin", nvcc("-fatbin", "-Xfatbin", "-compress=false", "x.cu", "-o", "nocomp.fatbin"), "", 3, 2},
		{"debug.fatbin", []string{"nvcc", "-fatbin", "-G", "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "x.cu", "-o", "debug.fatbin"}, comp, 1, 1},
		{"ptxonly.fatbin", []string{"nvcc", "-fatbin", "-gencode", "arch=compute_80,code=compute_80", "-Xptxas", "-O2", "x.cu", "-o", "ptxonly.fatbin"}, comp, 0, 1},
		{"lto.fatbin", []string{"nvcc", "-fatbin", "-rdc=true", "-gencode", "arch=compute_90,code=[sm_90,lto_90,compute_90]", "x.cu", "-o", "lto.fatbin"}, comp, 1, 1},
		{"x.o", nvcc("-c", "x.cu", "-o", "x.o"), comp, 3, 2},
		{"xrdc.o", nvcc("-c", "-rdc=true", "x.cu", "-o", "xrdc.o"), comp, 3, 2},
		{"a.out", []string{"nvcc", "-o", "a.out", "x.cu"}, "", 1, 1},
		{"multi.out", nvcc("-o", "multi.out", "x.cu"), comp, 3, 2},
		{"rdc.out", nvcc("-rdc=true", "-o", "rdc.out", "x.cu", "y.cu"), "", 3, 0},
		{"libx.so", nvcc("-shared", "-Xcompiler", "-fPIC", "-o", "libx.so", "x.cu"), comp, 3, 2},
	}
	cmds := make([][]string, len(builds))
	for i, b := range builds {
		cmds[i] = b.cmd
	}
	runAll(t, dir, cmds)
	// fatbinary with an identifier, and containers concatenated in one file.
	run(t, dir, "nvcc", "-cubin", "-arch=sm_86", "x.cu", "-o", "x.cubin")
	run(t, dir, "nvcc", "-ptx", "-arch=sm_86", "x.cu", "-o", "x.ptx")
	run(t, dir, "fatbinary", "--create=ident.fatbin", "-64", "--ident=/src/dir/kern.v2.cu",
		"--image3=kind=elf,sm=86,file=x.cubin", "--image3=kind=ptx,sm=86,file=x.ptx")
	var cat []byte
	for _, part := range []string{"ident.fatbin", "nocomp.fatbin", "compall.fatbin"} {
		b, err := os.ReadFile(filepath.Join(dir, part))
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "cat.fatbin"), cat, 0o644); err != nil {
		t.Fatal(err)
	}
	builds = append(builds, build{"ident.fatbin", nil, comp, 1, 1}, build{"cat.fatbin", nil, comp, 7, 5})

	for _, b := range builds {
		t.Run(b.out, func(t *testing.T) {
			path := filepath.Join(dir, b.out)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			want := listLines(run(t, dir, "cuobjdump", "-lelf", "-lptx", path))
			got := ourList(t, f, path)
			equalLines(t, b.out, got, want)

			xdir := filepath.Join(dir, "x_"+b.out)
			if err := os.Mkdir(xdir, 0o755); err != nil {
				t.Fatal(err)
			}
			run(t, xdir, "cuobjdump", "-xelf", "all", "-xptx", "all", path)
			extracted := readDir(t, xdir)
			compareExtracted(t, b.out, extractAll(t, f, path), extracted)

			var nelf, nptx int
			comps := map[string]bool{}
			for _, e := range f.Entries {
				switch e.Kind {
				case KindELF:
					nelf++
				case KindPTX:
					nptx++
				}
				comps[e.Compression] = true
			}
			if nelf < b.minELF || nptx < b.minPTX || len(want) == 0 && nelf+nptx > 0 {
				t.Errorf("%d ELF and %d PTX entries, want at least %d and %d", nelf, nptx, b.minELF, b.minPTX)
			}
			if b.wantComp != "" && !comps[b.wantComp] {
				t.Errorf("no %s-compressed entry (compressions %v)", b.wantComp, comps)
			}
			if b.out == "nocomp.fatbin" && (len(comps) != 1 || !comps[""]) {
				t.Errorf("compressed entries in %s: %v", b.out, comps)
			}
			switch b.out {
			case "debug.fatbin":
				for _, e := range f.Entries {
					if !e.Debug || e.Identifier != "x.cu" {
						t.Errorf("entry %d: debug=%v identifier=%q", e.Index, e.Debug, e.Identifier)
					}
				}
				if p := f.Entries[len(f.Entries)-1]; p.Kind != KindPTX || !strings.Contains(p.Options, "-g") {
					t.Errorf("debug PTX options %q", p.Options)
				}
			case "lto.fatbin":
				var lto int
				for _, e := range f.Entries {
					if e.Kind == KindLTOIR {
						lto++
						if !e.Obfuscated || !strings.Contains(e.Options, "-ftz=") || e.Arch != 90 {
							t.Errorf("LTO-IR entry: obfuscated=%v options=%q arch=%d", e.Obfuscated, e.Options, e.Arch)
						}
					}
				}
				if lto != 1 {
					t.Errorf("%d LTO-IR entries, want 1", lto)
				}
			case "xrdc.o":
				if f.Containers[0].Section != SectionRelFatbin {
					t.Errorf("section %q", f.Containers[0].Section)
				}
			case "multi.out", "a.out", "libx.so", "x.o":
				for _, c := range f.Containers {
					if c.Section != SectionFatbin {
						t.Errorf("container at %#x in section %q", c.Offset, c.Section)
					}
				}
			case "ident.fatbin":
				if f.Entries[0].Identifier != "/src/dir/kern.v2.cu" || got[0] != "ELF file    1: kern.v2.sm_86.cubin" {
					t.Errorf("identifier %q, list %q", f.Entries[0].Identifier, got)
				}
			case "cat.fatbin":
				if len(f.Containers) != 3 {
					t.Errorf("%d containers, want 3", len(f.Containers))
				}
			}
		})
	}
}
