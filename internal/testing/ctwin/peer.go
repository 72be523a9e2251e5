package ctwin

/*
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef int (*peer_ctx_set_t)(uintptr_t);
typedef int (*peer_stream_sync_t)(uintptr_t);
typedef int (*memcpy_peer_async_t)(unsigned long long, uintptr_t, unsigned long long, uintptr_t, size_t, uintptr_t);

static long long peer_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// peer_copy_loop makes ctx current, then times iters copies of n bytes
// from src (in context sctx) to dst (in context dctx), each one
// cuMemcpyPeerAsync on stream followed by cuStreamSynchronize, as
// core's synchronous Buffer.CopyFrom does. It returns the nanoseconds, or
// -status of the first failure.
static long long peer_copy_loop(uintptr_t ctxSet, uintptr_t streamSync, uintptr_t peerAsync, uintptr_t ctx,
		uintptr_t stream, unsigned long long dst, uintptr_t dctx, unsigned long long src, uintptr_t sctx,
		size_t n, long long iters) {
	int r = ((peer_ctx_set_t)ctxSet)(ctx);
	if (r) return -r;
	if ((r = ((peer_stream_sync_t)streamSync)(stream))) return -r;
	long long t0 = peer_now_ns();
	for (long long i = 0; i < iters; i++) {
		if ((r = ((memcpy_peer_async_t)peerAsync)(dst, dctx, src, sctx, n, stream))) return -r;
		if ((r = ((peer_stream_sync_t)streamSync)(stream))) return -r;
	}
	return peer_now_ns() - t0;
}
*/
import "C"

import (
	"fmt"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

// PeerCopyLoop times iters copies of n bytes from src (memory of context
// srcCtx) to dst (of dstCtx) from one C loop: cuMemcpyPeerAsync on stream,
// of context ctx, then cuStreamSynchronize, each time. It returns the
// timed duration.
func PeerCopyLoop(ctx driver.Context, stream driver.Stream, dst driver.Deviceptr, dstCtx driver.Context, src driver.Deviceptr, srcCtx driver.Context, n, iters int) (time.Duration, error) {
	var fns [3]C.uintptr_t
	for i, name := range []string{"cuCtxSetCurrent", "cuStreamSynchronize", "cuMemcpyPeerAsync"} {
		p, err := driver.Proc(name)
		if err != nil {
			return 0, err
		}
		fns[i] = C.uintptr_t(uintptr(p))
	}
	r := C.peer_copy_loop(fns[0], fns[1], fns[2], C.uintptr_t(ctx), C.uintptr_t(stream),
		C.ulonglong(dst), C.uintptr_t(dstCtx), C.ulonglong(src), C.uintptr_t(srcCtx), C.size_t(n), C.longlong(iters))
	if r < 0 {
		return 0, fmt.Errorf("ctwin: the C loop failed with status %d", -r)
	}
	return time.Duration(r), nil
}
