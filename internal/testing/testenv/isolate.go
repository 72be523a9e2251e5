package testenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// isolatedEnv names, in a child test process, the test it runs.
const isolatedEnv = "CUDAGO_ISOLATED_TEST"

// RunIsolated runs the calling top-level test in a child process of the
// same test binary, so that an error that sticks to a CUDA context (an
// illegal address, a trap, a peer fault) fails that test alone instead of
// every GPU test after it in the process. In the parent it waits for the
// child, passes its output on, fails or skips as the child did, and
// returns true: the test returns at once. In the child it returns false
// and the test body runs.
//
//	func TestGPUPeerKernel(t *testing.T) {
//		if testenv.RunIsolated(t) {
//			return
//		}
//		...
//	}
func RunIsolated(t *testing.T) bool {
	t.Helper()
	name := t.Name()
	if os.Getenv(isolatedEnv) == name {
		return false
	}
	if strings.Contains(name, "/") {
		t.Fatalf("testenv.RunIsolated: %s is a subtest; isolate its top-level test", name)
	}
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-5*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+regexp.QuoteMeta(name)+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), isolatedEnv+"="+name)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if len(text) > 0 {
		t.Logf("child process of %s:\n%s", name, strings.TrimRight(text, "\n"))
	}
	var exit *exec.ExitError
	switch {
	case err == nil && strings.Contains(text, "--- SKIP: "+name+" "):
		t.Skipf("skipped in its child process (output above)")
	case err == nil && strings.Contains(text, "--- PASS: "+name+" "):
		// passed
	case err == nil:
		t.Fatalf("the child process of %s exited 0 without running it (output above)", name)
	case errors.As(err, &exit):
		t.Fatalf("%s failed in its child process (%v): output above", name, err)
	default:
		t.Fatalf("%s: starting its child process: %v", name, err)
	}
	return true
}
