// Package sparse multiplies sparse matrices on the GPU with cuSPARSE's
// generic API (package bindings/cusparse): SpMV, y = alpha·op(A)·x +
// beta·y, and SpMM, C = alpha·op(A)·B + beta·C, for float32, float64,
// complex64 and complex128, with 32- or 64-bit indices.
//
// A Matrix is made from Go slices, in CSR (NewCSR) or COO (NewCOO)
// format. The slices are checked on the CPU first (offsets that start at
// 0 and never decrease, indices in range and sorted, one value per
// index), so that cuSPARSE never reads a malformed matrix; then they are
// copied to device Buffers that the Matrix owns, with its cuSPARSE
// descriptor, until Close.
//
// The dense operands are core.Buffers: vectors of T, and matrices stored
// row-major and contiguous (row i of a k×n matrix is elements i·n to
// i·n+n-1), Go's own order; their sizes are checked against the operation
// before anything is queued.
//
// A Handle binds cuSPARSE to one core.Stream: every operation given it is
// queued on that stream, in its context, and returns without waiting.
// The cuSPARSE handle is created on first use, and the workspace the
// operations need (cuSPARSE's bufferSize queries) is allocated by the
// Handle from the stream's device, kept, and grown when an operation needs
// more. Several goroutines may share a Handle; use one per stream.
//
// Failures of cuSPARSE itself are *cusparse.Error values:
// errors.Is(err, cusparse.StatusNotSupported) matches by code. A closed
// Handle, Matrix, Buffer or Stream gives core.ErrClosed.
//
// The package is named sparse, not cusparse, so that it does not collide
// with the bindings package it wraps.
package sparse

//go:generate go run ../internal/bindgen -calls .
