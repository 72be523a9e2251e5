// The C layer of package core: every operation that needs a current CUDA
// context makes it current and acts within one C call, because the current
// context belongs to an OS thread and goroutines move between threads.
//
// No CUDA header is needed: the few types used are declared here, and the
// driver's entry points come from Go (driver.Proc) into cg_fn.
//
// Every function returns a cg_ret: 0 on success, else the index of the
// driver function that failed in the high 32 bits and its CUresult in the
// low 32 bits (CG_MISSING when the entry point could not be resolved).
#ifndef CUDAGO_CORE_CCALL_H
#define CUDAGO_CORE_CCALL_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned long long cg_ret;
typedef unsigned long long cg_devptr;

#define CG_MISSING 0x7fffffffu

// X-macro of the driver entry points the C layer calls.
#define CG_FUNCS(X) \
	X(CTX_GET_CURRENT, "cuCtxGetCurrent") \
	X(CTX_SET_CURRENT, "cuCtxSetCurrent") \
	X(CTX_SYNCHRONIZE, "cuCtxSynchronize") \
	X(CTX_CREATE, "cuCtxCreate") \
	X(CTX_CREATE_V2, "cuCtxCreate_v2") \
	X(CTX_POP_CURRENT, "cuCtxPopCurrent") \
	X(CTX_DESTROY, "cuCtxDestroy") \
	X(CTX_GET_STREAM_PRIORITY_RANGE, "cuCtxGetStreamPriorityRange") \
	X(CTX_ENABLE_PEER_ACCESS, "cuCtxEnablePeerAccess") \
	X(MEM_GET_INFO, "cuMemGetInfo") \
	X(STREAM_CREATE_WITH_PRIORITY, "cuStreamCreateWithPriority") \
	X(STREAM_DESTROY, "cuStreamDestroy") \
	X(STREAM_SYNCHRONIZE, "cuStreamSynchronize") \
	X(STREAM_QUERY, "cuStreamQuery") \
	X(STREAM_WAIT_EVENT, "cuStreamWaitEvent") \
	X(STREAM_ADD_CALLBACK, "cuStreamAddCallback") \
	X(LAUNCH_HOST_FUNC, "cuLaunchHostFunc") \
	X(STREAM_BEGIN_CAPTURE, "cuStreamBeginCapture") \
	X(STREAM_END_CAPTURE, "cuStreamEndCapture") \
	X(STREAM_IS_CAPTURING, "cuStreamIsCapturing") \
	X(EVENT_CREATE, "cuEventCreate") \
	X(EVENT_DESTROY, "cuEventDestroy") \
	X(EVENT_RECORD, "cuEventRecord") \
	X(EVENT_SYNCHRONIZE, "cuEventSynchronize") \
	X(EVENT_QUERY, "cuEventQuery") \
	X(EVENT_ELAPSED_TIME, "cuEventElapsedTime") \
	X(IPC_GET_EVENT_HANDLE, "cuIpcGetEventHandle") \
	X(IPC_OPEN_EVENT_HANDLE, "cuIpcOpenEventHandle") \
	X(MEM_ALLOC, "cuMemAlloc") \
	X(MEM_FREE, "cuMemFree") \
	X(MEM_ALLOC_ASYNC, "cuMemAllocAsync") \
	X(MEM_FREE_ASYNC, "cuMemFreeAsync") \
	X(MEM_HOST_ALLOC, "cuMemHostAlloc") \
	X(MEM_FREE_HOST, "cuMemFreeHost") \
	X(MEM_ALLOC_MANAGED, "cuMemAllocManaged") \
	X(MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync") \
	X(MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync") \
	X(MEMCPY_DTOD_ASYNC, "cuMemcpyDtoDAsync") \
	X(MEMCPY_PEER_ASYNC, "cuMemcpyPeerAsync") \
	X(MEMSET_D8_ASYNC, "cuMemsetD8Async") \
	X(MEMSET_D32_ASYNC, "cuMemsetD32Async") \
	X(LAUNCH_KERNEL, "cuLaunchKernel") \
	X(LAUNCH_KERNEL_EX, "cuLaunchKernelEx") \
	X(KERNEL_GET_FUNCTION, "cuKernelGetFunction") \
	X(KERNEL_GET_PARAM_INFO, "cuKernelGetParamInfo") \
	X(KERNEL_GET_ATTRIBUTE, "cuKernelGetAttribute") \
	X(KERNEL_SET_ATTRIBUTE, "cuKernelSetAttribute") \
	X(OCCUPANCY_MAX_ACTIVE_BLOCKS, "cuOccupancyMaxActiveBlocksPerMultiprocessor") \
	X(OCCUPANCY_MAX_POTENTIAL_BLOCK_SIZE, "cuOccupancyMaxPotentialBlockSize") \
	X(GRAPH_INSTANTIATE, "cuGraphInstantiateWithFlags") \
	X(GRAPH_LAUNCH, "cuGraphLaunch") \
	X(GRAPH_UPLOAD, "cuGraphUpload") \
	X(GRAPH_EXEC_UPDATE, "cuGraphExecUpdate") \
	X(GRAPH_DESTROY, "cuGraphDestroy") \
	X(GRAPH_EXEC_DESTROY, "cuGraphExecDestroy")

#define CG_ENUM_ENTRY(id, name) CG_##id,
enum { CG_FUNCS(CG_ENUM_ENTRY) CG_NFUNCS };
#undef CG_ENUM_ENTRY

extern void *cg_fn[CG_NFUNCS];
extern const char *cg_fn_names[CG_NFUNCS];
void cg_set_fn(int i, void *fn);
const char *cg_fn_name(int i);

// Contexts.
cg_ret cg_ctx_set(uintptr_t ctx);
cg_ret cg_ctx_sync(uintptr_t ctx);
cg_ret cg_ctx_create(int dev, unsigned flags, uintptr_t *out);
cg_ret cg_ctx_destroy(uintptr_t ctx);
cg_ret cg_ctx_stream_priority_range(uintptr_t ctx, int *least, int *greatest);
cg_ret cg_ctx_enable_peer_access(uintptr_t ctx, uintptr_t peer);
cg_ret cg_mem_get_info(uintptr_t ctx, size_t *free_, size_t *total);

// Streams.
cg_ret cg_stream_create(uintptr_t ctx, unsigned flags, int priority, uintptr_t *out);
cg_ret cg_stream_destroy(uintptr_t ctx, uintptr_t s);
cg_ret cg_stream_sync(uintptr_t ctx, uintptr_t s);
cg_ret cg_stream_query(uintptr_t ctx, uintptr_t s);
cg_ret cg_stream_wait_event(uintptr_t ctx, uintptr_t s, uintptr_t e);
cg_ret cg_stream_add_callback(uintptr_t ctx, uintptr_t s, uintptr_t handle);
cg_ret cg_launch_host_func(uintptr_t ctx, uintptr_t s, uintptr_t handle);
cg_ret cg_stream_begin_capture(uintptr_t ctx, uintptr_t s, int mode);
cg_ret cg_stream_end_capture(uintptr_t ctx, uintptr_t s, uintptr_t *graph);

// Events.
cg_ret cg_event_create(uintptr_t ctx, unsigned flags, uintptr_t *out);
cg_ret cg_event_destroy(uintptr_t ctx, uintptr_t e);
cg_ret cg_event_record(uintptr_t ctx, uintptr_t e, uintptr_t s);
cg_ret cg_event_sync(uintptr_t ctx, uintptr_t e);
cg_ret cg_event_query(uintptr_t ctx, uintptr_t e);
cg_ret cg_event_elapsed(uintptr_t ctx, float *ms, uintptr_t start, uintptr_t end);
cg_ret cg_ipc_get_event_handle(uintptr_t ctx, void *handle64, uintptr_t e);
cg_ret cg_ipc_open_event_handle(uintptr_t ctx, const void *handle64, uintptr_t *out);

// Memory.
cg_ret cg_mem_alloc(uintptr_t ctx, cg_devptr *p, size_t n);
cg_ret cg_mem_free(uintptr_t ctx, cg_devptr p);
cg_ret cg_mem_alloc_async(uintptr_t ctx, cg_devptr *p, size_t n, uintptr_t s);
cg_ret cg_mem_free_async(uintptr_t ctx, cg_devptr p, uintptr_t s);
cg_ret cg_pool_alloc(uintptr_t ctx, uintptr_t s, size_t n, cg_devptr reuse, cg_devptr *p, int *capturing);
cg_ret cg_pool_free(uintptr_t ctx, uintptr_t s, cg_devptr p, int *kept);
cg_ret cg_mem_host_alloc(uintptr_t ctx, void **p, size_t n, unsigned flags);
cg_ret cg_mem_free_host(uintptr_t ctx, void *p);
cg_ret cg_mem_alloc_managed(uintptr_t ctx, cg_devptr *p, size_t n, unsigned flags);
void *cg_host_ptr(cg_devptr p);

// Copies and sets. The _sync forms enqueue on s and wait for s within the
// call (the host memory is not kept); the _async forms keep src/dst until
// the copy completes, so Go memory passed to them must be pinned.
cg_ret cg_memcpy_htod_sync(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s);
cg_ret cg_memcpy_dtoh_sync(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s);
cg_ret cg_memcpy_htod_async(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s, uintptr_t handle);
cg_ret cg_memcpy_dtoh_async(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t handle);
cg_ret cg_memcpy_dtod(uintptr_t ctx, cg_devptr dst, cg_devptr src, size_t n, uintptr_t s, int sync);
cg_ret cg_memcpy_peer(uintptr_t ctx, cg_devptr dst, uintptr_t dstCtx, cg_devptr src, uintptr_t srcCtx, size_t n, uintptr_t s, int sync);
cg_ret cg_memset(uintptr_t ctx, cg_devptr dst, unsigned value, int elemSize, size_t count, uintptr_t s, int sync);

// Kernels.
cg_ret cg_launch(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, uintptr_t args, size_t size);
cg_ret cg_launch_ex(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, uintptr_t args, size_t size,
	unsigned cx, unsigned cy, unsigned cz, int cooperative);
cg_ret cg_kernel_param_info(uintptr_t ctx, uintptr_t k, size_t index, size_t *offset, size_t *size);
cg_ret cg_kernel_get_attribute(uintptr_t ctx, int *out, int attr, uintptr_t k, int dev);
cg_ret cg_kernel_set_attribute(uintptr_t ctx, int attr, int value, uintptr_t k, int dev);
cg_ret cg_occupancy_max_active_blocks(uintptr_t ctx, uintptr_t k, int *out, int blockSize, size_t smem);
cg_ret cg_occupancy_max_potential_block_size(uintptr_t ctx, uintptr_t k, int *minGrid, int *block, size_t smem, int limit);

// Graphs.
cg_ret cg_graph_instantiate(uintptr_t ctx, uintptr_t *exec, uintptr_t g);
cg_ret cg_graph_launch(uintptr_t ctx, uintptr_t exec, uintptr_t s);
cg_ret cg_graph_upload(uintptr_t ctx, uintptr_t exec, uintptr_t s);
cg_ret cg_graph_exec_update(uintptr_t ctx, uintptr_t exec, uintptr_t g, int *result);
cg_ret cg_graph_destroy(uintptr_t ctx, uintptr_t g);
cg_ret cg_graph_exec_destroy(uintptr_t ctx, uintptr_t exec);

#endif
