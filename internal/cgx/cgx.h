/* The C side of the in-context calls that internal/bindgen generates: package
   core's driver calls (core/drivercalls_gen.h, from the //cudago: lines of
   core/calls.go) and the library calls of the packages over the libraries
   (<pkg>/calls_gen.h, from the //cudago: lines of <pkg>/calls.go). Each
   generated header holds its package's table of entry points (filled once
   from Go through package cgx), their C types and one shim per call, which
   makes the context current first: no CUDA header is needed to build. This
   file holds what the shims return and the helpers they, and core's
   hand-written ones of fastpath.h, share. It is included by relative path
   ("../internal/cgx/cgx.h"); the generated headers carry its hash, so that
   the Go build cache, which does not see headers of other folders,
   rebuilds their packages when it changes. */
#ifndef CUDAGO_CGX_H
#define CUDAGO_CGX_H
#include <stddef.h>
#include <stdint.h>

/* 0 on success, else the CGX_ index of the entry point that failed in the
   high 32 bits and its status (a CUresult, a cublasStatus_t, ...) in the
   low 32 bits (CG_MISSING when the entry point could not be resolved). */
typedef unsigned long long cg_ret;
#define CG_MISSING 0x7fffffffu
#define CG_RET(idx, r) (((cg_ret)(unsigned)(idx) << 32) | (cg_ret)(unsigned)(r))

/* The helpers of the shims, generated and hand-written. They use what the
   generated header declares: its table (CGX_TABLE names it: each package
   has its own, cgx_fn in core), its CGX_<name> indexes, the cgx_<name>_t
   types, cgx_result, and the entries cuCtxGetCurrent and cuCtxSetCurrent. */

/* CGX_CALL calls entry point NAME with the arguments that follow and
   returns its cg_ret from the enclosing function if it fails. */
#define CGX_CALL(NAME, ...) do { \
	void *f_ = CGX_TABLE[CGX_##NAME]; \
	if (!f_) return CG_RET(CGX_##NAME, CG_MISSING); \
	cgx_result r_ = ((cgx_##NAME##_t)f_)(__VA_ARGS__); \
	if (r_) return CG_RET(CGX_##NAME, r_); \
} while (0)

/* CGX_CALLR is CGX_CALL that leaves the cg_ret in R instead of returning. */
#define CGX_CALLR(R, NAME, ...) do { \
	void *f_ = CGX_TABLE[CGX_##NAME]; \
	if (!f_) (R) = CG_RET(CGX_##NAME, CG_MISSING); \
	else { cgx_result r_ = ((cgx_##NAME##_t)f_)(__VA_ARGS__); (R) = r_ ? CG_RET(CGX_##NAME, r_) : 0; } \
} while (0)

/* CGX_ENTER makes ctx current on this thread if it is not already, or
   returns the failure. The previous context is not restored: every call
   sets its own. */
#define CGX_ENTER(ctx) do { \
	uintptr_t cur_ = 0; \
	CGX_CALL(cuCtxGetCurrent, &cur_); \
	if (cur_ != (uintptr_t)(ctx)) CGX_CALL(cuCtxSetCurrent, (uintptr_t)(ctx)); \
} while (0)

/* CGX_ENTER_LIB is the library calls' CGX_ENTER: a ctx of 0 leaves the
   thread's current context as it is, and the library runs in it, as it
   does when called through its bindings. */
#define CGX_ENTER_LIB(ctx) do { \
	if (ctx) CGX_ENTER(ctx); \
} while (0)

#endif
