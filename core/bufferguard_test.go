package core

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

// freeCounter is a resource that counts the frees of each address.
type freeCounter struct {
	mu    sync.Mutex
	freed map[driver.Deviceptr]int
}

func (m *freeCounter) Allocate(size int, stream *Stream) (*Buffer, error) { panic("not used") }
func (m *freeCounter) Deallocate(p driver.Deviceptr, size int, s *Stream) error {
	m.mu.Lock()
	m.freed[p]++
	m.mu.Unlock()
	return nil
}
func (m *freeCounter) Device() *Device        { return nil }
func (m *freeCounter) DeviceAccessible() bool { return true }
func (m *freeCounter) HostAccessible() bool   { return false }

func (m *freeCounter) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.freed {
		n += c
	}
	return n
}

// TestForgottenBuffersFreedOnce makes Buffers from several goroutines,
// closes some (on their goroutine or another), forgets the others, while
// collections run: every one is freed exactly once, the forgotten ones by
// their finalizers, whether they were still on the young list at a sweep,
// swept when it filled, or swept by a collection (bufferguard.go).
func TestForgottenBuffersFreedOnce(t *testing.T) {
	m := &freeCounter{freed: map[driver.Deviceptr]int{}}
	const workers, per = 4, 3*youngMax + 17
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() { // collections at any moment
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	closeLater := make(chan *Buffer, workers*per)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				b := NewBuffer(driver.Deviceptr(0x1000*(1+w*per+i)), 64, m, nil)
				switch i % 3 {
				case 0:
					if err := b.Close(); err != nil {
						t.Error(err)
					}
				case 1:
					closeLater <- b
				} // 2: forgotten
			}
		}()
	}
	var closer sync.WaitGroup
	closer.Add(1)
	go func() {
		defer closer.Done()
		for b := range closeLater {
			if err := b.Close(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	close(closeLater)
	closer.Wait()
	close(stop)
	<-gcDone
	want := workers * per
	deadline := time.Now().Add(20 * time.Second)
	for m.total() < want && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // a second free would come now
	runtime.GC()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.freed) != want {
		t.Errorf("%d of %d Buffers freed", len(m.freed), want)
	}
	for p, n := range m.freed {
		if n != 1 {
			t.Errorf("Buffer at %#x freed %d times", uint64(p), n)
		}
	}
}

// TestYoungBufferPromotion follows Buffers through a sweep: a new one is
// not promoted (it has no finalizer); swept while open it is, and Close
// still frees it once; closed before the sweep, it is dropped, freed once.
func TestYoungBufferPromotion(t *testing.T) {
	m := &freeCounter{freed: map[driver.Deviceptr]int{}}
	b := NewBuffer(0x1000, 64, m, nil)
	if b.promoted.Load() {
		t.Fatal("a new Buffer is promoted already")
	}
	sweepYoung(takeYoung()) // as a collection would
	if !b.promoted.Load() {
		t.Fatal("a swept open Buffer is not promoted")
	}
	if err := b.Close(); err != nil || m.total() != 1 {
		t.Fatalf("Close: %v, %d frees", err, m.total())
	}
	c := NewBuffer(0x2000, 64, m, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	sweepYoung(takeYoung())
	runtime.GC()
	runtime.GC()
	if m.total() != 2 {
		t.Errorf("%d frees, want 2", m.total())
	}
}
