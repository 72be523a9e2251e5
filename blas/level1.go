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
	return h.do(fn, e, "xy", [3]*core.Buffer{x, y}, func(c call) error {
		N, ix, iy := int32(n), int32(incx), int32(incy)
		px, py := c.p[0], c.p[1]
		slot := getScalars(alpha, alpha)
		defer scalarPool.Put(slot)
		al, _ := slot.ptrs()
		switch e.kind {
		case 's':
			return cublasSaxpy(c.ctx, c.lib.blas, N, (*float32)(al), (*float32)(px), ix, (*float32)(py), iy)
		case 'd':
			return cublasDaxpy(c.ctx, c.lib.blas, N, (*float64)(al), (*float64)(px), ix, (*float64)(py), iy)
		case 'c':
			return cublasCaxpy(c.ctx, c.lib.blas, N, (*complex64)(al), (*complex64)(px), ix, (*complex64)(py), iy)
		default:
			return cublasZaxpy(c.ctx, c.lib.blas, N, (*complex128)(al), (*complex128)(px), ix, (*complex128)(py), iy)
		}
	})
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
	err := h.do(fn, e, "xy", [3]*core.Buffer{x, y}, func(c call) (err error) {
		N, ix, iy := int32(n), int32(incx), int32(incy)
		px, py := c.p[0], c.p[1]
		// Host pointer mode: cuBLAS writes the result there before returning.
		slot := scalarPool.Get().(*scalars)
		defer scalarPool.Put(slot)
		*slot = scalars{} // the result of n = 0, whether cuBLAS writes it or not
		res, _ := slot.ptrs()
		switch e.kind {
		case 's':
			err = cublasSdot(c.ctx, c.lib.blas, N, (*float32)(px), ix, (*float32)(py), iy, (*float32)(res))
		case 'd':
			err = cublasDdot(c.ctx, c.lib.blas, N, (*float64)(px), ix, (*float64)(py), iy, (*float64)(res))
		case 'c':
			if conj {
				err = cublasCdotc(c.ctx, c.lib.blas, N, (*complex64)(px), ix, (*complex64)(py), iy, (*complex64)(res))
			} else {
				err = cublasCdotu(c.ctx, c.lib.blas, N, (*complex64)(px), ix, (*complex64)(py), iy, (*complex64)(res))
			}
		default:
			if conj {
				err = cublasZdotc(c.ctx, c.lib.blas, N, (*complex128)(px), ix, (*complex128)(py), iy, (*complex128)(res))
			} else {
				err = cublasZdotu(c.ctx, c.lib.blas, N, (*complex128)(px), ix, (*complex128)(py), iy, (*complex128)(res))
			}
		}
		r = *(*T)(res)
		return err
	})
	return r, err
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
	var r float64
	err := h.do(fn, e, "x", [3]*core.Buffer{x}, func(c call) (err error) {
		N, ix, px := int32(n), int32(incx), c.p[0]
		slot := scalarPool.Get().(*scalars)
		defer scalarPool.Put(slot)
		*slot = scalars{} // the result of n = 0, whether cuBLAS writes it or not
		res, _ := slot.ptrs()
		r32, r64 := (*float32)(res), (*float64)(res)
		switch e.kind {
		case 's':
			err = cublasSnrm2(c.ctx, c.lib.blas, N, (*float32)(px), ix, r32)
		case 'c':
			err = cublasScnrm2(c.ctx, c.lib.blas, N, (*complex64)(px), ix, r32)
		case 'd':
			err = cublasDnrm2(c.ctx, c.lib.blas, N, (*float64)(px), ix, r64)
		default:
			err = cublasDznrm2(c.ctx, c.lib.blas, N, (*complex128)(px), ix, r64)
		}
		if e.kind == 's' || e.kind == 'c' {
			r = float64(*r32)
		} else {
			r = *r64
		}
		return err
	})
	return r, err
}
