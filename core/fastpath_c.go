package core

/*
#include "fastpath.h"

// Pointers passed to these are only used during the call.
#cgo noescape cg_ctx_create
#cgo noescape cg_launch
#cgo noescape cg_launch_ex
#cgo noescape cg_pool_alloc
#cgo noescape cg_pool_free
#cgo noescape cg_memcpy_htod_sync
#cgo noescape cg_memcpy_dtoh_sync
#cgo noescape cg_memcpy3d

// These never call back into Go on the calling thread.
#cgo nocallback cg_memcpy_htod_sync
#cgo nocallback cg_memcpy_dtoh_sync
#cgo nocallback cg_memcpy3d
#cgo nocallback cg_pool_alloc
#cgo nocallback cg_pool_free
#cgo nocallback cg_launch
#cgo nocallback cg_launch_ex
#cgo nocallback cg_launch_prepared
*/
import "C"

import (
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Go wrappers of the hand-written C calls (fastpath.h says why each is one
// C call); every other driver call is generated (drivercalls_gen.go).

func cCtxCreate(dev driver.Device, flags uint32) (driver.Context, error) {
	var out C.uintptr_t
	err := cerr(C.cg_ctx_create(C.int(dev), C.uint(flags), &out))
	return driver.Context(out), err
}

func cStreamAddCallback(ctx driver.Context, s driver.Stream, h uintptr) error {
	return cerr(C.cg_stream_add_callback(cu(uintptr(ctx)), cu(uintptr(s)), cu(h)))
}

func cLaunchHostFunc(ctx driver.Context, s driver.Stream, h uintptr) error {
	return cerr(C.cg_launch_host_func(cu(uintptr(ctx)), cu(uintptr(s)), cu(h)))
}

// hostTrampoline is the CUhostFn that runs the host callback whose id it
// gets as user data (the host nodes of graphdef.go).
func hostTrampoline() driver.HostFn { return driver.HostFn(unsafe.Pointer(C.cg_host_trampoline)) }

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

// cStagedHtoD and cStagedDtoH queue one chunk of a staged copy between
// pinned staging memory (C memory, passed as an address) and the device,
// and record ev after it.
func cStagedHtoD(ctx driver.Context, dst driver.Deviceptr, src unsafe.Pointer, n uint64, s driver.Stream, ev driver.Event) error {
	return cerr(C.cg_staged_htod(cu(uintptr(ctx)), C.cg_devptr(dst), C.uintptr_t(uintptr(src)), C.size_t(n), cu(uintptr(s)), cu(uintptr(ev))))
}

func cStagedDtoH(ctx driver.Context, dst unsafe.Pointer, src driver.Deviceptr, n uint64, s driver.Stream, ev driver.Event) error {
	return cerr(C.cg_staged_dtoh(cu(uintptr(ctx)), C.uintptr_t(uintptr(dst)), C.cg_devptr(src), C.size_t(n), cu(uintptr(s)), cu(uintptr(ev))))
}

// cMemcpy3D runs the strided copy pl from src to dst; srcHost or dstHost,
// when not nil, is the host side (Go memory, used only within the call:
// the call waits). wait makes a device-to-device copy wait too.
func cMemcpy3D(ctx driver.Context, pl *copyPlan, src, dst driver.Deviceptr, srcHost, dstHost unsafe.Pointer, s driver.Stream, wait bool) error {
	c := C.cg_copy3d{
		src: C.cg_devptr(src), dst: C.cg_devptr(dst),
		src_step: C.int64_t(pl.srcStep), dst_step: C.int64_t(pl.dstStep),
		width: C.size_t(pl.width), height: C.size_t(pl.height), depth: C.size_t(pl.depth), count: C.size_t(pl.count),
		src_pitch: C.size_t(pl.srcPitch), src_height: C.size_t(pl.srcHeight),
		dst_pitch: C.size_t(pl.dstPitch), dst_height: C.size_t(pl.dstHeight),
	}
	return cerr(C.cg_memcpy3d(cu(uintptr(ctx)), &c, srcHost, dstHost, cu(uintptr(s)), cbool(wait)))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// cLaunch and cLaunchEx take the packed arguments' address as a pointer,
// not a uintptr: the buffer is often on the caller's stack, and a stack
// that grows or shrinks before the C call starts (in these functions'
// prologues) moves it; only a pointer is updated then. #cgo noescape keeps
// the buffer on the stack. It crosses as an unsigned char *, not a void *:
// cgo checks every unsafe.Pointer argument for Go pointers in the memory
// it points to (runtime.cgoCheckPointer, 15% of a launch's CPU time
// without the driver), and none for a pointer to a type that holds none.
func cLaunch(ctx driver.Context, k driver.Kernel, cfg *LaunchConfig, s driver.Stream, args unsafe.Pointer, size int) error {
	return cerr(C.cg_launch(cu(uintptr(ctx)), cu(uintptr(k)),
		C.uint(cfg.Grid.X), C.uint(cfg.Grid.Y), C.uint(cfg.Grid.Z),
		C.uint(cfg.Block.X), C.uint(cfg.Block.Y), C.uint(cfg.Block.Z),
		C.uint(cfg.SharedMemory), cu(uintptr(s)), (*C.uchar)(args), C.size_t(size)))
}

func cLaunchEx(ctx driver.Context, k driver.Kernel, cfg *LaunchConfig, s driver.Stream, args unsafe.Pointer, size int) error {
	return cerr(C.cg_launch_ex(cu(uintptr(ctx)), cu(uintptr(k)),
		C.uint(cfg.Grid.X), C.uint(cfg.Grid.Y), C.uint(cfg.Grid.Z),
		C.uint(cfg.Block.X), C.uint(cfg.Block.Y), C.uint(cfg.Block.Z),
		C.uint(cfg.SharedMemory), cu(uintptr(s)), (*C.uchar)(args), C.size_t(size),
		C.uint(cfg.Cluster.X), C.uint(cfg.Cluster.Y), C.uint(cfg.Cluster.Z), cbool(cfg.Cooperative)))
}

// The C half of a PreparedLaunch (cg_prepared in fastpath.h): C memory,
// so that Go may keep its address as a uintptr and write into it.
type cPrepared = C.cg_prepared

func cPreparedNew(size int) *cPrepared { return C.cg_prepared_new(C.size_t(size)) }

func cPreparedFree(p *cPrepared) { C.cg_prepared_free(p) }

// cPreparedArgs is the argument bytes of p.
func cPreparedArgs(p *cPrepared) []byte {
	if p.size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p.args)), int(p.size))
}

func cPreparedSet(p *cPrepared, k driver.Kernel, cfg *LaunchConfig) {
	p.f = cu(uintptr(k))
	p.gx, p.gy, p.gz = C.uint(cfg.Grid.X), C.uint(cfg.Grid.Y), C.uint(cfg.Grid.Z)
	p.bx, p.by, p.bz = C.uint(cfg.Block.X), C.uint(cfg.Block.Y), C.uint(cfg.Block.Z)
	p.cx, p.cy, p.cz = C.uint(cfg.Cluster.X), C.uint(cfg.Cluster.Y), C.uint(cfg.Cluster.Z)
	p.smem = C.uint(cfg.SharedMemory)
	p.cooperative = cbool(cfg.Cooperative)
}

// cLaunchPrepared launches the prepared launch at address p (C memory).
func cLaunchPrepared(ctx driver.Context, s driver.Stream, p uintptr) error {
	return cerr(C.cg_launch_prepared(cu(uintptr(ctx)), cu(uintptr(s)), cu(p)))
}
