// Package ctwin holds C loops that benchmarks compare themselves with in
// the same process (the math-library packages', core's peer copies): the
// same library entry points, called from C with no Go in between.
package ctwin

/*
#include <stdint.h>
#include <time.h>

typedef int (*ctx_set_t)(uintptr_t);
typedef int (*stream_sync_t)(uintptr_t);
typedef int (*sgemm_t)(uintptr_t, int, int, int, int, int, const float *, uintptr_t, int,
	uintptr_t, int, const float *, uintptr_t, int);

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// sgemm_loop makes ctx current, then times calls of cublasSgemm_v2 on an
// n×n×n problem in chunks, draining the stream (untimed) before each
// chunk and at the end, as cudago's benchmarks time their side. It returns
// the timed nanoseconds, or -status of the first failure.
static long long sgemm_loop(uintptr_t ctxSet, uintptr_t streamSync, uintptr_t sgemm, uintptr_t ctx, uintptr_t stream,
		uintptr_t handle, int n, uintptr_t a, uintptr_t b, uintptr_t c, long long iters, int chunk) {
	int r = ((ctx_set_t)ctxSet)(ctx);
	if (r) return -r;
	float alpha = 1, beta = 0;
	long long el = 0;
	for (long long done = 0; done < iters; done += chunk) {
		if ((r = ((stream_sync_t)streamSync)(stream))) return -r;
		long long m = iters - done < chunk ? iters - done : chunk;
		long long t0 = now_ns();
		for (long long i = 0; i < m; i++) {
			if ((r = ((sgemm_t)sgemm)(handle, 0, 0, n, n, n, &alpha, a, n, b, n, &beta, c, n))) return -r;
		}
		el += now_ns() - t0;
	}
	if ((r = ((stream_sync_t)streamSync)(stream))) return -r;
	return el;
}
*/
import "C"

import (
	"fmt"
	"time"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/driver"
)

// SgemmLoop times iters calls of cublasSgemm (no transposes, n×n×n,
// alpha 1, beta 0) on handle, whose stream is stream in context ctx, from
// one C loop, draining the stream every chunk calls untimed. It returns
// the timed duration.
func SgemmLoop(ctx driver.Context, stream driver.Stream, handle cublas.Handle, n int, a, b, c driver.Deviceptr, iters, chunk int) (time.Duration, error) {
	var fns [3]C.uintptr_t
	for i, name := range []string{"cuCtxSetCurrent", "cuStreamSynchronize"} {
		p, err := driver.Proc(name)
		if err != nil {
			return 0, err
		}
		fns[i] = C.uintptr_t(uintptr(p))
	}
	p, err := cublas.Proc("cublasSgemm")
	if err != nil {
		return 0, err
	}
	fns[2] = C.uintptr_t(uintptr(p))
	r := C.sgemm_loop(fns[0], fns[1], fns[2], C.uintptr_t(ctx), C.uintptr_t(stream),
		C.uintptr_t(handle), C.int(n), C.uintptr_t(a), C.uintptr_t(b), C.uintptr_t(c), C.longlong(iters), C.int(chunk))
	if r < 0 {
		return 0, fmt.Errorf("ctwin: the C loop failed with status %d", -r)
	}
	return time.Duration(r), nil
}
