// Package rng fills device Buffers with random numbers: cuRAND's host API
// (bindings/curand) behind a Generator bound to one core.Stream.
//
// It is named rng, not rand, so that it does not shadow math/rand or
// crypto/rand in the files that use it.
//
// # Generators and streams
//
// New returns a Generator of one Type (XORWOW, the default as in cuRAND and
// CuPy; MRG32k3a; Philox4_32_10; MTGP32; MT19937; the quasi-random Sobol32,
// ScrambledSobol32, Sobol64 and ScrambledSobol64) with a seed, an offset, an
// ordering and, for the quasi-random types, a number of dimensions. The
// cuRAND generator is created on first use, in the stream's context, bound
// to the stream (curandSetStream), and reused by every later call. Each call
// only queues work on the stream and returns: the results are ready for
// later work on that stream, and for the host after Stream.Sync or a
// synchronous copy (core.CopyFromDevice of a Buffer allocated on it).
//
// cuRAND generators are not thread-safe: a Generator serializes its calls
// with a mutex, so several goroutines may share one; they then draw
// consecutive, non-overlapping parts of its sequence, in the order the
// calls take the lock. Close destroys the cuRAND generator; a forgotten
// Generator is destroyed when it is garbage collected. Close a Generator
// before its stream's context.
//
// # Sequences
//
// The values are a function of the type, seed, offset, ordering and
// dimensions alone: two Generators with the same settings, making the same
// calls, fill the same bytes. Successive calls continue the sequence where
// the last one stopped. The offset is an absolute position in it:
// SetOffset(k) makes the next call start at position k, which for Bits
// and Uniform is value k (how many positions a value of the other
// distributions takes is cuRAND's business). For Philox4_32_10 this holds
// exactly on the device: the values at offset k are those from position k
// at offset 0. SetSeed restarts the sequence at the current offset
// (Options.Offset or the last SetOffset) of the new seed, as CuPy's
// RandomState.seed does; cuRAND itself would go on from where it was.
// MTGP32 and MT19937 have no offset: SetSeed restarts them at their start.
//
// # Distributions and counts
//
// The generating functions take the element type as a type parameter, as
// blas's and sparse's do: Bits[uint32] (raw values; Bits[uint64] for the
// 64-bit Sobol types only), Uniform[float32] and Uniform[float64] (in
// (0, 1]), Normal and LogNormal (float32 or float64, the type of their
// mean and standard deviation), and Poisson (uint32) write the first n
// elements of a Buffer:
//
//	g, err := rng.New(stream, &rng.Options{Type: rng.Philox4_32_10, Seed: 42})
//	err = rng.Uniform[float32](g, buf, n)
//	err = rng.Normal(g, buf, n, 0, float32(1))
//
// The Buffer must hold n elements and be aligned to the element size; it
// is checked before any library call, and a bad argument is a
// *lib.ArgError. A quasi-random generator of d dimensions needs
// n to be a multiple of d: the Buffer then holds n/d values of the first
// dimension, then n/d of the second, and so on.
//
// cuRAND's pseudo-random normal and log-normal generators work in pairs
// (Box-Muller) and need an even count (curand.h). This package takes any
// count at any element-aligned address, and gives cuRAND only whole pairs
// at pair-aligned addresses: the one or two elements outside such a run
// come from one extra pair, generated into a 2-element scratch Buffer that
// the Generator owns and copied into place on the stream. An odd n on an
// aligned Buffer (any Buffer from Allocate) gives exactly the first n
// values of what n+1 would give, and moves the generator on as n+1 would;
// a Buffer at an odd element offset (a View) gets the same values with one
// of them moved to its first element. The cost is one 2-value generation
// and one or two 4- or 8-byte copies, never a copy of the output.
package rng

//go:generate go run ../internal/bindgen -calls .
