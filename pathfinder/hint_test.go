//go:build linux && cgo

package pathfinder

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newerGlibcLib builds, at path, a library that needs the symbol version
// GLIBC_9.99 of libc.so.6, which no glibc has: the loader refuses it as it
// refuses Debian trixie's libnccl.so.2 (GLIBC_2.38) on Debian 12. It links
// against a stub libc.so.6 that defines that version.
func newerGlibcLib(t *testing.T, path string) {
	t.Helper()
	stub := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(stub, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	libc := filepath.Join(stub, "libc.so.6")
	gcc := func(args ...string) {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	gcc("-shared", "-fPIC", "-nostdlib", "-o", libc, write("stub.c", "int cudago_newer_libc(void) { return 1; }\n"),
		"-Wl,-soname,libc.so.6", "-Wl,--version-script="+write("stub.map", "GLIBC_9.99 { global: cudago_newer_libc; local: *; };\n"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	gcc("-shared", "-fPIC", "-nostdlib", "-o", path,
		write("lib.c", "int cudago_newer_libc(void);\nint cudago_fake(void) { return cudago_newer_libc(); }\n"), libc)
}

// TestCauseNewerGlibc: a library found but built for a newer glibc is the
// cause, said first with its fix, not one line among the places searched.
func TestCauseNewerGlibc(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	p := filepath.Join(home, "lib64", "libcudagofake4.so.2")
	newerGlibcLib(t, p)
	sp := &spec{lib: "cudagofake4", env: "CUDAGO_FAKE4_PATH", sonames: []string{"libcudagofake4.so.2"}}
	s := &searcher{getenv: envOf(map[string]string{"CUDA_HOME": home, "CUDAGO_PYTHON_SITE": "off"}), cwd: tmp, sysroot: filepath.Join(tmp, "sys")}
	_, err := s.find(sp)
	nf := notFound(t, err)
	c := nf.Cause
	if c == nil {
		t.Fatalf("no Cause:\n%v", err)
	}
	libc := libcVersion()
	if libc == "" {
		t.Fatal("libcVersion() is empty on a glibc system")
	}
	if c.Path != p || c.Where != "CUDA_HOME" || !strings.Contains(c.Err, "version `GLIBC_9.99' not found") {
		t.Errorf("Cause = %+v; want %s in CUDA_HOME refused for GLIBC_9.99", c, p)
	}
	if want := "needs glibc 9.99 or newer (GLIBC_9.99), and this system has glibc " + libc; c.Reason != want {
		t.Errorf("Reason = %q, want %q", c.Reason, want)
	}
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	if want := "pathfinder: cannot load cudagofake4: " + p + " (CUDA_HOME) needs glibc 9.99 or newer"; !strings.HasPrefix(first, want) {
		t.Errorf("first line %q, want it to start with %q", first, want)
	}
	for _, w := range []string{"\nfix: install a libcudagofake4.so.2 built for glibc " + libc + " or older", "CUDAGO_FAKE4_PATH",
		"or run on a system with glibc 9.99 or newer", "\ntried:", "version `GLIBC_9.99' not found"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
	if nf.Fix() != c.Fix {
		t.Errorf("Fix() = %q, want the cause's %q", nf.Fix(), c.Fix)
	}

	// Named by the override variable, the same cause.
	_, err = (&searcher{getenv: envOf(map[string]string{"CUDAGO_FAKE4_PATH": p}), cwd: tmp}).find(sp)
	nf = notFound(t, err)
	if nf.Cause == nil || nf.Cause.Where != "env CUDAGO_FAKE4_PATH" || !strings.HasPrefix(err.Error(), "pathfinder: cannot load cudagofake4 from CUDAGO_FAKE4_PATH: "+p) {
		t.Errorf("override: Cause %+v, message:\n%v", nf.Cause, err)
	}
}

func TestExplain(t *testing.T) {
	nccl := specOf(NCCL)
	const p = "/x/lib/libnccl.so.2"
	for _, c := range []struct {
		dlerr, libc string
		reason      []string
		fix         []string
	}{
		{"/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by " + p + ")", "2.36",
			[]string{"needs glibc 2.38 or newer (GLIBC_2.38), and this system has glibc 2.36"},
			[]string{"install a libnccl.so.2 built for glibc 2.36 or older", "pip install nvidia-nccl-cu13 for CUDA 13, nvidia-nccl-cu12 for CUDA 12",
				"CUDAGO_NCCL_PATH", "or run on a system with glibc 2.38 or newer"}},
		{"/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by " + p + ")", "2.39",
			[]string{"this system has glibc 2.39", "LD_LIBRARY_PATH"}, []string{"CUDAGO_NCCL_PATH"}},
		{"/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by " + p + ")", "",
			[]string{"needs glibc 2.38 or newer", "an older glibc"}, []string{"built for this system's glibc"}},
		{"/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by " + p + ")", "2.36",
			[]string{"needs a newer C++ runtime (GLIBCXX_3.4.32)"}, []string{"newer libstdc++", "CUDAGO_NCCL_PATH"}},
		{p + ": wrong ELF class: ELFCLASS32", "2.36", []string{"another word size (wrong ELF class: ELFCLASS32)"}, []string{"64-bit"}},
		{p + ": invalid ELF header", "2.36", []string{"not a shared library (invalid ELF header)", "Git LFS"}, []string{"reinstall it"}},
		{p + ": file too short", "2.36", []string{"not a shared library (file too short)"}, []string{"reinstall it"}},
		{p + ": cannot open shared object file: Permission denied", "2.36", []string{"permission denied"}, []string{"chmod"}},
		{p + ": undefined symbol: cudaFoo_v2", "2.36", []string{"needs the symbol cudaFoo_v2"}, []string{"one install together"}},
		{"libcudart.so.12: cannot open shared object file: No such file or directory", "2.36",
			[]string{"needs libcudart.so.12, which the loader cannot find"}, []string{"install libcudart.so.12 beside it"}},
		{p + ": cannot enable executable stack as shared object requires: Invalid argument", "2.36",
			[]string{"is refused by the loader: cannot enable executable stack"}, []string{"CUDAGO_NCCL_PATH"}},
	} {
		f := explain(nccl, p, "local install", c.dlerr, c.libc)
		if f.Path != p || f.Where != "local install" || f.Err != c.dlerr {
			t.Errorf("%s: got %+v", c.dlerr, f)
		}
		for _, w := range c.reason {
			if !strings.Contains(f.Reason, w) {
				t.Errorf("%s (glibc %q): Reason %q lacks %q", c.dlerr, c.libc, f.Reason, w)
			}
		}
		for _, w := range c.fix {
			if !strings.Contains(f.Fix, w) {
				t.Errorf("%s (glibc %q): Fix %q lacks %q", c.dlerr, c.libc, f.Fix, w)
			}
		}
	}
}

// TestHintWhereItRuns: the hint names what exists where the program runs:
// inside a clone of cudago its setup script, by its path; outside,
// CUDA_HOME, NVIDIA's pip wheel, conda and the env file of a clone.
func TestHintWhereItRuns(t *testing.T) {
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "cudago")
	script := filepath.Join(clone, "scripts", "setup-cuda.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(tmp, "mymodule", "cmd")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(clone, ".cuda", "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	nvrtc, driver := specOf(NVRTC), specOf(Driver)
	has := func(what, hint string, want []string, not ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(hint, w) {
				t.Errorf("%s: hint lacks %q:\n%s", what, w, hint)
			}
		}
		for _, w := range not {
			if strings.Contains(hint, w) {
				t.Errorf("%s: hint has %q:\n%s", what, w, hint)
			}
		}
	}
	out := &searcher{getenv: envOf(nil), cwd: outside}
	if out.clone() != "" {
		t.Skipf("the temporary directory is inside a clone of cudago (%s)", out.clone())
	}
	has("outside", out.hint(nvrtc), []string{"CUDA_HOME", "pip install nvidia-cuda-nvrtc for CUDA 13, nvidia-cuda-nvrtc-cu12 for CUDA 12",
		"conda install cuda-nvrtc", "source <clone>/.cuda/env.sh", "CUDAGO_NVRTC_PATH"}, "bash scripts/setup-cuda.sh", "run scripts/setup-cuda.sh")
	has("outside, driver", out.hint(driver), []string{"install the NVIDIA driver", "CUDAGO_DRIVER_PATH", "source <cudago clone>/.cuda/env.sh"}, "pip install")

	in := &searcher{getenv: envOf(nil), cwd: filepath.Join(clone, ".cuda")}
	has("in a clone", in.hint(nvrtc), []string{"bash " + script, "CUDA_HOME", "nvidia-cuda-nvrtc-cu12"}, "<clone>")
	has("in a clone, driver", in.hint(driver), []string{"install the NVIDIA driver", "bash " + script}, "<cudago clone>")
	// The setup script does not install cuDNN, cuTENSOR, CUPTI or cuDLA:
	// not offered, even in a clone.
	has("in a clone, cudnn", in.hint(specOf(CuDNN)), []string{"pip install nvidia-cudnn-cu13 for CUDA 13, nvidia-cudnn-cu12 for CUDA 12",
		"conda install cudnn", "CUDA_PATH", "CUDAGO_CUDNN_PATH"}, "setup-cuda.sh", "<clone>")
	has("outside, cutensor", out.hint(specOf(CuTENSOR)), []string{"pip install cutensor-cu13 for CUDA 13, cutensor-cu12 for CUDA 12", "conda install cutensor"}, "setup-cuda.sh")
	has("cudla on Tegra", in.hint(specOf(CuDLA)), []string{"JetPack", "CUDAGO_CUDLA_PATH"}, "pip install", "setup-cuda.sh")

	// env.sh of the clone sourced, the program run elsewhere.
	env := &searcher{getenv: envOf(map[string]string{"CUDAGO_LOCAL_CUDA": filepath.Join(clone, ".cuda", "root")}), cwd: outside}
	has("env.sh", env.hint(nvrtc), []string{"bash " + script}, "<clone>")

	// NVTX 2 has no CUDA 13 wheel; NCCL's wheels carry the CUDA major.
	has("nvtx", out.hint(specOf(NVTX)), []string{"pip install nvidia-nvtx-cu12,"}, "for CUDA 13")
	has("nccl", out.hint(specOf(NCCL)), []string{"pip install nvidia-nccl-cu13 for CUDA 13, nvidia-nccl-cu12 for CUDA 12", "conda install nccl"})
	for _, l := range Libs() {
		if _, ok := installNames[l]; !ok && !specOf(l).systemFirst {
			t.Errorf("%s: no pip or conda package named for the hint", l)
		}
	}
}
