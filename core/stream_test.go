package core

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closedContext returns a created (non-primary) context that is closed:
// everything made in it reports ErrClosed without a driver call.
func closedContext() *Context {
	c := &Context{}
	c.initStreams()
	c.life.close()
	return c
}

func closedStream() *Stream {
	s := &Stream{owned: true, ctx: closedContext()}
	s.Close()
	return s
}

func TestClosedStreamAndEvent(t *testing.T) {
	s := closedStream()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync: %v", err)
	}
	if _, err := s.Query(); !errors.Is(err, ErrClosed) {
		t.Errorf("Query: %v", err)
	}
	if err := <-s.Done(); !errors.Is(err, ErrClosed) {
		t.Errorf("Done: %v", err)
	}
	if err := s.WaitContext(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitContext: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WaitContext(ctx); err != context.Canceled {
		t.Errorf("WaitContext(cancelled): %v, want context.Canceled", err)
	}
	if err := s.LaunchHostFunc(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("LaunchHostFunc: %v", err)
	}
	if err := s.BeginCapture(CaptureRelaxed); !errors.Is(err, ErrClosed) {
		t.Errorf("BeginCapture: %v", err)
	}
	if _, err := s.EndCapture(); !errors.Is(err, ErrClosed) {
		t.Errorf("EndCapture: %v", err)
	}
	if _, err := s.Record(); !errors.Is(err, ErrClosed) {
		t.Errorf("Record: %v", err)
	}
	if _, err := s.ctx.NewStream(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewStream in a closed context: %v", err)
	}
	if _, err := s.ctx.NewEvent(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewEvent in a closed context: %v", err)
	}

	e := &Event{ctx: s.ctx, timing: true}
	if err := e.Close(); err != nil {
		t.Errorf("Event.Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Event.Close: %v", err)
	}
	for name, err := range map[string]error{
		"Record": e.Record(s),
		"Sync":   e.Sync(),
		"Wait":   s.Wait(e),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Event.%s: %v, want ErrClosed", name, err)
		}
	}
	if _, err := e.Query(); !errors.Is(err, ErrClosed) {
		t.Errorf("Event.Query: %v", err)
	}
	if _, err := Elapsed(e, e); !errors.Is(err, ErrClosed) {
		t.Errorf("Elapsed: %v", err)
	}
	if _, err := Elapsed(&Event{}, e); err == nil {
		t.Errorf("Elapsed of an event without timing: no error")
	}
	if _, err := (&Context{}).NewEvent(&EventOptions{Timing: true, Interprocess: true}); err == nil {
		t.Errorf("NewEvent(Timing+Interprocess): no error")
	}
	if err := s.BeginCapture(CaptureMode(9)); err == nil {
		t.Errorf("BeginCapture(9): no error")
	}
}

func TestClosedGraph(t *testing.T) {
	c := closedContext()
	g := &Graph{ctx: c}
	if err := g.Close(); err != nil {
		t.Errorf("Graph.Close: %v", err)
	}
	if _, err := g.Instantiate(); !errors.Is(err, ErrClosed) {
		t.Errorf("Instantiate: %v", err)
	}
	e := &GraphExec{ctx: c, hs: &handleSet{}}
	if err := e.Close(); err != nil {
		t.Errorf("GraphExec.Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second GraphExec.Close: %v", err)
	}
	s := c.DefaultStream()
	if err := e.Launch(s); !errors.Is(err, ErrClosed) {
		t.Errorf("GraphExec.Launch: %v", err)
	}
	if err := e.Update(g); !errors.Is(err, ErrClosed) {
		t.Errorf("GraphExec.Update: %v", err)
	}
}

func TestLife(t *testing.T) {
	var l life
	if !l.acquire() {
		t.Fatal("acquire on a fresh life failed")
	}
	closed := make(chan bool)
	go func() { closed <- l.close() }()
	select {
	case <-closed:
		t.Fatal("close returned while a user was in flight")
	case <-time.After(20 * time.Millisecond):
	}
	l.release()
	if !<-closed {
		t.Fatal("first close reported false")
	}
	if l.close() {
		t.Fatal("second close reported true")
	}
	if l.acquire() {
		t.Fatal("acquire after close succeeded")
	}

	// Many users and one closer, for the race detector.
	var m life
	var wg sync.WaitGroup
	var after atomic.Int64
	var done atomic.Bool
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if m.acquire() {
					if done.Load() {
						after.Add(1)
					}
					m.release()
				}
			}
		}()
	}
	m.close()
	done.Store(true)
	wg.Wait()
	if after.Load() != 0 {
		t.Errorf("%d uses were admitted after close returned", after.Load())
	}
}

func TestHostCallbackRegistry(t *testing.T) {
	var n atomic.Int32
	id := registerCallback(funcCallback(func() { n.Add(1) }))
	runCallback(id, 0)
	runCallback(id, 0) // deleted: ignored
	if n.Load() != 1 {
		t.Errorf("one-shot callback ran %d times", n.Load())
	}
	g := &graphHandles{}
	id = registerCallback(graphFunc(func() { n.Add(1) }))
	g.add(id)
	g.ref()
	runCallback(id, 0)
	runCallback(id, 0)
	g.unref()
	runCallback(id, 0) // released with the graph: ignored
	if n.Load() != 3 {
		t.Errorf("graph callback count %d, want 3", n.Load())
	}
	ch := make(doneCallback, 1)
	id = registerCallback(ch)
	runCallback(id, 700)
	if err := <-ch; err == nil {
		t.Errorf("done callback with a failure status delivered nil")
	}
}

func TestGPUStreamsAndEvents(t *testing.T) {
	dev := gpuDevice(t)
	s := testStream(t, dev)
	_, greatest, _ := dev.StreamPriorityRange()
	hi := try(dev.NewStream(&StreamOptions{Priority: greatest})).must(t)
	start := try(dev.NewEvent(&EventOptions{Timing: true})).must(t)
	defer start.Close()
	end := try(dev.NewEvent(&EventOptions{Timing: true, BlockingSync: true})).must(t)
	defer end.Close()
	buf := try(dev.Allocate(256<<20, s)).must(t)
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if err := buf.Memset32Async(s, uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	// hi waits for s's work through the event.
	if err := hi.Wait(end); err != nil {
		t.Fatal(err)
	}
	if err := hi.Sync(); err != nil {
		t.Fatal(err)
	}
	if done, err := end.Query(); err != nil || !done {
		t.Errorf("end.Query() after the waiting stream synced = %v, %v", done, err)
	}
	if err := end.Sync(); err != nil {
		t.Fatal(err)
	}
	d, err := Elapsed(start, end)
	if err != nil || d <= 0 {
		t.Fatalf("Elapsed = %v, %v; want > 0", d, err)
	}
	t.Logf("8 memsets of 256 MiB: %v", d)
	ev := try(s.Record()).must(t)
	if err := ev.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := Elapsed(ev, end); err == nil {
		t.Error("Elapsed with an event without timing: no error")
	}
	ev.Close()
	if done, err := s.Query(); err != nil || !done {
		t.Errorf("Query on an idle stream = %v, %v", done, err)
	}
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	closeTwice(t, hi)
	if err := hi.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	for _, ds := range []*Stream{dev.DefaultStream(), dev.PerThreadStream()} {
		if err := ds.Sync(); err != nil {
			t.Errorf("%v: Sync: %v", ds, err)
		}
		if err := ds.Close(); err != nil || ds.Sync() != nil {
			t.Errorf("%v: Close must do nothing: %v", ds, err)
		}
	}

	// An interprocess event gives a handle.
	ipc := try(dev.NewEvent(&EventOptions{Interprocess: true})).must(t)
	if _, err := ipc.IPCHandle(); err != nil {
		t.Errorf("IPCHandle: %v", err)
	}
	ipc.Close()
}

func TestGPUDoneWaitContextHostFunc(t *testing.T) {
	dev := gpuDevice(t)
	s, err := dev.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// LaunchHostFunc runs Go code in stream order.
	var ran atomic.Int32
	release := make(chan struct{})
	if err := s.LaunchHostFunc(func() { <-release; ran.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := s.LaunchHostFunc(func() { ran.Add(10) }); err != nil {
		t.Fatal(err)
	}
	done := s.Done()

	// The stream is held by the first host function.
	if d, err := s.Query(); err != nil || d {
		t.Errorf("Query on a held stream = %v, %v", d, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := s.WaitContext(ctx); err != context.DeadlineExceeded {
		t.Errorf("WaitContext with a short deadline on a held stream: %v", err)
	}
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := s.WaitContext(ctx); err != context.Canceled {
		t.Errorf("WaitContext with a cancelled context: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Done fired while the stream was held: %v", err)
	default:
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Done: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not fire")
	}
	if got := ran.Load(); got != 11 {
		t.Errorf("host functions ran to %d, want 11", got)
	}
	if err := s.WaitContext(context.Background()); err != nil {
		t.Errorf("WaitContext on an idle stream: %v", err)
	}
	if err := <-s.Done(); err != nil {
		t.Errorf("Done on an idle stream: %v", err)
	}
	if err := s.LaunchHostFunc(nil); err == nil {
		t.Error("LaunchHostFunc(nil): no error")
	}
}

// TestCloseInClosedContext: an object whose context was closed first
// closes without an error (the context took its handle with it), as an
// Event does; Close once more does nothing.
func TestCloseInClosedContext(t *testing.T) {
	for name, c := range map[string]interface{ Close() error }{
		"TextureObject": &TextureObject{ctx: closedContext(), handle: 1},
		"SurfaceObject": &SurfaceObject{ctx: closedContext(), handle: 1},
		"Event":         &Event{ctx: closedContext(), handle: 1},
	} {
		for i := range 2 {
			if err := c.Close(); err != nil {
				t.Errorf("%s: Close #%d = %v, want nil", name, i+1, err)
			}
		}
	}
}
