// Package checkpoint locks, checkpoints, restores and unlocks the GPU
// state of another CUDA process, by its process id: the driver's CUDA
// checkpoint API (cuCheckpointProcess*, CUDA 12.8 drivers and newer, Linux
// only), what NVIDIA's cuda-checkpoint tool and cuda.core's checkpoint
// module use. It is meant for a controller beside the CUDA program (a
// scheduler, CRIU's CUDA plugin, a test): together with a CPU-side
// checkpointer it saves a whole process; alone it pauses a process and
// gives its GPU memory back for others to use meanwhile.
//
//	p, err := checkpoint.NewProcess(pid)
//	err = p.Lock(&checkpoint.LockOptions{Timeout: 10 * time.Second}) // its CUDA calls now block
//	err = p.Checkpoint()                                              // GPU memory copied to host memory, the GPU released
//	// ... the GPU is free; a CPU checkpointer may save the process now ...
//	err = p.Restore(nil)                                              // back on the GPU (or remapped: RestoreOptions.GPUs)
//	err = p.Unlock()                                                  // its CUDA calls go on
//
// A process goes from Running to Locked (Lock), from Locked to
// Checkpointed (Checkpoint), from Checkpointed back to Locked (Restore),
// and from Locked to Running (Unlock); State says where it is, Failed if
// a checkpoint or restore broke it. RestoreThreadID is the id of the
// driver's thread in the process that carries out a restore, which
// CPU-side checkpointers (CRIU's CUDA plugin) look up.
//
// # Calls and layering
//
// These driver calls take a process id and no CUDA context, so the package
// is a thin layer over bindings/driver, as package system is over
// bindings/nvml: core's generated in-context calls exist to make a context
// current within one cgo call, which these do not need. The package calls
// cuInit once (the calls need an initialized driver) and creates no
// context.
//
// # Errors
//
// Bad arguments (a pid that is not a running process, a negative
// timeout, a malformed GPU UUID) are refused before the driver is called.
// The driver's refusals are errors that say what was refused and why,
// wrapping the driver's own error (errors.As finds the *driver.Error or
// *driver.MissingFunctionError):
//
//   - ErrNotSupported (errors.Is): the driver lacks the checkpoint API (one
//     older than CUDA 12.8: a *driver.MissingFunctionError), or refuses it
//     on this system (CUDA_ERROR_NOT_SUPPORTED: not Linux, or a GPU, driver
//     or virtual machine without checkpoint support);
//   - ErrNotPermitted: the caller lacks the privileges the driver asks for
//     to act on that process (CUDA_ERROR_NOT_PERMITTED);
//   - ErrTimeout: Lock's timeout passed before the process could be locked
//     (it is left Running);
//   - a call in the wrong state (CUDA_ERROR_ILLEGAL_STATE) names the state
//     the process is in and the one the call needs.
//
// What the driver can checkpoint depends on its version: the first ones
// left out managed (unified) memory and memory shared between processes
// (IPC), for example. Its error says so where it refuses.
package checkpoint
