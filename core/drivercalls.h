/* Package core's C layer over the driver. drivercalls_gen.h, generated
   from driverCore in internal/bindgen/config.go, holds the table of entry
   points (filled once from Go), the header's constants and structs that
   core's hand-written C uses, and one shim per call, which makes the
   context current first where the call needs one: no CUDA header is needed
   to build. This file holds what the shims return and the helpers they,
   and the hand-written ones of fastpath.h, share. */
#ifndef CUDAGO_CORE_DRIVERCALLS_H
#define CUDAGO_CORE_DRIVERCALLS_H
#include <stddef.h>
#include <stdint.h>

/* 0 on success, else the CGX_ index of the entry point that failed in the
   high 32 bits and its CUresult in the low 32 bits (CG_MISSING when the
   entry point could not be resolved). */
typedef unsigned long long cg_ret;
#define CG_MISSING 0x7fffffffu
#define CG_RET(idx, r) (((cg_ret)(unsigned)(idx) << 32) | (cg_ret)(unsigned)(r))

/* The helpers of the shims, generated and hand-written. They use what
   drivercalls_gen.h declares: the table cgx_fn, its CGX_<name> indexes,
   the cgx_<name>_t types and cgx_result. */

/* CGX_CALL calls entry point NAME with the arguments that follow and
   returns its cg_ret from the enclosing function if it fails. */
#define CGX_CALL(NAME, ...) do { \
	void *f_ = cgx_fn[CGX_##NAME]; \
	if (!f_) return CG_RET(CGX_##NAME, CG_MISSING); \
	cgx_result r_ = ((cgx_##NAME##_t)f_)(__VA_ARGS__); \
	if (r_) return CG_RET(CGX_##NAME, r_); \
} while (0)

/* CGX_CALLR is CGX_CALL that leaves the cg_ret in R instead of returning. */
#define CGX_CALLR(R, NAME, ...) do { \
	void *f_ = cgx_fn[CGX_##NAME]; \
	if (!f_) (R) = CG_RET(CGX_##NAME, CG_MISSING); \
	else { cgx_result r_ = ((cgx_##NAME##_t)f_)(__VA_ARGS__); (R) = r_ ? CG_RET(CGX_##NAME, r_) : 0; } \
} while (0)

/* CGX_ENTER makes ctx current on this thread if it is not already, or
   returns the failure. The previous context is not restored: every core
   call sets its own. */
#define CGX_ENTER(ctx) do { \
	uintptr_t cur_ = 0; \
	CGX_CALL(cuCtxGetCurrent, &cur_); \
	if (cur_ != (uintptr_t)(ctx)) CGX_CALL(cuCtxSetCurrent, (uintptr_t)(ctx)); \
} while (0)

#endif
