package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// helperMode picks what TestIsolatedHelper does when this test binary is
// re-run by TestRunIsolated.
const helperMode = "CUDAGO_TESTENV_ISOLATE_MODE"

// TestIsolatedHelper isolates itself, then in its child passes, fails or
// skips as helperMode says. It does nothing in a normal run.
func TestIsolatedHelper(t *testing.T) {
	mode := os.Getenv(helperMode)
	if mode == "" {
		t.Skip("only run by TestRunIsolated")
	}
	if RunIsolated(t) {
		return
	}
	if os.Getenv(isolatedEnv) != t.Name() {
		t.Fatal("the body ran outside its child process")
	}
	switch mode {
	case "fail":
		t.Fatal("planted failure")
	case "skip":
		t.Skip("planted skip")
	case "exit":
		os.Exit(3) // as a crash would
	}
	t.Log("child body ran")
}

// TestRunIsolated runs TestIsolatedHelper in each mode in a process of its
// own and checks that the parent passes, fails or skips as its child did.
func TestRunIsolated(t *testing.T) {
	for _, c := range []struct{ mode, want string }{
		{"pass", "--- PASS: TestIsolatedHelper"},
		{"fail", "TestIsolatedHelper failed in its child process"},
		{"skip", "--- SKIP: TestIsolatedHelper"},
		{"exit", "TestIsolatedHelper failed in its child process (exit status 3)"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIsolatedHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), helperMode+"="+c.mode)
		out, err := cmd.CombinedOutput()
		if (c.mode == "fail" || c.mode == "exit") != (err != nil) {
			t.Errorf("mode %s: the parent exited with %v\n%s", c.mode, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("mode %s: output lacks %q:\n%s", c.mode, c.want, out)
		}
		if c.mode == "pass" && !strings.Contains(string(out), "child body ran") {
			t.Errorf("mode pass: the child's output was not passed on:\n%s", out)
		}
	}
}
