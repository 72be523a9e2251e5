package core

import (
	"runtime"
	"sync"
)

// How a forgotten Buffer is freed, cheaply for the Buffers that are closed.
//
// A Buffer dropped without Close must still be freed, which takes a hook
// of the garbage collector on each Buffer: a finalizer (or a cleanup, or a
// weak pointer: the runtime keeps each as a "special" record, added and
// removed under its locks). On the allocation hot path (Allocate + Close)
// setting and clearing it was the largest cost left in Go. So a new Buffer
// gets no finalizer at first: it goes on a list of young Buffers, which
// holds it, so that it cannot be collected while it has none. The list is
// swept when it is full and at every garbage collection (a sentinel
// object's finalizer, re-armed each time, runs the sweep): the Buffers
// closed meanwhile (most, on the hot path) are dropped from it, and the
// open ones get their finalizer then, and are dropped. So every Buffer is
// at any time either closed, on the list (reachable), or finalized when
// collected; a forgotten one is freed one collection later than with a
// finalizer from the start.
//
// The races: the sweep drops a closed Buffer; an open one it marks
// promoted, then, if it is still not closed, sets its finalizer. Close
// closes a Buffer, then clears its finalizer if it is marked promoted.
// Whatever the order, an open Buffer leaves the list only with its
// finalizer set; at worst a closed one keeps a finalizer, which finds it
// closed and does nothing.

// youngMax is the length of the list that makes the allocating goroutine
// sweep it.
const youngMax = 256

var young struct {
	mu    sync.Mutex
	bufs  []*Buffer
	spare []*Buffer // the other list, swept: no allocation in steady state
	armed sync.Once
}

// youngSentinel is garbage at every collection; its finalizer sweeps the
// young Buffers and makes the next one. (It holds a pointer so that it is
// not a tiny allocation, whose finalizers may never run.)
type youngSentinel struct{ _ *byte }

func armYoungSweep() {
	runtime.SetFinalizer(&youngSentinel{}, func(*youngSentinel) {
		sweepYoung(takeYoung())
		armYoungSweep()
	})
}

// addYoung puts b, a new Buffer with memory to free, on the list.
func addYoung(b *Buffer) {
	young.armed.Do(armYoungSweep)
	young.mu.Lock()
	young.bufs = append(young.bufs, b)
	var full []*Buffer
	if len(young.bufs) >= youngMax {
		full = takeYoungLocked()
	}
	young.mu.Unlock()
	if full != nil {
		sweepYoung(full)
	}
}

// takeYoung takes the list for a sweep, leaving the spare in its place.
func takeYoung() []*Buffer {
	young.mu.Lock()
	defer young.mu.Unlock()
	return takeYoungLocked()
}

func takeYoungLocked() []*Buffer {
	l := young.bufs
	young.bufs, young.spare = young.spare[:0], nil
	return l
}

// sweepYoung drops the closed Buffers of l and sets the finalizers of the
// open ones; l (cleared) becomes the spare list.
func sweepYoung(l []*Buffer) {
	for i, b := range l {
		l[i] = nil
		if b.life.closed() {
			continue // most: a plain read, no atomic write
		}
		b.promoted.Store(true)
		if !b.life.closed() {
			runtime.SetFinalizer(b, (*Buffer).finalize)
		}
	}
	young.mu.Lock()
	if young.spare == nil {
		young.spare = l[:0]
	}
	young.mu.Unlock()
}
