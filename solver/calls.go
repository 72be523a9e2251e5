// TEMPORARY: replaced by internal/bindgen's generated in-context calls (same names and signatures).

package solver

import (
	"runtime"

	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/bindings/driver"
)

func cusolverDnCreate(ctx driver.Context, handle *cusolver.DnHandle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnCreate(handle)
}

func cusolverDnDestroy(ctx driver.Context, handle cusolver.DnHandle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDestroy(handle)
}

func cusolverDnSetStream(ctx driver.Context, handle cusolver.DnHandle, streamId cusolver.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSetStream(handle, streamId)
}

func cusolverDnSgetrfBufferSize(ctx driver.Context, handle cusolver.DnHandle, m int32, n int32, a *float32, lda int32, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSgetrfBufferSize(handle, m, n, a, lda, lwork)
}

func cusolverDnDgetrfBufferSize(ctx driver.Context, handle cusolver.DnHandle, m int32, n int32, a *float64, lda int32, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDgetrfBufferSize(handle, m, n, a, lda, lwork)
}

func cusolverDnSgetrf(ctx driver.Context, handle cusolver.DnHandle, m int32, n int32, a *float32, lda int32, workspace *float32, devIpiv *int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSgetrf(handle, m, n, a, lda, workspace, devIpiv, devInfo)
}

func cusolverDnDgetrf(ctx driver.Context, handle cusolver.DnHandle, m int32, n int32, a *float64, lda int32, workspace *float64, devIpiv *int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDgetrf(handle, m, n, a, lda, workspace, devIpiv, devInfo)
}

func cusolverDnSgetrs(ctx driver.Context, handle cusolver.DnHandle, trans cusolver.Operation, n int32, nrhs int32, a *float32, lda int32, devIpiv *int32, b *float32, ldb int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSgetrs(handle, trans, n, nrhs, a, lda, devIpiv, b, ldb, devInfo)
}

func cusolverDnDgetrs(ctx driver.Context, handle cusolver.DnHandle, trans cusolver.Operation, n int32, nrhs int32, a *float64, lda int32, devIpiv *int32, b *float64, ldb int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDgetrs(handle, trans, n, nrhs, a, lda, devIpiv, b, ldb, devInfo)
}

func cusolverDnSpotrfBufferSize(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, a *float32, lda int32, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSpotrfBufferSize(handle, uplo, n, a, lda, lwork)
}

func cusolverDnDpotrfBufferSize(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, a *float64, lda int32, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDpotrfBufferSize(handle, uplo, n, a, lda, lwork)
}

func cusolverDnSpotrf(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, a *float32, lda int32, workspace *float32, lwork int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSpotrf(handle, uplo, n, a, lda, workspace, lwork, devInfo)
}

func cusolverDnDpotrf(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, a *float64, lda int32, workspace *float64, lwork int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDpotrf(handle, uplo, n, a, lda, workspace, lwork, devInfo)
}

func cusolverDnSpotrs(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, nrhs int32, a *float32, lda int32, b *float32, ldb int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSpotrs(handle, uplo, n, nrhs, a, lda, b, ldb, devInfo)
}

func cusolverDnDpotrs(ctx driver.Context, handle cusolver.DnHandle, uplo cusolver.FillMode, n int32, nrhs int32, a *float64, lda int32, b *float64, ldb int32, devInfo *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDpotrs(handle, uplo, n, nrhs, a, lda, b, ldb, devInfo)
}

func cusolverDnSsyevdBufferSize(ctx driver.Context, handle cusolver.DnHandle, jobz cusolver.EigMode, uplo cusolver.FillMode, n int32, a *float32, lda int32, w *float32, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSsyevdBufferSize(handle, jobz, uplo, n, a, lda, w, lwork)
}

func cusolverDnDsyevdBufferSize(ctx driver.Context, handle cusolver.DnHandle, jobz cusolver.EigMode, uplo cusolver.FillMode, n int32, a *float64, lda int32, w *float64, lwork *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDsyevdBufferSize(handle, jobz, uplo, n, a, lda, w, lwork)
}

func cusolverDnSsyevd(ctx driver.Context, handle cusolver.DnHandle, jobz cusolver.EigMode, uplo cusolver.FillMode, n int32, a *float32, lda int32, w *float32, work *float32, lwork int32, info *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnSsyevd(handle, jobz, uplo, n, a, lda, w, work, lwork, info)
}

func cusolverDnDsyevd(ctx driver.Context, handle cusolver.DnHandle, jobz cusolver.EigMode, uplo cusolver.FillMode, n int32, a *float64, lda int32, w *float64, work *float64, lwork int32, info *int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusolver.DnDsyevd(handle, jobz, uplo, n, a, lda, w, work, lwork, info)
}
