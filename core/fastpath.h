// The hand-written C of package core: only what must be one C call, for
// speed or because the CUDA context and context stack are per OS thread.
// Every other driver call is generated from the //cudago: lines of
// calls.go (drivercalls_gen.h), and so are the entry point table, the
// structs and the constants used here: nothing of cuda.h is spelled by hand.
//
// The hand-written functions, and why each is one C call:
//
//   cg_launch             context check and cuLaunchKernel with the packed
//                         arguments (CU_LAUNCH_PARAM_BUFFER_POINTER): the
//                         launch hot path, one cgo call per launch.
//   cg_launch_ex          the same through cuLaunchKernelEx, with the cluster
//                         and cooperative attributes built on the C stack.
//   cg_launch_prepared    a PreparedLaunch: shape, kernel and packed arguments
//                         live in one block of C memory (cg_prepared), so the
//                         launch passes three words and Go's pointer checks
//                         have nothing to look at.
//   cg_pool_alloc,        the capture check (cuStreamIsCapturing) and the
//   cg_pool_free          reuse of a kept block, else cuMemAllocAsync or
//                         cuMemFreeAsync: the pool hot path, one cgo call.
//   cg_memcpy_htod_sync,  copy and cuStreamSynchronize: the Go memory is
//   cg_memcpy_dtoh_sync   only used within the call, so it needs no pinning.
//   cg_memcpy_htod_async, copy and registration of the C callback that
//   cg_memcpy_dtoh_async  unpins the host memory when the copy is done (or,
//                         if that fails, a wait): the memory is never left
//                         pinned, nor used unpinned.
//   cg_staged_htod,       one chunk of a staged copy (staging.go): copy and
//   cg_staged_dtoh        cuEventRecord of the event that guards the staging
//                         buffer, one cgo call per chunk.
//   cg_memcpy3d           the boxes of one strided copy (cuMemcpy3DAsync,
//                         several when one descriptor cannot hold the
//                         layout) and cuStreamSynchronize: Go memory on the
//                         host side is only used within the call.
//   cg_stream_add_callback, cuStreamAddCallback and cuLaunchHostFunc with the
//   cg_launch_host_func   C trampolines that call back into Go.
//   cg_ctx_create         cuCtxCreate and cuCtxPopCurrent: the new context
//                         must come off the stack of the thread that pushed it.
//   cg_host_ptr           no driver call: a device address of host memory as
//                         a pointer, which Go may not make from a uintptr.
//   cg_host_trampoline    not a call: the CUhostFn of cuLaunchHostFunc, whose
//                         address the host nodes of built graphs take
//                         (graphdef.go), with the callback id as user data.
//
// Each returns a cg_ret (drivercalls_gen.h): 0, or the failing entry point
// and its CUresult.
#ifndef CUDAGO_CORE_FASTPATH_H
#define CUDAGO_CORE_FASTPATH_H

#include "drivercalls_gen.h"

cg_ret cg_ctx_create(int dev, unsigned flags, uintptr_t *out);

void cg_host_trampoline(void *user);
cg_ret cg_stream_add_callback(uintptr_t ctx, uintptr_t s, uintptr_t handle);
cg_ret cg_launch_host_func(uintptr_t ctx, uintptr_t s, uintptr_t handle);

cg_ret cg_pool_alloc(uintptr_t ctx, uintptr_t s, size_t n, cg_devptr reuse, cg_devptr *p, int *capturing);
cg_ret cg_pool_free(uintptr_t ctx, uintptr_t s, cg_devptr p, int *kept);
void *cg_host_ptr(cg_devptr p);

// The _sync forms enqueue on s and wait for s within the call (the host
// memory is not kept); the _async forms keep src/dst until the copy
// completes, so Go memory passed to them must be pinned.
cg_ret cg_memcpy_htod_sync(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s);
cg_ret cg_memcpy_dtoh_sync(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s);
cg_ret cg_memcpy_htod_async(uintptr_t ctx, cg_devptr dst, const void *src, size_t n, uintptr_t s, uintptr_t handle);
cg_ret cg_memcpy_dtoh_async(uintptr_t ctx, void *dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t handle);
cg_ret cg_staged_htod(uintptr_t ctx, cg_devptr dst, uintptr_t src, size_t n, uintptr_t s, uintptr_t ev);
cg_ret cg_staged_dtoh(uintptr_t ctx, uintptr_t dst, cg_devptr src, size_t n, uintptr_t s, uintptr_t ev);

// cg_prepared is a PreparedLaunch's C half; the packed arguments follow it
// in the same allocation (cg_prepared_new), and extra points into it.
typedef struct {
	uintptr_t f;
	unsigned gx, gy, gz, bx, by, bz, smem, cx, cy, cz;
	int cooperative;
	size_t size;
	void *extra[5];
	unsigned char *args;
} cg_prepared;

cg_prepared *cg_prepared_new(size_t size);
void cg_prepared_free(cg_prepared *p);
cg_ret cg_launch_prepared(uintptr_t ctx, uintptr_t s, uintptr_t p);

// cg_copy3d is one strided copy (strided.go's copyPlan): count boxes of
// width bytes by height rows by depth slices, rows pitch bytes apart and
// slices height rows of pitch bytes apart on each side; box k starts
// k * step bytes after the first. No pointers: the host side's address,
// Go memory, is passed on its own, as cgo requires.
typedef struct {
	cg_devptr src, dst; // the first box's device side (unused for a host side)
	int64_t src_step, dst_step;
	size_t width, height, depth, count;
	size_t src_pitch, src_height, dst_pitch, dst_height;
} cg_copy3d;

// cg_memcpy3d queues c on s, from src_host when not NULL (else from
// c->src) and to dst_host when not NULL (else to c->dst), and waits for s
// when wait is set or either side is host memory, which is then not used
// after the call: it needs no pinning.
cg_ret cg_memcpy3d(uintptr_t ctx, const cg_copy3d *c, const void *src_host, void *dst_host, uintptr_t s, int wait);

cg_ret cg_launch(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, const unsigned char *args, size_t size);
cg_ret cg_launch_ex(uintptr_t ctx, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned smem, uintptr_t s, const unsigned char *args, size_t size,
	unsigned cx, unsigned cy, unsigned cz, int cooperative);

#endif
