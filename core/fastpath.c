// The hand-written C of package core; fastpath.h says what it holds and why.
#include "fastpath.h"

#include <stdlib.h>
#include <string.h>

// Implemented in Go (callback.go).
extern void cudagoHostCallback(uintptr_t handle, int status);

static void cg_stream_trampoline(uintptr_t s, cgx_result status, void *user) {
	(void)s;
	cudagoHostCallback((uintptr_t)user, (int)status);
}

void cg_host_trampoline(void *user) {
	cudagoHostCallback((uintptr_t)user, 0);
}

// ---- contexts ----

cg_ret cg_ctx_create(int dev, unsigned flags, uintptr_t *out) {
	uintptr_t c = 0;
	if (cgx_fn[CGX_cuCtxCreate]) {
		CGX_CALL(cuCtxCreate, &c, NULL, flags, dev);
	} else {
		CGX_CALL(cuCtxCreate_v2, &c, flags, dev); // drivers before 12.5
	}
	// cuCtxCreate pushed c on this thread's stack: take it off again.
	uintptr_t popped = 0;
	cg_ret r;
	CGX_CALLR(r, cuCtxPopCurrent, &popped);
	if (r) {
		cg_ret ignored;
		CGX_CALLR(ignored, cuCtxDestroy, c);
		(void)ignored;
		return r;
	}
	*out = c;
	return 0;
}

// ---- host callbacks ----

cg_ret cg_stream_add_callback(uintptr_t ctx, uintptr_t s, uintptr_t handle) {
	CGX_ENTER(ctx);
	CGX_CALL(cuStreamAddCallback, s, (uintptr_t)cg_stream_trampoline, (void *)handle, 0);
	return 0;
}

cg_ret cg_launch_host_func(uintptr_t ctx, uintptr_t s, uintptr_t handle) {
	CGX_ENTER(ctx);
	CGX_CALL(cuLaunchHostFunc, s, (uintptr_t)cg_host_trampoline, (void *)handle);
	return 0;
}

// ---- stream-ordered pool ----

// cg_capturing reports whether s is capturing into a graph, or may be:
// an error (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT on the legacy stream while
// another stream captures) counts as capturing.
static int cg_capturing(uintptr_t s) {
	void *f = cgx_fn[CGX_cuStreamIsCapturing];
	unsigned st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (!f) return 1;
	if (((cgx_cuStreamIsCapturing_t)f)(s, &st)) return 1;
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

// cg_pool_alloc is a DeviceMemoryResource allocation of n bytes on s. When
// s is not capturing and reuse (a block of n bytes freed earlier on s, kept
// by Go) is nonzero, reuse is the allocation and no driver call is made
// beyond the capture check; otherwise cuMemAllocAsync allocates. *capturing
// tells Go to keep reuse (unused) and never to keep the new block.
cg_ret cg_pool_alloc(uintptr_t ctx, uintptr_t s, size_t n, cg_devptr reuse, cg_devptr *p, int *capturing) {
	CGX_ENTER(ctx);
	*capturing = cg_capturing(s);
	if (reuse && !*capturing) {
		*p = reuse;
		return 0;
	}
	CGX_CALL(cuMemAllocAsync, p, n, s);
	return 0;
}

// cg_pool_free frees p on s, or, when s is not capturing, sets *kept and
// leaves p to Go to reuse on s (a free captured into a graph must be made).
cg_ret cg_pool_free(uintptr_t ctx, uintptr_t s, cg_devptr p, int *kept) {
	CGX_ENTER(ctx);
	*kept = !cg_capturing(s);
	if (*kept) return 0;
	CGX_CALL(cuMemFreeAsync, p, s);
	return 0;
}

void *cg_host_ptr(cg_devptr p) { return (void *)(uintptr_t)p; }

// ---- copies ----

cg_ret cg_memcpy_htod_sync(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyHtoDAsync, dst, src, n, s);
	CGX_CALL(cuStreamSynchronize, s);
	return 0;
}

cg_ret cg_memcpy_dtoh_sync(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyDtoHAsync, dst, src, n, s);
	CGX_CALL(cuStreamSynchronize, s);
	return 0;
}

// after_async registers the callback that releases the host memory of a
// copy; if that fails it waits for the copy, so the caller may release it.
static cg_ret after_async(uintptr_t s, uintptr_t handle) {
	cg_ret r;
	CGX_CALLR(r, cuStreamAddCallback, s, (uintptr_t)cg_stream_trampoline, (void *)handle, 0);
	if (r && cgx_fn[CGX_cuStreamSynchronize]) {
		((cgx_cuStreamSynchronize_t)cgx_fn[CGX_cuStreamSynchronize])(s);
	}
	return r;
}

cg_ret cg_memcpy_htod_async(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s, uintptr_t handle) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyHtoDAsync, dst, src, n, s);
	return after_async(s, handle);
}

cg_ret cg_memcpy_dtoh_async(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t handle) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyDtoHAsync, dst, src, n, s);
	return after_async(s, handle);
}

// cg_staged_htod queues a copy from pinned memory and records ev after it.
cg_ret cg_staged_htod(uintptr_t ctx, cg_devptr dst, uintptr_t src, size_t n, uintptr_t s, uintptr_t ev) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyHtoDAsync, dst, (const void *)src, n, s);
	CGX_CALL(cuEventRecord, ev, s);
	return 0;
}

// cg_staged_dtoh queues a copy into pinned memory and records ev after it.
cg_ret cg_staged_dtoh(uintptr_t ctx, uintptr_t dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t ev) {
	CGX_ENTER(ctx);
	CGX_CALL(cuMemcpyDtoHAsync, (void *)dst, src, n, s);
	CGX_CALL(cuEventRecord, ev, s);
	return 0;
}

// cg_memcpy3d: see fastpath.h. A box that fails after others were queued
// from or to host memory waits for them before returning, so that Go
// memory is never left in use.
cg_ret cg_memcpy3d(uintptr_t ctx, const cg_copy3d *c, const void *src_host, void *dst_host, uintptr_t s, int wait) {
	CGX_ENTER(ctx);
	cgx_CUDA_MEMCPY3D p;
	memset(&p, 0, sizeof p); // offsets, LODs and the reserved fields are 0
	p.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
	p.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
	p.srcPitch = c->src_pitch;
	p.srcHeight = c->src_height;
	p.dstPitch = c->dst_pitch;
	p.dstHeight = c->dst_height;
	p.WidthInBytes = c->width;
	p.Height = c->height;
	p.Depth = c->depth;
	int host = src_host || dst_host;
	for (size_t k = 0; k < c->count; k++) {
		int64_t so = (int64_t)k * c->src_step, d = (int64_t)k * c->dst_step;
		if (src_host) p.srcHost = (void *)((const char *)src_host + so);
		else p.srcDevice = c->src + (cg_devptr)so;
		if (dst_host) p.dstHost = (char *)dst_host + d;
		else p.dstDevice = c->dst + (cg_devptr)d;
		cg_ret r;
		CGX_CALLR(r, cuMemcpy3DAsync, &p, s);
		if (r) {
			if (k > 0 && host && cgx_fn[CGX_cuStreamSynchronize]) {
				((cgx_cuStreamSynchronize_t)cgx_fn[CGX_cuStreamSynchronize])(s);
			}
			return r;
		}
	}
	if (wait || host) CGX_CALL(cuStreamSynchronize, s);
	return 0;
}

// ---- kernels ----

cg_ret cg_launch(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, const unsigned char *args, size_t size) {
	CGX_ENTER(ctx);
	size_t sz = size;
	void *extra[5] = {
		(void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, (void *)args, /* cast: extra is void ** */
		(void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, &sz,
		(void *)CU_LAUNCH_PARAM_END_AS_INT,
	};
	CGX_CALL(cuLaunchKernel, f, gx, gy, gz, bx, by, bz, smem, s, NULL, size ? extra : NULL);
	return 0;
}

cg_ret cg_launch_ex(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, const unsigned char *args, size_t size,
	unsigned cx, unsigned cy, unsigned cz, int cooperative) {
	CGX_ENTER(ctx);
	cgx_CUlaunchAttribute attrs[2];
	unsigned n = 0;
	memset(attrs, 0, sizeof attrs);
	if (cx) {
		attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attrs[n].value.clusterDim.x = cx;
		attrs[n].value.clusterDim.y = cy;
		attrs[n].value.clusterDim.z = cz;
		n++;
	}
	if (cooperative) {
		attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attrs[n].value.cooperative = 1;
		n++;
	}
	cgx_CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = gz;
	cfg.blockDimX = bx; cfg.blockDimY = by; cfg.blockDimZ = bz;
	cfg.sharedMemBytes = smem;
	cfg.hStream = s;
	cfg.attrs = attrs;
	cfg.numAttrs = n;
	size_t sz = size;
	void *extra[5] = {
		(void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, (void *)args, /* cast: extra is void ** */
		(void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, &sz,
		(void *)CU_LAUNCH_PARAM_END_AS_INT,
	};
	CGX_CALL(cuLaunchKernelEx, &cfg, f, NULL, size ? extra : NULL);
	return 0;
}

// cg_prepared_new allocates a cg_prepared with size zeroed argument bytes
// after it, its extra array already pointing at them; NULL when out of
// memory.
cg_prepared *cg_prepared_new(size_t size) {
	cg_prepared *p = calloc(1, sizeof(cg_prepared) + size);
	if (!p) return NULL;
	p->size = size;
	p->args = (unsigned char *)(p + 1);
	p->extra[0] = (void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT;
	p->extra[1] = p->args;
	p->extra[2] = (void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT;
	p->extra[3] = &p->size;
	p->extra[4] = (void *)CU_LAUNCH_PARAM_END_AS_INT;
	return p;
}

void cg_prepared_free(cg_prepared *p) { free(p); }

cg_ret cg_launch_prepared(uintptr_t ctx, uintptr_t s, uintptr_t pp) {
	const cg_prepared *p = (const cg_prepared *)pp;
	if (p->cx || p->cooperative)
		return cg_launch_ex(ctx, p->f, p->gx, p->gy, p->gz, p->bx, p->by, p->bz, p->smem, s,
			p->args, p->size, p->cx, p->cy, p->cz, p->cooperative);
	CGX_ENTER(ctx);
	CGX_CALL(cuLaunchKernel, p->f, p->gx, p->gy, p->gz, p->bx, p->by, p->bz, p->smem, s,
		NULL, p->size ? (void **)p->extra : NULL);
	return 0;
}
