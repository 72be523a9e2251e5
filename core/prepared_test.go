package core

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A value rejected by SetArg is named by its own index, not the scratch
// slot it was packed into.
func TestPackArgsAtNumbersFromFirst(t *testing.T) {
	buf := make([]byte, 4)
	err := packArgsAt(buf, "PreparedLaunch.SetArg", "k", []ArgumentInfo{{Size: 4}}, []any{int64(1)}, 5)
	if err == nil || !strings.Contains(err.Error(), "core: PreparedLaunch.SetArg k: argument 5 is int64 (8 bytes) but parameter 5 takes 4 bytes") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrepareNilKernel(t *testing.T) {
	var k *Kernel
	if _, err := k.Prepare(LaunchConfig{Grid: Dim(1), Block: Dim(1)}); err == nil || !strings.Contains(err.Error(), "nil *Kernel") {
		t.Fatalf("err = %v", err)
	}
	for _, p := range []*PreparedLaunch{nil, {}} {
		if err := p.Launch(nil); !errors.Is(err, errNotPrepared) {
			t.Errorf("Launch of %#v: %v", p, err)
		}
		if err := p.SetArg(0, int32(1)); !errors.Is(err, errNotPrepared) {
			t.Errorf("SetArg of %#v: %v", p, err)
		}
		if err := p.SetConfig(LaunchConfig{Grid: Dim(1), Block: Dim(1)}); !errors.Is(err, errNotPrepared) {
			t.Errorf("SetConfig of %#v: %v", p, err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close of %#v: %v", p, err)
		}
	}
}

func readMixed(t *testing.T, out *Buffer) []float32 {
	t.Helper()
	got := make([]float32, 8)
	if err := CopyFromDevice(got, out); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestGPUPreparedLaunch(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["mixed"]
	s := testStream(t, dev)
	out, _ := dev.Allocate(8*4, s)
	defer out.Close()
	g, _ := dev.Allocate(4, s)
	defer g.Close()
	g2, _ := dev.Allocate(4, s)
	defer g2.Close()
	if err := CopyToDevice(g, []float32{42}); err != nil {
		t.Fatal(err)
	}
	if err := CopyToDevice(g2, []float32{43}); err != nil {
		t.Fatal(err)
	}
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(32)}
	if _, err := k.Prepare(cfg, out, int32(1)); err == nil || !strings.Contains(err.Error(), "core: Prepare mixed: kernel takes 8 arguments, got 2") {
		t.Fatalf("Prepare with 2 arguments: %v", err)
	}
	if _, err := k.Prepare(LaunchConfig{Grid: Dim(0), Block: Dim(1)}, out, int32(1), float32(2), 3.0, int64(4), uint8(5), int16(6), g); err == nil {
		t.Fatal("Prepare accepted a zero grid")
	}
	p, err := k.Prepare(cfg, out, int32(-7), float32(2.5), 0.125, int64(5<<32+9), uint8(200), int16(-300), g)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Launch(s); err != nil {
		t.Fatal(err)
	}
	if got, want := readMixed(t, out), []float32{-7, 2.5, 0.125, 5, 9, 200, -300, 42}; !slices.Equal(got, want) {
		t.Fatalf("prepared mixed wrote %v, want %v", got, want)
	}

	// Arguments changed in place, one by one; the rejected ones leave the
	// old value.
	for _, c := range []struct {
		i   int
		v   any
		err string
	}{
		{1, int32(11), ""},
		{2, float32(-1.5), ""},
		{3, 0.5, ""},
		{5, uint8(7), ""},
		{6, int32(1), "argument 6 is int32 (4 bytes) but parameter 6 takes 2 bytes"},
		{7, g2, ""},
		{7, "x", "argument 7 has unsupported type string"},
		{8, int32(1), "argument 8 out of range: the kernel takes 8"},
		{-1, int32(1), "argument -1 out of range"},
	} {
		err := p.SetArg(c.i, c.v)
		if c.err == "" && err != nil {
			t.Fatalf("SetArg(%d, %v): %v", c.i, c.v, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Fatalf("SetArg(%d, %v) = %v, want %q", c.i, c.v, err, c.err)
		}
	}
	if err := p.Launch(s); err != nil {
		t.Fatal(err)
	}
	if got, want := readMixed(t, out), []float32{11, -1.5, 0.5, 5, 9, 7, -300, 43}; !slices.Equal(got, want) {
		t.Fatalf("after SetArg mixed wrote %v, want %v", got, want)
	}
	if err := p.SetConfig(LaunchConfig{Grid: Dim(2), Block: Dim(64)}); err != nil {
		t.Fatal(err)
	}
	if err := p.SetConfig(LaunchConfig{Grid: Dim(1), Block: Dim(2048)}); err == nil {
		t.Fatal("SetConfig accepted a 2048-thread block")
	}
	if err := p.Launch(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}

	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.Launch(s); err != nil {
			panic(err)
		}
	})
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if allocs != 0 && !raceEnabled {
		t.Errorf("PreparedLaunch.Launch allocates %v times per call, want 0", allocs)
	}

	// A closed Buffer argument stops the launch; so does Close.
	g3, _ := dev.Allocate(4, s)
	if err := p.SetArg(7, g3); err != nil {
		t.Fatal(err)
	}
	g3.Close()
	if err := p.Launch(s); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "argument 7") {
		t.Fatalf("launch with a closed Buffer argument: %v", err)
	}
	closeTwice(t, p)
	if err := p.Launch(s); !errors.Is(err, ErrClosed) {
		t.Fatalf("launch after Close: %v", err)
	}
	if err := p.SetArg(1, int32(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("SetArg after Close: %v", err)
	}
	if err := p.Launch(nil); err == nil {
		t.Fatal("launch on a nil stream")
	}
}

// Many goroutines launch one PreparedLaunch on one stream while another
// rewrites its arguments with the same values: every launch runs whole.
func TestGPUPreparedLaunchConcurrent(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["add"]
	s := testStream(t, dev)
	const n = 1000
	x := devZeros(t, dev, s, n)
	p, err := k.Prepare(LaunchConfig{Grid: Dim((n + 255) / 256), Block: Dim(256)}, x, float32(1), int32(n))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const workers, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if err := p.SetArg(1, float32(1)); err != nil {
				errs <- err
				return
			}
			if err := p.SetArg(0, x); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := p.Launch(s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := CopyFromDevice(got, x); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != workers*each {
			t.Fatalf("x[%d] = %v after %d launches of +1", i, v, workers*each)
		}
	}
	// Changing the increment between launches takes effect in order.
	for i := 1; i <= 10; i++ {
		if err := p.SetArg(1, float32(i)); err != nil {
			t.Fatal(err)
		}
		if err := p.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := CopyFromDevice(got, x); err != nil {
		t.Fatal(err)
	}
	if want := float32(workers*each + 55); got[0] != want || got[n-1] != want {
		t.Fatalf("x[0], x[n-1] = %v, %v, want %v", got[0], got[n-1], want)
	}
}
