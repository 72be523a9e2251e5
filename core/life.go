package core

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// life guards a resource against use during and after Close: users
// acquire and release around each driver call, Close marks it closed and
// waits for the users in flight. Two atomic adds per use.
type life struct{ n atomic.Int64 }

const lifeClosed = int64(1) << 62

func (l *life) acquire() bool {
	if l.n.Add(1)&lifeClosed != 0 {
		l.n.Add(-1)
		return false
	}
	return true
}

func (l *life) release() { l.n.Add(-1) }

func (l *life) closed() bool { return l.n.Load()&lifeClosed != 0 }

// close marks l closed and waits until no user is in flight. It reports
// whether this call closed it (false: it was closed before).
func (l *life) close() bool {
	if l.n.CompareAndSwap(0, lifeClosed) {
		return true // open and unused: the common case, one atomic
	}
	for {
		v := l.n.Load()
		if v&lifeClosed != 0 {
			return false
		}
		if l.n.CompareAndSwap(v, v|lifeClosed) {
			break
		}
	}
	for i := 0; l.n.Load() != lifeClosed; i++ {
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return true
}

// closeLocked is the Close of an object that mu and a closed flag guard
// rather than a life (ObjectCode, Program, FatbinBuilder): under mu, the
// first call sets closed and calls destroy; later ones do nothing.
func closeLocked(mu *sync.Mutex, closed *bool, destroy func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if *closed {
		return nil
	}
	*closed = true
	return destroy()
}
