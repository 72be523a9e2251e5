// Package ctwin holds C loops that benchmarks compare themselves with in
// the same process (the math-library packages', core's peer copies): the
// same library entry points, called from C with no Go in between.
package ctwin

/*
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
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
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

var ctxSet, sgemm procs

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
