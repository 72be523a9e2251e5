package core

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cudago/cudago/bindings/driver"
)

// Stream-ordered reuse of pool memory.
//
// Memory freed with cuMemFreeAsync on a stream may be handed again to work
// queued later on that same stream at once: that is how the driver's pool
// works. A DeviceMemoryResource does the same one step earlier: a Buffer
// closed on a stream that is not capturing keeps its block in its context
// (at most poolReuseBlocks blocks and poolReuseBytes bytes a context), and
// the next Allocate of the same size on the same stream takes it back
// without asking the driver, which costs two driver calls less per
// allocation and free. A block is only ever reused on the stream it was
// freed on, so every use of its old Buffer precedes every use of the new
// one in that stream's order, as with the driver's own reuse.
//
// Kept blocks go back to the driver (cuMemFreeAsync on their stream) when
// their stream is synchronized (Stream.Sync) or closed, when their context
// is synchronized (Context.Sync, Device.Sync) or closed, when the limits
// push out the oldest, and before an allocation that failed for lack of
// memory is tried again. Nothing is reused while a stream captures a graph
// (the check, cuStreamIsCapturing, is made in the same C call), nor on the
// per-thread default stream (a different stream on every OS thread).
// DeviceMemoryResource.NoReuse or CUDAGO_POOL_REUSE=off turn it off.
const (
	poolReuseBlocks = 16
	poolReuseBytes  = 1 << 30
)

// poolReuseOff is CUDAGO_POOL_REUSE=off, read once.
var poolReuseOff = os.Getenv("CUDAGO_POOL_REUSE") == "off"

type reuseBlock struct {
	ptr    driver.Deviceptr
	size   int
	stream *Stream
}

// poolReuse holds the blocks kept in one context, oldest first.
type poolReuse struct {
	mu     sync.Mutex
	blocks []reuseBlock
	bytes  int
	n      atomic.Int32 // len(blocks), read without mu by the Sync fast path
}

// take removes and returns a kept block of size bytes for stream, or 0.
func (p *poolReuse) take(stream *Stream, size int) driver.Deviceptr {
	if p.n.Load() == 0 { // nothing kept: no lock
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.blocks) - 1; i >= 0; i-- { // newest first: warmest
		if b := p.blocks[i]; b.stream == stream && b.size == size {
			p.remove(i)
			return b.ptr
		}
	}
	return 0
}

func (p *poolReuse) remove(i int) {
	p.bytes -= p.blocks[i].size
	copy(p.blocks[i:], p.blocks[i+1:])
	p.blocks[len(p.blocks)-1] = reuseBlock{}
	p.blocks = p.blocks[:len(p.blocks)-1]
	p.n.Store(int32(len(p.blocks)))
}

// put keeps b and returns the blocks the limits push out, which the
// caller frees.
func (p *poolReuse) put(b reuseBlock) (out []reuseBlock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocks = append(p.blocks, b)
	p.bytes += b.size
	p.n.Store(int32(len(p.blocks)))
	for len(p.blocks) > poolReuseBlocks || p.bytes > poolReuseBytes {
		out = append(out, p.blocks[0])
		p.remove(0)
	}
	return out
}

// takeAll removes and returns the blocks of stream, or all when stream is
// nil.
func (p *poolReuse) takeAll(stream *Stream) (out []reuseBlock) {
	if p.n.Load() == 0 { // most syncs: nothing kept, no lock
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.blocks[:0]
	for _, b := range p.blocks {
		if stream == nil || b.stream == stream {
			out = append(out, b)
			p.bytes -= b.size
		} else {
			kept = append(kept, b)
		}
	}
	clear(p.blocks[len(kept):])
	p.blocks = kept
	p.n.Store(int32(len(p.blocks)))
	return out
}

// len returns the number of kept blocks.
func (p *poolReuse) len() int { return int(p.n.Load()) }

// freeBlocks gives blocks back to the driver, each on its stream, in
// context h, and returns the first error. Stream live is being closed by
// the caller and its handle is still valid; any other stream is held
// (acquire) for the call, so that its Close waits. A block whose stream is
// closed already is freed on the legacy default stream once the context
// is idle: that stream does not wait for non-blocking ones.
func freeBlocks(h driver.Context, blocks []reuseBlock, live *Stream) error {
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	synced := false
	for _, b := range blocks {
		if b.stream == live {
			note(cuMemFreeAsync(h, b.ptr, b.stream.handle))
			continue
		}
		if _, err := b.stream.acquire(); err == nil {
			note(cuMemFreeAsync(h, b.ptr, b.stream.handle))
			b.stream.release()
			continue
		}
		if !synced {
			if err := cuCtxSynchronize(h); err != nil {
				note(err)
				continue // the context is broken: the memory goes with it
			}
			synced = true
		}
		note(cuMemFreeAsync(h, b.ptr, streamLegacy))
	}
	return first
}

// flushReuse gives back the blocks kept for stream (all of the context's
// when stream is nil); the caller has entered context h.
func (c *Context) flushReuse(h driver.Context, stream *Stream) error {
	if blocks := c.pool.takeAll(stream); len(blocks) > 0 {
		return freeBlocks(h, blocks, stream)
	}
	return nil
}

// reusable reports whether blocks of r may be kept for stream s.
func (r *DeviceMemoryResource) reusable(s *Stream, size int) bool {
	return !r.NoReuse && !poolReuseOff && s.handle != streamPerThread && size <= poolReuseBytes
}

// largePages is the size the pool is asked for to hold size bytes: from
// 2 MiB up, whole 2 MiB pages (the GPU's large page), as cuMemAlloc and
// cudaMalloc give. The pool carves blocks back to back, so one odd-sized
// block (an R2C output of 64 MiB + 8 bytes) put every later block 512
// bytes past a large page, where memory-bound kernels run slower (cuFFT's
// R2C of 2^24 by 0.5% 4 KiB past a page: fft's BenchmarkFFTPlacement);
// whole pages keep them where CuPy's cudaMalloc'd arrays are. The Buffer
// keeps the size asked for. IPCMemoryResource's pool is asked the same way.
func largePages(size int) uint64 {
	if size < 2<<20 {
		return uint64(size)
	}
	return (uint64(size) + 2<<20 - 1) &^ (2<<20 - 1)
}

// allocate is Allocate after the checks, in context h on stream s.
func (r *DeviceMemoryResource) allocate(h driver.Context, s *Stream, size int) (*Buffer, error) {
	if !r.reusable(s, size) { // no capture check: it is never kept
		p, err := cuMemAllocAsync(h, largePages(size), s.handle)
		if err != nil {
			return nil, err
		}
		b := NewBuffer(p, size, r, s)
		b.noReuse = true // may be a graph's allocation
		return b, nil
	}
	reuse := s.ctx.pool.take(s, size)
	p, capturing, err := cPoolAlloc(h, s.handle, largePages(size), reuse)
	if reuse != 0 && (capturing || err != nil) {
		r.keep(h, reuseBlock{reuse, size, s}) // not used: keep it for later
	}
	if errors.Is(err, driver.ErrorOutOfMemory) && !capturing && s.ctx.pool.len() > 0 {
		// Kept blocks count as used: give them all back, let their frees
		// complete, and try once more (not while capturing: a context
		// sync would end the capture).
		if err := s.ctx.flushReuse(h, nil); err != nil {
			return nil, err
		}
		if err := cuCtxSynchronize(h); err != nil {
			return nil, err
		}
		p, capturing, err = cPoolAlloc(h, s.handle, largePages(size), 0)
	}
	if err != nil {
		return nil, err
	}
	b := NewBuffer(p, size, r, s)
	b.noReuse = capturing // a graph's allocation: its free must be made
	return b, nil
}

// keep keeps block b and frees what the limits push out. Their error
// belongs to other Buffers' Closes, long returned: it is recorded for the
// context's next Sync.
func (r *DeviceMemoryResource) keep(h driver.Context, b reuseBlock) {
	if out := b.stream.ctx.pool.put(b); len(out) > 0 {
		b.stream.ctx.record("freeing pool blocks kept for reuse", freeBlocks(h, out, nil))
	}
}

// release frees the memory of a Buffer of r on stream (nil: the legacy
// default stream), keeping it for reuse when it may; see Deallocate.
func (r *DeviceMemoryResource) release(ptr driver.Deviceptr, size int, stream *Stream, noReuse bool) error {
	if ptr == 0 {
		return nil
	}
	stream, h, err := acquireForFree(r.dev, stream)
	if err != nil {
		return err
	}
	c := stream.ctx
	defer releaseAfter(stream, c, c.primary)
	if noReuse || !r.reusable(stream, size) {
		return cuMemFreeAsync(h, ptr, stream.handle)
	}
	kept, err := cPoolFree(h, stream.handle, ptr)
	if err == nil && kept {
		// Kept while the stream is entered, so that Stream.Close, which
		// waits for its users, finds it and gives it back.
		r.keep(h, reuseBlock{ptr, size, stream})
	}
	return err
}
