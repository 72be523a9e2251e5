// Package lib is the vocabulary that cudago's library packages share: the
// error every one of them returns for a bad argument (ArgError), and the
// operation applied to a matrix operand (Transpose), which blas and sparse
// both take.
//
// It depends on nothing, so that any package may use it (blas, fft, rng,
// solver and sparse do; nccl, gds and core can). The library packages
// re-export what their users write: blas.NoTrans and sparse.NoTrans are
// lib.NoTrans, and blas.ArgError is lib.ArgError, as os.PathError is
// fs.PathError. One type for one meaning lets a program match the
// argument errors of every package with one errors.As, and pass a
// Transpose from one package to another.
package lib
