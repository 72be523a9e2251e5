// TEMPORARY: replaced by internal/bindgen's generated in-context calls (same names and signatures).

package sparse

import (
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
)

func cusparseCreate(ctx driver.Context, handle *cusparse.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.Create(handle)
}

func cusparseDestroy(ctx driver.Context, handle cusparse.Handle) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.Destroy(handle)
}

func cusparseSetStream(ctx driver.Context, handle cusparse.Handle, streamId cusparse.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.SetStream(handle, streamId)
}

func cusparseCreateCsr(ctx driver.Context, spMatDescr *cusparse.SpMatDescr, rows int64, cols int64, nnz int64, csrRowOffsets unsafe.Pointer, csrColInd unsafe.Pointer, csrValues unsafe.Pointer, csrRowOffsetsType cusparse.IndexType, csrColIndType cusparse.IndexType, idxBase cusparse.IndexBase, valueType cusparse.DataType) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.CreateCsr(spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues, csrRowOffsetsType, csrColIndType, idxBase, valueType)
}

func cusparseCreateCoo(ctx driver.Context, spMatDescr *cusparse.SpMatDescr, rows int64, cols int64, nnz int64, cooRowInd unsafe.Pointer, cooColInd unsafe.Pointer, cooValues unsafe.Pointer, cooIdxType cusparse.IndexType, idxBase cusparse.IndexBase, valueType cusparse.DataType) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.CreateCoo(spMatDescr, rows, cols, nnz, cooRowInd, cooColInd, cooValues, cooIdxType, idxBase, valueType)
}

func cusparseDestroySpMat(ctx driver.Context, spMatDescr cusparse.ConstSpMatDescr) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.DestroySpMat(spMatDescr)
}

func cusparseCreateDnVec(ctx driver.Context, dnVecDescr *cusparse.DnVecDescr, size int64, values unsafe.Pointer, valueType cusparse.DataType) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.CreateDnVec(dnVecDescr, size, values, valueType)
}

func cusparseDestroyDnVec(ctx driver.Context, dnVecDescr cusparse.ConstDnVecDescr) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.DestroyDnVec(dnVecDescr)
}

func cusparseCreateDnMat(ctx driver.Context, dnMatDescr *cusparse.DnMatDescr, rows int64, cols int64, ld int64, values unsafe.Pointer, valueType cusparse.DataType, order cusparse.Order) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.CreateDnMat(dnMatDescr, rows, cols, ld, values, valueType, order)
}

func cusparseDestroyDnMat(ctx driver.Context, dnMatDescr cusparse.ConstDnMatDescr) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.DestroyDnMat(dnMatDescr)
}

func cusparseSpMVBufferSize(ctx driver.Context, handle cusparse.Handle, opA cusparse.Operation, alpha unsafe.Pointer, matA cusparse.ConstSpMatDescr, vecX cusparse.ConstDnVecDescr, beta unsafe.Pointer, vecY cusparse.DnVecDescr, computeType cusparse.DataType, alg cusparse.SpMVAlg) (bufferSize uint64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return 0, err
	}
	return cusparse.SpMVBufferSize(handle, opA, alpha, matA, vecX, beta, vecY, computeType, alg)
}

func cusparseSpMV(ctx driver.Context, handle cusparse.Handle, opA cusparse.Operation, alpha unsafe.Pointer, matA cusparse.ConstSpMatDescr, vecX cusparse.ConstDnVecDescr, beta unsafe.Pointer, vecY cusparse.DnVecDescr, computeType cusparse.DataType, alg cusparse.SpMVAlg, externalBuffer unsafe.Pointer) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.SpMV(handle, opA, alpha, matA, vecX, beta, vecY, computeType, alg, externalBuffer)
}

func cusparseSpMMBufferSize(ctx driver.Context, handle cusparse.Handle, opA cusparse.Operation, opB cusparse.Operation, alpha unsafe.Pointer, matA cusparse.ConstSpMatDescr, matB cusparse.ConstDnMatDescr, beta unsafe.Pointer, matC cusparse.DnMatDescr, computeType cusparse.DataType, alg cusparse.SpMMAlg) (bufferSize uint64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return 0, err
	}
	return cusparse.SpMMBufferSize(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg)
}

func cusparseSpMM(ctx driver.Context, handle cusparse.Handle, opA cusparse.Operation, opB cusparse.Operation, alpha unsafe.Pointer, matA cusparse.ConstSpMatDescr, matB cusparse.ConstDnMatDescr, beta unsafe.Pointer, matC cusparse.DnMatDescr, computeType cusparse.DataType, alg cusparse.SpMMAlg, externalBuffer unsafe.Pointer) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return cusparse.SpMM(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer)
}
