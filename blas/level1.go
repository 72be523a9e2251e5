package blas

import "github.com/cudago/cudago/core"

// Axpy computes y = alpha·x + y for n elements of x and y, incx and incy
// elements apart (positive), as cuBLAS does (cublas<S|D|C|Z>axpy).
func Axpy[T Scalar](h *Handle, n int, alpha T, x *core.Buffer, incx int, y *core.Buffer, incy int) error {
	const fn = "Axpy"
	e := elemOf[T]()
	if err := checkLevel1(fn, e, h, n, x, incx, y, incy, true); err != nil {
		return err
	}
	ops := h.operands(fn)
	defer ops.Release()
	px, err := add(&ops, "x", -1, x, e)
	if err != nil {
		return err
	}
	py, err := add(&ops, "y", -1, y, e)
	if err != nil {
		return err
	}
	ctx, _, err := h.lib().Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	N, ix, iy := int32(n), int32(incx), int32(incy)
	slot := getScalars(alpha, alpha)
	defer scalarPool.Put(slot)
	al, _ := slot.ptrs()
	switch e.kind {
	case 's':
		return cublasSaxpy(ctx, h.st.Handle().blas, N, (*float32)(al), (*float32)(px), ix, (*float32)(py), iy)
	case 'd':
		return cublasDaxpy(ctx, h.st.Handle().blas, N, (*float64)(al), (*float64)(px), ix, (*float64)(py), iy)
	case 'c':
		return cublasCaxpy(ctx, h.st.Handle().blas, N, (*complex64)(al), (*complex64)(px), ix, (*complex64)(py), iy)
	default:
		return cublasZaxpy(ctx, h.st.Handle().blas, N, (*complex128)(al), (*complex128)(px), ix, (*complex128)(py), iy)
	}
}

// Dot returns the sum of x_i·y_i over n elements of x and y (for complex
// types without conjugating: cublas<C|Z>dotu; see Dotc). It waits for the
// result, and so for the work queued on h's stream before it.
func Dot[T Scalar](h *Handle, n int, x *core.Buffer, incx int, y *core.Buffer, incy int) (T, error) {
	return dot[T]("Dot", false, h, n, x, incx, y, incy)
}

// Dotc returns the sum of conj(x_i)·y_i over n elements of x and y
// (cublas<C|Z>dotc); for real types it is Dot. It waits for the result.
func Dotc[T Scalar](h *Handle, n int, x *core.Buffer, incx int, y *core.Buffer, incy int) (T, error) {
	return dot[T]("Dotc", true, h, n, x, incx, y, incy)
}

func dot[T Scalar](fn string, conj bool, h *Handle, n int, x *core.Buffer, incx int, y *core.Buffer, incy int) (T, error) {
	var r T
	e := elemOf[T]()
	if err := checkLevel1(fn, e, h, n, x, incx, y, incy, true); err != nil {
		return r, err
	}
	ops := h.operands(fn)
	defer ops.Release()
	px, err := add(&ops, "x", -1, x, e)
	if err != nil {
		return r, err
	}
	py, err := add(&ops, "y", -1, y, e)
	if err != nil {
		return r, err
	}
	ctx, _, err := h.lib().Begin()
	if err != nil {
		return r, err
	}
	defer h.st.End()
	N, ix, iy := int32(n), int32(incx), int32(incy)
	// Host pointer mode: cuBLAS writes the result there before returning.
	slot := scalarPool.Get().(*scalars)
	defer scalarPool.Put(slot)
	*slot = scalars{} // the result of n = 0, whether cuBLAS writes it or not
	res, _ := slot.ptrs()
	switch e.kind {
	case 's':
		err = cublasSdot(ctx, h.st.Handle().blas, N, (*float32)(px), ix, (*float32)(py), iy, (*float32)(res))
	case 'd':
		err = cublasDdot(ctx, h.st.Handle().blas, N, (*float64)(px), ix, (*float64)(py), iy, (*float64)(res))
	case 'c':
		if conj {
			err = cublasCdotc(ctx, h.st.Handle().blas, N, (*complex64)(px), ix, (*complex64)(py), iy, (*complex64)(res))
		} else {
			err = cublasCdotu(ctx, h.st.Handle().blas, N, (*complex64)(px), ix, (*complex64)(py), iy, (*complex64)(res))
		}
	default:
		if conj {
			err = cublasZdotc(ctx, h.st.Handle().blas, N, (*complex128)(px), ix, (*complex128)(py), iy, (*complex128)(res))
		} else {
			err = cublasZdotu(ctx, h.st.Handle().blas, N, (*complex128)(px), ix, (*complex128)(py), iy, (*complex128)(res))
		}
	}
	return *(*T)(res), err
}

// Nrm2 returns the Euclidean norm of n elements of x, incx apart
// (cublas<S|D|Sc|Dz>nrm2): the square root of the sum of |x_i|², computed
// without overflow. A float32 or complex64 norm is returned as the
// float64 of its float32 value. It waits for the result.
func Nrm2[T Scalar](h *Handle, n int, x *core.Buffer, incx int) (float64, error) {
	const fn = "Nrm2"
	e := elemOf[T]()
	if err := checkLevel1(fn, e, h, n, x, incx, nil, 0, false); err != nil {
		return 0, err
	}
	ops := h.operands(fn)
	defer ops.Release()
	px, err := add(&ops, "x", -1, x, e)
	if err != nil {
		return 0, err
	}
	ctx, _, err := h.lib().Begin()
	if err != nil {
		return 0, err
	}
	defer h.st.End()
	N, ix := int32(n), int32(incx)
	slot := scalarPool.Get().(*scalars)
	defer scalarPool.Put(slot)
	*slot = scalars{} // the result of n = 0, whether cuBLAS writes it or not
	res, _ := slot.ptrs()
	r32, r64 := (*float32)(res), (*float64)(res)
	switch e.kind {
	case 's':
		err = cublasSnrm2(ctx, h.st.Handle().blas, N, (*float32)(px), ix, r32)
	case 'c':
		err = cublasScnrm2(ctx, h.st.Handle().blas, N, (*complex64)(px), ix, r32)
	case 'd':
		err = cublasDnrm2(ctx, h.st.Handle().blas, N, (*float64)(px), ix, r64)
	default:
		err = cublasDznrm2(ctx, h.st.Handle().blas, N, (*complex128)(px), ix, r64)
	}
	if e.kind == 's' || e.kind == 'c' {
		return float64(*r32), err
	}
	return *r64, err
}
