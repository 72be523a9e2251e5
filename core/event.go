package core

import (
	"errors"
	"runtime"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

// EventOptions configure NewEvent.
type EventOptions struct {
	// Timing lets the event measure time (Elapsed); events without it are
	// cheaper.
	Timing bool
	// BlockingSync makes Sync block the thread instead of spinning.
	BlockingSync bool
	// Interprocess lets other processes use the event (IPCHandle); it
	// cannot be combined with Timing.
	Interprocess bool
}

// Event marks a point in a stream's work. Close destroys it; a finalizer
// destroys a forgotten one.
type Event struct {
	handle  driver.Event
	ctx     *Context
	timing  bool
	life    life
	cleanup runtime.Cleanup
}

// The CU_EVENT_* flags.
const (
	eventBlockingSync  = 1
	eventDisableTiming = 2
	eventInterprocess  = 4
)

// NewEvent creates an event in context c.
func (c *Context) NewEvent(options *EventOptions) (*Event, error) {
	opts := optsOf(options)
	if opts.Interprocess && opts.Timing {
		return nil, errors.New("core: NewEvent: an interprocess event cannot have Timing")
	}
	var flags uint32
	if !opts.Timing {
		flags |= eventDisableTiming
	}
	if opts.BlockingSync {
		flags |= eventBlockingSync
	}
	if opts.Interprocess {
		flags |= eventInterprocess
	}
	h, err := c.acquire()
	if err != nil {
		return nil, err
	}
	defer c.release()
	eh, err := cuEventCreate(h, flags)
	if err != nil {
		return nil, err
	}
	return c.newEvent(eh, opts.Timing), nil
}

func (c *Context) newEvent(eh driver.Event, timing bool) *Event {
	if c.green != nil {
		c.green.addEvent(eh) // for the green context's Close to destroy
	}
	e := &Event{handle: eh, ctx: c, timing: timing}
	e.cleanup = runtime.AddCleanup(e, destroyEvent, handleRef[driver.Event]{c, eh})
	return e
}

// destroyEvent is the finalizer of a forgotten Event. Its error is
// recorded for the next Sync of the context.
func destroyEvent(r handleRef[driver.Event]) {
	destroyForgotten(r.ctx, "event", r.h, r.ctx.destroyEvent)
}

func (e *Event) acquire() (driver.Context, error) { return acquireIn(&e.life, e.ctx) }

// call calls f with the event and its context acquired.
func (e *Event) call(f func(h driver.Context) error) error { return callIn(&e.life, e.ctx, f) }

func (e *Event) release() {
	e.ctx.release()
	e.life.release()
}

// Handle returns the driver's CUevent.
func (e *Event) Handle() driver.Event { return e.handle }

// Context returns the event's context.
func (e *Event) Context() *Context { return e.ctx }

// Close destroys the event; later calls return ErrClosed. Closing twice
// is not an error.
func (e *Event) Close() error {
	if !e.life.close() {
		return nil
	}
	return destroyClosed(e.ctx, &e.cleanup, e.handle, e.ctx.destroyEvent)
}

// destroyEvent destroys event eh of c, in context h (c entered), and
// forgets it in a green context.
func (c *Context) destroyEvent(h driver.Context, eh driver.Event) error {
	err := cuEventDestroy(h, eh)
	if err == nil && c.green != nil {
		c.green.removeEvent(eh)
	}
	return err
}

// Record captures the work queued on s so far: the event completes when
// that work does. Recording again moves it.
func (e *Event) Record(s *Stream) error {
	return e.call(func(h driver.Context) error {
		if !s.life.acquire() {
			return ErrClosed
		}
		defer s.life.release()
		return cuEventRecord(h, e.handle, s.handle)
	})
}

// Sync waits until the event's work is done.
func (e *Event) Sync() error {
	return e.call(func(h driver.Context) error { return cuEventSynchronize(h, e.handle) })
}

// Query reports whether the event's work is done.
func (e *Event) Query() (done bool, err error) {
	return doneOf(e.call(func(h driver.Context) error { return cuEventQuery(h, e.handle) }))
}

// Elapsed returns the GPU time between two recorded, completed events
// made with Timing (resolution about half a microsecond).
func Elapsed(start, end *Event) (time.Duration, error) {
	if !start.timing || !end.timing {
		return 0, errors.New("core: Elapsed: both events need EventOptions.Timing")
	}
	h, err := end.acquire()
	if err != nil {
		return 0, err
	}
	defer end.release()
	if !start.life.acquire() {
		return 0, ErrClosed
	}
	defer start.life.release()
	ms, err := cuEventElapsedTime(h, start.handle, end.handle)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// IPCHandle returns a handle another process can open with OpenIPCEvent;
// the event must have been made with Interprocess.
func (e *Event) IPCHandle() (driver.IpcEventHandle, error) {
	h, err := e.acquire()
	if err != nil {
		return driver.IpcEventHandle{}, err
	}
	defer e.release()
	return cuIpcGetEventHandle(h, e.handle)
}

// OpenIPCEvent opens an event of another process in dev's primary context.
func OpenIPCEvent(dev *Device, handle driver.IpcEventHandle) (*Event, error) {
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	eh, err := cuIpcOpenEventHandle(h, handle)
	if err != nil {
		return nil, err
	}
	return dev.primary.newEvent(eh, false), nil
}
