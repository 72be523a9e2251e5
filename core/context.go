package core

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cudago/cudago/bindings/driver"
)

// Context is a CUDA context: a device's primary context (Device.PrimaryContext,
// what every Device method uses), one made by Device.CreateContext, or a
// green context (Device.CreateGreenContext), whose handle is the CUcontext
// its CUgreenCtx converts to.
//
// A primary context is retained on first use and kept for the life of the
// process; its Close does nothing. A created context is destroyed by Close
// (or, when forgotten, by a finalizer), and with it the streams, events and
// memory made in it: using them afterwards returns ErrClosed.
//
// Errors that no call can return, of finalizers that free forgotten
// Buffers or destroy forgotten Streams, Events, Graphs and GraphExecs, and
// of pool blocks kept for reuse that are freed later, are recorded on the
// context and returned by its next Sync (or Close), joined with errors.Join
// (at most 8 of them; a last one counts those dropped), and then
// forgotten. Stream.Sync does not return them.
type Context struct {
	dev     *Device
	primary bool
	h       atomic.Uintptr // 0 until a primary context is retained
	mu      sync.Mutex
	life    life          // created and green contexts only
	green   *greenContext // green contexts only (greencontext.go)
	pool    poolReuse     // DeviceMemoryResource blocks kept for reuse
	// errors no caller could be told of, for the next Sync (errors.go)
	recorded recorded

	defStream *Stream
	ptStream  *Stream
	cleanup   runtime.Cleanup
}

func newPrimaryContext(d *Device) *Context {
	c := &Context{dev: d, primary: true}
	c.initStreams()
	return c
}

func newCreatedContext(d *Device, h driver.Context) *Context {
	c := &Context{dev: d}
	c.h.Store(uintptr(h))
	c.initStreams()
	// The error of destroying a forgotten context has nowhere to go: the
	// context is what Sync would report it on.
	c.cleanup = runtime.AddCleanup(c, func(h driver.Context) { cuCtxDestroy(h) }, h)
	return c
}

// The legacy and per-thread default streams (CU_STREAM_LEGACY and
// CU_STREAM_PER_THREAD; the legacy one is the NULL stream).
const (
	streamLegacy    = driver.Stream(0)
	streamPerThread = driver.Stream(2)
)

func (c *Context) initStreams() {
	c.defStream = &Stream{handle: streamLegacy, ctx: c}
	c.ptStream = &Stream{handle: streamPerThread, ctx: c}
}

// call calls f with c acquired.
func (c *Context) call(f func(h driver.Context) error) error {
	h, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release()
	return f(h)
}

// callWith calls f with c and other acquired: the frame of the driver
// calls that name two contexts (peer access, peer copies).
func (c *Context) callWith(other *Context, f func(h, oh driver.Context) error) error {
	return c.call(func(h driver.Context) error {
		return other.call(func(oh driver.Context) error { return f(h, oh) })
	})
}

// acquire returns the context's handle for a driver call, retaining a
// primary context on first use; every successful acquire needs a release.
func (c *Context) acquire() (driver.Context, error) {
	if c.primary {
		if h := c.h.Load(); h != 0 {
			return driver.Context(h), nil
		}
		return c.retain()
	}
	if !c.life.acquire() {
		return 0, ErrClosed
	}
	return driver.Context(c.h.Load()), nil
}

func (c *Context) release() {
	if !c.primary {
		c.life.release()
	}
}

func (c *Context) retain() (driver.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.h.Load(); h != 0 {
		return driver.Context(h), nil
	}
	if err := initDriver(); err != nil {
		return 0, err
	}
	h, err := cuDevicePrimaryCtxRetain(c.dev.handle)
	if err != nil {
		return 0, err
	}
	c.h.Store(uintptr(h))
	return h, nil
}

// Handle returns the driver's CUcontext, retaining a primary context.
func (c *Context) Handle() (driver.Context, error) {
	h, err := c.acquire()
	if err == nil {
		c.release()
	}
	return h, err
}

// Device returns the context's device.
func (c *Context) Device() *Device { return c.dev }

// IsPrimary reports whether c is its device's primary context.
func (c *Context) IsPrimary() bool { return c.primary }

// Close destroys a created or green context, and returns the errors
// recorded on it (see Context) with its own; for a primary context it does
// nothing. Closing twice is not an error.
func (c *Context) Close() error {
	if c.primary {
		return nil
	}
	var ferr error
	if h, err := c.acquire(); err == nil {
		ferr = c.flushReuse(h, nil) // blocks kept for reuse go back while their streams live
		c.release()
	}
	if !c.life.close() {
		return nil
	}
	c.cleanup.Stop()
	var err error
	if c.green != nil {
		// Blocks kept since the flush above go back too: a green
		// context's memory is its device's, and outlives it.
		if e := c.flushReuse(driver.Context(c.h.Load()), nil); ferr == nil {
			ferr = e
		}
		err = c.green.destroy()
	} else {
		err = cuCtxDestroy(driver.Context(c.h.Load()))
	}
	c.pool.takeAll(nil) // kept meanwhile: gone with the context
	if err == nil {
		err = ferr
	}
	return c.withRecorded(err)
}

// SetCurrent makes c current on the calling OS thread; see
// Device.SetCurrent: core never needs it.
func (c *Context) SetCurrent() error {
	h, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release()
	return cuCtxSetCurrent(h)
}

// Sync waits until all work in the context is done. Pool blocks kept for
// reuse (see DeviceMemoryResource) go back to the pool first. It also
// returns, and forgets, the errors recorded on the context since the last
// Sync (see Context): a nil error means none was.
func (c *Context) Sync() error {
	h, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release()
	err = c.flushReuse(h, nil)
	if err == nil {
		err = cuCtxSynchronize(h)
	}
	return c.withRecorded(err)
}

// MemoryInfo returns the free and total memory of the context's device.
func (c *Context) MemoryInfo() (free, total uint64, err error) {
	h, err := c.acquire()
	if err != nil {
		return 0, 0, err
	}
	defer c.release()
	return cuMemGetInfo(h)
}

// DefaultStream returns the context's legacy default (NULL) stream.
func (c *Context) DefaultStream() *Stream { return c.defStream }

// PerThreadStream returns the context's per-thread default stream.
func (c *Context) PerThreadStream() *Stream { return c.ptStream }
