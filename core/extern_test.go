package core

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

// TestAcquireRelease: an acquired Buffer makes Close wait until Release,
// and a closed one refuses Acquire.
func TestAcquireRelease(t *testing.T) {
	mr := &fakeMR{}
	b := NewBuffer(0x1000, 64, mr, nil)
	p, err := b.Acquire()
	if err != nil || p != 0x1000 {
		t.Fatalf("Acquire = %#x, %v", p, err)
	}
	closed := make(chan error)
	go func() { closed <- b.Close() }()
	time.Sleep(20 * time.Millisecond) // Close is waiting by now
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the buffer was acquired", err)
	default:
	}
	b.Release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if mr.freed.Load() != 1 {
		t.Fatalf("freed %d times, want 1", mr.freed.Load())
	}
	if _, err := b.Acquire(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v, want ErrClosed", err)
	}
}

// recordingMR records, in order, the frees and what the OnFree functions
// say, in one log.
type recordingMR struct {
	fakeMR
	mu  sync.Mutex
	log []string
}

func (m *recordingMR) add(s string) {
	m.mu.Lock()
	m.log = append(m.log, s)
	m.mu.Unlock()
}

func (m *recordingMR) Deallocate(p driver.Deviceptr, n int, s *Stream) error {
	m.add(fmt.Sprintf("free %#x", uint64(p)))
	return m.fakeMR.Deallocate(p, n, s)
}

func (m *recordingMR) lines() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.log, "; ")
}

// TestOnFree: the functions run once, in order, before the memory is
// freed by Close; a view's belong to the buffer it views and closing the
// view runs none; a closed buffer refuses more.
func TestOnFree(t *testing.T) {
	mr := &recordingMR{}
	b := NewBuffer(0x1000, 64, mr, nil)
	v, err := b.View(16, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.OnFree(func() { mr.add("first") }); err != nil {
		t.Fatal(err)
	}
	if err := v.OnFree(func() { mr.add("from the view") }); err != nil {
		t.Fatal(err)
	}
	if err := b.OnFree(nil); err == nil {
		t.Error("OnFree(nil) succeeded")
	}
	if err := v.Close(); err != nil || mr.lines() != "" {
		t.Fatalf("closing the view: %v, log %q, want nothing run", err, mr.lines())
	}
	if err := v.OnFree(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("OnFree of a closed view: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := mr.lines(), "first; from the view; free 0x1000"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
	if err := b.Close(); err != nil || mr.lines() != "first; from the view; free 0x1000" {
		t.Errorf("closing twice: %v, log %q", err, mr.lines())
	}
	if err := b.OnFree(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("OnFree of a closed buffer: %v, want ErrClosed", err)
	}
	var nb *Buffer
	if err := nb.OnFree(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("OnFree of a nil buffer: %v, want ErrClosed", err)
	}
}

// TestOnFreeFinalizer: a forgotten buffer's functions run in its
// finalizer, before the free.
func TestOnFreeFinalizer(t *testing.T) {
	mr := &recordingMR{}
	func() {
		b := NewBuffer(0x2000, 64, mr, nil)
		if err := b.OnFree(func() { mr.add("hook") }); err != nil {
			t.Fatal(err)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for mr.freed.Load() == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got, want := mr.lines(), "hook; free 0x2000"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

// TestOnFreeRace: OnFree racing Close either adds a function that then
// runs exactly once, or returns ErrClosed.
func TestOnFreeRace(t *testing.T) {
	for range 100 {
		mr := &fakeMR{}
		b := NewBuffer(0x3000, 64, mr, nil)
		var ran atomic.Int32
		var added atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := b.OnFree(func() { ran.Add(1) })
				if err == nil {
					added.Add(1)
				} else if !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
			}()
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if ran.Load() != added.Load() || mr.freed.Load() != 1 {
			t.Fatalf("%d functions added, %d ran, %d frees", added.Load(), ran.Load(), mr.freed.Load())
		}
	}
}
