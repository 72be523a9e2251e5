// Package core is cudago's high-level API: devices, contexts, streams,
// events, memory, compilation (NVRTC, NVVM, PTX), linking (nvJitLink),
// object code, kernels, launches and graphs, in the spirit of NVIDIA's
// cuda.core, shaped for Go.
//
// Every type that owns a CUDA resource has an idempotent Close; using it
// after Close returns ErrClosed, never a crash, and a finalizer releases
// what a user forgot to close. All types are safe for use by several
// goroutines.
//
// CUDA's current context belongs to an OS thread and goroutines move
// between threads, so every operation that needs a context sets it and
// acts within one cgo call: users never call runtime.LockOSThread.
package core
