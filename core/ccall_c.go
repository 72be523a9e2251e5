package core

/*
#include "ccall.h"

// Pointers passed to these are only used during the call.
#cgo noescape cg_ctx_create
#cgo noescape cg_ctx_stream_priority_range
#cgo noescape cg_mem_get_info
#cgo noescape cg_stream_create
#cgo noescape cg_stream_end_capture
#cgo noescape cg_event_create
#cgo noescape cg_event_elapsed
#cgo noescape cg_ipc_get_event_handle
#cgo noescape cg_ipc_open_event_handle
#cgo noescape cg_mem_alloc
#cgo noescape cg_mem_alloc_async
#cgo noescape cg_pool_alloc
#cgo noescape cg_pool_free
#cgo noescape cg_mem_host_alloc
#cgo noescape cg_mem_alloc_managed
#cgo noescape cg_memcpy_htod_sync
#cgo noescape cg_memcpy_dtoh_sync
#cgo noescape cg_kernel_param_info
#cgo noescape cg_kernel_get_attribute
#cgo noescape cg_occupancy_max_active_blocks
#cgo noescape cg_occupancy_max_potential_block_size
#cgo noescape cg_graph_instantiate
#cgo noescape cg_graph_exec_update

// These never call back into Go on the calling thread.
#cgo nocallback cg_ctx_set
#cgo nocallback cg_stream_query
#cgo nocallback cg_stream_sync
#cgo nocallback cg_stream_wait_event
#cgo nocallback cg_event_record
#cgo nocallback cg_event_query
#cgo nocallback cg_event_sync
#cgo nocallback cg_memcpy_htod_sync
#cgo nocallback cg_memcpy_dtoh_sync
#cgo nocallback cg_memcpy_dtod
#cgo nocallback cg_memset
#cgo nocallback cg_mem_alloc_async
#cgo nocallback cg_mem_free_async
#cgo nocallback cg_pool_alloc
#cgo nocallback cg_pool_free
#cgo nocallback cg_launch
#cgo nocallback cg_launch_ex
#cgo nocallback cg_graph_launch
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// The C layer's entry points, resolved once through driver.Proc.
var procs struct {
	once  sync.Once
	names [C.CG_NFUNCS]string
	errs  [C.CG_NFUNCS]error
}

// fallbackVersions names entry points that may be resolved at an older
// cuGetProcAddress version when the installed driver lacks the one the
// headers declare (same C signature).
var fallbackVersions = map[string]int32{
	"cuEventElapsedTime": 2000, // _v2 needs 12.8
}

func loadProcs() {
	procs.once.Do(func() {
		for i := 0; i < C.CG_NFUNCS; i++ {
			name := C.GoString(C.cg_fn_name(C.int(i)))
			procs.names[i] = name
			p, err := driver.Proc(name)
			if err != nil {
				if v, ok := fallbackVersions[name]; ok {
					var q unsafe.Pointer
					var st driver.DriverProcAddressQueryResult
					if driver.GetProcAddress(name, &q, v, 0, &st) == nil && q != nil {
						p, err = q, nil
					}
				}
			}
			if err != nil {
				procs.errs[i] = err
				continue
			}
			C.cg_set_fn(C.int(i), p)
		}
	})
}

const cgMissing = uint32(C.CG_MISSING)

// cerr turns a cg_ret into the driver's typed error.
func cerr(r C.cg_ret) error {
	if r == 0 {
		return nil
	}
	return makeErr(uint64(r))
}

//go:noinline
func makeErr(r uint64) error {
	i := int(r >> 32)
	code := uint32(r)
	name := "?"
	if i >= 0 && i < len(procs.names) {
		name = procs.names[i]
	}
	if code == cgMissing {
		if i >= 0 && i < len(procs.errs) && procs.errs[i] != nil {
			return procs.errs[i]
		}
		return &driver.MissingFunctionError{Func: name, Lib: "libcuda"}
	}
	res := driver.Result(code)
	msg, _ := driver.GetErrorString(res)
	return &driver.Error{Lib: "driver", Func: name, Code: res, Message: msg}
}

// isNotReady reports whether err is CUDA_ERROR_NOT_READY.
func isNotReady(err error) bool { return errors.Is(err, driver.ErrorNotReady) }

func cu(h uintptr) C.uintptr_t { return C.uintptr_t(h) }

// ---- thin Go wrappers over the C layer; every other file is plain Go ----

func cCtxSet(ctx driver.Context) error  { return cerr(C.cg_ctx_set(cu(uintptr(ctx)))) }
func cCtxSync(ctx driver.Context) error { return cerr(C.cg_ctx_sync(cu(uintptr(ctx)))) }

func cCtxCreate(dev driver.Device, flags uint32) (driver.Context, error) {
	var out C.uintptr_t
	err := cerr(C.cg_ctx_create(C.int(dev), C.uint(flags), &out))
	return driver.Context(out), err
}

func cCtxDestroy(ctx driver.Context) error { return cerr(C.cg_ctx_destroy(cu(uintptr(ctx)))) }

func cStreamPriorityRange(ctx driver.Context) (least, greatest int, err error) {
	var l, g C.int
	err = cerr(C.cg_ctx_stream_priority_range(cu(uintptr(ctx)), &l, &g))
	return int(l), int(g), err
}

func cEnablePeerAccess(ctx, peer driver.Context) error {
	return cerr(C.cg_ctx_enable_peer_access(cu(uintptr(ctx)), cu(uintptr(peer))))
}

func cMemGetInfo(ctx driver.Context) (free, total uint64, err error) {
	var f, t C.size_t
	err = cerr(C.cg_mem_get_info(cu(uintptr(ctx)), &f, &t))
	return uint64(f), uint64(t), err
}

func cStreamCreate(ctx driver.Context, flags uint32, prio int) (driver.Stream, error) {
	var out C.uintptr_t
	err := cerr(C.cg_stream_create(cu(uintptr(ctx)), C.uint(flags), C.int(prio), &out))
	return driver.Stream(out), err
}

func cStreamDestroy(ctx driver.Context, s driver.Stream) error {
	return cerr(C.cg_stream_destroy(cu(uintptr(ctx)), cu(uintptr(s))))
}

func cStreamSync(ctx driver.Context, s driver.Stream) error {
	return cerr(C.cg_stream_sync(cu(uintptr(ctx)), cu(uintptr(s))))
}

func cStreamQuery(ctx driver.Context, s driver.Stream) error {
	return cerr(C.cg_stream_query(cu(uintptr(ctx)), cu(uintptr(s))))
}

func cStreamWaitEvent(ctx driver.Context, s driver.Stream, e driver.Event) error {
	return cerr(C.cg_stream_wait_event(cu(uintptr(ctx)), cu(uintptr(s)), cu(uintptr(e))))
}

func cStreamAddCallback(ctx driver.Context, s driver.Stream, h uintptr) error {
	return cerr(C.cg_stream_add_callback(cu(uintptr(ctx)), cu(uintptr(s)), cu(h)))
}

func cLaunchHostFunc(ctx driver.Context, s driver.Stream, h uintptr) error {
	return cerr(C.cg_launch_host_func(cu(uintptr(ctx)), cu(uintptr(s)), cu(h)))
}

func cBeginCapture(ctx driver.Context, s driver.Stream, mode int) error {
	return cerr(C.cg_stream_begin_capture(cu(uintptr(ctx)), cu(uintptr(s)), C.int(mode)))
}

func cEndCapture(ctx driver.Context, s driver.Stream) (driver.Graph, error) {
	var g C.uintptr_t
	err := cerr(C.cg_stream_end_capture(cu(uintptr(ctx)), cu(uintptr(s)), &g))
	return driver.Graph(g), err
}

func cEventCreate(ctx driver.Context, flags uint32) (driver.Event, error) {
	var out C.uintptr_t
	err := cerr(C.cg_event_create(cu(uintptr(ctx)), C.uint(flags), &out))
	return driver.Event(out), err
}

func cEventDestroy(ctx driver.Context, e driver.Event) error {
	return cerr(C.cg_event_destroy(cu(uintptr(ctx)), cu(uintptr(e))))
}

func cEventRecord(ctx driver.Context, e driver.Event, s driver.Stream) error {
	return cerr(C.cg_event_record(cu(uintptr(ctx)), cu(uintptr(e)), cu(uintptr(s))))
}

func cEventSync(ctx driver.Context, e driver.Event) error {
	return cerr(C.cg_event_sync(cu(uintptr(ctx)), cu(uintptr(e))))
}

func cEventQuery(ctx driver.Context, e driver.Event) error {
	return cerr(C.cg_event_query(cu(uintptr(ctx)), cu(uintptr(e))))
}

func cEventElapsed(ctx driver.Context, start, end driver.Event) (float32, error) {
	var ms C.float
	err := cerr(C.cg_event_elapsed(cu(uintptr(ctx)), &ms, cu(uintptr(start)), cu(uintptr(end))))
	return float32(ms), err
}

func cIpcGetEventHandle(ctx driver.Context, e driver.Event) (driver.IpcEventHandle, error) {
	var h driver.IpcEventHandle
	err := cerr(C.cg_ipc_get_event_handle(cu(uintptr(ctx)), unsafe.Pointer(&h), cu(uintptr(e))))
	return h, err
}

func cIpcOpenEventHandle(ctx driver.Context, h *driver.IpcEventHandle) (driver.Event, error) {
	var out C.uintptr_t
	err := cerr(C.cg_ipc_open_event_handle(cu(uintptr(ctx)), unsafe.Pointer(h), &out))
	return driver.Event(out), err
}

func cMemAlloc(ctx driver.Context, n uint64) (driver.Deviceptr, error) {
	var p C.cg_devptr
	err := cerr(C.cg_mem_alloc(cu(uintptr(ctx)), &p, C.size_t(n)))
	return driver.Deviceptr(p), err
}

func cMemFree(ctx driver.Context, p driver.Deviceptr) error {
	return cerr(C.cg_mem_free(cu(uintptr(ctx)), C.cg_devptr(p)))
}

func cMemAllocAsync(ctx driver.Context, n uint64, s driver.Stream) (driver.Deviceptr, error) {
	var p C.cg_devptr
	err := cerr(C.cg_mem_alloc_async(cu(uintptr(ctx)), &p, C.size_t(n), cu(uintptr(s))))
	return driver.Deviceptr(p), err
}

func cMemFreeAsync(ctx driver.Context, p driver.Deviceptr, s driver.Stream) error {
	return cerr(C.cg_mem_free_async(cu(uintptr(ctx)), C.cg_devptr(p), cu(uintptr(s))))
}

// cPoolAlloc allocates n bytes on s, or returns reuse (a block of n bytes
// freed on s) when s is not capturing; see cg_pool_alloc.
func cPoolAlloc(ctx driver.Context, s driver.Stream, n uint64, reuse driver.Deviceptr) (p driver.Deviceptr, capturing bool, err error) {
	var out C.cg_devptr
	var capt C.int
	err = cerr(C.cg_pool_alloc(cu(uintptr(ctx)), cu(uintptr(s)), C.size_t(n), C.cg_devptr(reuse), &out, &capt))
	return driver.Deviceptr(out), capt != 0, err
}

// cPoolFree frees p on s, or reports kept when s is not capturing and p
// is left to the caller to reuse on s; see cg_pool_free.
func cPoolFree(ctx driver.Context, s driver.Stream, p driver.Deviceptr) (kept bool, err error) {
	var k C.int
	err = cerr(C.cg_pool_free(cu(uintptr(ctx)), cu(uintptr(s)), C.cg_devptr(p), &k))
	return k != 0, err
}

func cMemHostAlloc(ctx driver.Context, n uint64, flags uint32) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := cerr(C.cg_mem_host_alloc(cu(uintptr(ctx)), &p, C.size_t(n), C.uint(flags)))
	return p, err
}

func cMemFreeHost(ctx driver.Context, p unsafe.Pointer) error {
	return cerr(C.cg_mem_free_host(cu(uintptr(ctx)), p))
}

func cMemAllocManaged(ctx driver.Context, n uint64, flags uint32) (driver.Deviceptr, error) {
	var p C.cg_devptr
	err := cerr(C.cg_mem_alloc_managed(cu(uintptr(ctx)), &p, C.size_t(n), C.uint(flags)))
	return driver.Deviceptr(p), err
}

// hostPtr turns a device address of host-accessible memory (pinned or
// managed: C memory) into a pointer.
func hostPtr(p driver.Deviceptr) unsafe.Pointer { return C.cg_host_ptr(C.cg_devptr(p)) }

func cMemcpyHtoDSync(ctx driver.Context, dst driver.Deviceptr, src unsafe.Pointer, n uint64, s driver.Stream) error {
	return cerr(C.cg_memcpy_htod_sync(cu(uintptr(ctx)), C.cg_devptr(dst), src, C.size_t(n), cu(uintptr(s))))
}

func cMemcpyDtoHSync(ctx driver.Context, dst unsafe.Pointer, src driver.Deviceptr, n uint64, s driver.Stream) error {
	return cerr(C.cg_memcpy_dtoh_sync(cu(uintptr(ctx)), dst, C.cg_devptr(src), C.size_t(n), cu(uintptr(s))))
}

// The async forms keep the host pointer after the call: it must be pinned
// (runtime.Pinner) or C memory; h is released by the completion callback.
func cMemcpyHtoDAsync(ctx driver.Context, dst driver.Deviceptr, src unsafe.Pointer, n uint64, s driver.Stream, h uintptr) error {
	return cerr(C.cg_memcpy_htod_async(cu(uintptr(ctx)), C.cg_devptr(dst), src, C.size_t(n), cu(uintptr(s)), cu(h)))
}

func cMemcpyDtoHAsync(ctx driver.Context, dst unsafe.Pointer, src driver.Deviceptr, n uint64, s driver.Stream, h uintptr) error {
	return cerr(C.cg_memcpy_dtoh_async(cu(uintptr(ctx)), dst, C.cg_devptr(src), C.size_t(n), cu(uintptr(s)), cu(h)))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func cMemcpyDtoD(ctx driver.Context, dst, src driver.Deviceptr, n uint64, s driver.Stream, sync bool) error {
	return cerr(C.cg_memcpy_dtod(cu(uintptr(ctx)), C.cg_devptr(dst), C.cg_devptr(src), C.size_t(n), cu(uintptr(s)), cbool(sync)))
}

func cMemcpyPeer(ctx driver.Context, dst driver.Deviceptr, dstCtx driver.Context, src driver.Deviceptr, srcCtx driver.Context, n uint64, s driver.Stream, sync bool) error {
	return cerr(C.cg_memcpy_peer(cu(uintptr(ctx)), C.cg_devptr(dst), cu(uintptr(dstCtx)), C.cg_devptr(src), cu(uintptr(srcCtx)), C.size_t(n), cu(uintptr(s)), cbool(sync)))
}

func cMemset(ctx driver.Context, dst driver.Deviceptr, value uint32, elemSize int, count uint64, s driver.Stream, sync bool) error {
	return cerr(C.cg_memset(cu(uintptr(ctx)), C.cg_devptr(dst), C.uint(value), C.int(elemSize), C.size_t(count), cu(uintptr(s)), cbool(sync)))
}

// cLaunch and cLaunchEx take the packed arguments' address as a uintptr:
// cgo then skips its pointer check (about 50 ns a launch). The memory is
// the caller's stack frame or a buffer it keeps alive; a goroutine's stack
// does not move while it is in a C call.
func cLaunch(ctx driver.Context, k driver.Kernel, cfg *LaunchConfig, s driver.Stream, args uintptr, size int) error {
	return cerr(C.cg_launch(cu(uintptr(ctx)), cu(uintptr(k)),
		C.uint(cfg.Grid.X), C.uint(cfg.Grid.Y), C.uint(cfg.Grid.Z),
		C.uint(cfg.Block.X), C.uint(cfg.Block.Y), C.uint(cfg.Block.Z),
		C.uint(cfg.SharedMemory), cu(uintptr(s)), cu(args), C.size_t(size)))
}

func cLaunchEx(ctx driver.Context, k driver.Kernel, cfg *LaunchConfig, s driver.Stream, args uintptr, size int) error {
	return cerr(C.cg_launch_ex(cu(uintptr(ctx)), cu(uintptr(k)),
		C.uint(cfg.Grid.X), C.uint(cfg.Grid.Y), C.uint(cfg.Grid.Z),
		C.uint(cfg.Block.X), C.uint(cfg.Block.Y), C.uint(cfg.Block.Z),
		C.uint(cfg.SharedMemory), cu(uintptr(s)), cu(args), C.size_t(size),
		C.uint(cfg.Cluster.X), C.uint(cfg.Cluster.Y), C.uint(cfg.Cluster.Z), cbool(cfg.Cooperative)))
}

func cKernelParamInfo(ctx driver.Context, k driver.Kernel, i int) (offset, size int, err error) {
	var o, s C.size_t
	err = cerr(C.cg_kernel_param_info(cu(uintptr(ctx)), cu(uintptr(k)), C.size_t(i), &o, &s))
	return int(o), int(s), err
}

func cKernelGetAttribute(ctx driver.Context, attr driver.FunctionAttribute, k driver.Kernel, dev driver.Device) (int, error) {
	var v C.int
	err := cerr(C.cg_kernel_get_attribute(cu(uintptr(ctx)), &v, C.int(attr), cu(uintptr(k)), C.int(dev)))
	return int(v), err
}

func cKernelSetAttribute(ctx driver.Context, attr driver.FunctionAttribute, value int, k driver.Kernel, dev driver.Device) error {
	return cerr(C.cg_kernel_set_attribute(cu(uintptr(ctx)), C.int(attr), C.int(value), cu(uintptr(k)), C.int(dev)))
}

func cOccupancyMaxActiveBlocks(ctx driver.Context, k driver.Kernel, blockSize int, smem uint64) (int, error) {
	var v C.int
	err := cerr(C.cg_occupancy_max_active_blocks(cu(uintptr(ctx)), cu(uintptr(k)), &v, C.int(blockSize), C.size_t(smem)))
	return int(v), err
}

func cOccupancyMaxPotentialBlockSize(ctx driver.Context, k driver.Kernel, smem uint64, limit int) (minGrid, block int, err error) {
	var g, b C.int
	err = cerr(C.cg_occupancy_max_potential_block_size(cu(uintptr(ctx)), cu(uintptr(k)), &g, &b, C.size_t(smem), C.int(limit)))
	return int(g), int(b), err
}

func cGraphInstantiate(ctx driver.Context, g driver.Graph) (driver.GraphExec, error) {
	var e C.uintptr_t
	err := cerr(C.cg_graph_instantiate(cu(uintptr(ctx)), &e, cu(uintptr(g))))
	return driver.GraphExec(e), err
}

func cGraphLaunch(ctx driver.Context, e driver.GraphExec, s driver.Stream) error {
	return cerr(C.cg_graph_launch(cu(uintptr(ctx)), cu(uintptr(e)), cu(uintptr(s))))
}

func cGraphUpload(ctx driver.Context, e driver.GraphExec, s driver.Stream) error {
	return cerr(C.cg_graph_upload(cu(uintptr(ctx)), cu(uintptr(e)), cu(uintptr(s))))
}

func cGraphExecUpdate(ctx driver.Context, e driver.GraphExec, g driver.Graph) (driver.GraphExecUpdateResult, error) {
	var res C.int
	err := cerr(C.cg_graph_exec_update(cu(uintptr(ctx)), cu(uintptr(e)), cu(uintptr(g)), &res))
	return driver.GraphExecUpdateResult(res), err
}

func cGraphDestroy(ctx driver.Context, g driver.Graph) error {
	return cerr(C.cg_graph_destroy(cu(uintptr(ctx)), cu(uintptr(g))))
}

func cGraphExecDestroy(ctx driver.Context, e driver.GraphExec) error {
	return cerr(C.cg_graph_exec_destroy(cu(uintptr(ctx)), cu(uintptr(e))))
}
