// TEMPORARY: replaced by internal/bindgen's generated in-context calls (same names and signatures).

package fft

import (
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
)

func cufftCreate(ctx driver.Context, handle *cufft.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.Create(handle)
}

func cufftDestroy(ctx driver.Context, plan cufft.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.Destroy(plan)
}

func cufftSetAutoAllocation(ctx driver.Context, plan cufft.Handle, autoAllocate int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.SetAutoAllocation(plan, autoAllocate)
}

func cufftMakePlanMany64(ctx driver.Context, plan cufft.Handle, rank int32, n *int64, inembed *int64, istride int64, idist int64, onembed *int64, ostride int64, odist int64, type_ cufft.Type, batch int64) (workSize uint64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return 0, err
	}
	return cufft.MakePlanMany64(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type_, batch)
}

func cufftSetWorkArea(ctx driver.Context, plan cufft.Handle, workArea unsafe.Pointer) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.SetWorkArea(plan, workArea)
}

func cufftSetStream(ctx driver.Context, plan cufft.Handle, stream cufft.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.SetStream(plan, stream)
}

func cufftExecC2C(ctx driver.Context, plan cufft.Handle, idata *cufft.Complex, odata *cufft.Complex, direction int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecC2C(plan, idata, odata, direction)
}

func cufftExecR2C(ctx driver.Context, plan cufft.Handle, idata *cufft.Real, odata *cufft.Complex) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecR2C(plan, idata, odata)
}

func cufftExecC2R(ctx driver.Context, plan cufft.Handle, idata *cufft.Complex, odata *cufft.Real) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecC2R(plan, idata, odata)
}

func cufftExecZ2Z(ctx driver.Context, plan cufft.Handle, idata *cufft.DoubleComplex, odata *cufft.DoubleComplex, direction int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecZ2Z(plan, idata, odata, direction)
}

func cufftExecD2Z(ctx driver.Context, plan cufft.Handle, idata *cufft.DoubleReal, odata *cufft.DoubleComplex) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecD2Z(plan, idata, odata)
}

func cufftExecZ2D(ctx driver.Context, plan cufft.Handle, idata *cufft.DoubleComplex, odata *cufft.DoubleReal) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cufft.ExecZ2D(plan, idata, odata)
}
