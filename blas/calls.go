// TEMPORARY: replaced by internal/bindgen's generated in-context calls (same names and signatures).

package blas

import (
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
)

// Every call into bindings/cublas and bindings/cublaslt is one of these:
// each makes ctx current on a locked OS thread for the call, as the
// libraries launch in the calling thread's current context.

func cublasCreate(ctx driver.Context, handle *cublas.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Create(handle)
}

func cublasDestroy(ctx driver.Context, handle cublas.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Destroy(handle)
}

func cublasSetStream(ctx driver.Context, handle cublas.Handle, streamId cublas.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SetStream(handle, streamId)
}

func cublasSetWorkspace(ctx driver.Context, handle cublas.Handle, workspace unsafe.Pointer, workspaceSizeInBytes uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SetWorkspace(handle, workspace, workspaceSizeInBytes)
}

func cublasSetPointerMode(ctx driver.Context, handle cublas.Handle, mode cublas.PointerMode) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SetPointerMode(handle, mode)
}

func cublasSetMathMode(ctx driver.Context, handle cublas.Handle, mode cublas.Math) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SetMathMode(handle, mode)
}

func cublasSgemm(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float32, a *float32, lda int32, b *float32, ldb int32, beta *float32, c *float32, ldc int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Sgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func cublasDgemm(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float64, a *float64, lda int32, b *float64, ldb int32, beta *float64, c *float64, ldc int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Dgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func cublasCgemm(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex64, a *complex64, lda int32, b *complex64, ldb int32, beta *complex64, c *complex64, ldc int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Cgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func cublasZgemm(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex128, a *complex128, lda int32, b *complex128, ldb int32, beta *complex128, c *complex128, ldc int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Zgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func cublasSgemmBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float32, aarray **float32, lda int32, barray **float32, ldb int32, beta *float32, carray **float32, ldc int32, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SgemmBatched(handle, transa, transb, m, n, k, alpha, aarray, lda, barray, ldb, beta, carray, ldc, batchCount)
}

func cublasDgemmBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float64, aarray **float64, lda int32, barray **float64, ldb int32, beta *float64, carray **float64, ldc int32, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.DgemmBatched(handle, transa, transb, m, n, k, alpha, aarray, lda, barray, ldb, beta, carray, ldc, batchCount)
}

func cublasCgemmBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex64, aarray **complex64, lda int32, barray **complex64, ldb int32, beta *complex64, carray **complex64, ldc int32, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.CgemmBatched(handle, transa, transb, m, n, k, alpha, aarray, lda, barray, ldb, beta, carray, ldc, batchCount)
}

func cublasZgemmBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex128, aarray **complex128, lda int32, barray **complex128, ldb int32, beta *complex128, carray **complex128, ldc int32, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.ZgemmBatched(handle, transa, transb, m, n, k, alpha, aarray, lda, barray, ldb, beta, carray, ldc, batchCount)
}

func cublasSgemmStridedBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float32, a *float32, lda int32, strideA int64, b *float32, ldb int32, strideB int64, beta *float32, c *float32, ldc int32, strideC int64, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.SgemmStridedBatched(handle, transa, transb, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batchCount)
}

func cublasDgemmStridedBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *float64, a *float64, lda int32, strideA int64, b *float64, ldb int32, strideB int64, beta *float64, c *float64, ldc int32, strideC int64, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.DgemmStridedBatched(handle, transa, transb, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batchCount)
}

func cublasCgemmStridedBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex64, a *complex64, lda int32, strideA int64, b *complex64, ldb int32, strideB int64, beta *complex64, c *complex64, ldc int32, strideC int64, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.CgemmStridedBatched(handle, transa, transb, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batchCount)
}

func cublasZgemmStridedBatched(ctx driver.Context, handle cublas.Handle, transa cublas.Operation, transb cublas.Operation, m int32, n int32, k int32, alpha *complex128, a *complex128, lda int32, strideA int64, b *complex128, ldb int32, strideB int64, beta *complex128, c *complex128, ldc int32, strideC int64, batchCount int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.ZgemmStridedBatched(handle, transa, transb, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batchCount)
}

func cublasSgemv(ctx driver.Context, handle cublas.Handle, trans cublas.Operation, m int32, n int32, alpha *float32, a *float32, lda int32, x *float32, incx int32, beta *float32, y *float32, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Sgemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
}

func cublasDgemv(ctx driver.Context, handle cublas.Handle, trans cublas.Operation, m int32, n int32, alpha *float64, a *float64, lda int32, x *float64, incx int32, beta *float64, y *float64, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Dgemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
}

func cublasCgemv(ctx driver.Context, handle cublas.Handle, trans cublas.Operation, m int32, n int32, alpha *complex64, a *complex64, lda int32, x *complex64, incx int32, beta *complex64, y *complex64, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Cgemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
}

func cublasZgemv(ctx driver.Context, handle cublas.Handle, trans cublas.Operation, m int32, n int32, alpha *complex128, a *complex128, lda int32, x *complex128, incx int32, beta *complex128, y *complex128, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Zgemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
}

func cublasSaxpy(ctx driver.Context, handle cublas.Handle, n int32, alpha *float32, x *float32, incx int32, y *float32, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Saxpy(handle, n, alpha, x, incx, y, incy)
}

func cublasDaxpy(ctx driver.Context, handle cublas.Handle, n int32, alpha *float64, x *float64, incx int32, y *float64, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Daxpy(handle, n, alpha, x, incx, y, incy)
}

func cublasCaxpy(ctx driver.Context, handle cublas.Handle, n int32, alpha *complex64, x *complex64, incx int32, y *complex64, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Caxpy(handle, n, alpha, x, incx, y, incy)
}

func cublasZaxpy(ctx driver.Context, handle cublas.Handle, n int32, alpha *complex128, x *complex128, incx int32, y *complex128, incy int32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Zaxpy(handle, n, alpha, x, incx, y, incy)
}

func cublasSdot(ctx driver.Context, handle cublas.Handle, n int32, x *float32, incx int32, y *float32, incy int32, result *float32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Sdot(handle, n, x, incx, y, incy, result)
}

func cublasDdot(ctx driver.Context, handle cublas.Handle, n int32, x *float64, incx int32, y *float64, incy int32, result *float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Ddot(handle, n, x, incx, y, incy, result)
}

func cublasCdotu(ctx driver.Context, handle cublas.Handle, n int32, x *complex64, incx int32, y *complex64, incy int32, result *complex64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Cdotu(handle, n, x, incx, y, incy, result)
}

func cublasCdotc(ctx driver.Context, handle cublas.Handle, n int32, x *complex64, incx int32, y *complex64, incy int32, result *complex64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Cdotc(handle, n, x, incx, y, incy, result)
}

func cublasZdotu(ctx driver.Context, handle cublas.Handle, n int32, x *complex128, incx int32, y *complex128, incy int32, result *complex128) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Zdotu(handle, n, x, incx, y, incy, result)
}

func cublasZdotc(ctx driver.Context, handle cublas.Handle, n int32, x *complex128, incx int32, y *complex128, incy int32, result *complex128) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Zdotc(handle, n, x, incx, y, incy, result)
}

func cublasSnrm2(ctx driver.Context, handle cublas.Handle, n int32, x *float32, incx int32, result *float32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Snrm2(handle, n, x, incx, result)
}

func cublasDnrm2(ctx driver.Context, handle cublas.Handle, n int32, x *float64, incx int32, result *float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Dnrm2(handle, n, x, incx, result)
}

func cublasScnrm2(ctx driver.Context, handle cublas.Handle, n int32, x *complex64, incx int32, result *float32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Scnrm2(handle, n, x, incx, result)
}

func cublasDznrm2(ctx driver.Context, handle cublas.Handle, n int32, x *complex128, incx int32, result *float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublas.Dznrm2(handle, n, x, incx, result)
}

func cublasltCreate(ctx driver.Context, lightHandle *cublaslt.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.Create(lightHandle)
}

func cublasltDestroy(ctx driver.Context, lightHandle cublaslt.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.Destroy(lightHandle)
}

func cublasltMatmul(ctx driver.Context, lightHandle cublaslt.Handle, computeDesc cublaslt.MatmulDesc, alpha unsafe.Pointer, a unsafe.Pointer, adesc cublaslt.MatrixLayout, b unsafe.Pointer, bdesc cublaslt.MatrixLayout, beta unsafe.Pointer, c unsafe.Pointer, cdesc cublaslt.MatrixLayout, d unsafe.Pointer, ddesc cublaslt.MatrixLayout, algo *cublaslt.MatmulAlgo, workspace unsafe.Pointer, workspaceSizeInBytes uint64, stream cublaslt.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.Matmul(lightHandle, computeDesc, alpha, a, adesc, b, bdesc, beta, c, cdesc, d, ddesc, algo, workspace, workspaceSizeInBytes, stream)
}

func cublasltMatmulDescCreate(ctx driver.Context, matmulDesc *cublaslt.MatmulDesc, computeType cublaslt.ComputeType, scaleType cublaslt.DataType) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulDescCreate(matmulDesc, computeType, scaleType)
}

func cublasltMatmulDescDestroy(ctx driver.Context, matmulDesc cublaslt.MatmulDesc) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulDescDestroy(matmulDesc)
}

func cublasltMatmulDescSetAttribute(ctx driver.Context, matmulDesc cublaslt.MatmulDesc, attr cublaslt.MatmulDescAttributes, buf unsafe.Pointer, sizeInBytes uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulDescSetAttribute(matmulDesc, attr, buf, sizeInBytes)
}

func cublasltMatrixLayoutCreate(ctx driver.Context, matLayout *cublaslt.MatrixLayout, type_ cublaslt.DataType, rows uint64, cols uint64, ld int64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatrixLayoutCreate(matLayout, type_, rows, cols, ld)
}

func cublasltMatrixLayoutDestroy(ctx driver.Context, matLayout cublaslt.MatrixLayout) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatrixLayoutDestroy(matLayout)
}

func cublasltMatmulPreferenceCreate(ctx driver.Context, pref *cublaslt.MatmulPreference) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulPreferenceCreate(pref)
}

func cublasltMatmulPreferenceDestroy(ctx driver.Context, pref cublaslt.MatmulPreference) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulPreferenceDestroy(pref)
}

func cublasltMatmulPreferenceSetAttribute(ctx driver.Context, pref cublaslt.MatmulPreference, attr cublaslt.MatmulPreferenceAttributes, buf unsafe.Pointer, sizeInBytes uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulPreferenceSetAttribute(pref, attr, buf, sizeInBytes)
}

func cublasltMatmulAlgoGetHeuristic(ctx driver.Context, lightHandle cublaslt.Handle, operationDesc cublaslt.MatmulDesc, adesc cublaslt.MatrixLayout, bdesc cublaslt.MatrixLayout, cdesc cublaslt.MatrixLayout, ddesc cublaslt.MatrixLayout, preference cublaslt.MatmulPreference, requestedAlgoCount int32, heuristicResultsArray *cublaslt.MatmulHeuristicResult) (returnAlgoCount int32, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = driver.CtxSetCurrent(ctx); err != nil {
		return
	}
	return cublaslt.MatmulAlgoGetHeuristic(lightHandle, operationDesc, adesc, bdesc, cdesc, ddesc, preference, requestedAlgoCount, heuristicResultsArray)
}
