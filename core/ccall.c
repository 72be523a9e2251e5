// The C layer of package core; see ccall.h.
#include "ccall.h"

#include <string.h>

typedef int CUresult;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef void *CUkernel;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef void *CUgraphNode;
typedef int CUdevice;

typedef struct { char reserved[64]; } cg_ipc_event_handle;

typedef struct {
	int id;
	char pad[4];
	union {
		char pad[64];
		struct { unsigned x, y, z; } clusterDim;
		int cooperative;
	} value;
} cg_launch_attribute;

typedef struct {
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	CUstream hStream;
	cg_launch_attribute *attrs;
	unsigned numAttrs;
} cg_launch_config;

typedef struct {
	int result;
	CUgraphNode errorNode;
	CUgraphNode errorFromNode;
} cg_graph_exec_update_result_info;

#define CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
#define CUDA_ERROR_NOT_READY 600

void *cg_fn[CG_NFUNCS];

#define CG_NAME_ENTRY(id, name) name,
const char *cg_fn_names[CG_NFUNCS] = { CG_FUNCS(CG_NAME_ENTRY) };
#undef CG_NAME_ENTRY

void cg_set_fn(int i, void *fn) { cg_fn[i] = fn; }
const char *cg_fn_name(int i) { return cg_fn_names[i]; }

// Implemented in Go (callback.go).
extern void cudagoHostCallback(uintptr_t handle, int status);

static void cg_stream_trampoline(CUstream s, CUresult status, void *user) {
	(void)s;
	cudagoHostCallback((uintptr_t)user, status);
}

static void cg_host_trampoline(void *user) {
	cudagoHostCallback((uintptr_t)user, 0);
}

#define CG_RET(idx, r) (((cg_ret)(unsigned)(idx) << 32) | (cg_ret)(unsigned)(r))

// CALL calls entry point CG_<ID> with type TYPE and returns from the
// enclosing function on failure.
#define CALL(ID, TYPE, ...) do { \
	void *f_ = cg_fn[CG_##ID]; \
	if (!f_) return CG_RET(CG_##ID, CG_MISSING); \
	CUresult r_ = ((TYPE)f_)(__VA_ARGS__); \
	if (r_) return CG_RET(CG_##ID, r_); \
} while (0)

// CALLR is CALL that leaves the result in r instead of returning.
#define CALLR(r, ID, TYPE, ...) do { \
	void *f_ = cg_fn[CG_##ID]; \
	if (!f_) r = CG_RET(CG_##ID, CG_MISSING); \
	else { CUresult r_ = ((TYPE)f_)(__VA_ARGS__); r = r_ ? CG_RET(CG_##ID, r_) : 0; } \
} while (0)

// cg_enter makes ctx current on this thread if it is not already. The
// previous context is not restored: every core operation sets its own.
static inline cg_ret cg_enter(uintptr_t ctx) {
	CUcontext cur = NULL;
	CALL(CTX_GET_CURRENT, CUresult (*)(CUcontext *), &cur);
	if (cur != (CUcontext)ctx) {
		CALL(CTX_SET_CURRENT, CUresult (*)(CUcontext), (CUcontext)ctx);
	}
	return 0;
}

#define ENTER(ctx) do { cg_ret e_ = cg_enter(ctx); if (e_) return e_; } while (0)

// ---- contexts ----

cg_ret cg_ctx_set(uintptr_t ctx) {
	ENTER(ctx);
	return 0;
}

cg_ret cg_ctx_sync(uintptr_t ctx) {
	ENTER(ctx);
	CALL(CTX_SYNCHRONIZE, CUresult (*)(void));
	return 0;
}

cg_ret cg_ctx_create(int dev, unsigned flags, uintptr_t *out) {
	CUcontext c = NULL;
	if (cg_fn[CG_CTX_CREATE]) {
		CALL(CTX_CREATE, CUresult (*)(CUcontext *, void *, unsigned, CUdevice), &c, NULL, flags, dev);
	} else {
		CALL(CTX_CREATE_V2, CUresult (*)(CUcontext *, unsigned, CUdevice), &c, flags, dev);
	}
	// cuCtxCreate pushed c on this thread's stack: take it off again.
	CUcontext popped = NULL;
	cg_ret r;
	CALLR(r, CTX_POP_CURRENT, CUresult (*)(CUcontext *), &popped);
	if (r) {
		((CUresult (*)(CUcontext))cg_fn[CG_CTX_DESTROY])(c);
		return r;
	}
	*out = (uintptr_t)c;
	return 0;
}

cg_ret cg_ctx_destroy(uintptr_t ctx) {
	CALL(CTX_DESTROY, CUresult (*)(CUcontext), (CUcontext)ctx);
	return 0;
}

cg_ret cg_ctx_stream_priority_range(uintptr_t ctx, int *least, int *greatest) {
	ENTER(ctx);
	CALL(CTX_GET_STREAM_PRIORITY_RANGE, CUresult (*)(int *, int *), least, greatest);
	return 0;
}

cg_ret cg_ctx_enable_peer_access(uintptr_t ctx, uintptr_t peer) {
	ENTER(ctx);
	CALL(CTX_ENABLE_PEER_ACCESS, CUresult (*)(CUcontext, unsigned), (CUcontext)peer, 0);
	return 0;
}

cg_ret cg_mem_get_info(uintptr_t ctx, size_t *free_, size_t *total) {
	ENTER(ctx);
	CALL(MEM_GET_INFO, CUresult (*)(size_t *, size_t *), free_, total);
	return 0;
}

// ---- streams ----

cg_ret cg_stream_create(uintptr_t ctx, unsigned flags, int priority, uintptr_t *out) {
	ENTER(ctx);
	CUstream s = NULL;
	CALL(STREAM_CREATE_WITH_PRIORITY, CUresult (*)(CUstream *, unsigned, int), &s, flags, priority);
	*out = (uintptr_t)s;
	return 0;
}

cg_ret cg_stream_destroy(uintptr_t ctx, uintptr_t s) {
	ENTER(ctx);
	CALL(STREAM_DESTROY, CUresult (*)(CUstream), (CUstream)s);
	return 0;
}

cg_ret cg_stream_sync(uintptr_t ctx, uintptr_t s) {
	ENTER(ctx);
	CALL(STREAM_SYNCHRONIZE, CUresult (*)(CUstream), (CUstream)s);
	return 0;
}

cg_ret cg_stream_query(uintptr_t ctx, uintptr_t s) {
	ENTER(ctx);
	CALL(STREAM_QUERY, CUresult (*)(CUstream), (CUstream)s);
	return 0;
}

cg_ret cg_stream_wait_event(uintptr_t ctx, uintptr_t s, uintptr_t e) {
	ENTER(ctx);
	CALL(STREAM_WAIT_EVENT, CUresult (*)(CUstream, CUevent, unsigned), (CUstream)s, (CUevent)e, 0);
	return 0;
}

typedef void (*cg_stream_callback_t)(CUstream, CUresult, void *);
typedef void (*cg_host_fn_t)(void *);

cg_ret cg_stream_add_callback(uintptr_t ctx, uintptr_t s, uintptr_t handle) {
	ENTER(ctx);
	CALL(STREAM_ADD_CALLBACK, CUresult (*)(CUstream, cg_stream_callback_t, void *, unsigned),
		(CUstream)s, cg_stream_trampoline, (void *)handle, 0);
	return 0;
}

cg_ret cg_launch_host_func(uintptr_t ctx, uintptr_t s, uintptr_t handle) {
	ENTER(ctx);
	CALL(LAUNCH_HOST_FUNC, CUresult (*)(CUstream, cg_host_fn_t, void *),
		(CUstream)s, cg_host_trampoline, (void *)handle);
	return 0;
}

cg_ret cg_stream_begin_capture(uintptr_t ctx, uintptr_t s, int mode) {
	ENTER(ctx);
	CALL(STREAM_BEGIN_CAPTURE, CUresult (*)(CUstream, int), (CUstream)s, mode);
	return 0;
}

cg_ret cg_stream_end_capture(uintptr_t ctx, uintptr_t s, uintptr_t *graph) {
	ENTER(ctx);
	CUgraph g = NULL;
	CALL(STREAM_END_CAPTURE, CUresult (*)(CUstream, CUgraph *), (CUstream)s, &g);
	*graph = (uintptr_t)g;
	return 0;
}

// ---- events ----

cg_ret cg_event_create(uintptr_t ctx, unsigned flags, uintptr_t *out) {
	ENTER(ctx);
	CUevent e = NULL;
	CALL(EVENT_CREATE, CUresult (*)(CUevent *, unsigned), &e, flags);
	*out = (uintptr_t)e;
	return 0;
}

cg_ret cg_event_destroy(uintptr_t ctx, uintptr_t e) {
	ENTER(ctx);
	CALL(EVENT_DESTROY, CUresult (*)(CUevent), (CUevent)e);
	return 0;
}

cg_ret cg_event_record(uintptr_t ctx, uintptr_t e, uintptr_t s) {
	ENTER(ctx);
	CALL(EVENT_RECORD, CUresult (*)(CUevent, CUstream), (CUevent)e, (CUstream)s);
	return 0;
}

cg_ret cg_event_sync(uintptr_t ctx, uintptr_t e) {
	ENTER(ctx);
	CALL(EVENT_SYNCHRONIZE, CUresult (*)(CUevent), (CUevent)e);
	return 0;
}

cg_ret cg_event_query(uintptr_t ctx, uintptr_t e) {
	ENTER(ctx);
	CALL(EVENT_QUERY, CUresult (*)(CUevent), (CUevent)e);
	return 0;
}

cg_ret cg_event_elapsed(uintptr_t ctx, float *ms, uintptr_t start, uintptr_t end) {
	ENTER(ctx);
	CALL(EVENT_ELAPSED_TIME, CUresult (*)(float *, CUevent, CUevent), ms, (CUevent)start, (CUevent)end);
	return 0;
}

cg_ret cg_ipc_get_event_handle(uintptr_t ctx, void *handle64, uintptr_t e) {
	ENTER(ctx);
	cg_ipc_event_handle h;
	CALL(IPC_GET_EVENT_HANDLE, CUresult (*)(cg_ipc_event_handle *, CUevent), &h, (CUevent)e);
	memcpy(handle64, &h, sizeof h);
	return 0;
}

cg_ret cg_ipc_open_event_handle(uintptr_t ctx, const void *handle64, uintptr_t *out) {
	ENTER(ctx);
	cg_ipc_event_handle h;
	memcpy(&h, handle64, sizeof h);
	CUevent e = NULL;
	CALL(IPC_OPEN_EVENT_HANDLE, CUresult (*)(CUevent *, cg_ipc_event_handle), &e, h);
	*out = (uintptr_t)e;
	return 0;
}

// ---- memory ----

cg_ret cg_mem_alloc(uintptr_t ctx, cg_devptr *p, size_t n) {
	ENTER(ctx);
	CALL(MEM_ALLOC, CUresult (*)(cg_devptr *, size_t), p, n);
	return 0;
}

cg_ret cg_mem_free(uintptr_t ctx, cg_devptr p) {
	ENTER(ctx);
	CALL(MEM_FREE, CUresult (*)(cg_devptr), p);
	return 0;
}

cg_ret cg_mem_alloc_async(uintptr_t ctx, cg_devptr *p, size_t n, uintptr_t s) {
	ENTER(ctx);
	CALL(MEM_ALLOC_ASYNC, CUresult (*)(cg_devptr *, size_t, CUstream), p, n, (CUstream)s);
	return 0;
}

cg_ret cg_mem_free_async(uintptr_t ctx, cg_devptr p, uintptr_t s) {
	ENTER(ctx);
	CALL(MEM_FREE_ASYNC, CUresult (*)(cg_devptr, CUstream), p, (CUstream)s);
	return 0;
}

// cg_capturing reports whether s is capturing into a graph, or may be:
// an error (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT on the legacy stream while
// another stream captures) counts as capturing.
static int cg_capturing(uintptr_t s) {
	void *f = cg_fn[CG_STREAM_IS_CAPTURING];
	int st = 0; // CU_STREAM_CAPTURE_STATUS_NONE
	if (!f) return 1;
	if (((CUresult (*)(CUstream, int *))f)((CUstream)s, &st)) return 1;
	return st != 0;
}

// cg_pool_alloc is a DeviceMemoryResource allocation of n bytes on s. When
// s is not capturing and reuse (a block of n bytes freed earlier on s, kept
// by Go) is nonzero, reuse is the allocation and no driver call is made
// beyond the capture check; otherwise cuMemAllocAsync allocates. *capturing
// tells Go to keep reuse (unused) and never to keep the new block.
cg_ret cg_pool_alloc(uintptr_t ctx, uintptr_t s, size_t n, cg_devptr reuse, cg_devptr *p, int *capturing) {
	ENTER(ctx);
	*capturing = cg_capturing(s);
	if (reuse && !*capturing) {
		*p = reuse;
		return 0;
	}
	CALL(MEM_ALLOC_ASYNC, CUresult (*)(cg_devptr *, size_t, CUstream), p, n, (CUstream)s);
	return 0;
}

// cg_pool_free frees p on s, or, when s is not capturing, sets *kept and
// leaves p to Go to reuse on s (a free captured into a graph must be made).
cg_ret cg_pool_free(uintptr_t ctx, uintptr_t s, cg_devptr p, int *kept) {
	ENTER(ctx);
	*kept = !cg_capturing(s);
	if (*kept) return 0;
	CALL(MEM_FREE_ASYNC, CUresult (*)(cg_devptr, CUstream), p, (CUstream)s);
	return 0;
}

cg_ret cg_mem_host_alloc(uintptr_t ctx, void **p, size_t n, unsigned flags) {
	ENTER(ctx);
	CALL(MEM_HOST_ALLOC, CUresult (*)(void **, size_t, unsigned), p, n, flags);
	return 0;
}

cg_ret cg_mem_free_host(uintptr_t ctx, void *p) {
	ENTER(ctx);
	CALL(MEM_FREE_HOST, CUresult (*)(void *), p);
	return 0;
}

cg_ret cg_mem_alloc_managed(uintptr_t ctx, cg_devptr *p, size_t n, unsigned flags) {
	ENTER(ctx);
	CALL(MEM_ALLOC_MANAGED, CUresult (*)(cg_devptr *, size_t, unsigned), p, n, flags);
	return 0;
}

void *cg_host_ptr(cg_devptr p) { return (void *)(uintptr_t)p; }

// ---- copies ----

typedef CUresult (*cg_htod_t)(cg_devptr, const void *, size_t, CUstream);
typedef CUresult (*cg_dtoh_t)(void *, cg_devptr, size_t, CUstream);
typedef CUresult (*cg_sync_t)(CUstream);

cg_ret cg_memcpy_htod_sync(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s) {
	ENTER(ctx);
	CALL(MEMCPY_HTOD_ASYNC, cg_htod_t, dst, src, n, (CUstream)s);
	CALL(STREAM_SYNCHRONIZE, cg_sync_t, (CUstream)s);
	return 0;
}

cg_ret cg_memcpy_dtoh_sync(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s) {
	ENTER(ctx);
	CALL(MEMCPY_DTOH_ASYNC, cg_dtoh_t, dst, src, n, (CUstream)s);
	CALL(STREAM_SYNCHRONIZE, cg_sync_t, (CUstream)s);
	return 0;
}

// after_async registers the callback that releases the host memory of a
// copy; if that fails it waits for the copy, so the caller may release it.
static cg_ret after_async(uintptr_t s, uintptr_t handle) {
	cg_ret r;
	CALLR(r, STREAM_ADD_CALLBACK, CUresult (*)(CUstream, cg_stream_callback_t, void *, unsigned),
		(CUstream)s, cg_stream_trampoline, (void *)handle, 0);
	if (r && cg_fn[CG_STREAM_SYNCHRONIZE]) {
		((cg_sync_t)cg_fn[CG_STREAM_SYNCHRONIZE])((CUstream)s);
	}
	return r;
}

cg_ret cg_memcpy_htod_async(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s, uintptr_t handle) {
	ENTER(ctx);
	CALL(MEMCPY_HTOD_ASYNC, cg_htod_t, dst, src, n, (CUstream)s);
	return after_async(s, handle);
}

cg_ret cg_memcpy_dtoh_async(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t handle) {
	ENTER(ctx);
	CALL(MEMCPY_DTOH_ASYNC, cg_dtoh_t, dst, src, n, (CUstream)s);
	return after_async(s, handle);
}

cg_ret cg_memcpy_dtod(uintptr_t ctx, cg_devptr dst, cg_devptr src, size_t n, uintptr_t s, int sync) {
	ENTER(ctx);
	CALL(MEMCPY_DTOD_ASYNC, CUresult (*)(cg_devptr, cg_devptr, size_t, CUstream), dst, src, n, (CUstream)s);
	if (sync) CALL(STREAM_SYNCHRONIZE, cg_sync_t, (CUstream)s);
	return 0;
}

cg_ret cg_memcpy_peer(uintptr_t ctx, cg_devptr dst, uintptr_t dstCtx, cg_devptr src, uintptr_t srcCtx, size_t n, uintptr_t s, int sync) {
	ENTER(ctx);
	CALL(MEMCPY_PEER_ASYNC, CUresult (*)(cg_devptr, CUcontext, cg_devptr, CUcontext, size_t, CUstream),
		dst, (CUcontext)dstCtx, src, (CUcontext)srcCtx, n, (CUstream)s);
	if (sync) CALL(STREAM_SYNCHRONIZE, cg_sync_t, (CUstream)s);
	return 0;
}

cg_ret cg_memset(uintptr_t ctx, cg_devptr dst, unsigned value, int elemSize, size_t count, uintptr_t s, int sync) {
	ENTER(ctx);
	if (elemSize == 1) {
		CALL(MEMSET_D8_ASYNC, CUresult (*)(cg_devptr, unsigned char, size_t, CUstream), dst, (unsigned char)value, count, (CUstream)s);
	} else {
		CALL(MEMSET_D32_ASYNC, CUresult (*)(cg_devptr, unsigned, size_t, CUstream), dst, value, count, (CUstream)s);
	}
	if (sync) CALL(STREAM_SYNCHRONIZE, cg_sync_t, (CUstream)s);
	return 0;
}

// ---- kernels ----

cg_ret cg_launch(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, uintptr_t args, size_t size) {
	ENTER(ctx);
	size_t sz = size;
	// CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END
	void *extra[5] = { (void *)1, (void *)args, (void *)2, &sz, (void *)0 };
	CALL(LAUNCH_KERNEL, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, CUstream, void **, void **),
		(CUfunction)f, gx, gy, gz, bx, by, bz, smem, (CUstream)s, NULL, size ? extra : NULL);
	return 0;
}

cg_ret cg_launch_ex(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, uintptr_t args, size_t size,
	unsigned cx, unsigned cy, unsigned cz, int cooperative) {
	ENTER(ctx);
	cg_launch_attribute attrs[2];
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
	cg_launch_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = gz;
	cfg.blockDimX = bx; cfg.blockDimY = by; cfg.blockDimZ = bz;
	cfg.sharedMemBytes = smem;
	cfg.hStream = (CUstream)s;
	cfg.attrs = attrs;
	cfg.numAttrs = n;
	size_t sz = size;
	void *extra[5] = { (void *)1, (void *)args, (void *)2, &sz, (void *)0 };
	CALL(LAUNCH_KERNEL_EX, CUresult (*)(const cg_launch_config *, CUfunction, void **, void **),
		&cfg, (CUfunction)f, NULL, size ? extra : NULL);
	return 0;
}

cg_ret cg_kernel_param_info(uintptr_t ctx, uintptr_t k, size_t index, size_t *offset, size_t *size) {
	ENTER(ctx);
	CALL(KERNEL_GET_PARAM_INFO, CUresult (*)(CUkernel, size_t, size_t *, size_t *), (CUkernel)k, index, offset, size);
	return 0;
}

cg_ret cg_kernel_get_attribute(uintptr_t ctx, int *out, int attr, uintptr_t k, int dev) {
	ENTER(ctx);
	CALL(KERNEL_GET_ATTRIBUTE, CUresult (*)(int *, int, CUkernel, CUdevice), out, attr, (CUkernel)k, dev);
	return 0;
}

cg_ret cg_kernel_set_attribute(uintptr_t ctx, int attr, int value, uintptr_t k, int dev) {
	ENTER(ctx);
	CALL(KERNEL_SET_ATTRIBUTE, CUresult (*)(int, int, CUkernel, CUdevice), attr, value, (CUkernel)k, dev);
	return 0;
}

cg_ret cg_occupancy_max_active_blocks(uintptr_t ctx, uintptr_t k, int *out, int blockSize, size_t smem) {
	ENTER(ctx);
	CUfunction f = NULL;
	CALL(KERNEL_GET_FUNCTION, CUresult (*)(CUfunction *, CUkernel), &f, (CUkernel)k);
	CALL(OCCUPANCY_MAX_ACTIVE_BLOCKS, CUresult (*)(int *, CUfunction, int, size_t), out, f, blockSize, smem);
	return 0;
}

cg_ret cg_occupancy_max_potential_block_size(uintptr_t ctx, uintptr_t k, int *minGrid, int *block, size_t smem, int limit) {
	ENTER(ctx);
	CUfunction f = NULL;
	CALL(KERNEL_GET_FUNCTION, CUresult (*)(CUfunction *, CUkernel), &f, (CUkernel)k);
	CALL(OCCUPANCY_MAX_POTENTIAL_BLOCK_SIZE, CUresult (*)(int *, int *, CUfunction, void *, size_t, int),
		minGrid, block, f, NULL, smem, limit);
	return 0;
}

// ---- graphs ----

cg_ret cg_graph_instantiate(uintptr_t ctx, uintptr_t *exec, uintptr_t g) {
	ENTER(ctx);
	CUgraphExec e = NULL;
	CALL(GRAPH_INSTANTIATE, CUresult (*)(CUgraphExec *, CUgraph, unsigned long long), &e, (CUgraph)g, 0);
	*exec = (uintptr_t)e;
	return 0;
}

cg_ret cg_graph_launch(uintptr_t ctx, uintptr_t exec, uintptr_t s) {
	ENTER(ctx);
	CALL(GRAPH_LAUNCH, CUresult (*)(CUgraphExec, CUstream), (CUgraphExec)exec, (CUstream)s);
	return 0;
}

cg_ret cg_graph_upload(uintptr_t ctx, uintptr_t exec, uintptr_t s) {
	ENTER(ctx);
	CALL(GRAPH_UPLOAD, CUresult (*)(CUgraphExec, CUstream), (CUgraphExec)exec, (CUstream)s);
	return 0;
}

cg_ret cg_graph_exec_update(uintptr_t ctx, uintptr_t exec, uintptr_t g, int *result) {
	ENTER(ctx);
	cg_graph_exec_update_result_info info;
	memset(&info, 0, sizeof info);
	cg_ret r;
	CALLR(r, GRAPH_EXEC_UPDATE, CUresult (*)(CUgraphExec, CUgraph, cg_graph_exec_update_result_info *),
		(CUgraphExec)exec, (CUgraph)g, &info);
	*result = info.result;
	return r;
}

cg_ret cg_graph_destroy(uintptr_t ctx, uintptr_t g) {
	ENTER(ctx);
	CALL(GRAPH_DESTROY, CUresult (*)(CUgraph), (CUgraph)g);
	return 0;
}

cg_ret cg_graph_exec_destroy(uintptr_t ctx, uintptr_t exec) {
	ENTER(ctx);
	CALL(GRAPH_EXEC_DESTROY, CUresult (*)(CUgraphExec), (CUgraphExec)exec);
	return 0;
}
