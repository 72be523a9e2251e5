package core

import (
	"errors"
	"testing"
	"time"
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
