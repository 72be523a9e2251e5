package core

/*
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

// st_copy_nt copies with 32-byte loads and non-temporal stores, which
// skip reading the destination into the cache first and leave the cache
// alone: on the GPU machine 8 threads move 58 GB/s this way, against
// 34-38 GB/s through Go's copy (REP MOVS).
__attribute__((target("avx2")))
static void st_copy_nt(char *d, const char *s, size_t n) {
	while (n && ((uintptr_t)d & 31)) { *d++ = *s++; n--; }
	for (; n >= 128; n -= 128, d += 128, s += 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s);
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	_mm_sfence(); // the stores are weakly ordered: done before the DMA reads them
	memcpy(d, s, n);
}
#endif

// st_copy copies a staged chunk between pinned and Go memory.
static void st_copy(void *d, const void *s, size_t n) {
#if defined(__x86_64__)
	static int avx2 = -1;
	if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2");
	if (avx2) { st_copy_nt(d, s, n); return; }
#endif
	memcpy(d, s, n);
}

// Go memory passed to st_copy is only used during the call.
#cgo noescape st_copy
#cgo nocallback st_copy
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Staged copies between pageable Go memory and the device.
//
// The driver copies pageable memory through its own pinned bounce buffers
// with one CPU thread, at a fraction of what the bus carries. CopyToDevice
// and CopyFromDevice instead split a large copy from or to ordinary
// (pageable) memory into chunks and pipeline them through reusable pinned
// staging buffers: several goroutines memcpy chunks into (or out of)
// staging buffers while the copy engine moves the chunks staged before,
// each buffer guarded by an event. Page-locked memory (PinnedMemoryResource
// buffers, registered memory) is detected (cuPointerGetAttribute) and
// copied directly, as are small copies. A fresh destination (memory no one
// has touched yet, as a new large slice is) is made present ahead of the
// copy's writes, with huge pages where the system gives them on advice
// (prefault.go).
//
// The staging buffers (stagingChunk bytes each, at most stagingMaxSlots)
// are page-locked, portable host memory allocated on first use and kept
// for the life of the process. A copy takes the buffers that are free and
// never waits for others: when concurrent copies hold them all it copies
// directly.
const (
	stagingChunk    = 2 << 20  // bytes per staging buffer and chunk
	stagingMin      = 16 << 20 // smaller copies go straight to the driver
	stagingMaxSlots = 16       // 32 MiB of pinned memory at most
	stagingWorkers  = 8        // goroutines per copy, at most
)

// stagingSlot is one pinned staging buffer.
type stagingSlot struct {
	p   unsafe.Pointer // C memory
	buf []byte         // view of it
	ctx driver.Context // the primary context that owns it
	gen int            // staging.gens[ctx] when it was allocated
}

var staging struct {
	mu        sync.Mutex
	free      []*stagingSlot
	allocated int
	noAlloc   bool                   // an allocation failed: stop trying
	gens      map[driver.Context]int // bumped when a context's reset frees its buffers
}

// takeSlots returns up to want free staging buffers, allocating new ones
// while fewer than stagingMaxSlots exist; none when none can be had. New
// buffers live in dev's primary context, which only ResetPrimaryContext
// destroys (it drops them, see stagingContextGone): memory of a created
// context would vanish with Context.Close.
func takeSlots(dev *Device, want int) []*stagingSlot {
	staging.mu.Lock()
	defer staging.mu.Unlock()
	var out []*stagingSlot
	for len(out) < want && len(staging.free) > 0 {
		n := len(staging.free) - 1
		out = append(out, staging.free[n])
		staging.free = staging.free[:n]
	}
	if len(out) < want && staging.allocated < stagingMaxSlots && !staging.noAlloc {
		h, err := dev.primary.acquire()
		if err != nil {
			return out
		}
		defer dev.primary.release()
		for len(out) < want && staging.allocated < stagingMaxSlots {
			p, err := cuMemHostAlloc(h, stagingChunk, memHostAllocPortable)
			if err != nil {
				staging.noAlloc = true
				break
			}
			staging.allocated++
			out = append(out, &stagingSlot{p: p, buf: unsafe.Slice((*byte)(p), stagingChunk), ctx: h, gen: staging.gens[h]})
		}
	}
	return out
}

// putSlots returns buffers to the pool, except those whose context was
// reset while a copy held them (stagingContextGone): their memory is gone.
func putSlots(s []*stagingSlot) {
	staging.mu.Lock()
	for _, sl := range s {
		if sl.gen == staging.gens[sl.ctx] {
			staging.free = append(staging.free, sl)
		} else {
			staging.allocated--
		}
	}
	staging.mu.Unlock()
}

// stagingContextGone forgets the buffers of primary context h, which its
// reset freed: those free are dropped now, those in use when returned. A
// new context may get the same handle: the generation tells them apart.
func stagingContextGone(h driver.Context) {
	staging.mu.Lock()
	defer staging.mu.Unlock()
	kept := staging.free[:0]
	for _, sl := range staging.free {
		if sl.ctx == h {
			staging.allocated--
		} else {
			kept = append(kept, sl)
		}
	}
	clear(staging.free[len(kept):])
	staging.free = kept
	staging.noAlloc = false
	if staging.gens == nil {
		staging.gens = map[driver.Context]int{}
	}
	staging.gens[h]++
}

// isPageable reports whether host memory p is ordinary pageable memory,
// not memory the driver knows (page-locked, registered or managed): the
// driver does not know it, or cannot say.
func isPageable(h driver.Context, p unsafe.Pointer) bool {
	var typ driver.Memorytype
	err := cuPointerGetAttribute(h, unsafe.Pointer(&typ), driver.PointerAttributeMemoryType, driver.Deviceptr(uintptr(p)))
	return err != nil || typ == 0
}

// stagedPlan is the shape of one staged copy: workers, each with two
// buffers and two events.
type stagedPlan struct {
	h       driver.Context
	s       driver.Stream
	host    []byte // the host side of the copy
	n       int
	chunks  int
	workers int
	slots   []*stagingSlot
	events  []driver.Event
}

// newStagedPlan prepares a staged copy of the n bytes at host, or returns
// nil when the copy should go straight to the driver.
func newStagedPlan(dev *Device, h driver.Context, s driver.Stream, host unsafe.Pointer, n int) *stagedPlan {
	// The per-thread default stream is a different stream on every OS
	// thread, and the workers run on several: no staging there.
	if n < stagingMin || s == streamPerThread || !isPageable(h, host) {
		return nil
	}
	chunks := (n + stagingChunk - 1) / stagingChunk
	workers := min(stagingWorkers, runtime.GOMAXPROCS(0), (chunks+1)/2)
	slots := takeSlots(dev, 2*workers)
	workers = len(slots) / 2
	if workers < 1 {
		putSlots(slots)
		return nil
	}
	putSlots(slots[2*workers:]) // an odd one out
	slots = slots[:2*workers]
	pl := &stagedPlan{h: h, s: s, host: unsafe.Slice((*byte)(host), n), n: n, chunks: chunks, workers: workers, slots: slots}
	for range slots {
		e, err := cuEventCreate(h, uint32(driver.EventDisableTiming))
		if err != nil {
			pl.release()
			return nil
		}
		pl.events = append(pl.events, e)
	}
	return pl
}

// release returns the buffers and destroys the events; the stream must
// have no pending copy of the plan.
func (pl *stagedPlan) release() {
	for _, e := range pl.events {
		cuEventDestroy(pl.h, e)
	}
	putSlots(pl.slots)
}

// chunk returns the offset and length of chunk j.
func (pl *stagedPlan) chunk(j int) (int, int) {
	off := j * stagingChunk
	return off, min(stagingChunk, pl.n-off)
}

// run runs f(w) for every worker and returns the first error, after the
// stream has finished every copy the plan queued.
func (pl *stagedPlan) run(f func(w int) error) error {
	errs := make([]error, pl.workers)
	var wg sync.WaitGroup
	for w := 1; w < pl.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(w)
		}()
	}
	errs[0] = f(0)
	wg.Wait()
	serr := cuStreamSynchronize(pl.h, pl.s)
	pl.release()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return serr
}

// copyHtoD copies n bytes from host memory src to dst on stream s and
// waits: staged for large pageable memory, else by the driver.
func copyHtoD(dev *Device, h driver.Context, dst driver.Deviceptr, src unsafe.Pointer, n int, s driver.Stream) error {
	pl := newStagedPlan(dev, h, s, src, n)
	if pl == nil {
		return cMemcpyHtoDSync(h, dst, src, uint64(n), s)
	}
	err := pl.run(func(w int) error {
		for i, j := 0, w; j < pl.chunks; i, j = i+1, j+pl.workers {
			k := 2*w + i%2
			slot, ev := pl.slots[k], pl.events[k]
			if i >= 2 { // the buffer's previous chunk must be on the device
				if err := cuEventSynchronize(h, ev); err != nil {
					return err
				}
			}
			off, m := pl.chunk(j)
			stageCopy(slot.buf[:m], pl.host[off:off+m])
			if err := cStagedHtoD(h, dst+driver.Deviceptr(off), slot.p, uint64(m), s, ev); err != nil {
				return err
			}
		}
		return nil
	})
	runtime.KeepAlive(src)
	return err
}

// copyDtoH copies n bytes from src to host memory dst on stream s and
// waits: staged for large pageable memory, else by the driver.
func copyDtoH(dev *Device, h driver.Context, dst unsafe.Pointer, src driver.Deviceptr, n int, s driver.Stream) error {
	pl := newStagedPlan(dev, h, s, dst, n)
	if pl == nil {
		return cMemcpyDtoHSync(h, dst, src, uint64(n), s)
	}
	// A fresh destination is readied chunk by chunk (prefault.go) by the
	// workers, before they wait for the chunk's DMA, and by helpers on the
	// cores the workers leave.
	warnPrefault()
	prep := newDestPrep(pl.host, stagingChunk, runtime.GOMAXPROCS(0)-pl.workers, prefaultOpt)
	err := pl.run(func(w int) error {
		var mine []int
		for j := w; j < pl.chunks; j += pl.workers {
			mine = append(mine, j)
		}
		queue := func(i int) error {
			k := 2*w + i%2
			off, m := pl.chunk(mine[i])
			return cStagedDtoH(h, pl.slots[k].p, src+driver.Deviceptr(off), uint64(m), s, pl.events[k])
		}
		for i := 0; i < len(mine) && i < 2; i++ {
			if err := queue(i); err != nil {
				return err
			}
		}
		for i := range mine {
			k := 2*w + i%2
			prep.ready(mine[i])
			if err := cuEventSynchronize(h, pl.events[k]); err != nil {
				return err
			}
			off, m := pl.chunk(mine[i])
			stageCopy(pl.host[off:off+m], pl.slots[k].buf[:m])
			if i+2 < len(mine) {
				if err := queue(i + 2); err != nil {
					return err
				}
			}
		}
		return nil
	})
	prep.finish()
	runtime.KeepAlive(dst)
	return err
}

// stageCopy copies a chunk between a staging buffer and the caller's
// memory (see st_copy).
func stageCopy(dst, src []byte) {
	if n := min(len(dst), len(src)); n > 0 {
		C.st_copy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), C.size_t(n))
	}
}
