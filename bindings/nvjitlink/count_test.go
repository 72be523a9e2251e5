package nvjitlink_test

import (
	"runtime"
	"testing"

	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestCountLargerThanSlice passes nvJitLinkCreate more options than the
// slice holds: it must fail with a *CountError instead of letting
// nvJitLink read past the end of the slice.
func TestCountLargerThanSlice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, c := range []struct {
		n    uint32
		opts []string
	}{{2, []string{"-arch=sm_80"}}, {1, nil}, {1 << 31, []string{"-arch=sm_80", "-O3"}}} {
		h, err := nvjitlink.Create(c.n, c.opts)
		testenv.WantCountError(t, err, "nvjitlink", "nvJitLinkCreate", "numOptions", "options", int64(c.n), len(c.opts))
		if h != 0 {
			t.Fatalf("Create(%d, %q): a handle %#x with the error", c.n, c.opts, h)
		}
	}
	// The second option is invalid; a count of 1 must not pass it.
	h, err := nvjitlink.Create(1, []string{"-arch=sm_80", "-no-such-option"})
	if err != nil {
		t.Fatalf("Create with a prefix of the options: %v", err)
	}
	if err := nvjitlink.Destroy(&h); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
}
