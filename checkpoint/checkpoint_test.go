package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child()) // the process TestGPUCheckpointRestore checkpoints
	}
	os.Exit(m.Run())
}

func TestNewProcess(t *testing.T) {
	for _, pid := range []int{0, -1, math.MaxInt32 + 1} {
		if _, err := NewProcess(pid); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("checkpoint: NewProcess(%d): not a process id", pid)) {
			t.Errorf("NewProcess(%d): %v", pid, err)
		}
	}
	// A process that has exited (its pid is not reused this soon).
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	pid := gone.Process.Pid
	if _, err := NewProcess(pid); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("NewProcess(%d) of an exited process: %v", pid, err)
	}
	p, err := NewProcess(os.Getpid())
	if err != nil || p.PID() != os.Getpid() || p.String() != fmt.Sprintf("process %d", os.Getpid()) {
		t.Errorf("NewProcess(own pid) = %v, %v", p, err)
	}
	if p, err := NewProcess(1); err != nil || p.PID() != 1 { // another user's: it exists
		t.Errorf("NewProcess(1) = %v, %v", p, err)
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Running: "running", Locked: "locked", Checkpointed: "checkpointed", Failed: "failed", 9: "State(9)"} {
		if s.String() != want {
			t.Errorf("State(%d).String() = %q, want %q", int(s), s.String(), want)
		}
	}
	if Running != 0 || Locked != 1 || Checkpointed != 2 || Failed != 3 {
		t.Errorf("States differ from CUprocessState: %d %d %d %d", Running, Locked, Checkpointed, Failed)
	}
}

func TestParseUUID(t *testing.T) {
	const s = "a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90"
	want := [16]byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18, 0x29, 0x3a, 0x4b, 0x5c, 0x6d, 0x7e, 0x8f, 0x90}
	for _, in := range []string{s, "GPU-" + s, strings.ToUpper(s), strings.ReplaceAll(s, "-", "")} {
		if u, err := parseUUID(in); err != nil || u.Bytes != want {
			t.Errorf("parseUUID(%q) = %x, %v", in, u.Bytes, err)
		}
	}
	for _, in := range []string{"", "GPU-", s[:35], s + "00", "g1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90"} {
		if _, err := parseUUID(in); err == nil || !strings.Contains(err.Error(), "is not a GPU UUID") {
			t.Errorf("parseUUID(%q): %v", in, err)
		}
	}
}

// Bad options are refused before the driver is called: where the driver
// is called (with a driver older than 12.8 it would say the call is
// missing; with a newer one it would act on this very process) the
// messages would differ.
func TestOptionChecks(t *testing.T) {
	p, err := NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	const u0, u1 = "00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111"
	for _, c := range []struct {
		err  error
		want string
	}{
		{p.Lock(&LockOptions{Timeout: -time.Second}), "Lock process %d: LockOptions.Timeout -1s is negative"},
		{p.Lock(&LockOptions{Timeout: math.MaxUint32*time.Millisecond + 1}), "Lock process %d: LockOptions.Timeout 1193h2m47.295000001s is more than the driver takes (1193h2m47.295s)"},
		{p.Restore(&RestoreOptions{GPUs: []GPUPair{{u0, "nope"}}}), `Restore process %d: RestoreOptions.GPUs[0].New: "nope" is not a GPU UUID`},
		{p.Restore(&RestoreOptions{GPUs: []GPUPair{{u0, u1}, {"", u0}}}), `Restore process %d: RestoreOptions.GPUs[1].Old: "" is not a GPU UUID`},
		{p.Restore(&RestoreOptions{GPUs: []GPUPair{{u0, u1}, {u1, u0}, {"GPU-" + u0, u0}}}), "Restore process %d: RestoreOptions.GPUs[0] and [2] both map GPU GPU-" + u0},
	} {
		want := "checkpoint: " + fmt.Sprintf(c.want, os.Getpid())
		if c.err == nil || !strings.Contains(c.err.Error(), want) {
			t.Errorf("%v; want an error containing %q", c.err, want)
		}
	}
}

// The checkpoint API came with CUDA 12.8 drivers. With an older libcuda
// (CI's 12.4 userland) every call fails with ErrNotSupported and a
// *driver.MissingFunctionError naming the call and both versions, before
// cuInit (which fails there too, for want of a GPU).
func TestNeeds128(t *testing.T) {
	v, err := driver.DriverGetVersion()
	if err != nil {
		t.Skipf("no libcuda to load: %v", err)
	}
	if v >= 12080 {
		t.Skipf("the driver (CUDA %d) has the checkpoint API: TestGPUCheckpointRestore uses it", v)
	}
	p, err := NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	have := fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	for _, c := range []struct {
		fn  string
		err error
	}{
		{"cuCheckpointProcessGetState", func() error { _, err := p.State(); return err }()},
		{"cuCheckpointProcessGetRestoreThreadId", func() error { _, err := p.RestoreThreadID(); return err }()},
		{"cuCheckpointProcessLock", p.Lock(&LockOptions{Timeout: time.Second})},
		{"cuCheckpointProcessCheckpoint", p.Checkpoint()},
		{"cuCheckpointProcessRestore", p.Restore(&RestoreOptions{GPUs: []GPUPair{{"GPU-00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"}}})},
		{"cuCheckpointProcessUnlock", p.Unlock()},
	} {
		var m *driver.MissingFunctionError
		if !errors.Is(c.err, ErrNotSupported) || !errors.As(c.err, &m) {
			t.Errorf("%s with a CUDA %s driver: %v; want ErrNotSupported and a *driver.MissingFunctionError", c.fn, have, c.err)
			continue
		}
		if m.Func != c.fn || m.Need != "12.8" || m.Have != have {
			t.Errorf("%s: MissingFunctionError Func %q Need %q Have %q; want %s, 12.8, %s", c.fn, m.Func, m.Need, m.Have, c.fn, have)
		}
		if !strings.Contains(c.err.Error(), "CUDA checkpoints are not supported by this driver") {
			t.Errorf("%s: %v", c.fn, c.err)
		}
	}
	t.Log(p.Checkpoint())
}

// TestZeroProcess: a nil or zero *Process is an error naming it, before
// the driver is asked, on any driver.
func TestZeroProcess(t *testing.T) {
	var nilP *Process
	for _, p := range []*Process{nilP, {}} {
		if err := p.Unlock(); err == nil || !strings.Contains(err.Error(), "is not a process") {
			t.Errorf("Unlock of %v: %v", p, err)
		}
		if _, err := p.State(); err == nil || !strings.Contains(err.Error(), "is not a process") {
			t.Errorf("State of %v: %v", p, err)
		}
	}
	if nilP.String() != "process <nil>" || nilP.PID() != 0 {
		t.Errorf("nil *Process: %q, %d", nilP.String(), nilP.PID())
	}
}
