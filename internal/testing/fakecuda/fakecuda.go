// Package fakecuda holds C stand-ins for the few driver entry points of
// core's hot paths (launch, pool allocate and free, the context check), so
// that core's benchmarks and tests can run those paths end to end, cgo
// calls included, on a machine without a GPU: what they then measure is
// cudago's own cost. Core's tests put them into its C table of entry
// points (internal/cgx.Table.Replace). Nothing but tests imports it.
package fakecuda

/*
#include <stdint.h>
#include <string.h>

// The calls counted, for tests to check what reached "the driver".
static long long fk_launches, fk_allocs, fk_frees, fk_capture_checks;
static uintptr_t fk_current;
static unsigned long long fk_next = 0x7f0000000000ULL;
static unsigned char fk_sink[4096];
static size_t fk_sink_len;

// fk_flush, when ranges are set (SetFlush), evicts their cache lines from
// every cache level (clflush), as a driver call's own memory traffic
// evicts the caller's: the launch, allocation and free fakes call it.
#define FK_MAX_RANGES 64
static uintptr_t fk_lo[FK_MAX_RANGES], fk_hi[FK_MAX_RANGES];
static int fk_nranges;

static void fk_flush(void) {
#if defined(__x86_64__)
	for (int i = 0; i < fk_nranges; i++)
		for (uintptr_t p = fk_lo[i] & ~(uintptr_t)63; p < fk_hi[i]; p += 64)
			__asm__ volatile("clflush (%0)" ::"r"(p) : "memory");
	__asm__ volatile("mfence" ::: "memory");
#endif
}

static int fk_set_flush(const uintptr_t *r, int n) {
	if (n > FK_MAX_RANGES) n = FK_MAX_RANGES;
	for (int i = 0; i < n; i++) { fk_lo[i] = r[2 * i]; fk_hi[i] = r[2 * i + 1]; }
	fk_nranges = n;
#if defined(__x86_64__)
	return 1;
#else
	return 0;
#endif
}

static unsigned fk_ctx_get_current(void *pctx) { *(uintptr_t *)pctx = fk_current; return 0; }
static unsigned fk_ctx_set_current(uintptr_t c) { fk_current = c; return 0; }

// fk_launch_kernel copies the packed arguments, as the driver does when it
// queues a launch.
static unsigned fk_launch_kernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, void *params, void *extra) {
	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)s; (void)params;
	fk_launches++;
	fk_flush();
	if (extra) {
		void **e = (void **)extra; // {BUFFER_POINTER, args, BUFFER_SIZE, &size, END}
		size_t n = *(size_t *)e[3];
		fk_sink_len = n < sizeof fk_sink ? n : sizeof fk_sink;
		memcpy(fk_sink, e[1], fk_sink_len);
	} else {
		fk_sink_len = 0;
	}
	return 0;
}

static unsigned fk_launch_kernel_ex(void *cfg, uintptr_t f, void *params, void *extra) {
	(void)cfg;
	return fk_launch_kernel(f, 0, 0, 0, 0, 0, 0, 0, 0, params, extra);
}

static unsigned fk_mem_alloc_async(void *p, unsigned long n, uintptr_t s) {
	(void)s;
	fk_allocs++;
	fk_flush();
	*(unsigned long long *)p = fk_next;
	fk_next += (n + 4095) & ~4095UL;
	return 0;
}

static unsigned fk_mem_free_async(unsigned long long p, uintptr_t s) {
	(void)p; (void)s;
	fk_frees++;
	fk_flush();
	return 0;
}

static unsigned fk_stream_is_capturing(uintptr_t s, void *st) { (void)s; fk_capture_checks++; *(unsigned *)st = 0; return 0; }

static void fk_counts(long long *out) {
	out[0] = fk_launches; out[1] = fk_allocs; out[2] = fk_frees; out[3] = fk_capture_checks;
}

static size_t fk_last_args(unsigned char *out, size_t cap) {
	size_t n = fk_sink_len < cap ? fk_sink_len : cap;
	memcpy(out, fk_sink, n);
	return fk_sink_len;
}

// fk_alloc_call and fk_free_call are one allocation or free as a cgo call
// of core's makes it: context check, then the call.
static unsigned long long fk_alloc_call(uintptr_t ctx, uintptr_t s, unsigned long size) {
	uintptr_t cur = 0;
	unsigned long long p = 0;
	fk_ctx_get_current(&cur);
	if (cur != ctx) fk_ctx_set_current(ctx);
	fk_mem_alloc_async(&p, size, s);
	return p;
}

static void fk_free_call(uintptr_t ctx, uintptr_t s, unsigned long long p) {
	uintptr_t cur = 0;
	fk_ctx_get_current(&cur);
	if (cur != ctx) fk_ctx_set_current(ctx);
	fk_mem_free_async(p, s);
}

// fk_bare is an empty C function: one bare cgo call.
static void fk_bare(void) {}

// fk_shim is the C side of a launch as core's cg_launch does it: the
// context check and the launch with packed arguments, one cgo call.
static unsigned fk_shim(uintptr_t ctx, uintptr_t f, const void *args, size_t size) {
	uintptr_t cur = 0;
	fk_ctx_get_current(&cur);
	if (cur != ctx) fk_ctx_set_current(ctx);
	size_t sz = size;
	void *extra[5] = {(void *)1, (void *)args, (void *)2, &sz, (void *)0};
	return fk_launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, 0, NULL, size ? extra : NULL);
}

#cgo noescape fk_set_flush
#cgo nocallback fk_set_flush
#cgo noescape fk_shim
#cgo nocallback fk_shim
#cgo noescape fk_counts
#cgo nocallback fk_counts
#cgo nocallback fk_bare
#cgo noescape fk_last_args
#cgo nocallback fk_last_args
#cgo nocallback fk_alloc_call
#cgo nocallback fk_free_call

static void *fk_proc(int i) {
	switch (i) {
	case 0: return (void *)fk_ctx_get_current;
	case 1: return (void *)fk_ctx_set_current;
	case 2: return (void *)fk_launch_kernel;
	case 3: return (void *)fk_launch_kernel_ex;
	case 4: return (void *)fk_mem_alloc_async;
	case 5: return (void *)fk_mem_free_async;
	case 6: return (void *)fk_stream_is_capturing;
	}
	return NULL;
}
*/
import "C"

import "unsafe"

// Names are the driver entry points Procs fakes, as cuda.h names them.
var Names = []string{
	"cuCtxGetCurrent", "cuCtxSetCurrent", "cuLaunchKernel", "cuLaunchKernelEx",
	"cuMemAllocAsync", "cuMemFreeAsync", "cuStreamIsCapturing",
}

// Procs returns the fakes' addresses, by entry point name. Their
// behaviour: the context calls keep one current context (process-wide);
// the launches count and copy the packed arguments; cuMemAllocAsync
// returns distinct addresses; cuMemFreeAsync counts; cuStreamIsCapturing
// says no. All return CUDA_SUCCESS.
func Procs() map[string]unsafe.Pointer {
	m := make(map[string]unsafe.Pointer, len(Names))
	for i, n := range Names {
		m[n] = C.fk_proc(C.int(i))
	}
	return m
}

// Range is memory for SetFlush: [Start, End).
type Range struct{ Start, End uintptr }

// SetFlush makes the launch, allocation and free fakes evict the cache
// lines of the given memory from every cache level before they return
// (x86 clflush), as the memory traffic of a real driver call evicts its
// caller's data: the Go code that runs next then misses in the cache on
// each of those lines, and a chain of dependent loads pays for each link.
// A flush costs more for a line written since the last (it is written
// back): compare callers that write the same lines. It reports false
// where it cannot flush (not x86). The memory must stay allocated while
// set; nil turns it off.
func SetFlush(ranges []Range) bool {
	flat := make([]C.uintptr_t, 0, 2*len(ranges))
	for _, r := range ranges {
		flat = append(flat, C.uintptr_t(r.Start), C.uintptr_t(r.End))
	}
	var p *C.uintptr_t
	if len(flat) > 0 {
		p = &flat[0]
	}
	return C.fk_set_flush(p, C.int(len(ranges))) != 0
}

// Counts is how often the fakes were called.
type Counts struct{ Launches, Allocs, Frees, CaptureChecks int64 }

// Calls returns the counts so far.
func Calls() Counts {
	var c [4]C.longlong
	C.fk_counts(&c[0])
	return Counts{int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3])}
}

// LastArgs returns the packed arguments of the last launch (nil when it
// had none).
func LastArgs() []byte {
	var b [4096]byte
	n := int(C.fk_last_args((*C.uchar)(&b[0]), C.size_t(len(b))))
	if n == 0 {
		return nil
	}
	return append([]byte(nil), b[:n]...)
}

// AllocCall and FreeCall are one cgo call each, as core's allocation and
// free make them (context check, then the driver call).
func AllocCall(ctx, stream uintptr, size int) uintptr {
	return uintptr(C.fk_alloc_call(C.uintptr_t(ctx), C.uintptr_t(stream), C.ulong(size)))
}

// FreeCall: see AllocCall.
func FreeCall(ctx, stream, p uintptr) {
	C.fk_free_call(C.uintptr_t(ctx), C.uintptr_t(stream), C.ulonglong(p))
}

// Bare is one cgo call of an empty C function.
func Bare() { C.fk_bare() }

// Shim is one cgo call doing what core's C launch shim does (context
// check, launch with packed arguments) against the fakes.
func Shim(ctx, f uintptr, args unsafe.Pointer, size int) {
	C.fk_shim(C.uintptr_t(ctx), C.uintptr_t(f), args, C.size_t(size))
}
