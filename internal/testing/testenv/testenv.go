// Package testenv holds what cudago's tests share: finding the project-local
// CUDA install and tools, and deciding whether a GPU test runs.
package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// OnGPUMachine reports whether the tests run from the GPU bundle
// (CUDAGO_REQUIRE_GPU=1), where the machine's own CUDA replaces the local
// 12.4 install.
func OnGPUMachine() bool { return os.Getenv("CUDAGO_REQUIRE_GPU") == "1" }

// RepoRoot walks up from the working directory to the folder holding go.mod.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + wd)
		}
	}
}

// LocalCUDA returns the root of the CUDA 12.4 install that
// scripts/setup-cuda.sh makes. Without it the test fails, except on the GPU
// machine, where it is skipped: there the machine's CUDA is used and the
// test's local-install assertions are CI's job.
func LocalCUDA(t testing.TB) string {
	t.Helper()
	if r := os.Getenv("CUDAGO_LOCAL_CUDA"); r != "" {
		return r
	}
	root, err := RepoRoot()
	if err == nil {
		p := filepath.Join(root, ".cuda", "root")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if OnGPUMachine() {
		t.Skip("uses the local CUDA 12.4 install, which the GPU machine does not have (it runs in CI)")
	}
	t.Fatal("no local CUDA install: run scripts/setup-cuda.sh")
	return ""
}

// Tool finds an NVIDIA command-line tool (cuobjdump, nvcc): on PATH, in the
// local install's .cuda/bin, or in /usr/local/cuda/bin. It fails the test
// when the tool is absent.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	var cands []string
	if root, err := RepoRoot(); err == nil {
		cands = append(cands, filepath.Join(root, ".cuda", "bin", name))
	}
	cands = append(cands, filepath.Join("/usr/local/cuda/bin", name))
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	t.Fatalf("%s not found on PATH, in .cuda/bin or /usr/local/cuda/bin: run scripts/setup-cuda.sh", name)
	return ""
}

var gpu struct {
	once sync.Once
	err  error
}

// GPUError returns why there is no usable GPU, or nil when there is one:
// for tests that check what a library does without a GPU.
func GPUError() error {
	gpu.once.Do(func() {
		if err := driver.Init(0); err != nil {
			gpu.err = err
			return
		}
		n, err := driver.DeviceGetCount()
		if err == nil && n == 0 {
			err = driver.ErrorNoDevice
		}
		gpu.err = err
	})
	return gpu.err
}

// RequireGPU skips the test when there is no usable GPU, and fails it
// instead when CUDAGO_REQUIRE_GPU=1 (the GPU bundle sets it).
func RequireGPU(t testing.TB) {
	t.Helper()
	if GPUError() == nil {
		return
	}
	if OnGPUMachine() {
		t.Fatalf("CUDAGO_REQUIRE_GPU=1 but no GPU: %v", gpu.err)
	}
	t.Skipf("no GPU: %v", gpu.err)
}
