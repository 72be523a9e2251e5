// Package cbase is the C baseline of cudago's benchmarks: every function
// runs a whole timed loop in C, inside one cgo call, so that it pays no Go
// cost, and calls the driver through the entry points that package core
// resolves (driver.Proc). Each returns the loop's own time, measured with
// clock_gettime(CLOCK_MONOTONIC).
package cbase

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long devptr;

enum {
	F_CTX_SET_CURRENT, F_LAUNCH_KERNEL, F_STREAM_SYNCHRONIZE, F_MEM_ALLOC, F_MEM_FREE,
	F_MEM_ALLOC_ASYNC, F_MEM_FREE_ASYNC, F_GRAPH_LAUNCH, F_MEMCPY_HTOD, F_MEMCPY_DTOH, F_CTX_GET_CURRENT, F_STREAM_IS_CAPTURING, F_N
};
static void *fn[F_N];
static void cb_set(int i, void *f) { fn[i] = f; }

typedef CUresult (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	unsigned, void *, void **, void **);
typedef CUresult (*sync_t)(void *);

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define SETCTX(ctx) do { CUresult r_ = ((CUresult (*)(void *))fn[F_CTX_SET_CURRENT])((void *)(ctx)); if (r_) return -r_; } while (0)
#define CHECK(call) do { CUresult r_ = (call); if (r_) return -r_; } while (0)

// Each returns the elapsed nanoseconds, or -CUresult on failure.

// cb_chunk, when positive, makes the async launch loops time launches in
// chunks of cb_chunk with the stream drained between chunks, untimed: the
// CPU cost of a launch, not how fast the GPU drains a full queue.
static long cb_chunk;
static void cb_set_chunk(long n) { cb_chunk = n; }

static int64_t cb_launch(uintptr_t ctx, uintptr_t f, uintptr_t s, void **params, unsigned block, long iters, int syncEach) {
	SETCTX(ctx);
	launch_t launch = (launch_t)fn[F_LAUNCH_KERNEL];
	sync_t sync = (sync_t)fn[F_STREAM_SYNCHRONIZE];
	CHECK(sync((void *)s));
	if (!syncEach && cb_chunk > 0) {
		int64_t total = 0;
		for (long done = 0; done < iters; ) {
			long m = iters - done < cb_chunk ? iters - done : cb_chunk;
			int64_t t0 = now_ns();
			for (long i = 0; i < m; i++) CHECK(launch((void *)f, 1, 1, 1, block, 1, 1, 0, (void *)s, params, NULL));
			total += now_ns() - t0;
			CHECK(sync((void *)s));
			done += m;
		}
		return total;
	}
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		CHECK(launch((void *)f, 1, 1, 1, block, 1, 1, 0, (void *)s, params, NULL));
		if (syncEach) CHECK(sync((void *)s));
	}
	CHECK(sync((void *)s));
	return now_ns() - t0;
}

// cb_launch_checked is cb_launch_empty with what core's C layer adds per
// call: cuCtxGetCurrent (and cuCtxSetCurrent when it differs).
static int64_t cb_launch_checked(uintptr_t ctx, uintptr_t f, uintptr_t s, long iters) {
	SETCTX(ctx);
	launch_t launch = (launch_t)fn[F_LAUNCH_KERNEL];
	sync_t sync = (sync_t)fn[F_STREAM_SYNCHRONIZE];
	CUresult (*getcur)(void **) = fn[F_CTX_GET_CURRENT];
	CUresult (*setcur)(void *) = fn[F_CTX_SET_CURRENT];
	CHECK(sync((void *)s));
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		void *cur = NULL;
		CHECK(getcur(&cur));
		if (cur != (void *)ctx) CHECK(setcur((void *)ctx));
		CHECK(launch((void *)f, 1, 1, 1, 1, 1, 1, 0, (void *)s, NULL, NULL));
	}
	int64_t t = now_ns() - t0;
	CHECK(sync((void *)s));
	return cb_chunk > 0 ? t : now_ns() - t0; // chunked: the drain is untimed
}

static int64_t cb_stream_is_capturing(uintptr_t ctx, uintptr_t s, long iters) {
	SETCTX(ctx);
	CUresult (*f)(void *, int *) = fn[F_STREAM_IS_CAPTURING];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		int st = 0;
		CHECK(f((void *)s, &st));
	}
	return now_ns() - t0;
}

static int64_t cb_ctx_get_current(uintptr_t ctx, long iters) {
	SETCTX(ctx);
	CUresult (*getcur)(void **) = fn[F_CTX_GET_CURRENT];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		void *cur = NULL;
		CHECK(getcur(&cur));
	}
	return now_ns() - t0;
}

// cb_launch_saxpy_extra is cb_launch_saxpy with the arguments packed in
// one buffer passed as CU_LAUNCH_PARAM_BUFFER_POINTER (the other way the
// driver takes parameters).
static int64_t cb_launch_saxpy_extra(uintptr_t ctx, uintptr_t f, uintptr_t s, float a, devptr x, devptr y, devptr out, int n, long iters) {
	SETCTX(ctx);
	launch_t launch = (launch_t)fn[F_LAUNCH_KERNEL];
	sync_t sync = (sync_t)fn[F_STREAM_SYNCHRONIZE];
	char buf[40];
	memset(buf, 0, sizeof buf);
	memcpy(buf, &a, 4); memcpy(buf + 8, &x, 8); memcpy(buf + 16, &y, 8); memcpy(buf + 24, &out, 8); memcpy(buf + 32, &n, 4);
	size_t sz = 36;
	void *extra[5] = { (void *)1, buf, (void *)2, &sz, (void *)0 };
	CHECK(sync((void *)s));
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) CHECK(launch((void *)f, 1, 1, 1, 256, 1, 1, 0, (void *)s, NULL, extra));
	int64_t t = now_ns() - t0;
	CHECK(sync((void *)s));
	return cb_chunk > 0 ? t : now_ns() - t0; // chunked: the drain is untimed
}

// cb_set_ctx and cb_launch1 let Go time one cgo call per launch.
static int cb_set_ctx(uintptr_t ctx) { SETCTX(ctx); return 0; }
static int cb_launch1(uintptr_t f, uintptr_t s) {
	return ((launch_t)fn[F_LAUNCH_KERNEL])((void *)f, 1, 1, 1, 1, 1, 1, 0, (void *)s, NULL, NULL);
}

// cb_launch1_shim is core's C launch shim (cg_launch) copied: context
// check, then cuLaunchKernel with a packed buffer. One call per launch.
static int cb_launch1_shim(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, void *args, size_t size) {
	void *cur = NULL;
	CUresult r = ((CUresult (*)(void **))fn[F_CTX_GET_CURRENT])(&cur);
	if (r) return r;
	if (cur != (void *)ctx && (r = ((CUresult (*)(void *))fn[F_CTX_SET_CURRENT])((void *)ctx))) return r;
	size_t sz = size;
	void *extra[5] = { (void *)1, args, (void *)2, &sz, (void *)0 };
	return ((launch_t)fn[F_LAUNCH_KERNEL])((void *)f, gx, gy, gz, bx, by, bz, smem, (void *)s, NULL, size ? extra : NULL);
}

// cb_alloc1 and cb_free1: one cgo call each, for the pool diagnostic.
static int cb_alloc1(uintptr_t s, size_t n, devptr *out) {
	return ((CUresult (*)(devptr *, size_t, void *))fn[F_MEM_ALLOC_ASYNC])(out, n, (void *)s);
}
static int cb_free1(devptr p, uintptr_t s) {
	return ((CUresult (*)(devptr, void *))fn[F_MEM_FREE_ASYNC])(p, (void *)s);
}

static void cb_noop(void) {}

static int64_t cb_launch_empty(uintptr_t ctx, uintptr_t f, uintptr_t s, long iters, int syncEach) {
	return cb_launch(ctx, f, s, NULL, 1, iters, syncEach);
}

static int64_t cb_launch_saxpy(uintptr_t ctx, uintptr_t f, uintptr_t s, float a, devptr x, devptr y, devptr out, int n, long iters) {
	void *params[] = { &a, &x, &y, &out, &n };
	return cb_launch(ctx, f, s, params, 256, iters, 0);
}

static int64_t cb_launch_mixed8(uintptr_t ctx, uintptr_t f, uintptr_t s, devptr out, int a, float b, double c,
		long long d, unsigned char e, short g, devptr h, long iters) {
	void *params[] = { &out, &a, &b, &c, &d, &e, &g, &h };
	return cb_launch(ctx, f, s, params, 1, iters, 0);
}

static int64_t cb_mem_alloc_free(uintptr_t ctx, size_t n, long iters) {
	SETCTX(ctx);
	CUresult (*alloc)(devptr *, size_t) = fn[F_MEM_ALLOC];
	CUresult (*freef)(devptr) = fn[F_MEM_FREE];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		devptr p;
		CHECK(alloc(&p, n));
		CHECK(freef(p));
	}
	return now_ns() - t0;
}

static int64_t cb_mem_pool(uintptr_t ctx, uintptr_t s, size_t n, long iters) {
	SETCTX(ctx);
	CUresult (*alloc)(devptr *, size_t, void *) = fn[F_MEM_ALLOC_ASYNC];
	CUresult (*freef)(devptr, void *) = fn[F_MEM_FREE_ASYNC];
	sync_t sync = (sync_t)fn[F_STREAM_SYNCHRONIZE];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		devptr p;
		CHECK(alloc(&p, n, (void *)s));
		CHECK(freef(p, (void *)s));
	}
	int64_t t = now_ns() - t0;
	CHECK(sync((void *)s));
	return cb_chunk > 0 ? t : now_ns() - t0; // chunked: the drain is untimed
}

static int64_t cb_graph_launch(uintptr_t ctx, uintptr_t exec, uintptr_t s, long iters) {
	SETCTX(ctx);
	CUresult (*glaunch)(void *, void *) = fn[F_GRAPH_LAUNCH];
	sync_t sync = (sync_t)fn[F_STREAM_SYNCHRONIZE];
	CHECK(sync((void *)s));
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		CHECK(glaunch((void *)exec, (void *)s));
		CHECK(sync((void *)s));
	}
	return now_ns() - t0;
}

static int64_t cb_memcpy_htod(uintptr_t ctx, devptr dst, uintptr_t src, size_t n, long iters) {
	SETCTX(ctx);
	CUresult (*cp)(devptr, const void *, size_t) = fn[F_MEMCPY_HTOD];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) CHECK(cp(dst, (const void *)src, n));
	return now_ns() - t0;
}

static int64_t cb_memcpy_dtoh(uintptr_t ctx, uintptr_t dst, devptr src, size_t n, long iters) {
	SETCTX(ctx);
	CUresult (*cp)(void *, devptr, size_t) = fn[F_MEMCPY_DTOH];
	int64_t t0 = now_ns();
	for (long i = 0; i < iters; i++) CHECK(cp((void *)dst, src, n));
	return now_ns() - t0;
}

// cb_memcpy_dtoh_fresh copies n bytes into memory no one has touched,
// freshly mapped for every iteration (as a new large malloc is), and
// times the copies only: the mmap and the munmap (which frees the pages
// the copy faulted in, a few milliseconds for 256 MiB) are untimed.
static int64_t cb_memcpy_dtoh_fresh(uintptr_t ctx, devptr src, size_t n, long iters) {
	SETCTX(ctx);
	CUresult (*cp)(void *, devptr, size_t) = fn[F_MEMCPY_DTOH];
	int64_t total = 0;
	for (long i = 0; i < iters; i++) {
		void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) return -2; // CUDA_ERROR_OUT_OF_MEMORY
		int64_t t0 = now_ns();
		CUresult r = cp(p, src, n);
		total += now_ns() - t0;
		munmap(p, n);
		if (r) return -r;
	}
	return total;
}

// Pageable host memory for the C copies: malloc, touched.
static void *cb_malloc(size_t n) {
	void *p = malloc(n);
	if (p) memset(p, 1, n);
	return p;
}
static void cb_free(void *p) { free(p); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

var names = [...]string{
	C.F_CTX_SET_CURRENT:     "cuCtxSetCurrent",
	C.F_LAUNCH_KERNEL:       "cuLaunchKernel",
	C.F_STREAM_SYNCHRONIZE:  "cuStreamSynchronize",
	C.F_MEM_ALLOC:           "cuMemAlloc",
	C.F_MEM_FREE:            "cuMemFree",
	C.F_MEM_ALLOC_ASYNC:     "cuMemAllocAsync",
	C.F_MEM_FREE_ASYNC:      "cuMemFreeAsync",
	C.F_GRAPH_LAUNCH:        "cuGraphLaunch",
	C.F_MEMCPY_HTOD:         "cuMemcpyHtoD",
	C.F_MEMCPY_DTOH:         "cuMemcpyDtoH",
	C.F_CTX_GET_CURRENT:     "cuCtxGetCurrent",
	C.F_STREAM_IS_CAPTURING: "cuStreamIsCapturing",
}

var initErr = sync.OnceValue(func() error {
	for i, n := range names {
		p, err := driver.Proc(n)
		if err != nil {
			return fmt.Errorf("cbase: resolving %s: %w", n, err)
		}
		C.cb_set(C.int(i), p)
	}
	return nil
})

func result(ns C.int64_t, what string) (time.Duration, error) {
	if ns < 0 {
		return 0, &driver.Error{Lib: "driver", Func: what, Code: driver.Result(-ns), Message: "(C baseline)"}
	}
	return time.Duration(ns), nil
}

func u(h uintptr) C.uintptr_t { return C.uintptr_t(h) }

// lockCurrent locks the goroutine to its thread and makes ctx current
// there, for the loops that time one cgo call per driver call; on success
// the caller defers runtime.UnlockOSThread.
func lockCurrent(ctx driver.Context) error {
	if err := initErr(); err != nil {
		return err
	}
	runtime.LockOSThread()
	if r := C.cb_set_ctx(u(uintptr(ctx))); r != 0 {
		runtime.UnlockOSThread()
		_, err := result(C.int64_t(r), "cuCtxSetCurrent")
		return err
	}
	return nil
}

// LaunchEmpty launches a parameterless kernel (1 block of 1 thread) iters
// times on stream s, synchronizing after each launch when syncEach, and
// once at the end.
func LaunchEmpty(ctx driver.Context, k driver.Kernel, s driver.Stream, iters int, syncEach bool) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	se := C.int(0)
	if syncEach {
		se = 1
	}
	return result(C.cb_launch_empty(u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s)), C.long(iters), se), "cuLaunchKernel")
}

// LaunchSaxpy launches saxpy(a, x, y, out, n) (1 block of 256 threads)
// iters times.
func LaunchSaxpy(ctx driver.Context, k driver.Kernel, s driver.Stream, a float32, x, y, out driver.Deviceptr, n int32, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_launch_saxpy(u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s)), C.float(a),
		C.devptr(x), C.devptr(y), C.devptr(out), C.int(n), C.long(iters)), "cuLaunchKernel")
}

// LaunchMixed8 launches mixed(out, a, b, c, d, e, f, g), eight arguments
// of mixed types, iters times.
func LaunchMixed8(ctx driver.Context, k driver.Kernel, s driver.Stream, out driver.Deviceptr, a int32, b float32, c float64,
	d int64, e uint8, f int16, g driver.Deviceptr, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_launch_mixed8(u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s)), C.devptr(out), C.int(a), C.float(b),
		C.double(c), C.longlong(d), C.uchar(e), C.short(f), C.devptr(g), C.long(iters)), "cuLaunchKernel")
}

// MemAllocFree runs cuMemAlloc + cuMemFree of n bytes iters times.
func MemAllocFree(ctx driver.Context, n int, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_mem_alloc_free(u(uintptr(ctx)), C.size_t(n), C.long(iters)), "cuMemAlloc/cuMemFree")
}

// MemPool runs cuMemAllocAsync + cuMemFreeAsync of n bytes on s iters
// times, then synchronizes s.
func MemPool(ctx driver.Context, s driver.Stream, n int, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_mem_pool(u(uintptr(ctx)), u(uintptr(s)), C.size_t(n), C.long(iters)), "cuMemAllocAsync/cuMemFreeAsync")
}

// GraphLaunch launches exec on s and waits for it, iters times.
func GraphLaunch(ctx driver.Context, exec driver.GraphExec, s driver.Stream, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_graph_launch(u(uintptr(ctx)), u(uintptr(exec)), u(uintptr(s)), C.long(iters)), "cuGraphLaunch")
}

// MemcpyHtoD runs cuMemcpyHtoD of n bytes from host address src iters
// times.
func MemcpyHtoD(ctx driver.Context, dst driver.Deviceptr, src unsafe.Pointer, n int, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_memcpy_htod(u(uintptr(ctx)), C.devptr(dst), u(uintptr(src)), C.size_t(n), C.long(iters)), "cuMemcpyHtoD")
}

// MemcpyDtoH runs cuMemcpyDtoH of n bytes to host address dst iters
// times.
func MemcpyDtoH(ctx driver.Context, dst unsafe.Pointer, src driver.Deviceptr, n int, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_memcpy_dtoh(u(uintptr(ctx)), u(uintptr(dst)), C.devptr(src), C.size_t(n), C.long(iters)), "cuMemcpyDtoH")
}

// MemcpyDtoHFresh runs cuMemcpyDtoH of n bytes iters times, each into
// memory freshly mapped (mmap) and never touched, and returns the time of
// the copies alone.
func MemcpyDtoHFresh(ctx driver.Context, src driver.Deviceptr, n int, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_memcpy_dtoh_fresh(u(uintptr(ctx)), C.devptr(src), C.size_t(n), C.long(iters)), "cuMemcpyDtoH")
}

// Malloc returns n bytes of ordinary pageable C memory, touched; Free
// frees it.
func Malloc(n int) unsafe.Pointer { return C.cb_malloc(C.size_t(n)) }

// Free frees memory from Malloc.
func Free(p unsafe.Pointer) { C.cb_free(p) }

// LaunchEmptyChecked is LaunchEmpty (no sync per launch) with
// cuCtxGetCurrent before every launch, as core's C layer does.
func LaunchEmptyChecked(ctx driver.Context, k driver.Kernel, s driver.Stream, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_launch_checked(u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s)), C.long(iters)), "cuLaunchKernel")
}

// CtxGetCurrent times iters calls of cuCtxGetCurrent in C.
func CtxGetCurrent(ctx driver.Context, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_ctx_get_current(u(uintptr(ctx)), C.long(iters)), "cuCtxGetCurrent")
}

// StreamIsCapturing times iters calls of cuStreamIsCapturing on s in C
// (the check core's pool reuse makes on each allocation and free).
func StreamIsCapturing(ctx driver.Context, s driver.Stream, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_stream_is_capturing(u(uintptr(ctx)), u(uintptr(s)), C.long(iters)), "cuStreamIsCapturing")
}

// LaunchSaxpyExtra is LaunchSaxpy with the arguments passed as one packed
// buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) instead of kernelParams.
func LaunchSaxpyExtra(ctx driver.Context, k driver.Kernel, s driver.Stream, a float32, x, y, out driver.Deviceptr, n int32, iters int) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	return result(C.cb_launch_saxpy_extra(u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s)), C.float(a),
		C.devptr(x), C.devptr(y), C.devptr(out), C.int(n), C.long(iters)), "cuLaunchKernel")
}

// LaunchEmptyPerCall launches the empty kernel iters times from a Go
// loop, one cgo call (a bare cuLaunchKernel, no context check) per launch,
// on a locked thread: the floor of any Go launch made through cgo.
func LaunchEmptyPerCall(ctx driver.Context, k driver.Kernel, s driver.Stream, iters int) (time.Duration, error) {
	if err := lockCurrent(ctx); err != nil {
		return 0, err
	}
	defer runtime.UnlockOSThread()
	f, st := u(uintptr(k)), u(uintptr(s))
	t0 := time.Now()
	for range iters {
		if r := C.cb_launch1(f, st); r != 0 {
			return result(-C.int64_t(r), "cuLaunchKernel")
		}
	}
	d := time.Since(t0)
	return d, driver.StreamSynchronize(s)
}

// LaunchShimPerCall is LaunchEmptyPerCall through a copy of core's C
// launch shim, with work, when not nil, run in Go before every launch
// (to measure what Go code between launches costs the driver).
func LaunchShimPerCall(ctx driver.Context, k driver.Kernel, s driver.Stream, iters int, work func()) (time.Duration, error) {
	if err := initErr(); err != nil {
		return 0, err
	}
	var buf [8]byte
	c, f, st := u(uintptr(ctx)), u(uintptr(k)), u(uintptr(s))
	t0 := time.Now()
	for range iters {
		if work != nil {
			work()
		}
		if r := C.cb_launch1_shim(c, f, 1, 1, 1, 1, 1, 1, 0, st, unsafe.Pointer(&buf[0]), 0); r != 0 {
			return result(-C.int64_t(r), "cuLaunchKernel")
		}
	}
	d := time.Since(t0)
	return d, driver.StreamSynchronize(s)
}

// PoolPerCall runs cuMemAllocAsync + cuMemFreeAsync of n bytes iters
// times from Go, one cgo call each; ctx must be current on the thread,
// which it locks.
func PoolPerCall(ctx driver.Context, s driver.Stream, n int, iters int) (time.Duration, error) {
	if err := lockCurrent(ctx); err != nil {
		return 0, err
	}
	defer runtime.UnlockOSThread()
	st := u(uintptr(s))
	var p C.devptr
	t0 := time.Now()
	for range iters {
		if r := C.cb_alloc1(st, C.size_t(n), &p); r != 0 {
			return result(-C.int64_t(r), "cuMemAllocAsync")
		}
		if r := C.cb_free1(p, st); r != 0 {
			return result(-C.int64_t(r), "cuMemFreeAsync")
		}
	}
	d := time.Since(t0)
	return d, driver.StreamSynchronize(s)
}

// SetChunk sets the chunk of the async launch loops (see Case.Chunk); 0
// times the whole loop, final sync included.
func SetChunk(n int) { C.cb_set_chunk(C.long(n)) }

// Noop is an empty C function: calling it from Go times a bare cgo call.
func Noop() { C.cb_noop() }
