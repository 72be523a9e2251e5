package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// childEnv makes the test binary the child of TestGPUCheckpointRestore
// (TestMain): a CUDA process that fills device memory and waits.
const childEnv = "CUDAGO_CHECKPOINT_CHILD"

// childBytes is the device memory the child fills.
const childBytes = 256 << 20

// word is the child's pattern.
func word(i int) uint32 { return uint32(i)*2654435761 ^ 0x5a5aa5a5 }

// child fills childBytes of device 0's memory (cuMemAlloc: plain device
// memory, which every driver's checkpoint covers) with a pattern, says
// "ready", waits for a line on stdin, then checks the memory, uses the
// GPU afresh, says "intact" and exits 0; anything else exits 1 with the
// reason on stderr.
func child() int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "checkpoint child: "+format+"\n", a...)
		return 1
	}
	dev, err := core.GetDevice(0)
	if err != nil {
		return fail("%v", err)
	}
	buf, err := core.NewLegacyMemoryResource(dev).Allocate(childBytes, nil)
	if err != nil {
		return fail("%v", err)
	}
	want := make([]uint32, childBytes/4)
	for i := range want {
		want[i] = word(i)
	}
	if err := core.CopyToDevice(buf, want); err != nil {
		return fail("%v", err)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail("waiting for the parent: %v", err)
	}
	got := make([]uint32, len(want))
	if err := core.CopyFromDevice(got, buf); err != nil {
		return fail("reading the memory back after the restore: %v", err)
	}
	for i := range got {
		if got[i] != want[i] {
			return fail("word %d of %d = %#x after the restore, want %#x", i, len(want), got[i], want[i])
		}
	}
	// The GPU is usable after the restore: new memory, set and read.
	b2, err := dev.Allocate(1<<20, nil)
	if err != nil {
		return fail("allocating after the restore: %v", err)
	}
	if err := b2.Memset32(0xabcdef01); err != nil {
		return fail("memset after the restore: %v", err)
	}
	small := make([]uint32, 1<<18)
	if err := core.CopyFromDevice(small, b2); err != nil {
		return fail("%v", err)
	}
	for i, v := range small {
		if v != 0xabcdef01 {
			return fail("memset after the restore: word %d = %#x", i, v)
		}
	}
	fmt.Println("intact")
	return 0
}

// lockedBuffer is a bytes.Buffer for a child's stderr, read while the
// child may still write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestGPUCheckpointRestore starts a child process that fills 256 MiB of
// device memory and waits, then locks, checkpoints, restores and unlocks
// it by pid, twice (the second time naming every GPU in RestoreOptions),
// checking its state at each step and that the checkpoint gave its device
// memory back; the child then finds its data intact. Where the driver or
// the privileges do not allow checkpoints the test skips, saying which
// call was refused and why.
func TestGPUCheckpointRestore(t *testing.T) {
	testenv.RequireGPU(t)
	v, err := driver.DriverGetVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v < 12080 {
		t.Skipf("the driver (CUDA %d.%d) has no checkpoint API: it came with CUDA 12.8 drivers", v/1000, v%1000/10)
	}
	dev, err := core.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill() // works in every state: the lock is the CUDA API's, not the kernel's
			cmd.Wait()
		}
		if s := stderr.String(); s != "" {
			t.Logf("child's stderr:\n%s", s)
		}
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	expect := func(want string, within time.Duration) {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok || l != want {
				t.Fatalf("child said %q (open %v), want %q", l, ok, want)
			}
		case <-time.After(within):
			t.Fatalf("child did not say %q within %v", want, within)
		}
	}
	expect("ready", 2*time.Minute)

	p, err := NewProcess(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// do runs a step; a refusal by the driver or for want of privileges
	// skips the test with the reason.
	do := func(step string, err error) {
		t.Helper()
		if errors.Is(err, ErrNotSupported) || errors.Is(err, ErrNotPermitted) {
			t.Skipf("this machine does not allow CUDA checkpoints (euid %d, driver CUDA %d.%d): %s: %v", os.Geteuid(), v/1000, v%1000/10, step, err)
		}
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	state := func(want State) {
		t.Helper()
		s, err := p.State()
		do("State", err)
		if s != want {
			t.Fatalf("the child is %v, want %v", s, want)
		}
	}
	state(Running)
	tid, err := p.RestoreThreadID()
	do("RestoreThreadID", err)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", p.PID(), tid)); err != nil {
		t.Errorf("the restore thread %d is not a thread of the child: %v", tid, err)
	}
	// Unlock needs a locked process: the error says so.
	if err := p.Unlock(); err == nil {
		t.Errorf("Unlock of a running process succeeded")
	} else if errors.Is(err, driver.ErrorIllegalState) && !strings.Contains(err.Error(), "the process is running, and Unlock needs it locked") {
		t.Errorf("Unlock of a running process: %v", err)
	} else {
		t.Logf("Unlock of a running process: %v", err)
	}

	for _, opts := range []*RestoreOptions{nil, identity(t)} {
		free0, _, err := dev.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		do("Lock", p.Lock(&LockOptions{Timeout: time.Minute}))
		state(Locked)
		do("Checkpoint", p.Checkpoint())
		state(Checkpointed)
		free1, _, err := dev.MemoryInfo()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the checkpoint gave back %d MiB of device memory", (int64(free1)-int64(free0))>>20)
		if int64(free1)-int64(free0) < childBytes {
			t.Errorf("free device memory went from %d to %d MiB when the child (holding %d MiB) was checkpointed", free0>>20, free1>>20, childBytes>>20)
		}
		err = p.Restore(opts)
		if opts != nil && errors.Is(err, ErrNotSupported) {
			t.Logf("the driver refuses a restore naming the GPUs (%v); restoring without", err)
			err = p.Restore(nil)
		}
		do(fmt.Sprintf("Restore(%+v)", opts), err)
		state(Locked)
		do("Unlock", p.Unlock())
		state(Running)
	}

	if _, err := io.WriteString(stdin, "check\n"); err != nil {
		t.Fatal(err)
	}
	expect("intact", 2*time.Minute)
	exited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
}

// identity maps every GPU to itself: a restore that names them all.
func identity(t *testing.T) *RestoreOptions {
	devs, err := core.Devices()
	if err != nil {
		t.Fatal(err)
	}
	o := &RestoreOptions{}
	for _, d := range devs {
		o.GPUs = append(o.GPUs, GPUPair{Old: d.UUID(), New: "GPU-" + d.UUID()})
	}
	return o
}
