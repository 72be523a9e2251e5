package fft

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cudago/cudago/core"
)

// Cache makes plans for one stream and keeps them: asking twice for the
// same Desc (shape, type, precision, batch and, for real transforms,
// placement) returns the same Plan, as CuPy's plan cache does. Its plans
// live, with their work areas, until the Cache is closed; a program that
// transforms many different shapes should close caches it no longer needs
// (or use NewPlan and Close each plan). A Cache is safe for concurrent use;
// goroutines asking for the same new Desc at once wait for one plan.
type Cache struct {
	stream *core.Stream

	mu     sync.Mutex
	plans  map[key]*entry // nil in a Cache not made by New
	closed bool
}

// entry is one plan of a Cache, being made until done is closed.
type entry struct {
	done chan struct{}
	plan *Plan
	err  error
}

// Options configure New. There are none yet: nil is the default, and the
// type is there so that options can come without changing New.
type Options struct{}

// New returns an empty Cache for plans on stream; opts may be nil. It
// makes no plan yet.
func New(stream *core.Stream, opts *Options) (*Cache, error) {
	if stream == nil {
		return nil, argErr("New", "stream", "nil *core.Stream (Context.DefaultStream is the legacy default stream)")
	}
	return &Cache{stream: stream, plans: map[key]*entry{}}, nil
}

// NewCache returns New(s, nil).
//
// Deprecated: use New, which every library package has; NewCache goes in
// the next release.
func NewCache(s *core.Stream) (*Cache, error) { return New(s, nil) }

// Plan returns the Cache's plan for d, making it on first use. The plan
// belongs to the Cache: its Close does nothing, the Cache's closes it. A
// plan that failed to be made is not kept, so a later call tries again.
func (c *Cache) Plan(d Desc) (*Plan, error) {
	if c == nil || c.plans == nil {
		return nil, fmt.Errorf("fft: Cache.Plan: a Cache not made by New: %w", core.ErrClosed)
	}
	l, err := d.check("Cache.Plan")
	if err != nil {
		return nil, err
	}
	k := l.key()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, core.ErrClosed
	}
	e, ok := c.plans[k]
	if !ok {
		e = &entry{done: make(chan struct{})}
		c.plans[k] = e
		c.mu.Unlock()
		// Made outside the lock: plans of other shapes need not wait.
		e.plan, e.err = newPlan("Cache.Plan", c.stream, l, true)
		if e.err != nil {
			c.mu.Lock()
			delete(c.plans, k)
			c.mu.Unlock()
		}
		close(e.done)
	} else {
		c.mu.Unlock()
	}
	<-e.done
	return e.plan, e.err
}

// Len returns the number of plans the Cache holds.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.plans {
		select {
		case <-e.done:
			if e.plan != nil {
				n++
			}
		default: // being made
		}
	}
	return n
}

// Stream returns the stream the Cache's plans run on.
func (c *Cache) Stream() *core.Stream { return c.stream }

// Close closes every plan of the Cache (waiting for those being made) and
// frees their work areas after the transforms queued on the stream. Later
// calls of Plan, and transforms on its plans, return core.ErrClosed;
// closing twice is not an error.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	plans := c.plans
	c.plans = map[key]*entry{}
	c.mu.Unlock()
	var err error
	for _, e := range plans {
		<-e.done
		if e.plan != nil {
			err = errors.Join(err, e.plan.st.Close())
		}
	}
	return err
}
