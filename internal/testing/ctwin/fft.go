package ctwin

/*
#include <stdint.h>

typedef int (*fft_ctx_set_t)(uintptr_t);
typedef int (*exec_c2c_t)(int, uintptr_t, uintptr_t, int);
typedef int (*exec_r2c_t)(int, uintptr_t, uintptr_t);

// fft_exec makes ctx current, then queues count transforms of plan from
// in to out: cufftExecC2C with direction dir when c2c, else cufftExecR2C.
// It returns 0, or -status of the first failure.
static int fft_exec(uintptr_t ctxSet, uintptr_t exec, int c2c, uintptr_t ctx, int plan,
		uintptr_t in, uintptr_t out, int dir, long long count) {
	int r = ((fft_ctx_set_t)ctxSet)(ctx);
	if (r) return -r;
	for (long long i = 0; i < count; i++) {
		r = c2c ? ((exec_c2c_t)exec)(plan, in, out, dir) : ((exec_r2c_t)exec)(plan, in, out);
		if (r) return -r;
	}
	return 0;
}
*/
import "C"

import (
	"fmt"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
)

var execC2C, execR2C procs

// FFTExec makes ctx current and queues count transforms of plan, a
// single-precision C2C plan (cufftExecC2C in direction dir) or an R2C one
// (cufftExecR2C, dir ignored), from device address in to out, from one C
// loop. The caller times it on the GPU, with events around it on the
// plan's stream.
func FFTExec(ctx driver.Context, plan cufft.Handle, typ cufft.Type, in, out driver.Deviceptr, dir int32, count int) error {
	cs, err := ctxSet.get(driver.Proc, "cuCtxSetCurrent")
	if err != nil {
		return err
	}
	var fs []C.uintptr_t
	switch typ {
	case cufft.C2C:
		fs, err = execC2C.get(cufft.Proc, "cufftExecC2C")
	case cufft.R2C:
		fs, err = execR2C.get(cufft.Proc, "cufftExecR2C")
	default:
		return fmt.Errorf("ctwin: FFTExec of a %v plan: only C2C and R2C", typ)
	}
	if err != nil {
		return err
	}
	c2c := C.int(0)
	if typ == cufft.C2C {
		c2c = 1
	}
	r := C.fft_exec(cs[0], fs[0], c2c, C.uintptr_t(ctx), C.int(plan), C.uintptr_t(in), C.uintptr_t(out), C.int(dir), C.longlong(count))
	if r < 0 {
		return fmt.Errorf("ctwin: the C loop failed with status %d", -r)
	}
	return nil
}
