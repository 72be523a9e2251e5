//go:build linux && cgo

package pathfinder

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeFile writes body to root/rel (creating its directory), executable
// when exec is set, and returns its path.
func writeFile(t *testing.T, root, rel, body string, exec bool) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFindArtifactOrder puts every artifact in every place of its layout
// and removes the places one at a time: the order of Find's doc, with each
// layout's own directories (CUDA 12 and 13 wheels, conda's targets
// directory, Debian's, the clone's .cuda/bin).
func TestFindArtifactOrder(t *testing.T) {
	_, targets := archDirs()
	ma, _ := archDirs()
	// Where each artifact is put in each place, relative to its root.
	type layout struct {
		root, home, local, wheel, conda, path, usrLocal, system string
	}
	layouts := map[Artifact]layout{
		CUDAHeaders:  {"include/cuda_runtime.h", "targets/" + targets[0] + "/include/cuda_runtime.h", "usr/include/cuda_runtime.h", "nvidia/cuda_runtime/include/cuda_runtime.h", "targets/" + targets[0] + "/include/cuda_runtime.h", "", "include/cuda_runtime.h", "usr/include/cuda_runtime.h"},
		CuDNNHeaders: {"include/cudnn.h", "include/cudnn.h", "usr/include/" + ma + "/cudnn.h", "nvidia/cudnn/include/cudnn.h", "include/cudnn.h", "", "include/cudnn.h", "usr/include/" + ma + "/cudnn.h"},
		NCCLHeaders:  {"include/nccl.h", "include/nccl.h", "usr/include/nccl.h", "nvidia/nccl/include/nccl.h", "include/nccl.h", "", "include/nccl.h", "usr/local/include/nccl.h"},
		NVCC:         {"bin/nvcc", "bin/nvcc", "../bin/nvcc", "nvidia/cuda_nvcc/bin/nvcc", "bin/nvcc", "nvcc", "bin/nvcc", "usr/lib/nvidia-cuda-toolkit/bin/nvcc"},
		NVDisasm:     {"bin/nvdisasm", "bin/nvdisasm", "usr/bin/nvdisasm", "nvidia/cu13/bin/nvdisasm", "bin/nvdisasm", "nvdisasm", "bin/nvdisasm", "usr/bin/nvdisasm"},
		CuObjDump:    {"bin/cuobjdump", "bin/cuobjdump", "usr/lib/nvidia-cuda-toolkit/bin/cuobjdump", "nvidia/cuda_cuobjdump/bin/cuobjdump", "bin/cuobjdump", "cuobjdump", "bin/cuobjdump", "usr/bin/cuobjdump"},
		Cudadevrt:    {"lib64/libcudadevrt.a", "targets/" + targets[0] + "/lib/libcudadevrt.a", "usr/lib/" + ma + "/libcudadevrt.a", "nvidia/cu13/lib/libcudadevrt.a", "lib/libcudadevrt.a", "", "lib64/libcudadevrt.a", "usr/lib/" + ma + "/libcudadevrt.a"},
		Libdevice:    {"nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc", "usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc", "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc", "", "nvvm/libdevice/libdevice.10.bc", "usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc"},
	}
	if len(layouts) != len(Artifacts()) {
		t.Fatalf("the test lays out %d artifacts of %d", len(layouts), len(Artifacts()))
	}
	for _, a := range Artifacts() {
		t.Run(string(a), func(t *testing.T) {
			tmp := t.TempDir()
			l := layouts[a]
			sp := artifactSpecOf(a)
			put := func(root, rel string) string {
				if rel == "" {
					return ""
				}
				return writeFile(t, filepath.Join(tmp, root), rel, "x\n", sp.tool)
			}
			want := func(p string) string {
				if sp.dir {
					return filepath.Dir(p)
				}
				return p
			}
			override := put("override", sp.file)
			cpath := put("cpath", l.root)
			home := put("home", l.home)
			if err := os.MkdirAll(filepath.Join(tmp, "proj/.cuda/root"), 0o755); err != nil {
				t.Fatal(err)
			}
			local := put("proj/.cuda/root", l.local) // nvcc: the clone's .cuda/bin
			site := put("site", l.wheel)
			conda := put("conda", l.conda)
			path := put("pathdir", l.path)
			usrLocal := put("sys/usr/local/cuda", l.usrLocal)
			system := put("sys", l.system)
			env := map[string]string{
				sp.env:               filepath.Dir(override),
				"CUDA_PATH":          filepath.Join(tmp, "cpath"),
				"CUDA_HOME":          filepath.Join(tmp, "home"),
				"CUDAGO_LOCAL_CUDA":  filepath.Join(tmp, "proj/.cuda/root"),
				"CUDAGO_PYTHON_SITE": filepath.Join(tmp, "site"),
				"CONDA_PREFIX":       filepath.Join(tmp, "conda"),
				"PATH":               filepath.Join(tmp, "pathdir"),
			}
			s := &searcher{cwd: tmp, sysroot: filepath.Join(tmp, "sys")}
			steps := []struct {
				drop, path, found string
			}{
				{"", override, "env " + sp.env},
				{sp.env, cpath, "CUDA_PATH"},
				{"CUDA_PATH", home, "CUDA_HOME"},
				{"CUDA_HOME", local, "local install"},
				{"CUDAGO_LOCAL_CUDA", site, "CUDAGO_PYTHON_SITE"},
				{"CUDAGO_PYTHON_SITE", conda, "CONDA_PREFIX"},
				{"CONDA_PREFIX", path, "PATH"},
				{"PATH", usrLocal, "/usr/local/cuda"},
				{"/usr/local/cuda", system, "system"},
			}
			for _, st := range steps {
				switch st.drop {
				case "":
				case "/usr/local/cuda":
					if err := os.RemoveAll(filepath.Join(tmp, "sys/usr/local/cuda")); err != nil {
						t.Fatal(err)
					}
				case "CUDAGO_LOCAL_CUDA":
					env[st.drop] = filepath.Join(tmp, "nowhere")
				case "CUDAGO_PYTHON_SITE":
					env[st.drop] = "off"
				default:
					delete(env, st.drop)
				}
				if st.path == "" {
					continue // no such place for this artifact (PATH for headers)
				}
				s.getenv = envOf(env)
				loc, err := s.findArtifact(sp)
				if err != nil {
					t.Fatalf("without %s: %v", st.drop, err)
				}
				if loc.Path != want(st.path) || loc.Found != st.found || loc.Artifact != a {
					t.Errorf("without %q: got %s (%s), want %s (%s)", st.drop, loc.Path, loc.Found, want(st.path), st.found)
				}
			}

			// Nothing left: every place is listed, with the hint.
			if err := os.RemoveAll(filepath.Join(tmp, "sys")); err != nil {
				t.Fatal(err)
			}
			_, err := s.findArtifact(sp)
			var nf *ArtifactNotFoundError
			if !errors.As(err, &nf) || nf.Artifact != a || nf.Override != "" {
				t.Fatalf("nothing left: %v", err)
			}
			var places []string
			for _, at := range nf.Tried {
				places = append(places, at.Where)
			}
			wantPlaces := []string{"env " + sp.env, "CUDA_PATH", "CUDA_HOME", "local install", "CUDAGO_PYTHON_SITE", "CONDA_PREFIX", "/usr/local/cuda", "system"}
			if sp.tool {
				wantPlaces = []string{"env " + sp.env, "CUDA_PATH", "CUDA_HOME", "local install", "CUDAGO_PYTHON_SITE", "CONDA_PREFIX", "PATH", "/usr/local/cuda", "system"}
			}
			if !reflect.DeepEqual(places, wantPlaces) {
				t.Errorf("places tried %q, want %q", places, wantPlaces)
			}
			msg := err.Error()
			for _, w := range []string{"pathfinder: cannot find " + string(a) + " (" + sp.file + "); tried:", "\nhint: ", "CUDA_PATH", "pip install " + sp.pip, "conda install " + sp.condaPkg, sp.env} {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestFindArtifactOverride: the override variable names the file, its
// directory or a root; a wrong one stops the search and says why.
func TestFindArtifactOverride(t *testing.T) {
	tmp := t.TempDir()
	sp := artifactSpecOf(NVCC)
	nvcc := writeFile(t, tmp, "cuda/bin/nvcc", "#!/bin/sh\n", true)
	for _, v := range []string{nvcc, filepath.Dir(nvcc), filepath.Join(tmp, "cuda"), "cuda/bin/nvcc"} {
		s := &searcher{getenv: envOf(map[string]string{sp.env: v, "CUDA_PATH": filepath.Join(tmp, "nowhere")}), cwd: tmp}
		loc, err := s.findArtifact(sp)
		if err != nil || loc.Path != nvcc || loc.Found != "env CUDAGO_NVCC_PATH" {
			t.Errorf("%s=%s: %v, %v", sp.env, v, loc, err)
		}
	}
	noexec := writeFile(t, tmp, "noexec/nvcc", "#!/bin/sh\n", false)
	other := writeFile(t, tmp, "other/nvcc.sh", "#!/bin/sh\n", true)
	for v, why := range map[string]string{noexec: "not executable", other: "not named nvcc", filepath.Join(tmp, "missing"): "no such file or directory",
		filepath.Dir(noexec): "not executable"} {
		s := &searcher{getenv: envOf(map[string]string{sp.env: v}), cwd: tmp}
		_, err := s.findArtifact(sp)
		var nf *ArtifactNotFoundError
		if !errors.As(err, &nf) || nf.Override != sp.env || len(nf.Tried) != 1 || !strings.Contains(nf.Tried[0].Err, why) {
			t.Errorf("%s=%s: %v; want only the override tried, saying %q", sp.env, v, err, why)
			continue
		}
		if !strings.Contains(err.Error(), "set, so nothing else was searched") || !strings.Contains(nf.Fix(), "unset it") {
			t.Errorf("%s=%s: message %q", sp.env, v, err)
		}
	}
}

// TestArtifactVersions: the versions the headers declare, and the one a
// tool prints.
func TestArtifactVersions(t *testing.T) {
	tmp := t.TempDir()
	inc := filepath.Join(tmp, "include")
	writeFile(t, inc, "cuda_runtime.h", "#include \"cuda_runtime_api.h\"\n", false)
	writeFile(t, inc, "cuda_runtime_api.h", "/* the API */\n#define CUDART_VERSION 13000\n", false)
	writeFile(t, inc, "cudnn.h", "#include \"cudnn_version.h\"\n", false)
	writeFile(t, inc, "cudnn_version.h", "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 10\n#define CUDNN_PATCHLEVEL 2\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000)\n", false)
	writeFile(t, inc, "nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 3\n#define NCCL_SUFFIX \"\"\n", false)
	writeFile(t, tmp, "bin/nvcc", "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release 13.0, V13.0.48'\n", true)
	writeFile(t, tmp, "bin/nvdisasm", "#!/bin/sh\necho 'unknown option' >&2\nexit 2\n", true)
	writeFile(t, tmp, "bin/cuobjdump", "#!/bin/sh\nexec sleep 30\n", true)
	s := &searcher{getenv: envOf(map[string]string{"CUDA_PATH": tmp}), cwd: tmp}
	for a, want := range map[Artifact]string{CUDAHeaders: "13.0", CuDNNHeaders: "9.10.2", NCCLHeaders: "2.28.3"} {
		loc, err := s.findArtifact(artifactSpecOf(a))
		if err != nil || loc.Version != want || loc.Path != inc {
			t.Errorf("%s: %v, %v; want %s in %s", a, loc, err, want, inc)
		}
	}
	// cuDNN 7 and older declare it in cudnn.h itself; CUDA without the
	// runtime's header, in cuda.h.
	old := filepath.Join(tmp, "old")
	writeFile(t, old, "cudnn.h", "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n", false)
	writeFile(t, old, "cuda.h", "#define CUDA_VERSION 12040\n", false)
	if v := cudnnHeaderVersion(old); v != "7.6.5" {
		t.Errorf("cudnn.h of cuDNN 7: %q", v)
	}
	if v := cudaHeaderVersion(old); v != "12.4" {
		t.Errorf("cuda.h alone: %q", v)
	}

	loc, err := s.findArtifact(artifactSpecOf(NVCC))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ToolVersion(loc, 10*time.Second); err != nil || v != "13.0.48" {
		t.Errorf("ToolVersion(nvcc) = %q, %v", v, err)
	}
	loc, _ = s.findArtifact(artifactSpecOf(NVDisasm))
	if _, err := ToolVersion(loc, 10*time.Second); err == nil || !strings.Contains(err.Error(), "exit status 2: unknown option") {
		t.Errorf("ToolVersion of a failing tool: %v", err)
	}
	loc, _ = s.findArtifact(artifactSpecOf(CuObjDump))
	start := time.Now()
	if _, err := ToolVersion(loc, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no answer within 200ms") || time.Since(start) > 5*time.Second {
		t.Errorf("ToolVersion of a hanging tool: %v after %v", err, time.Since(start))
	}
	if _, err := ToolVersion(&Located{Artifact: Libdevice, Path: "x"}, time.Second); err == nil {
		t.Error("ToolVersion(libdevice) succeeded")
	}
	if _, err := Find("cudnn-library"); err == nil || !strings.Contains(err.Error(), "unknown artifact") {
		t.Errorf("Find(unknown) = %v", err)
	}
}

// TestLocalArtifacts finds the local install's headers, tools and device
// libraries (Debian's CUDA 12.4 layout) and checks what they are.
func TestLocalArtifacts(t *testing.T) {
	localInstall(t)
	if os.Getenv("CUDA_PATH") != "" || os.Getenv("CUDA_HOME") != "" {
		t.Skip("CUDA_PATH or CUDA_HOME is set: the local install is not searched first")
	}
	for _, a := range Artifacts() {
		if os.Getenv(a.EnvVar()) != "" {
			t.Skipf("%s is set", a.EnvVar())
		}
	}
	st := ReportFiles()
	if len(st) != len(Artifacts()) {
		t.Fatalf("ReportFiles() has %d entries, want %d", len(st), len(Artifacts()))
	}
	byA := map[Artifact]FileStatus{}
	for _, s := range st {
		t.Logf("%s: %v %v %s %v", s.Artifact, s.File, s.Err, s.Version, s.VersionErr)
		byA[s.Artifact] = s
	}
	// cuDNN is no part of the local install.
	for a, want := range map[Artifact]string{CUDAHeaders: "12.4", NCCLHeaders: "2.22.3", NVCC: `^12\.4\.\d+$`, NVDisasm: `^12\.4\.\d+$`, CuObjDump: `^12\.4\.\d+$`,
		Cudadevrt: "", Libdevice: ""} {
		s := byA[a]
		if s.Err != nil {
			t.Errorf("%s: %v", a, s.Err)
			continue
		}
		if s.File.Found != "local install" {
			t.Errorf("%s found by %s, want the local install", a, s.File.Found)
		}
		if !regexp.MustCompile(want).MatchString(s.Version) || (want == "" && s.Version != "") {
			t.Errorf("%s: version %q (%v), want %s", a, s.Version, s.VersionErr, want)
		}
	}
	if s := byA[CUDAHeaders]; s.File != nil {
		for _, h := range []string{"cuda.h", "cuda_runtime.h"} {
			if _, err := os.Stat(filepath.Join(s.File.Path, h)); err != nil {
				t.Errorf("the CUDA include directory lacks %s: %v", h, err)
			}
		}
	}
	magic := map[Artifact][]byte{Cudadevrt: []byte("!<arch>\n"), Libdevice: {'B', 'C', 0xC0, 0xDE}}
	for a, m := range magic {
		if s := byA[a]; s.File != nil {
			b, err := os.ReadFile(s.File.Path)
			if err != nil || !bytes.HasPrefix(b, m) {
				t.Errorf("%s %s does not start with %q (%v)", a, s.File.Path, m, err)
			}
		}
	}
}
