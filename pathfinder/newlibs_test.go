//go:build linux && cgo

package pathfinder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// Fake-tree tests of cuDNN, cuTENSOR, CUPTI and cuDLA in the layouts of
// NVIDIA's pip wheels, conda, toolkits and distributions, and of the guard
// rails. Fakes that others load by soname get fresh sonames per run (see
// fakeRun), and the real specs are copied with those names.

// dnnFakes is a fake cuDNN: a shim whose cudnnGetCudartVersion reports
// CUDA 12.8, sub-libraries where ops needs graph (DT_NEEDED), and a fake
// cuBLASLt it opens itself.
type dnnFakes struct {
	graph, ops, cnn, opt, lt string // sonames
	sp, ltSpec               *spec
}

func newDNNFakes() *dnnFakes {
	n := fakeRun.Add(1)
	f := &dnnFakes{
		graph: fmt.Sprintf("libcudagofakednn%d_graph.so.9", n),
		ops:   fmt.Sprintf("libcudagofakednn%d_ops.so.9", n),
		cnn:   fmt.Sprintf("libcudagofakednn%d_cnn.so.9", n),
		opt:   fmt.Sprintf("libcudagofakednn%d_tensor_ir.so.9", n),
		lt:    fmt.Sprintf("libcudagofakednnlt%d.so.12", n),
	}
	sp := *specOf(CuDNN)
	sp.env = "CUDAGO_FAKEDNN_PATH"
	sp.subs = []string{f.graph, f.opt, f.ops, f.cnn}
	sp.optSubs = []string{f.opt}
	sp.deps = []Lib{"cudagofakednnlt"}
	sp.opens = func(h unsafe.Pointer) []string {
		if cudartVersion(h, CuDNN) != 12080 {
			return nil // not the fake: opens nothing
		}
		return []string{f.lt}
	}
	f.sp = &sp
	f.ltSpec = &spec{lib: "cudagofakednnlt", env: "CUDAGO_FAKEDNNLT_PATH", sonames: []string{f.lt},
		wheel: []string{"nvidia/cu13/lib", "nvidia/cublas/lib"}}
	return f
}

const fakeCuDNN = `#include <stddef.h>
size_t cudnnGetVersion(void) { return 90100; }
size_t cudnnGetCudartVersion(void) { return 12080; }
`

// build writes the fake cuDNN into dir: the shim, graph, ops (needing
// graph) and, unless skip names it, cnn; never the optional tensor IR one.
// The fake cuBLASLt goes into ltDir.
func (f *dnnFakes) build(t *testing.T, dir, ltDir string, skip string) (shim string) {
	shim = buildLib(t, filepath.Join(dir, "libcudnn.so.9"), "", fakeCuDNN)
	graph := buildLib(t, filepath.Join(dir, f.graph), f.graph, "int cudago_dnn_graph(void) { return 1; }\n")
	buildLib(t, filepath.Join(dir, f.ops), f.ops, "extern int cudago_dnn_graph(void);\nint cudago_dnn_ops(void) { return cudago_dnn_graph() + 1; }\n",
		"-L"+filepath.Dir(graph), "-l:"+f.graph)
	if skip != f.cnn {
		buildLib(t, filepath.Join(dir, f.cnn), f.cnn, "int cudago_dnn_cnn(void) { return 3; }\n")
	}
	buildLib(t, filepath.Join(ltDir, f.lt), f.lt, "int cudago_dnn_lt(void) { return 4; }\n")
	return shim
}

func (f *dnnFakes) searcher(t *testing.T, env map[string]string) *searcher {
	s := isolated(t, env)
	s.lookup = func(l Lib) *spec {
		if l == f.ltSpec.lib {
			return f.ltSpec
		}
		return nil
	}
	return s
}

// TestCuDNNWheelLayout: nvidia-cudnn-cu12 puts cuDNN in nvidia/cudnn/lib and
// needs nvidia-cublas-cu12's nvidia/cublas/lib beside it. The
// sub-libraries are opened from cuDNN's directory, graph before ops (which
// needs it: it would not load otherwise, nothing on the loader's path has
// it), and the cuBLASLt cuDNN opens itself from the same site-packages.
func TestCuDNNWheelLayout(t *testing.T) {
	f := newDNNFakes()
	site := filepath.Join(t.TempDir(), "site")
	dir := filepath.Join(site, "nvidia/cudnn/lib")
	ltDir := filepath.Join(site, "nvidia/cublas/lib")
	shim := f.build(t, dir, ltDir, "")
	lib := mustFind(t, f.searcher(t, map[string]string{"CUDAGO_PYTHON_SITE": site}), f.sp)
	if lib.Path != shim || lib.Found != "CUDAGO_PYTHON_SITE" || lib.Major != 9 {
		t.Errorf("got %s (%s, major %d), want %s (CUDAGO_PYTHON_SITE, 9)", lib.Path, lib.Found, lib.Major, shim)
	}
	want := []string{filepath.Join(dir, f.graph), filepath.Join(dir, f.ops), filepath.Join(dir, f.cnn), filepath.Join(ltDir, f.lt)}
	if !reflect.DeepEqual(lib.Companions, want) || len(lib.Warnings) != 0 {
		t.Errorf("Companions %q, Warnings %q; want %q (the optional tensor IR engines missing without a warning)", lib.Companions, lib.Warnings, want)
	}
	for _, so := range []string{f.graph, f.ops, f.cnn, f.lt} {
		if dlnoload(so) == nil {
			t.Errorf("%s is not loaded: cuDNN's own dlopen of it would fail", so)
		}
	}
	if v, err := lib.Version(); err != nil || v != "9.1.0" {
		t.Errorf("Version() = %q, %v; want 9.1.0", v, err)
	}
	if c, ok := lib.CUDA(); !ok || c != (CUDAVersion{12, 8}) {
		t.Errorf("CUDA() = %v, %v; want 12.8 (cudnnGetCudartVersion)", c, ok)
	}
	// The real spec's rule: the cuBLASLt of the CUDA major cuDNN was built for.
	if got := cudnnOpens(lib.Handle()); !reflect.DeepEqual(got, []string{"libcublasLt.so.12"}) {
		t.Errorf("cudnnOpens = %q, want libcublasLt.so.12", got)
	}
}

// TestCuDNNIncomplete: a cuDNN missing a sub-library still loads, with a
// warning that names it and the status its calls will fail with; one
// without the cuBLASLt it opens says the loader is left to find it.
func TestCuDNNIncomplete(t *testing.T) {
	f := newDNNFakes()
	tmp := t.TempDir()
	conda := filepath.Join(tmp, "conda")
	shim := f.build(t, filepath.Join(conda, "lib"), filepath.Join(tmp, "elsewhere"), f.cnn)
	lib := mustFind(t, f.searcher(t, map[string]string{"CONDA_PREFIX": conda}), f.sp)
	if lib.Path != shim || lib.Found != "CONDA_PREFIX" {
		t.Errorf("got %s (%s), want %s (CONDA_PREFIX)", lib.Path, lib.Found, shim)
	}
	joined := strings.Join(lib.Warnings, "\n")
	for _, w := range []string{f.cnn + " missing from " + filepath.Join(conda, "lib"), "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED",
		"opens " + f.lt + " when it needs it, and CONDA_PREFIX (" + conda + ") has none"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	if strings.Contains(joined, f.opt) {
		t.Errorf("a warning names the optional %s:\n%s", f.opt, joined)
	}
}

// TestCuTENSORLayouts: cuTENSOR's wheel (site-packages/cutensor/lib), its
// archive unpacked as CUDA_PATH (lib/12), NVIDIA's Debian package
// (<multiarch>/libcutensor/12); each loads the cuBLASLt it needs
// (DT_NEEDED) from the same place first.
func TestCuTENSORLayouts(t *testing.T) {
	n := fakeRun.Add(1)
	lt := fmt.Sprintf("libcudagofaketlt%d.so.12", n)
	ltSpec := &spec{lib: "cudagofaketlt", env: "CUDAGO_FAKETLT_PATH", sonames: []string{lt},
		wheel: []string{"nvidia/cu13/lib", "nvidia/cublas/lib"}, rootDirs: []string{"lib/12"}}
	sp := *specOf(CuTENSOR)
	sp.env, sp.deps = "CUDAGO_FAKETENSOR_PATH", []Lib{ltSpec.lib}
	tmp := t.TempDir()
	linkLt := buildLib(t, filepath.Join(tmp, "link", lt), lt, "int cudago_tlt(void) { return 20; }\n")
	src := `#include <stddef.h>
extern int cudago_tlt(void);
size_t cutensorGetVersion(void) { return 20301; }
size_t cutensorGetCudartVersion(void) { return cudago_tlt() == 20 ? 12040 : 0; }
`
	tensor := func(dir string) string {
		return buildLib(t, filepath.Join(dir, "libcutensor.so.2"), "", src, "-L"+filepath.Dir(linkLt), "-l:"+lt)
	}
	ma, _ := archDirs()
	for _, c := range []struct {
		name, libDir, ltDir string
		env                 map[string]string
		found               string
	}{
		{"wheel", "site/cutensor/lib", "site/nvidia/cublas/lib", map[string]string{"CUDAGO_PYTHON_SITE": filepath.Join(tmp, "site")}, "CUDAGO_PYTHON_SITE"},
		{"archive", "archive/lib/12", "archive/lib/12", map[string]string{"CUDA_PATH": filepath.Join(tmp, "archive")}, "CUDA_PATH"},
		{"debian", "sysroot/usr/lib/" + ma + "/libcutensor/12", "sysroot/usr/lib/" + ma, nil, "debian multiarch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A fresh soname for the cuBLASLt each time would need a fresh
			// cuTENSOR too; instead each case checks that the one loaded
			// first is reused (the loader binds to it).
			p := tensor(filepath.Join(tmp, c.libDir))
			ltCopy := copyFile(t, linkLt, filepath.Join(tmp, c.ltDir, lt))
			s := &searcher{getenv: envOf(c.env), cwd: tmp, sysroot: filepath.Join(tmp, "sysroot"),
				lookup: func(l Lib) *spec {
					if l == ltSpec.lib {
						return ltSpec
					}
					return nil
				}}
			lib := mustFind(t, s, &sp)
			if lib.Path != p || lib.Found != c.found {
				t.Errorf("got %s (%s), want %s (%s)", lib.Path, lib.Found, p, c.found)
			}
			if len(lib.Companions) != 1 || (c.name == "wheel" && lib.Companions[0] != ltCopy) {
				t.Errorf("Companions %q, want the cuBLASLt (%s in the first case)", lib.Companions, ltCopy)
			}
			if v, err := lib.Version(); err != nil || v != "2.3.1" {
				t.Errorf("Version() = %q, %v; want 2.3.1", v, err)
			}
			if cv, ok := lib.CUDA(); !ok || cv != (CUDAVersion{12, 4}) {
				t.Errorf("CUDA() = %v, %v; want 12.4", cv, ok)
			}
		})
	}
}

// TestCUPTILayouts: a toolkit keeps CUPTI in extras/CUPTI/lib64; CUDA 12's
// wheel in nvidia/cuda_cupti/lib, CUDA 13's in nvidia/cu13/lib. Its version
// is the name of the file the soname links to.
func TestCUPTILayouts(t *testing.T) {
	tmp := t.TempDir()
	sp := *specOf(CUPTI)
	sp.env = "CUDAGO_FAKECUPTI_PATH"
	src := buildLib(t, filepath.Join(tmp, "src.so"), "", "int cuptiGetVersion(unsigned *v) { *v = 18; return 0; }\n")
	real := copyFile(t, src, filepath.Join(tmp, "cuda/extras/CUPTI/lib64/libcupti.so.2024.1.1"))
	if err := os.Symlink(filepath.Base(real), filepath.Join(filepath.Dir(real), "libcupti.so.12")); err != nil {
		t.Fatal(err)
	}
	lib := mustFind(t, isolated(t, map[string]string{"CUDA_PATH": filepath.Join(tmp, "cuda")}), &sp)
	if want := filepath.Join(tmp, "cuda/extras/CUPTI/lib64/libcupti.so.12"); lib.Path != want || lib.Found != "CUDA_PATH" {
		t.Errorf("got %s (%s), want %s (CUDA_PATH)", lib.Path, lib.Found, want)
	}
	if v, err := lib.Version(); err != nil || v != "2024.1.1" {
		t.Errorf("Version() = %q, %v; want 2024.1.1", v, err)
	}
	if c, ok := lib.CUDA(); !ok || c != (CUDAVersion{12, -1}) {
		t.Errorf("CUDA() = %v, %v; want 12.x", c, ok)
	}

	site := filepath.Join(tmp, "site")
	p12 := copyFile(t, src, filepath.Join(site, "nvidia/cuda_cupti/lib/libcupti.so.12"))
	s := isolated(t, map[string]string{"CUDAGO_PYTHON_SITE": site})
	lib = mustFind(t, s, &sp)
	if lib.Path != p12 {
		t.Errorf("CUDA 12 wheel: got %s, want %s", lib.Path, p12)
	}
	if v, err := lib.Version(); err != nil || v != "API 18" {
		t.Errorf("a copy named by its soname: Version() = %q, %v; want API 18 (cuptiGetVersion)", v, err)
	}
	p13 := copyFile(t, src, filepath.Join(site, "nvidia/cu13/lib/libcupti.so.13"))
	if lib := mustFind(t, s, &sp); lib.Path != p13 || lib.Major != 13 {
		t.Errorf("CUDA 13 wheel: got %s (major %d), want %s", lib.Path, lib.Major, p13)
	}
}

// TestCuDLAOnlyOnTegra: off Tegra cuDLA is reported unavailable, without a
// search or an install hint; on a Tegra system (JetPack's
// /etc/nv_tegra_release) it is searched like the others; its override
// variable is honoured anywhere.
func TestCuDLAOnlyOnTegra(t *testing.T) {
	tmp := t.TempDir()
	sp := *specOf(CuDLA)
	sp.env = "CUDAGO_FAKECUDLA_PATH"
	p := buildLib(t, filepath.Join(tmp, "cuda/lib64/libcudla.so.1"), "", fakeGeneric)
	env := map[string]string{"CUDA_PATH": filepath.Join(tmp, "cuda")}

	for _, arch := range []string{"amd64", "arm64"} {
		s := isolated(t, env)
		s.goarch = arch
		_, err := s.find(&sp)
		nf := notFound(t, err)
		if !strings.Contains(nf.Unavailable, "only on NVIDIA Tegra") || len(nf.Tried) != 2 || nf.Tried[1].Where != "platform" {
			t.Errorf("%s: Unavailable %q, Tried %v", arch, nf.Unavailable, nf.Tried)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "pathfinder: cudla is not available on this machine: ") || strings.Contains(msg, "hint") || strings.Contains(msg, "tried") {
			t.Errorf("%s: message %q", arch, msg)
		}
		if fix := nf.Fix(); !strings.Contains(fix, "nothing to install") || !strings.Contains(fix, "CUDAGO_FAKECUDLA_PATH") {
			t.Errorf("%s: Fix() = %q", arch, fix)
		}
	}

	s := isolated(t, env)
	s.goarch = "arm64"
	if err := os.MkdirAll(filepath.Join(s.sysroot, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.sysroot, "etc/nv_tegra_release"), []byte("# R36 (release), REVISION: 4.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lib := mustFind(t, s, &sp); lib.Path != p || lib.Found != "CUDA_PATH" {
		t.Errorf("Tegra: got %s (%s), want %s (CUDA_PATH)", lib.Path, lib.Found, p)
	}

	s = isolated(t, map[string]string{"CUDAGO_FAKECUDLA_PATH": p})
	s.goarch = "amd64"
	if lib := mustFind(t, s, &sp); lib.Path != p {
		t.Errorf("override off Tegra: got %s, want %s", lib.Path, p)
	}

	// The real one on this machine: unavailable unless it is a Tegra.
	if _, err := Load(CuDLA); err != nil {
		var why string
		if nf, ok := err.(*NotFoundError); ok {
			why = nf.Unavailable
		}
		if (&searcher{getenv: os.Getenv}).notTegra() != "" && why == "" && os.Getenv("CUDAGO_CUDLA_PATH") == "" {
			t.Errorf("Load(CuDLA) off Tegra: %v, want it unavailable", err)
		}
	}
}

// TestLibraryCUDA: the CUDA release of libraries that tell it by their
// soname or their dependencies.
func TestLibraryCUDA(t *testing.T) {
	tmp := t.TempDir()
	jl := buildLib(t, filepath.Join(tmp, "link/libnvJitLink.so.13"), "libnvJitLink.so.13", fakeGeneric)
	sparse := buildLib(t, filepath.Join(tmp, "libcusparse.so.12"), "", fakeGeneric, "-Wl,--no-as-needed", "-L"+filepath.Dir(jl), "-l:libnvJitLink.so.13")
	for _, c := range []struct {
		lib  *Library
		want CUDAVersion
		ok   bool
	}{
		{&Library{Lib: CuFFT, Major: 11}, CUDAVersion{12, -1}, true},
		{&Library{Lib: CuFFT, Major: 12}, CUDAVersion{13, -1}, true},
		{&Library{Lib: CuSOLVER, Major: 11}, CUDAVersion{12, -1}, true},
		{&Library{Lib: CUPTI, Major: 13}, CUDAVersion{13, -1}, true},
		{&Library{Lib: CuSPARSE, Major: 12, Path: sparse}, CUDAVersion{13, -1}, true}, // CUDA 13's needs nvJitLink 13
		{&Library{Lib: CuRAND, Major: 10}, CUDAVersion{}, false},                      // 10 in CUDA 11, 12 and 13
		{&Library{Lib: NVVM, Major: 4}, CUDAVersion{}, false},
		{&Library{Lib: NCCL, Major: 2}, CUDAVersion{}, false},
	} {
		if got, ok := c.lib.CUDA(); got != c.want || ok != c.ok {
			t.Errorf("%s (major %d): CUDA() = %v, %v; want %v, %v", c.lib.Lib, c.lib.Major, got, ok, c.want, c.ok)
		}
	}
}

// TestGuardRails: a library of a newer CUDA than the driver supports, and
// CUDA 12 and 13 libraries in one process, are warned about; what runs by
// minor version compatibility is not.
func TestGuardRails(t *testing.T) {
	nvrtc13 := loadedLib{NVRTC, "libnvrtc.so.13", "/w/nvidia/cu13/lib/libnvrtc.so.13", CUDAVersion{13, 0}}
	nvrtc128 := loadedLib{NVRTC, "libnvrtc.so.12", "/w/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", CUDAVersion{12, 8}}
	blas128 := loadedLib{CuBLAS, "libcublas.so.12", "/w/nvidia/cublas/lib/libcublas.so.12", CUDAVersion{12, 8}}
	rt13 := loadedLib{CUDART, "libcudart.so.13", "/w/nvidia/cu13/lib/libcudart.so.13", CUDAVersion{13, 0}}
	drv124 := &CUDAVersion{12, 4}
	kinds := func(ws []Warning) (k []string) {
		for _, w := range ws {
			k = append(k, w.Kind)
		}
		return k
	}

	// NVRTC 13 on a CUDA 12.4 driver.
	ws := check(drv124, []loadedLib{nvrtc13})
	if len(ws) != 1 || ws[0].Kind != "newer-than-driver" || !reflect.DeepEqual(ws[0].Libs, []Lib{NVRTC}) {
		t.Fatalf("NVRTC 13 with driver 12.4: %v", ws)
	}
	for _, w := range []string{"libnvrtc.so.13 (CUDA 13.0, /w/nvidia/cu13/lib/libnvrtc.so.13)", "supports CUDA 12.4", "does not load",
		"driver to one for CUDA 13 (580 or newer)", "or use the CUDA 12 nvrtc"} {
		if !strings.Contains(ws[0].Text, w) {
			t.Errorf("warning lacks %q: %s", w, ws[0].Text)
		}
	}
	// NVRTC 12.8 on 12.4: its PTX is too new; cuBLAS 12.8 runs by minor
	// version compatibility.
	ws = check(drv124, []loadedLib{nvrtc128, blas128})
	if len(ws) != 1 || ws[0].Libs[0] != NVRTC || !strings.Contains(ws[0].Text, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") || !strings.Contains(ws[0].Text, "cubin") {
		t.Errorf("NVRTC and cuBLAS 12.8 with driver 12.4: %v", ws)
	}
	// The same on a CUDA 13.0 driver: nothing to say.
	if ws := check(&CUDAVersion{13, 0}, []loadedLib{nvrtc128, blas128}); len(ws) != 0 {
		t.Errorf("12.8 libraries with driver 13.0: %v", ws)
	}
	// cuBLAS 12 with the CUDA 13 runtime, no driver known: the mix only.
	ws = check(nil, []loadedLib{blas128, rt13})
	if !reflect.DeepEqual(kinds(ws), []string{"cuda-mix"}) {
		t.Fatalf("cuBLAS 12 and cudart 13: %v", ws)
	}
	for _, w := range []string{"CUDA 12: libcublas.so.12 (/w/nvidia/cublas/lib/libcublas.so.12)", "CUDA 13: libcudart.so.13 (/w/nvidia/cu13/lib/libcudart.so.13)",
		"cuBLAS 12 needs cuBLASLt 12", "install one major's libraries"} {
		if !strings.Contains(ws[0].Text, w) {
			t.Errorf("warning lacks %q: %s", w, ws[0].Text)
		}
	}
	if !slices.Equal(ws[0].Libs, []Lib{CuBLAS, CUDART}) {
		t.Errorf("Libs = %v", ws[0].Libs)
	}
	// Both, with the 12.4 driver.
	if k := kinds(check(drv124, []loadedLib{blas128, rt13})); !reflect.DeepEqual(k, []string{"newer-than-driver", "cuda-mix"}) {
		t.Errorf("kinds %v", k)
	}
	if ws := check(drv124, []loadedLib{blas128}); len(ws) != 0 {
		t.Errorf("one CUDA 12.8 math library on a 12.4 driver: %v", ws)
	}
}

// TestRealInstalled loads the real cuDNN, CUPTI and cuTENSOR where the
// machine has them (a GPU machine's PyTorch environment: run with
// VIRTUAL_ENV set to it) and checks what was loaded with them; it skips
// each that is not installed.
func TestRealInstalled(t *testing.T) {
	for _, l := range []Lib{CuDNN, CUPTI, CuTENSOR} {
		t.Run(string(l), func(t *testing.T) {
			lib, err := Load(l)
			var nf *NotFoundError
			if errors.As(err, &nf) && nf.Cause == nil {
				t.Skipf("%s is not installed here", l)
			}
			if err != nil {
				t.Fatal(err)
			}
			v, verr := lib.Version()
			c, cok := lib.CUDA()
			t.Logf("%s %s (%s): version %q (%v), CUDA %v (%v)\ncompanions %q\nwarnings %q", l, lib.Path, lib.Found, v, verr, c, cok, lib.Companions, lib.Warnings)
			if verr != nil || !cok || (c.Major != 12 && c.Major != 13) {
				t.Errorf("version %q (%v), CUDA %v (%v); want both, CUDA 12 or 13", v, verr, c, cok)
			}
			dir := filepath.Dir(realpath(lib.Path))
			switch l {
			case CuDNN:
				if !strings.HasPrefix(v, "9.") {
					t.Errorf("cuDNN version %q, want 9.x", v)
				}
				for _, sub := range specOf(CuDNN).subs {
					if slices.Contains(specOf(CuDNN).optSubs, sub) && !exists(filepath.Join(dir, sub)) {
						continue
					}
					if dlnoload(sub) == nil {
						t.Errorf("%s is not loaded", sub)
					}
				}
				if lt := fmt.Sprintf("libcublasLt.so.%d", c.Major); dlnoload(lt) == nil {
					t.Errorf("%s, which cuDNN opens, is not loaded", lt)
				}
				if len(lib.Warnings) != 0 {
					t.Errorf("warnings %q", lib.Warnings)
				}
			case CuTENSOR:
				if !strings.HasPrefix(v, "2.") || dlnoload(fmt.Sprintf("libcublasLt.so.%d", c.Major)) == nil {
					t.Errorf("cuTENSOR %q without its cuBLASLt %d loaded", v, c.Major)
				}
			}
		})
	}
	for _, w := range Check() {
		t.Logf("guard rail (%s): %s", w.Kind, w.Text)
	}
}
