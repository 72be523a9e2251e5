package pathfinder

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLibs(t *testing.T) {
	want := []Lib{Driver, NVML, NVRTC, NVJitLink, NVFatbin, NVVM, CuFile, CUDART, CuBLASLt, CuBLAS, CuFFT, CuRAND, CuSPARSE, CuSOLVER, NVTX, NCCL,
		CUPTI, CuDNN, CuTENSOR, CuDLA}
	if got := Libs(); !reflect.DeepEqual(got, want) {
		t.Errorf("Libs() = %v, want %v", got, want)
	}
	envs := map[Lib]string{
		Driver: "CUDAGO_DRIVER_PATH", NVML: "CUDAGO_NVML_PATH", NVRTC: "CUDAGO_NVRTC_PATH", NVJitLink: "CUDAGO_NVJITLINK_PATH",
		NVFatbin: "CUDAGO_NVFATBIN_PATH", NVVM: "CUDAGO_NVVM_PATH", CuFile: "CUDAGO_CUFILE_PATH",
		CUDART: "CUDAGO_CUDART_PATH", CuBLASLt: "CUDAGO_CUBLASLT_PATH", CuBLAS: "CUDAGO_CUBLAS_PATH",
		CuFFT: "CUDAGO_CUFFT_PATH", CuRAND: "CUDAGO_CURAND_PATH", CuSPARSE: "CUDAGO_CUSPARSE_PATH",
		CuSOLVER: "CUDAGO_CUSOLVER_PATH", NVTX: "CUDAGO_NVTOOLSEXT_PATH", NCCL: "CUDAGO_NCCL_PATH",
		CUPTI: "CUDAGO_CUPTI_PATH", CuDNN: "CUDAGO_CUDNN_PATH", CuTENSOR: "CUDAGO_CUTENSOR_PATH", CuDLA: "CUDAGO_CUDLA_PATH",
	}
	for l, env := range envs {
		if got := l.EnvVar(); got != env {
			t.Errorf("%s.EnvVar() = %q, want %q", l, got, env)
		}
	}
	sonames := map[Lib][]string{
		Driver:    {"libcuda.so.1"},
		NVML:      {"libnvidia-ml.so.1"},
		NVRTC:     {"libnvrtc.so.13", "libnvrtc.so.12"},
		NVJitLink: {"libnvJitLink.so.13", "libnvJitLink.so.12"},
		NVFatbin:  {"libnvfatbin.so.13", "libnvfatbin.so.12"},
		NVVM:      {"libnvvm.so.4", "libnvvm.so"},
		CuFile:    {"libcufile.so.0"},
		CUDART:    {"libcudart.so.13", "libcudart.so.12"},
		CuBLASLt:  {"libcublasLt.so.13", "libcublasLt.so.12"},
		CuBLAS:    {"libcublas.so.13", "libcublas.so.12"},
		CuFFT:     {"libcufft.so.12", "libcufft.so.11"},
		CuRAND:    {"libcurand.so.10"},
		CuSPARSE:  {"libcusparse.so.12"},
		CuSOLVER:  {"libcusolver.so.12", "libcusolver.so.11"},
		NVTX:      {"libnvToolsExt.so.1"},
		NCCL:      {"libnccl.so.2"},
		CUPTI:     {"libcupti.so.13", "libcupti.so.12"},
		CuDNN:     {"libcudnn.so.9"},
		CuTENSOR:  {"libcutensor.so.2"},
		CuDLA:     {"libcudla.so.1"},
	}
	for l, want := range sonames {
		if got := l.Sonames(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s.Sonames() = %q, want %q", l, got, want)
		}
	}
	if Lib("nope").EnvVar() != "" || Lib("nope").Sonames() != nil {
		t.Error("unknown library has an env var or sonames")
	}
	if len(envs) != len(want) || len(sonames) != len(want) {
		t.Errorf("the test covers %d env vars and %d soname lists for %d libraries", len(envs), len(sonames), len(want))
	}

	// Dependencies come before the libraries that need them (Report loads
	// each by its own search first), and match the libraries' DT_NEEDED.
	deps := map[Lib][]Lib{CuBLAS: {CuBLASLt}, CuSPARSE: {NVJitLink}, CuSOLVER: {NVJitLink, CuSPARSE, CuBLASLt, CuBLAS},
		CuDNN: {CuBLASLt}, CuTENSOR: {CuBLASLt}}
	pos := map[Lib]int{}
	for i, l := range want {
		pos[l] = i
	}
	for _, s := range specs {
		if !reflect.DeepEqual(s.deps, deps[s.lib]) {
			t.Errorf("%s depends on %v, want %v", s.lib, s.deps, deps[s.lib])
		}
		for _, d := range s.deps {
			if pos[d] > pos[s.lib] {
				t.Errorf("%s comes before its dependency %s in Libs()", s.lib, d)
			}
		}
		// Every toolkit library has CUDA 13's wheel directory first, then
		// its own; those that are no part of the toolkit have their own.
		if w, ok := otherWheels[s.lib]; ok {
			if !reflect.DeepEqual(s.wheel, w) {
				t.Errorf("%s wheel directories %q, want %q", s.lib, s.wheel, w)
			}
			continue
		}
		if !s.systemFirst && (len(s.wheel) != 2 || s.wheel[0] != "nvidia/cu13/lib" || !strings.HasPrefix(s.wheel[1], "nvidia/")) {
			t.Errorf("%s wheel directories %q", s.lib, s.wheel)
		}
	}
	if w := specOf(CuBLAS).wheel[1]; w != "nvidia/cublas/lib" || specOf(CuBLASLt).wheel[1] != w {
		t.Errorf("cuBLAS and cuBLASLt share one wheel: %q, %q", w, specOf(CuBLASLt).wheel)
	}
	for _, l := range []Lib{Driver, NVML} {
		// Parts of the driver: the system's first, no wheel.
		if s := specOf(l); s.wheel != nil || !s.systemFirst {
			t.Errorf("%s: wheel directories %q, system loader first %v", l, s.wheel, s.systemFirst)
		}
	}
}

// otherWheels are the wheel directories of the libraries that are no part
// of the toolkit's wheels: NCCL's (nvidia-nccl-cu12 and -cu13), cuDNN's
// (nvidia-cudnn-cu12 and -cu13), cuTENSOR's (cutensor-cu12 and -cu13), and
// cuDLA, only in CUDA 13's.
var otherWheels = map[Lib][]string{
	NCCL:     {"nvidia/nccl/lib"},
	CuDNN:    {"nvidia/cudnn/lib", "nvidia/cu13/lib"},
	CuTENSOR: {"cutensor/lib"},
	CuDLA:    {"nvidia/cu13/lib"},
}

func TestSonameMajor(t *testing.T) {
	for name, want := range map[string]int{
		"libnvrtc.so.12":            12,
		"libnvJitLink.so.13":        13,
		"libnvvm.so.4":              4,
		"libcuda.so.1":              1,
		"libcufile.so.0":            0,
		"libnvrtc-builtins.so.12.4": 12,
		"libnvvm.so.4.0.0":          4,
		"libnvvm.so":                -1,
		"libx.so.abc":               -1,
	} {
		if got := sonameMajor(name); got != want {
			t.Errorf("sonameMajor(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestFileVersion reads the version from the name of the file a link
// points to, and takes only a dotted version for one.
func TestFileVersion(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]string{
		"libnvJitLink.so.12.10.12": "12.10.12",
		"libcufile.so.1.9.1":       "1.9.1",
		"libnvvm.so.4.0.0":         "4.0.0",
		"libfoo.so.1.debug":        "",
		"libfoo.so.":               "",
		"libfoo.so":                "",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link-"+name)
		if err := os.Symlink(name, link); err != nil {
			t.Fatal(err)
		}
		got, err := fileVersion(link)
		switch {
		case want == "" && (err == nil || !strings.Contains(err.Error(), "no version in file name "+p)):
			t.Errorf("fileVersion(-> %s) = %q, %v; want an error naming %s", name, got, err, p)
		case want != "" && (err != nil || got != want):
			t.Errorf("fileVersion(-> %s) = %q, %v; want %s", name, got, err, want)
		}
	}
}

func TestNotFoundErrorMessage(t *testing.T) {
	e := &NotFoundError{Lib: NVFatbin, Tried: []Attempt{
		{"", "env CUDAGO_NVFATBIN_PATH", "not set"},
		{"/opt/cuda", "CUDA_HOME", "no libnvfatbin.so.13 or libnvfatbin.so.12 in lib64"},
		{"libnvfatbin.so.12", "system loader", "libnvfatbin.so.12: cannot open shared object file: No such file or directory"},
	}}
	msg := e.Error()
	want := []string{
		"pathfinder: cannot find nvfatbin (libnvfatbin.so.13, libnvfatbin.so.12); tried:",
		"\n\tenv CUDAGO_NVFATBIN_PATH: not set",
		"\n\tCUDA_HOME: /opt/cuda: no libnvfatbin.so.13 or libnvfatbin.so.12 in lib64",
		"\n\tsystem loader: libnvfatbin.so.12: libnvfatbin.so.12: cannot open shared object file",
		"\nhint: set CUDAGO_NVFATBIN_PATH to the library file or its directory, set CUDA_PATH (or CUDA_HOME)",
		"scripts/setup-cuda.sh",
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}

	e = &NotFoundError{Lib: NVVM, Override: "CUDAGO_NVVM_PATH", Tried: []Attempt{{"/x/libnvvm.so.4", "env CUDAGO_NVVM_PATH", "no such file or directory"}}}
	msg = e.Error()
	for _, w := range []string{"cannot load nvvm from CUDAGO_NVVM_PATH", "/x/libnvvm.so.4: no such file or directory", "unset it"} {
		if !strings.Contains(msg, w) {
			t.Errorf("override message lacks %q:\n%s", w, msg)
		}
	}
}

func TestNCCLVersion(t *testing.T) {
	for code, want := range map[int]string{22203: "2.22.3", 22803: "2.28.3", 21003: "2.10.3", 2708: "2.7.8", 2400: "2.4.0"} {
		if got := ncclVersion(code); got != want {
			t.Errorf("ncclVersion(%d) = %q, want %s", code, got, want)
		}
	}
}
