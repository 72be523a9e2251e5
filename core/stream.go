package core

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/cudago/cudago/bindings/driver"
)

// StreamOptions configure NewStream.
type StreamOptions struct {
	// Priority: lower numbers run first; 0 is the default. See
	// Device.StreamPriorityRange. Out-of-range values are clamped by the
	// driver.
	Priority int
	// NonBlocking makes the stream not synchronize with the legacy
	// default (NULL) stream.
	NonBlocking bool
}

// Stream is a CUDA stream: a queue of GPU work that runs in order.
//
// Streams from NewStream own their CUstream: Close destroys it (work
// already queued still completes), and a finalizer destroys a forgotten
// one. The default streams (DefaultStream, PerThreadStream) belong to their
// context: their Close does nothing.
type Stream struct {
	handle  driver.Stream
	ctx     *Context
	owned   bool
	life    life
	cleanup runtime.Cleanup
	capture atomic.Pointer[graphHandles] // set between BeginCapture and EndCapture
}

// NewStream creates a stream in context c. In a green context it is
// always non-blocking (cuGreenCtxStreamCreate requires it).
func (c *Context) NewStream(options *StreamOptions) (*Stream, error) {
	opts := optsOf(options)
	h, err := c.acquire()
	if err != nil {
		return nil, err
	}
	defer c.release()
	var flags uint32
	if opts.NonBlocking || c.green != nil {
		flags |= uint32(driver.StreamNonBlocking)
	}
	var sh driver.Stream
	if c.green != nil {
		// cuGreenCtxDestroy leaves its streams: the context keeps them
		// to destroy.
		if sh, err = cuGreenCtxStreamCreate(c.green.h, flags, int32(opts.Priority)); err == nil {
			c.green.addStream(sh)
		}
	} else {
		sh, err = cuStreamCreateWithPriority(h, flags, int32(opts.Priority))
	}
	if err != nil {
		return nil, err
	}
	s := &Stream{handle: sh, ctx: c, owned: true}
	s.cleanup = runtime.AddCleanup(s, destroyStream, handleRef[driver.Stream]{c, sh})
	return s, nil
}

// destroyStream is the finalizer of a forgotten Stream. Its error is
// recorded for the next Sync of the context.
func destroyStream(r handleRef[driver.Stream]) {
	destroyForgotten(r.ctx, "stream", r.h, r.ctx.destroyStream)
}

// acquire acquires the stream and its context for a driver call.
func (s *Stream) acquire() (driver.Context, error) { return acquireIn(&s.life, s.ctx) }

// call calls f with the stream and its context acquired.
func (s *Stream) call(f func(h driver.Context) error) error { return callIn(&s.life, s.ctx, f) }

// acquireIn holds l, the life of an object of ctx, and acquires ctx for a
// driver call on that object; success needs a ctx.release and an
// l.release.
func acquireIn(l *life, ctx *Context) (driver.Context, error) {
	if !l.acquire() {
		return 0, ErrClosed
	}
	h, err := ctx.acquire()
	if err != nil {
		l.release()
	}
	return h, err
}

// callIn calls f with l, the life of an object of ctx, held and ctx
// acquired.
func callIn(l *life, ctx *Context, f func(h driver.Context) error) error {
	h, err := acquireIn(l, ctx)
	if err != nil {
		return err
	}
	defer l.release()
	defer ctx.release()
	return f(h)
}

// doneOf is the answer of a Query whose driver call (cuStreamQuery,
// cuEventQuery) returned err: CUDA_ERROR_NOT_READY means not done yet.
func doneOf(err error) (done bool, _ error) {
	if err == nil {
		return true, nil
	}
	if isNotReady(err) {
		return false, nil
	}
	return false, err
}

// handleRef is what the cleanup of a forgotten driver object gets: its
// context and its handle, not the object, which that would keep alive.
type handleRef[H ~uintptr | ~uint64] struct {
	ctx *Context
	h   H
}

// destroyForgotten is the cleanup of a forgotten driver object h of ctx,
// what it is: it destroys h and records the error for the next Sync of
// ctx. A context already destroyed took h with it.
func destroyForgotten[H ~uintptr | ~uint64](ctx *Context, what string, h H, destroy func(driver.Context, H) error) {
	c, err := ctx.acquire()
	if err != nil {
		return
	}
	ctx.record(fmt.Sprintf("destroying a forgotten %s %#x", what, uint64(h)), destroy(c, h))
	ctx.release()
}

// destroyClosed ends the Close of an object of ctx, its life closed: it
// stops the object's cleanup and destroys its handle h. A closed context
// took h with it.
func destroyClosed[H ~uintptr | ~uint64](ctx *Context, cleanup *runtime.Cleanup, h H, destroy func(driver.Context, H) error) error {
	cleanup.Stop()
	err := ctx.call(func(c driver.Context) error { return destroy(c, h) })
	if err == ErrClosed {
		return nil
	}
	return err
}

// acquireForFree acquires the stream a free is ordered on: stream, nil
// meaning dev's legacy default stream, or, once stream is closed, its
// context's fallbackStream (a closed green context's too). The caller
// releases the stream it returns.
func acquireForFree(dev *Device, stream *Stream) (*Stream, driver.Context, error) {
	if stream == nil {
		stream = dev.DefaultStream()
	}
	h, err := stream.acquire()
	if err == ErrClosed {
		stream = stream.ctx.fallbackStream()
		h, err = stream.acquire()
	}
	return stream, h, err
}

// freeAsync frees ptr of dev (if not 0) with cuMemFreeAsync ordered on
// stream (see acquireForFree); with wait it then waits for that stream.
func freeAsync(dev *Device, ptr driver.Deviceptr, stream *Stream, wait bool) error {
	if ptr == 0 {
		return nil
	}
	stream, h, err := acquireForFree(dev, stream)
	if err != nil {
		return err
	}
	defer stream.release()
	if err := cuMemFreeAsync(h, ptr, stream.handle); err != nil || !wait {
		return err
	}
	return cuStreamSynchronize(h, stream.handle)
}

// closed reports whether the stream or its created context is closed:
// what acquire would refuse, read without holding anything. (For a
// primary context it reads only that it is one.)
func (s *Stream) closed() bool {
	c := s.ctx
	return s.life.closed() || !c.primary && c.life.closed()
}

func (s *Stream) release() {
	s.ctx.release()
	s.life.release()
}

// releaseAfter is s.release for a hot path that read s's context c, and
// whether it is primary, before its driver call: after the call (which
// evicts much of what Go read) only the counters are touched, with no
// pointer to load first.
func releaseAfter(s *Stream, c *Context, primary bool) {
	if !primary {
		c.life.release()
	}
	s.life.release()
}

// Handle returns the driver's CUstream (0 for the legacy default stream,
// 2 for the per-thread one).
func (s *Stream) Handle() driver.Stream { return s.handle }

// Context returns the stream's context.
func (s *Stream) Context() *Context { return s.ctx }

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.ctx.dev }

// String describes the stream.
func (s *Stream) String() string {
	switch {
	case !s.owned && s.handle == streamLegacy:
		return fmt.Sprintf("legacy default stream of %v", s.ctx.dev)
	case !s.owned:
		return fmt.Sprintf("per-thread default stream of %v", s.ctx.dev)
	}
	return fmt.Sprintf("stream %#x of %v", uintptr(s.handle), s.ctx.dev)
}

// Close destroys a stream from NewStream; later calls return ErrClosed.
// Closing twice is not an error. On a default stream it does nothing.
func (s *Stream) Close() error {
	if s == nil || !s.owned || !s.life.close() {
		return nil
	}
	s.cleanup.Stop()
	h, err := s.ctx.acquire()
	if err != nil {
		return nil // the context was destroyed, and the stream with it
	}
	defer s.ctx.release()
	ferr := s.ctx.flushReuse(h, s) // blocks kept for reuse on s
	if err := s.ctx.destroyStream(h, s.handle); err != nil {
		return err
	}
	return ferr
}

// destroyStream destroys stream sh of c, in context h (c entered), and
// forgets it in a green context.
func (c *Context) destroyStream(h driver.Context, sh driver.Stream) error {
	err := cuStreamDestroy(h, sh)
	if err == nil && c.green != nil {
		c.green.removeStream(sh)
	}
	return err
}

// Sync waits until all work queued on the stream is done. Pool blocks kept
// for reuse on the stream (see DeviceMemoryResource) go back to the pool
// first.
func (s *Stream) Sync() error {
	h, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.release()
	if err := s.ctx.flushReuse(h, s); err != nil {
		return err
	}
	return cuStreamSynchronize(h, s.handle)
}

// Query reports whether all work queued on the stream is done.
func (s *Stream) Query() (done bool, err error) {
	return doneOf(s.call(func(h driver.Context) error { return cuStreamQuery(h, s.handle) }))
}

// Wait makes later work on s wait until e's recorded work is done; the
// host does not wait.
func (s *Stream) Wait(e *Event) error {
	return s.call(func(h driver.Context) error {
		if !e.life.acquire() {
			return ErrClosed
		}
		defer e.life.release()
		return cuStreamWaitEvent(h, s.handle, e.handle, 0)
	})
}

// Record records a new event (timing disabled) on the stream: it
// completes when the work queued so far does. Close it when done.
func (s *Stream) Record() (*Event, error) {
	e, err := s.ctx.NewEvent(nil)
	if err != nil {
		return nil, err
	}
	if err := e.Record(s); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Done returns a channel that receives one value, then is closed, when
// the work queued on the stream so far completes: nil, or the error the
// stream failed with. It is built on cuStreamAddCallback (a callback from
// a driver thread through a cgo.Handle), which also reports failures,
// rather than on polling. It cannot be used while the stream captures a
// graph: the channel then delivers the error.
func (s *Stream) Done() <-chan error {
	ch := make(doneCallback, 1)
	h, err := s.acquire()
	if err != nil {
		ch <- err
		close(ch)
		return ch
	}
	defer s.release()
	hd := registerCallback(hostCallback(ch))
	if err := cStreamAddCallback(h, s.handle, hd); err != nil {
		deleteCallback(hd)
		ch <- err
		close(ch)
	}
	return ch
}

// WaitContext waits until the work queued on the stream so far is done,
// or ctx is done, whichever comes first; it returns ctx.Err() in the
// second case (and at once if ctx is done already). The GPU work is not
// cancelled.
func (s *Stream) WaitContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if done, err := s.Query(); err != nil || done {
		return err
	}
	select {
	case err := <-s.Done():
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LaunchHostFunc queues f on the stream: it runs on a driver thread once
// the work queued before it is done, and work queued after it waits for
// it to return. f must not call CUDA (no core function either) and should
// be quick. If the context fails, f may never run. It may be captured into
// a graph, where it runs at every launch.
func (s *Stream) LaunchHostFunc(f func()) error {
	if f == nil {
		return fmt.Errorf("core: LaunchHostFunc: nil function")
	}
	return s.call(func(h driver.Context) error {
		// Captured into a graph, f runs at every launch: the graph keeps
		// its handle.
		g := s.capture.Load()
		var cb hostCallback = funcCallback(f)
		if g != nil {
			cb = graphFunc(f)
		}
		hd := registerCallback(cb)
		if err := cLaunchHostFunc(h, s.handle, hd); err != nil {
			deleteCallback(hd)
			return err
		}
		if g != nil {
			g.add(hd)
		}
		return nil
	})
}
