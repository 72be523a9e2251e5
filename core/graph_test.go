package core

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

func TestGPUGraphCaptureReplay(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["add"]
	s := testStream(t, dev)
	const n = 4096
	buf := devZeros(t, dev, s, n)
	cfg := LaunchConfig{Grid: Dim(n / 256), Block: Dim(256)}

	var hostRuns atomic.Int32
	capture := func(v float32) *Graph {
		t.Helper()
		if err := s.BeginCapture(CaptureRelaxed); err != nil {
			t.Fatal(err)
		}
		if err := s.BeginCapture(CaptureRelaxed); err == nil {
			t.Error("a second BeginCapture: no error")
		}
		if st, err := s.CaptureStatus(); err != nil || st != driver.StreamCaptureStatusActive {
			t.Errorf("CaptureStatus while capturing: %v, %v; want active", st, err)
		}
		for range 100 {
			if err := Launch(s, cfg, k, buf, v, int32(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.LaunchHostFunc(func() { hostRuns.Add(1) }); err != nil {
			t.Fatal(err)
		}
		g, err := s.EndCapture()
		if err != nil {
			t.Fatal(err)
		}
		if st, err := s.CaptureStatus(); err != nil || st != driver.StreamCaptureStatusNone {
			t.Errorf("CaptureStatus after EndCapture: %v, %v; want none", st, err)
		}
		return g
	}
	check := func(want float32) {
		t.Helper()
		wantEach(t, "x", readBack[float32](t, buf, n), func(int) float32 { return want })
	}

	g := capture(1)
	check(0) // captured, not run
	exec, err := g.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Upload(s); err != nil {
		t.Fatal(err)
	}
	launch(t, exec, s, 2)
	check(200)
	if got := hostRuns.Load(); got != 2 {
		t.Errorf("captured host function ran %d times, want 2", got)
	}

	// Update with a graph of the same shape that adds 2.
	g2 := capture(2)
	if err := exec.Update(g2); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	launch(t, exec, s, 1)
	check(400)
	if got := hostRuns.Load(); got != 3 {
		t.Errorf("captured host function ran %d times, want 3", got)
	}
	closeTwice(t, exec)
	if err := exec.Launch(s); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch after Close: %v", err)
	}
	if _, err := g.Instantiate(); !errors.Is(err, ErrClosed) {
		t.Errorf("Instantiate after Close: %v", err)
	}
	if _, err := s.EndCapture(); err == nil {
		t.Error("EndCapture without BeginCapture: no error")
	}
}
