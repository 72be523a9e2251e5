// Package fft runs fast Fourier transforms on the GPU with cuFFT: 1-, 2-
// and 3-dimensional, batched, complex to complex (C2C), real to complex
// (R2C) and complex to real (C2R), in single (complex64, float32) and
// double (complex128, float64) precision, in place or out of place.
//
// A Desc says what to transform; a Plan is cuFFT's plan for it, bound to
// one core.Stream, on which it queues every transform; a Cache makes plans
// for a stream and hands out the same Plan for the same Desc, so that a
// shape is planned once:
//
//	c, _ := fft.New(stream, nil)                     // the Cache of stream's plans
//	defer c.Close()
//	p, _ := c.Plan(fft.Desc{Shape: []int{1 << 20}})  // C2C, Single, one transform
//	err := p.Forward(in, out)                        // queued on stream
//
// Data lives in core.Buffers, laid out row-major (the last dimension
// contiguous), transforms one after another for a batch. A Buffer has no
// element type: the plan's Desc fixes it, and every transform checks the
// Buffers' sizes against the shape (an R2C output and a C2R input hold
// Shape[last]/2+1 complex values along the last dimension), their
// alignment and their placement before queuing anything, so that cuFFT
// never reads or writes outside them; a bad argument is a *lib.ArgError.
//
// Like cuFFT and FFTW, the transforms are unnormalized: Inverse of Forward
// is N·x, N the product of Shape. InverseNormalized divides by N in the
// same stream (an extra pass over the output), for numpy's convention.
//
// Every plan owns its work area, a Buffer allocated on its stream, as
// CuPy gives cuFFT memory from its pool; a plan runs one transform at a
// time (a mutex serializes goroutines sharing it), always on its stream
// and in that stream's context, set within the call, so no goroutine needs
// runtime.LockOSThread. Plans from NewPlan are closed by the caller (or,
// forgotten, by a cleanup); plans from a Cache by the Cache's Close.
//
// The package is named fft, as numpy.fft and cupy.fft are, after what it
// computes rather than after the library; no standard package has the
// name. cuFFT (libcufft) is found and loaded at run time by package
// pathfinder, through bindings/cufft.
package fft

//go:generate go run ../internal/bindgen -calls .
