// Package newglibc lets tests run a library that needs a newer glibc than
// the system's: Debian trixie's libnccl2 (NCCL 2.22.3, the one
// scripts/setup-cuda.sh installs) needs glibc 2.38, and CI's Debian 12
// has 2.36, so the loader refuses it ("version `GLIBC_2.38' not found").
// setup-cuda.sh also unpacks trixie's glibc into .cuda/glibc, apart from
// the CUDA libraries; a test binary run by that glibc's loader
// (ld-linux-x86-64.so.2 --library-path .cuda/glibc/... test-binary args)
// loads NCCL, while the system's libstdc++ and everything else still come
// from the system (glibc is backward compatible).
//
// Only tests use it: Main re-runs a whole test binary that way, Rerun one
// test. It imports nothing of the module, so that pathfinder's own tests
// can use it.
package newglibc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// childEnv marks a process that is already such a re-run.
const childEnv = "CUDAGO_NEWGLIBC_CHILD"

// InChild reports whether this process runs under the newer glibc's loader
// by Main or Rerun.
func InChild() bool { return os.Getenv(childEnv) == "1" }

var versionRefused = regexp.MustCompile("version `GLIBC_[0-9.]+' not found")

// Needed reports whether err is the loader's refusal of a library that
// needs a newer glibc than the process has.
func Needed(err error) bool { return err != nil && versionRefused.MatchString(err.Error()) }

// Dir returns the glibc that scripts/setup-cuda.sh unpacked: .cuda/glibc
// beside $CUDAGO_LOCAL_CUDA (.cuda/root), or the first .cuda/glibc above
// the working directory.
func Dir() (string, error) {
	var cands []string
	if r := os.Getenv("CUDAGO_LOCAL_CUDA"); r != "" {
		cands = append(cands, filepath.Join(filepath.Dir(r), "glibc"))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			cands = append(cands, filepath.Join(d, ".cuda", "glibc"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(loader(c)); err == nil {
			return c, nil
		}
	}
	return "", errors.New("no .cuda/glibc (Debian trixie's glibc) beside the local CUDA install: run scripts/setup-cuda.sh")
}

func libDir(dir string) string { return filepath.Join(dir, "usr", "lib", "x86_64-linux-gnu") }
func loader(dir string) string { return filepath.Join(libDir(dir), "ld-linux-x86-64.so.2") }

// Command returns the command that runs this test binary with args under
// the loader of the glibc in dir, marked as a re-run.
func Command(dir string, args ...string) *exec.Cmd {
	path := libDir(dir)
	if lp := os.Getenv("LD_LIBRARY_PATH"); lp != "" {
		path += ":" + lp
	}
	cmd := exec.Command(loader(dir), append([]string{"--library-path", path, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// Main is for the TestMain of a package whose tests call the library that
// load loads: when load fails only because the system's glibc is too old,
// the whole test binary runs again under .cuda/glibc's loader, with the
// same arguments and output, and Main returns its exit status; otherwise
// (or in the re-run) it returns m.Run(). Without .cuda/glibc the tests run
// here, and those that need the library report why it did not load.
func Main(m *testing.M, load func() error) int {
	if InChild() {
		return m.Run()
	}
	err := load()
	if !Needed(err) {
		return m.Run()
	}
	dir, derr := Dir()
	if derr != nil {
		fmt.Fprintf(os.Stderr, "newglibc: %v\n(%v); running the tests under the system's glibc\n", derr, err)
		return m.Run()
	}
	cmd := Command(dir, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "newglibc: running the tests under %s: %v\n", loader(dir), err)
		return 1
	}
	return 0
}

// Rerun is for one top-level test that loads the library: when load fails
// only because the system's glibc is too old, it runs this test again in a
// child under .cuda/glibc's loader, fails t if the child's test did not
// pass, and returns true: the caller returns. Otherwise (or in the child)
// it returns false and the test goes on here.
func Rerun(t *testing.T, load func() error) bool {
	t.Helper()
	if InChild() {
		return false
	}
	err := load()
	if !Needed(err) {
		return false
	}
	dir, derr := Dir()
	if derr != nil {
		t.Fatalf("%v\n(the library needs it: %v)", derr, err)
	}
	name := t.Name()
	if strings.Contains(name, "/") {
		t.Fatalf("newglibc.Rerun runs top-level tests only, not %s", name)
	}
	out, err := Command(dir, "-test.run=^"+regexp.QuoteMeta(name)+"$", "-test.v").CombinedOutput()
	t.Logf("the system's glibc is too old for the library; ran %s under %s:\n%s", name, loader(dir), out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name+" ") {
		t.Fatalf("%s under %s: %v", name, loader(dir), err)
	}
	return true
}
