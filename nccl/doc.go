// Package nccl is NCCL, NVIDIA's collective communication library, on
// core's Buffers and Streams: all-reduce, broadcast, reduce, all-gather,
// reduce-scatter, all-to-all, gather, scatter, and send and receive
// between GPUs, in one process or in many. It is named like the library so that users find it; the C API
// itself is package bindings/nccl.
//
// # Communicators
//
// A Comm is one rank of a communicator: a device and a rank number. There
// are two ways to make them.
//
// One process per GPU (the usual way, under torchrun, mpirun or srun):
// each process makes its own rank with InitFromEnv, which reads the
// launcher's variables (package rendezvous), picks the device by the
// local rank, has rank 0 make the UniqueID and hands it to the others:
//
//	comm, err := nccl.InitFromEnv(ctx, nil)
//	defer comm.Close()
//	err = nccl.AllReduce[float32](comm, stream, buf, buf, n, nccl.Sum)
//	err = comm.Wait(ctx, stream)
//
// InitRank is the same with the UniqueID handed out by other means.
//
// One process driving several GPUs: InitAll(devs) makes every rank at
// once. Each collective of such ranks waits, on the host, for the others
// of its communicator, so one goroutine issuing them one after another
// would wait forever on the first: put one operation per rank in a Group
// and Run it (or issue each rank's from its own goroutine).
//
//	comms, err := nccl.InitAll(devs)
//	var g nccl.Group
//	for i, c := range comms {
//		g.AllReduce(c, streams[i], bufs[i], bufs[i], n, nccl.Float32, nccl.Sum)
//	}
//	err = g.Run()
//
// Close destroys a communicator (a forgotten one is destroyed when
// collected); Abort stops one that hangs on a dead peer; AsyncError and
// Wait report NCCL's asynchronous errors. Split, SplitAll and Shrink make
// communicators of some of the ranks.
//
// # Threads and groups
//
// NCCL keeps its group state (ncclGroupStart to ncclGroupEnd) per OS
// thread, and goroutines move between threads, so this package never
// leaves a group open across cgo calls: a Group is a value that collects
// checked operations, and Run issues all of them between ncclGroupStart
// and ncclGroupEnd on one locked thread. A Comm's own methods issue one
// operation by itself, which NCCL treats as a group of one, from any
// goroutine. Every call makes the stream's context current for itself;
// NCCL works in the device's primary context (it uses the CUDA runtime),
// so streams made in contexts of CreateContext are refused.
//
// # Operations and checks
//
// Each operation is queued on a core.Stream and returns once NCCL has
// queued it; wait for the stream before reading results. A communicator
// is not bound to one stream, so every operation takes its stream, right
// after the communicator: AllReduce[float32](comm, stream, send, recv,
// count, op). Counts are in elements. The generic functions
// (AllReduce[float32], ...) take the DataType from the Go element type,
// int8 to float64. The Comm methods and the Group take a DataType instead:
// for Float16, BFloat16 and the fp8 types (NCCL 2.24 and newer), which Go
// has no type for and whose bits the Buffers hold, for a type chosen at
// run time, and in a Group because Go methods cannot have type
// parameters. Before NCCL is called, every argument is checked, and a
// mistake is a *lib.ArgError naming it: a Buffer smaller than the
// operation needs (AllGather's recv holds count × Count() elements,
// ReduceScatter's send too, AlltoAll's send and recv both, Gather's recv
// and Scatter's send on the root), a nil Buffer or Stream, a root or peer
// that is no rank, memory or a stream of another device than the rank's,
// an unknown DataType or Op, AlltoAll's send and recv overlapping. A
// closed communicator, Stream or Buffer gives an error matching
// core.ErrClosed. AlltoAll, Gather and Scatter are NCCL 2.28.3's: with an
// older library they return the bindings' *MissingFunctionError (after
// the argument checks), naming the version.
// NCCL's own errors are the bindings' *nccl.Error: the result code,
// NCCL's message and its last warning (ncclGetLastError), matched by
// errors.Is against bindings/nccl's Result values.
//
// # Environment
//
// NCCL reads its configuration from NCCL_* environment variables when it
// first initializes. This package sets NCCL_NVLS_ENABLE=0 at start-up
// unless it is set: NVLink SHARP needs multicast setup that most machines
// lack. The library, libnccl.so.2, is found by package pathfinder
// (CUDAGO_NCCL_PATH, CUDA_PATH or CUDA_HOME, pip's nvidia/nccl/lib, conda, the system).
package nccl

//go:generate go run ../internal/bindgen -calls .
