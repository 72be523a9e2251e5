package core

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvrtc"
)

func TestIsSticky(t *testing.T) {
	sticky := &driver.Error{Lib: "driver", Func: "cuStreamSynchronize", Code: driver.ErrorIllegalAddress}
	plain := &driver.Error{Lib: "driver", Func: "cuMemAlloc", Code: driver.ErrorOutOfMemory}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sticky, true},
		{driver.ErrorLaunchFailed, true},
		{fmt.Errorf("core: Sync: %w", sticky), true},
		// Joined: a non-sticky driver error first does not hide it.
		{errors.Join(plain, fmt.Errorf("x: %w", sticky)), true},
		{plain, false},
		{driver.ErrorCooperativeLaunchTooLarge, false},
		{&nvrtc.Error{Lib: "nvrtc", Func: "nvrtcCompileProgram", Code: nvrtc.ErrorCompilation}, false},
		{ErrClosed, false},
	} {
		if got := IsSticky(tc.err); got != tc.want {
			t.Errorf("IsSticky(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if !strings.Contains(sticky.Error(), "sticky") {
		t.Errorf("the message of a sticky error does not say so: %q", sticky.Error())
	}
	var e *driver.Error
	if !errors.As(fmt.Errorf("w: %w", sticky), &e) || !e.Sticky() {
		t.Error("errors.As(err, &e) && e.Sticky() does not hold for a wrapped sticky error")
	}
}

var errFake = errors.New("fake failure")

func TestRecordedErrors(t *testing.T) {
	c := &Context{}
	if err := c.withRecorded(nil); err != nil {
		t.Fatalf("nothing recorded, yet %v", err)
	}
	// With nothing recorded, the error itself comes back, not a wrapper.
	if err := c.withRecorded(ErrClosed); err != ErrClosed {
		t.Fatalf("withRecorded(ErrClosed) = %v", err)
	}
	c.record("freeing x", nil)
	c.record("freeing y", ErrClosed) // the resource went with its context: not a failure
	c.record("freeing z", fmt.Errorf("wrapped: %w", ErrClosed))
	if err := c.withRecorded(nil); err != nil {
		t.Fatalf("nil and ErrClosed were recorded: %v", err)
	}

	c.record("destroying a forgotten stream 0x1", errFake)
	err := c.withRecorded(nil)
	if !errors.Is(err, errFake) || err.Error() != "core: destroying a forgotten stream 0x1: fake failure" {
		t.Fatalf("one recorded error came back as %q", err)
	}
	if err := c.withRecorded(nil); err != nil {
		t.Fatalf("the recorded error was not forgotten: %v", err)
	}

	// With the call's own error, both come back.
	c.record("a", errFake)
	err = c.withRecorded(ErrClosed)
	if !errors.Is(err, errFake) || !errors.Is(err, ErrClosed) {
		t.Fatalf("withRecorded(ErrClosed) with a recorded error = %v", err)
	}

	// Bounded: past maxRecorded only a count is kept.
	for i := range 3 * maxRecorded {
		c.record(fmt.Sprintf("error %d", i), errFake)
	}
	if n := len(c.recorded.errs); n != maxRecorded {
		t.Fatalf("%d errors kept, want %d", n, maxRecorded)
	}
	err = c.withRecorded(nil)
	msg := err.Error()
	if !strings.Contains(msg, "core: error 0: fake failure") || !strings.Contains(msg, fmt.Sprintf("error %d:", maxRecorded-1)) ||
		strings.Contains(msg, fmt.Sprintf("error %d:", maxRecorded)) || !strings.Contains(msg, fmt.Sprintf("%d more errors", 2*maxRecorded)) {
		t.Fatalf("bounded errors came back as:\n%s", msg)
	}
	if u, ok := err.(interface{ Unwrap() []error }); !ok || len(u.Unwrap()) != maxRecorded+1 {
		t.Fatalf("bounded errors are not %d joined errors: %T", maxRecorded+1, err)
	}
	if c.recorded.dropped != 0 || len(c.recorded.errs) != 0 || c.withRecorded(nil) != nil {
		t.Fatal("taking the errors did not clear them")
	}
}

// failingResource is a MemoryResource whose Deallocate fails.
type failingResource struct {
	dev   *Device
	freed chan driver.Deviceptr
}

func (r *failingResource) Allocate(size int, s *Stream) (*Buffer, error) {
	return nil, errors.New("not used")
}

func (r *failingResource) Deallocate(p driver.Deviceptr, size int, s *Stream) error {
	r.freed <- p
	return fmt.Errorf("freeing %#x: %w", uint64(p), errFake)
}

func (r *failingResource) Device() *Device        { return r.dev }
func (r *failingResource) DeviceAccessible() bool { return true }
func (r *failingResource) HostAccessible() bool   { return false }

// forgetFailingBuffer makes a Buffer of mr on stream, forgets it, and
// waits until its finalizer has run.
func forgetFailingBuffer(t *testing.T, mr *failingResource, stream *Stream) {
	t.Helper()
	func() { NewBuffer(0xdead0000, 4096, mr, stream) }()
	for i := 0; i < 200; i++ {
		runtime.GC()
		select {
		case p := <-mr.freed:
			if p != 0xdead0000 {
				t.Fatalf("the finalizer freed %#x", uint64(p))
			}
			// The recording follows Deallocate's return: wait for it.
			for j := 0; j < 1000; j++ {
				if c := freeContext(mr, stream); c.recorded.len() > 0 {
					return
				}
				time.Sleep(time.Millisecond)
			}
			t.Fatal("the finalizer's error was not recorded")
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the finalizer of the forgotten Buffer did not run")
}

// TestFinalizerErrorRecorded forgets a Buffer whose free fails: its error
// is recorded on the buffer's context (its stream's, else its device's
// primary context), with what failed, and taken by the next Sync.
func TestFinalizerErrorRecorded(t *testing.T) {
	dev := &Device{ordinal: 7}
	dev.primary = newPrimaryContext(dev)
	mr := &failingResource{dev: dev, freed: make(chan driver.Deviceptr, 1)}

	forgetFailingBuffer(t, mr, nil)
	err := dev.primary.withRecorded(nil)
	if !errors.Is(err, errFake) || !strings.Contains(err.Error(), "core: freeing a forgotten Buffer (4096 bytes at 0xdead0000): freeing 0xdead0000: fake failure") {
		t.Fatalf("recorded on the primary context: %v", err)
	}

	// A created context's stream: recorded there, while it is open.
	created := &Context{dev: dev}
	s := &Stream{handle: 1, ctx: created, owned: true}
	forgetFailingBuffer(t, mr, s)
	if err := created.withRecorded(nil); !errors.Is(err, errFake) {
		t.Fatalf("recorded on the stream's context: %v", err)
	}
	if err := dev.primary.withRecorded(nil); err != nil {
		t.Fatalf("also recorded on the primary context: %v", err)
	}
	// Closed: the device's primary context gets it instead.
	created.life.close()
	forgetFailingBuffer(t, mr, s)
	if err := dev.primary.withRecorded(nil); !errors.Is(err, errFake) {
		t.Fatalf("the stream's context is closed, and the primary context has %v", err)
	}
}

// TestGPUSyncReturnsRecorded checks that Device.Sync returns what a
// finalizer recorded on the primary context, once.
func TestGPUSyncReturnsRecorded(t *testing.T) {
	dev := requireGPU(t)
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	mr := &failingResource{dev: dev, freed: make(chan driver.Deviceptr, 1)}
	forgetFailingBuffer(t, mr, nil)
	err := dev.Sync()
	if !errors.Is(err, errFake) || !strings.Contains(err.Error(), "forgotten Buffer") {
		t.Fatalf("Device.Sync after a failed finalizer: %v", err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatalf("the second Sync: %v", err)
	}
}
