package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvrtc"
)

// nvrtcVersionT returns the loaded NVRTC's version, and whether it has
// precompiled headers (12.8 and newer).
func nvrtcVersionT(t testing.TB) (major, minor int32, pch bool) {
	t.Helper()
	major, minor, err := nvrtc.Version()
	if err != nil {
		t.Fatalf("nvrtc.Version: %v", err)
	}
	return major, minor, major > pchMinMajor || major == pchMinMajor && minor >= pchMinMinor
}

// TestPCHNeedsNVRTC128 sets each PCH field alone: on an NVRTC older than
// 12.8 (CI has 12.4) NewProgram refuses it, naming the field and both
// versions; on a newer one the program is made, and automatic PCH
// without PCHDir gets a private folder under the compile cache's root.
func TestPCHNeedsNVRTC128(t *testing.T) {
	major, minor, has := nvrtcVersionT(t)
	t.Setenv("CUDAGO_CACHE_DIR", t.TempDir())
	yes := true
	for _, c := range []struct {
		field string
		opts  ProgramOptions
	}{
		{"PCH", ProgramOptions{PCH: true}},
		{"CreatePCH", ProgramOptions{CreatePCH: filepath.Join(t.TempDir(), "a.pch")}},
		{"UsePCH", ProgramOptions{UsePCH: filepath.Join(t.TempDir(), "a.pch")}},
		{"PCHDir", ProgramOptions{PCHDir: t.TempDir()}},
		{"PCHVerbose", ProgramOptions{PCHVerbose: &yes}},
		{"PCHMessages", ProgramOptions{PCHMessages: &yes}},
		{"InstantiateTemplatesInPCH", ProgramOptions{InstantiateTemplatesInPCH: &yes}},
	} {
		p, err := NewProgram(saxpySrc, "c++", &c.opts)
		if !has {
			want := fmt.Sprintf("core: ProgramOptions.%s: precompiled headers need NVRTC 12.8 or newer; the NVRTC loaded is %d.%d", c.field, major, minor)
			if err == nil || err.Error() != want || !errors.Is(err, ErrInvalidOption) {
				t.Errorf("%s on NVRTC %d.%d: %v, want %q (matching ErrInvalidOption)", c.field, major, minor, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s on NVRTC %d.%d: %v", c.field, major, minor, err)
			continue
		}
		p.Close()
	}
	if !has {
		return
	}
	// The default folder of automatic PCH, and an explicit one.
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{PCH: true})
	root, _ := CacheDir()
	dir := filepath.Join(root, "pch", fmt.Sprintf("nvrtc-%d.%d", major, minor))
	if !slices.Contains(p.Options(), "--pch-dir="+dir) {
		t.Errorf("automatic PCH: options %q lack --pch-dir=%s", p.Options(), dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("the default PCH folder: %v, %v; want a directory of mode 0700", fi, err)
	}
	own := t.TempDir()
	p = mustProgram(t, saxpySrc, "c++", &ProgramOptions{PCH: true, PCHDir: own})
	if n := countPrefix(p.Options(), "--pch-dir="); n != 1 || !slices.Contains(p.Options(), "--pch-dir="+own) {
		t.Errorf("PCHDir %s: options %q", own, p.Options())
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// TestDefaultPCHDir checks the folder of automatic PCH: under the cache's
// root, per NVRTC version, 0700, refused under a root others may write.
func TestDefaultPCHDir(t *testing.T) {
	rec := captureWarnings(t)

	root := filepath.Join(t.TempDir(), "cache")
	t.Setenv("CUDAGO_CACHE_DIR", root)
	dir, err := defaultPCHDir(13, 0)
	if want := filepath.Join(root, "pch", "nvrtc-13.0"); err != nil || dir != want {
		t.Fatalf("defaultPCHDir = %q, %v; want %q", dir, err, want)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", dir, fi, err)
	}

	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDAGO_CACHE_DIR", shared)
	if _, err := defaultPCHDir(13, 0); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a root others may write: %v, want it refused", err)
	}
	if w := rec.of(WarnCacheDisabled); len(w) != 1 {
		t.Errorf("warnings %v, want one", w)
	}
}

func TestPCHStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want PCHStatus
	}{
		{nil, PCHCreated},
		{nvrtc.ErrorNoPchCreateAttempted, PCHNotAttempted},
		{fmt.Errorf("wrapped: %w", nvrtc.ErrorNoPchCreateAttempted), PCHNotAttempted},
		{nvrtc.ErrorPchCreate, PCHFailed},
		{nvrtc.ErrorPchCreateHeapExhausted, PCHFailed},
	} {
		if got := pchStatusOf(c.err); got != c.want {
			t.Errorf("pchStatusOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	for s, want := range map[PCHStatus]string{PCHNotRequested: "PCHNotRequested", PCHCreated: "PCHCreated",
		PCHNotAttempted: "PCHNotAttempted", PCHFailed: "PCHFailed", 9: "PCHStatus(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

// TestPCHHeapSize reads and sets NVRTC's PCH heap, or, before 12.8, gets
// the error naming the version.
func TestPCHHeapSize(t *testing.T) {
	major, minor, has := nvrtcVersionT(t)
	if err := SetPCHHeapSize(-1); err == nil || !strings.Contains(err.Error(), "negative size -1") {
		t.Errorf("SetPCHHeapSize(-1): %v", err)
	}
	n, err := PCHHeapSize()
	if !has {
		want := fmt.Sprintf("need NVRTC 12.8 or newer; the NVRTC loaded is %d.%d", major, minor)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PCHHeapSize on NVRTC %d.%d: %v, want %q", major, minor, err, want)
		}
		if err := SetPCHHeapSize(1 << 20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetPCHHeapSize on NVRTC %d.%d: %v, want %q", major, minor, err, want)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d's PCH heap: %d bytes", major, minor, n)
	bigger := n + 64<<20
	if err := SetPCHHeapSize(bigger); err != nil {
		t.Fatal(err)
	}
	if got, err := PCHHeapSize(); err != nil || got < bigger {
		t.Errorf("after SetPCHHeapSize(%d): %d, %v", bigger, got, err)
	}
	if err := SetPCHHeapSize(n); err != nil {
		t.Fatal(err)
	}
}

// ccclInclude returns the include folders that make CCCL's headers
// (<cuda/std/...>, <cub/...>) visible to NVRTC, or why there are none.
// CUDA 13 keeps them in include/cccl, CUDA 12 in include.
func ccclInclude() ([]string, string) {
	var roots []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := os.Getenv(v); r != "" {
			roots = append(roots, r)
		}
	}
	roots = append(roots, "/usr/local/cuda")
	for _, r := range roots {
		for _, inc := range []string{filepath.Join(r, "include", "cccl"), filepath.Join(r, "include")} {
			if _, err := os.Stat(filepath.Join(inc, "cuda", "std", "type_traits")); err == nil {
				return []string{inc, filepath.Join(r, "include")}, ""
			}
		}
	}
	return nil, fmt.Sprintf("no CCCL headers (cuda/std/type_traits in include/cccl or include) under %s: CUDA 13 installs them in /usr/local/cuda/include/cccl", strings.Join(roots, ", "))
}

// pchStdSource is a kernel that includes a dozen of libcu++'s headers.
const pchStdSource = `#include <cuda/std/type_traits>
#include <cuda/std/utility>
#include <cuda/std/tuple>
#include <cuda/std/array>
#include <cuda/std/complex>
#include <cuda/std/atomic>
#include <cuda/std/limits>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda/std/optional>

extern "C" __global__ void pch_std(const float *in, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	cuda::std::array<cuda::std::complex<float>, 4> acc{};
	for (int k = 0; k < 4; k++) acc[k] = cuda::std::complex<float>(in[i], (float)k) * cuda::std::complex<float>(0.5f, 0.25f);
	auto t = cuda::std::make_tuple(acc[0].real(), acc[3].imag(), cuda::std::numeric_limits<float>::epsilon());
	cuda::std::optional<float> o = cuda::std::get<0>(t) + cuda::std::get<1>(t);
	out[i] = cuda::std::plus<float>{}(*o, cuda::std::get<2>(t)) + cuda::std::abs(acc[2]);
}
`

// pchCubSource is a block reduction with CUB.
const pchCubSource = `#include <cub/block/block_reduce.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>

extern "C" __global__ void pch_cub(const float *in, float *out) {
	using Load = cub::BlockLoad<float, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>;
	using Scan = cub::BlockScan<float, 128>;
	using Reduce = cub::BlockReduce<float, 128>;
	__shared__ union { typename Load::TempStorage load; typename Scan::TempStorage scan; typename Reduce::TempStorage reduce; } tmp;
	float v[4];
	Load(tmp.load).Load(in + blockIdx.x * 512, v);
	__syncthreads();
	Scan(tmp.scan).InclusiveSum(v, v);
	__syncthreads();
	float s = Reduce(tmp.reduce).Sum(v[3]);
	if (threadIdx.x == 0) out[blockIdx.x] = s;
}
`

// TestPCHCompile creates a precompiled header of libcu++'s headers with
// CreatePCH and compiles with it (UsePCH), then compiles twice with
// automatic PCH. It needs NVRTC 12.8 and CCCL's headers (the GPU
// machine's CUDA 13); elsewhere it says which is missing and skips.
func TestPCHCompile(t *testing.T) {
	major, minor, has := nvrtcVersionT(t)
	if !has {
		t.Skipf("NVRTC %d.%d has no precompiled headers (12.8 and newer; TestPCHNeedsNVRTC128 checks the error)", major, minor)
	}
	inc, why := ccclInclude()
	if inc == nil {
		t.Skip(why)
	}
	t.Setenv("CUDAGO_CACHE_DIR", t.TempDir())
	base := ProgramOptions{Name: "pch_test.cu", Arch: "compute_90", Std: "c++17", IncludePaths: inc, NoCache: true}
	ptx := func(o ProgramOptions) (string, *Program) {
		t.Helper()
		p := mustProgram(t, pchStdSource, "c++", &o)
		code := mustCompile(t, p, "ptx")
		if !strings.Contains(string(code.Code()), ".entry pch_std") {
			t.Fatalf("%+v: the PTX has no pch_std entry", o)
		}
		return string(code.Code()), p
	}
	plain, _ := ptx(base)

	file := filepath.Join(t.TempDir(), "std.pch")
	o := base
	o.CreatePCH = file
	created, p := ptx(o)
	if p.PCHStatus() != PCHCreated {
		t.Errorf("CreatePCH: status %v, want PCHCreated; log:\n%s", p.PCHStatus(), p.Log())
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("CreatePCH made no header: %v, %v", fi, err)
	}
	o = base
	o.UsePCH = file
	used, p := ptx(o)
	if p.PCHStatus() != PCHNotRequested {
		t.Errorf("UsePCH: status %v, want PCHNotRequested (it creates nothing)", p.PCHStatus())
	}
	if created != plain || used != plain {
		t.Logf("the PTX differs with precompiled headers (%d, %d and %d bytes without, creating, using)", len(plain), len(created), len(used))
	}

	// Automatic PCH, in the default folder: the first compilation may
	// create a header, which the second may use; neither fails.
	o = base
	o.PCH = true
	for i := range 2 {
		_, p := ptx(o)
		st := p.PCHStatus()
		t.Logf("automatic PCH, compilation %d: %v", i+1, st)
		if st == PCHFailed || st == PCHNotRequested {
			t.Errorf("automatic PCH, compilation %d: %v; log:\n%s", i+1, st, p.Log())
		}
	}
	root, _ := CacheDir()
	files, _ := filepath.Glob(filepath.Join(root, "pch", fmt.Sprintf("nvrtc-%d.%d", major, minor), "*"))
	t.Logf("the default PCH folder holds %d files", len(files))
}

// BenchmarkNVRTCPCH compiles a kernel that includes libcu++'s headers,
// and one that includes CUB's block primitives, to a cubin for sm_90,
// without and with automatic precompiled headers (the header made by a
// first compilation outside the timing), the compile cache off: every
// iteration runs NVRTC. It needs NVRTC 12.8 for PCH and CCCL's headers.
//
//	cd core && go test -run '^$' -bench BenchmarkNVRTCPCH -benchtime 10x -benchmem
func BenchmarkNVRTCPCH(b *testing.B) {
	major, minor, has := nvrtcVersionT(b)
	inc, why := ccclInclude()
	if inc == nil {
		b.Skip(why)
	}
	b.Logf("NVRTC %d.%d, CCCL headers in %s", major, minor, inc[0])
	for _, src := range []struct{ name, code string }{{"cuda_std", pchStdSource}, {"cub", pchCubSource}} {
		for _, pch := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/pch=%v", src.name, pch), func(b *testing.B) {
				if pch && !has {
					b.Skipf("NVRTC %d.%d has no precompiled headers (12.8 and newer)", major, minor)
				}
				o := &ProgramOptions{Name: "pch_bench.cu", Arch: "sm_90", Std: "c++17", IncludePaths: inc, NoCache: true}
				if pch {
					o.PCH, o.PCHDir = true, b.TempDir()
				}
				compile := func() *Program {
					p, err := NewProgram(src.code, "c++", o)
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					if _, err := p.Compile("cubin"); err != nil {
						b.Fatal(err)
					}
					return p
				}
				if p := compile(); pch {
					b.Logf("the first compilation: %v", p.PCHStatus())
				}
				for b.Loop() {
					compile()
				}
			})
		}
	}
}
