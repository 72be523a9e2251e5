// Package solver solves dense linear systems and symmetric eigenvalue
// problems on the GPU with cuSOLVER's dense API (package
// bindings/cusolver), in float32 and float64:
//
//   - FactorLU and LU.Solve (getrf, getrs): A·X = B for a general square
//     A, by LU factorization with partial pivoting; SolveLU does both.
//   - FactorCholesky and Cholesky.Solve (potrf, potrs): A·X = B for a
//     symmetric positive definite A; SolveCholesky does both.
//   - SymEig (syevd): the eigenvalues, and optionally the eigenvectors,
//     of a symmetric A.
//
// Matrices are n×n arrays of T in core.Buffers, column-major as cuSOLVER
// wants them (leading dimension n). Row-major arrays, Go's order, are
// taken where that costs nothing: a symmetric matrix is the same array in
// both orders (only the names of its triangles swap, see Uplo), and an LU
// of a row-major A factors the array as the Aᵀ it is to cuSOLVER and
// solves with the transposed factors (see FactorLU). Right-hand sides are
// nrhs vectors of n elements, one after another. Sizes are checked
// against the buffers before anything is queued.
//
// cuSOLVER reports a singular matrix, one that is not positive definite,
// or an eigenvalue iteration that did not converge in a device word
// (devInfo); the factorizations and SymEig wait for it and turn it into a
// Go error: *SingularError, *NotPositiveDefiniteError and
// *NoConvergenceError, matched by errors.Is with ErrSingular,
// ErrNotPositiveDefinite and ErrNoConvergence. The solves only queue
// their work: their devInfo can only report a wrong argument, which the
// checks exclude.
//
// A Handle binds cuSOLVER to one core.Stream: every operation given it is
// queued on that stream, in its context. The cuSOLVER handle is created on
// first use, and the workspace the operations need (cuSOLVER's bufferSize
// queries) is allocated by the Handle from the stream's device, kept, and
// grown when an operation needs more. Several goroutines may share a
// Handle; use one per stream.
//
// Failures of cuSOLVER itself are *cusolver.Error values:
// errors.Is(err, cusolver.StatusNotInitialized) matches by code. A closed
// Handle, LU, Buffer or Stream gives core.ErrClosed.
//
// The package is named solver, not cusolver, so that it does not collide
// with the bindings package it wraps.
package solver

//go:generate go run ../internal/bindgen -calls .
