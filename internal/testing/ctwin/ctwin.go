// Package ctwin holds C loops that benchmarks compare themselves with in
// the same process (the math-library packages', core's peer copies): the
// same library entry points, called from C with no Go in between.
package ctwin

/*
#include <stddef.h>
#include <stdint.h>

typedef int (*ctx_set_t)(uintptr_t);
typedef int (*sgemm_t)(uintptr_t, int, int, int, int, int, const float *, uintptr_t, int,
	uintptr_t, int, const float *, uintptr_t, int);

// sgemm_calls makes ctx current, then calls cublasSgemm_v2 count times on
// an n×n×n problem (no transposes, alpha 1, beta 0), as a C program would
// once its context is current. It returns 0, or -status of the first
// failure.
static int sgemm_calls(uintptr_t ctxSet, uintptr_t sgemm, uintptr_t ctx, uintptr_t handle, int n,
		uintptr_t a, uintptr_t b, uintptr_t c, long long count) {
	int r = ((ctx_set_t)ctxSet)(ctx);
	if (r) return -r;
	float alpha = 1, beta = 0;
	for (long long i = 0; i < count; i++) {
		if ((r = ((sgemm_t)sgemm)(handle, 0, 0, n, n, n, &alpha, a, n, b, n, &beta, c, n))) return -r;
	}
	return 0;
}

typedef int (*lt_matmul_t)(uintptr_t, uintptr_t, const void *, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
	const void *, uintptr_t, uintptr_t, uintptr_t, uintptr_t, const void *, uintptr_t, size_t, uintptr_t);

// lt_calls makes ctx current, then calls cublasLtMatmul count times with
// float32 alpha 1 and beta 0, D = C.
static int lt_calls(uintptr_t ctxSet, uintptr_t fn, uintptr_t ctx, uintptr_t lt, uintptr_t desc,
		uintptr_t a, uintptr_t la, uintptr_t b, uintptr_t lb, uintptr_t c, uintptr_t lc,
		const void *algo, uintptr_t ws, size_t wsLen, uintptr_t stream, long long count) {
	int r = ((ctx_set_t)ctxSet)(ctx);
	if (r) return -r;
	float alpha = 1, beta = 0;
	for (long long i = 0; i < count; i++) {
		if ((r = ((lt_matmul_t)fn)(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, algo, ws, wsLen, stream))) return -r;
	}
	return 0;
}

static int empty_call(void) { return 0; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
)

// procs resolves entry points once: a benchmark calls its twin once per
// chunk of calls, and the lookups are no part of what it times.
type procs struct {
	once sync.Once
	fns  []C.uintptr_t
	err  error
}

func (p *procs) get(resolve func(name string) (unsafe.Pointer, error), names ...string) ([]C.uintptr_t, error) {
	p.once.Do(func() {
		for _, name := range names {
			fn, err := resolve(name)
			if err != nil {
				p.err = err
				return
			}
			p.fns = append(p.fns, C.uintptr_t(uintptr(fn)))
		}
	})
	return p.fns, p.err
}

var ctxSet, sgemm, ltMatmul procs

// Sgemm makes ctx current and calls cublasSgemm count times (no
// transposes, n×n×n, alpha 1, beta 0) on handle, whose device addresses
// a, b and c are the matrices, from one C loop: what a C program's loop
// of calls costs. The caller times it, and drains the stream between
// chunks of calls as it does for its own side.
func Sgemm(ctx driver.Context, handle cublas.Handle, n int, a, b, c driver.Deviceptr, count int) error {
	cs, err := ctxSet.get(driver.Proc, "cuCtxSetCurrent")
	if err != nil {
		return err
	}
	fs, err := sgemm.get(cublas.Proc, "cublasSgemm")
	if err != nil {
		return err
	}
	r := C.sgemm_calls(cs[0], fs[0], C.uintptr_t(ctx), C.uintptr_t(handle), C.int(n),
		C.uintptr_t(a), C.uintptr_t(b), C.uintptr_t(c), C.longlong(count))
	if r < 0 {
		return fmt.Errorf("ctwin: the C loop failed with status %d", -r)
	}
	return nil
}

// Empty is a cgo call to a C function that returns at once: what crossing
// from Go to C and back costs on this machine.
func Empty() { C.empty_call() }

// LtMatmul makes ctx current and calls cublasLtMatmul count times on lt,
// with float32 alpha 1 and beta 0 (host scalars), desc and the layouts
// la, lb and lc of a, b and c (D = C), algo, the workspace and stream:
// what a C program's loop of one planned matmul costs.
func LtMatmul(ctx driver.Context, lt, desc, a, la, b, lb, c, lc uintptr, algo unsafe.Pointer, ws uintptr, wsLen uint64, stream driver.Stream, count int) error {
	cs, err := ctxSet.get(driver.Proc, "cuCtxSetCurrent")
	if err != nil {
		return err
	}
	fs, err := ltMatmul.get(cublaslt.Proc, "cublasLtMatmul")
	if err != nil {
		return err
	}
	r := C.lt_calls(cs[0], fs[0], C.uintptr_t(ctx), C.uintptr_t(lt), C.uintptr_t(desc), C.uintptr_t(a), C.uintptr_t(la),
		C.uintptr_t(b), C.uintptr_t(lb), C.uintptr_t(c), C.uintptr_t(lc), algo, C.uintptr_t(ws), C.size_t(wsLen),
		C.uintptr_t(stream), C.longlong(count))
	if r < 0 {
		return fmt.Errorf("ctwin: the C loop failed with status %d", -r)
	}
	return nil
}
