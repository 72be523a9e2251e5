// Package core is cudago's high-level API: devices, contexts, streams,
// events, memory, compilation (NVRTC, NVVM, PTX), linking (nvJitLink or the
// driver's linker), object code, kernels, launches and graphs, in the spirit
// of NVIDIA's cuda.core, shaped for Go.
//
// A first program compiles a kernel, copies data in, launches and copies the
// result back:
//
//	dev, _ := core.GetDevice(0)
//	prog, _ := core.NewProgram(src, "c++", &core.ProgramOptions{Arch: "sm_90"})
//	code, _ := prog.Compile("cubin")
//	k, _ := code.Kernel("saxpy")
//	x, _ := core.Alloc[float32](dev, n, nil)
//	defer x.Close()
//	core.CopyToDevice(x, hostX)
//	s, _ := dev.NewStream(nil)
//	core.Launch(s, core.LaunchConfig{Grid: core.Dim(n / 256), Block: core.Dim(256)}, k, float32(2), x, y, int32(n))
//	err := s.Sync()
//
// # Lifetimes
//
// Every type that owns a CUDA resource (Context, Stream, Event, Buffer,
// ObjectCode, Graph, GraphExec, IPCMemoryResource) has a Close that is
// idempotent and safe to call from any goroutine. Using a resource after its
// Close returns ErrClosed, never a crash: each one holds a guard that an
// operation acquires for the length of its driver call, so Close waits for
// calls in flight and refuses new ones. A finalizer releases what a program
// forgot to close (a Buffer's up to one garbage collection later: a new
// Buffer gets its finalizer only if it is still open at the next
// collection, or once 255 more are made); since a finalizer cannot return
// an error, one it meets is recorded on the resource's Context and returned
// by the next Context.Sync.
// Closing a Context made by Device.CreateContext ends everything made in it;
// a device's primary context lives as long as the process.
//
// # The current context
//
// CUDA keeps a "current context" per OS thread, and goroutines move between
// OS threads at any time. So core never relies on it: every operation that
// needs a context makes its own current and calls the driver within the same
// cgo call. Programs using core never call runtime.LockOSThread and never
// see a call run in another context than the one they asked for. (Those
// driver calls are generated from the list in calls.go; the few C
// functions written by hand, where one call must do several things for
// speed, are listed in fastpath.h.)
//
// # Streams and ordering
//
// Work on one Stream runs in the order it was queued; work on different
// streams may overlap. Order two streams with an Event (Stream.Record, then
// Stream.Wait on the other). Launch and the ...Async copies only queue work:
// wait for it with Stream.Sync, with Stream.WaitContext (which honours a
// context.Context's deadline), or by receiving from Stream.Done. The
// synchronous copies (CopyToDevice, CopyFromDevice, Buffer.CopyFrom,
// Memset8/32) run on the buffer's stream and wait for it, so they see the work
// queued there before them. Host memory handed to an async copy is kept
// alive (pinned) until the copy completes; Go slices may be passed directly.
//
// # Memory and pool reuse
//
// A Device allocates from its default memory resource, a
// DeviceMemoryResource backed by the device's stream-ordered pool
// (cuMemAllocAsync). A Buffer remembers its resource and stream; Close frees
// it in stream order. A Buffer closed on a stream keeps its block for the
// next allocation of the same size on that stream, which then costs no
// driver call; Stream.Sync, Stream.Close and running out of memory give such
// blocks back. DeviceMemoryResource.NoReuse or CUDAGO_POOL_REUSE=off turn
// this off. PinnedMemoryResource, ManagedMemoryResource and
// LegacyMemoryResource give page-locked host, managed and cuMemAlloc memory.
//
// A Buffer holds bytes; Alloc[T] and AllocFrom[T] allocate one by element
// count and type (Alloc[float32](dev, n, s) is 4n bytes), Len[T] counts
// its elements, and View[T] views n elements from element off. They
// return plain Buffers, so the copies (which take []T and copy len
// elements), Launch and the library packages use them as they are, and
// no program sizes memory with unsafe.Sizeof. A negative count, a size
// past the largest int, a T with Go pointers or of size 0, a view past the
// end or a size that is not a whole number of elements (Len) are errors.
// Buffer.View makes a non-owning view at an offset; closing the buffer ends
// its views. NewStridedView makes a typed, strided view of a Buffer (shape,
// strides in elements, read-only flag), as cuda.core's StridedMemoryView:
// Launch takes it as the address of its element (0, …, 0), and
// CopyToView, CopyFromView and CopyView copy sub-matrices, 3-D boxes and
// other strided layouts between it and Go slices or other views, with the
// driver's 3-D copies; StridedView says which layouts map and what the
// others cost.
//
// # Several devices and processes
//
// d.EnablePeerAccess(peer) lets kernels and copies on d use peer's
// memory: that of peer's context and that of peer's default pool, which
// Device.Allocate uses (pool memory is not covered by the context setting:
// a pool grants access itself, and DeviceMemoryResource and
// IPCMemoryResource have PeerAccessibleBy and SetPeerAccessibleBy for it).
// Buffer.CopyFrom copies between devices (cuMemcpyPeer): over NVLink or
// PCIe once access is enabled both ways, staged through the host without
// it; CopyFromAsync orders the copy on one stream of either device, and
// Events order it with the other device's work. An IPCMemoryResource
// is a pool whose Buffers another process imports: an IPCChannel (ListenIPC,
// DialIPC, over a Unix-domain socket) carries the pool's file descriptor
// and each Buffer's descriptor. A VirtualMemoryResource reserves an
// address range per allocation and maps memory into it, so that
// VirtualMemoryResource.Grow enlarges a Buffer without moving it, and can
// give other devices access to it.
//
// # Graphs
//
// A Graph is GPU work launched as a whole: Instantiate makes a GraphExec,
// which launches on any stream as often as needed. A Graph is captured
// from a stream (Stream.BeginCapture, then EndCapture) or built node by
// node: Device.NewGraph, then Kernel (arguments checked as by Launch),
// Memcpy, Memset8/32, HostFunc, Record and Wait (events), Child (a copy
// of another graph), Alloc and Free (graph memory), Empty, and the
// conditional nodes If, IfElse, While and Switch, each given the nodes it
// runs after and returning its GraphNode; captured graphs take nodes the
// same way. A conditional node runs body graphs, built likewise, on a
// ConditionalHandle (Graph.NewCondition) that kernels receive as an
// argument and set with cudaGraphSetConditional: loops and branches that
// never return to the host. GraphExec.SetKernel changes a kernel node's
// shape and arguments in an executable graph; DebugDot writes Graphviz.
// Nodes of another graph, closed graphs and resources are errors before
// the driver is called, and what the nodes use (Buffers, Kernels, Events,
// host functions) is kept from the collector while the graph or a
// GraphExec of it lives. GraphMemoryResource allocates graph memory in a
// capture.
//
// # Green contexts and tensor maps
//
// Device.SMResource gives a device's streaming multiprocessors;
// SMResource.Split divides them into disjoint groups, and
// Device.CreateGreenContext makes a green context of one or more groups:
// a *Context whose kernels run only on those SMs, used like any other
// (NewStream, Launch, Allocate on its streams, NewEvent). Its Close
// destroys its streams and events; its memory is the device's and outlives
// it. The driver does not synchronize calls on one green context from
// several threads: use each from one goroutine at a time.
//
// A TensorMap (NewTensorMapTiled, NewTensorMapIm2col) describes a tensor
// in a Buffer for Hopper's Tensor Memory Accelerator; every rule of the
// driver's documentation is checked in Go first (TensorMapTiledOptions.Validate).
// Pass the *TensorMap to Launch for a `const __grid_constant__ CUtensorMap`
// parameter; it keeps its Buffer, and fails once that is closed.
//
// # Arrays, textures and surfaces
//
// NewArray makes a CUDA array (1-D, 2-D, 3-D, or layers of 1-D or 2-D;
// 1, 2 or 4 channels of 8-, 16- or 32-bit integers, half or float32), and
// NewMipmappedArray one with its mipmap levels; their shape is checked
// against the device's limits before the driver is called. CopyToArray
// and CopyFromArray copy the whole array from and to a Go slice of its
// channel or element type, Array.CopyFromBuffer and CopyToBuffer from and
// to a Buffer. NewTextureObject samples an array (filter, address modes,
// normalized coordinates, read mode, border color, mipmap filtering) and
// NewSurfaceObject reads and writes one from kernels: pass the
// *TextureObject or *SurfaceObject to Launch for a cudaTextureObject_t or
// cudaSurfaceObject_t. They keep their array, and fail once it is closed.
//
// # Compilation and the cache
//
// Program compiles CUDA C++ (NVRTC), NVVM IR (libNVVM) and PTX; Linker links
// cubins, PTX and LTO-IR; FatbinBuilder packs several architectures into one
// fat binary. Results are cached on disk, keyed by the source, the options and
// the compiler's version, in $CUDAGO_CACHE_DIR (default os.UserCacheDir()/cudago),
// bounded by CUDAGO_CACHE_MAX bytes (1 GiB). CUDAGO_CACHE=off or
// ProgramOptions.NoCache bypass it; sources that include files from disk are
// never cached, since the cache cannot see those files change. The cache's
// folders are created 0700; a root that another user owns, or that group or
// others may write, is refused with a warning (WarnCacheDisabled) and
// compiling goes on without it, since another user could plant code there. A compiler or
// linker failure returns a *CompileError or *LinkError holding the log.
//
// # Warnings
//
// What is not an error but worth knowing goes to one log/slog logger, at
// slog.LevelWarn with a "kind" attribute: the compile cache refused
// (WarnCacheDisabled), Linker falling back to the driver's cuLink
// (WarnLinkerFallback), code without a cubin for a device of the process
// (WarnNoCodeForDevice: the driver compiles its PTX, or cannot run it),
// pathfinder's warnings about a library core uses (WarnLibrary) and its
// guard rails (WarnCompatibility: a library newer than the driver, CUDA 12
// and 13 libraries mixed), a setting it does not understand
// (WarnBadSetting: CUDAGO_CACHE_MAX, CUDAGO_PREFAULT), and errors no call
// can return, such as a finalizer's (WarnUnreportedError; Context.Sync
// returns them too). The
// logger is silent by default; SetLogger sets one (a slog.Handler can
// count, filter or fail on them), and CUDAGO_LOG=warn (or info, debug,
// error) prints them to stderr.
//
// # Errors
//
// Every call returns an error; none panics on bad input. A failed driver call
// is a *driver.Error naming the function and the CUresult: match it with
// errors.Is(err, driver.ErrorOutOfMemory) and friends. A function that the
// installed driver lacks gives a *driver.MissingFunctionError naming the
// version it needs. Arguments are checked before the driver sees them
// (launch argument counts and sizes, copy lengths, view bounds), and those
// errors say what was wrong.
//
// Some errors are sticky: after a kernel faults (CUDA_ERROR_ILLEGAL_ADDRESS,
// CUDA_ERROR_LAUNCH_FAILED and the others for which driver.Result.Sticky
// reports true), every later call in that context fails with the same code.
// IsSticky tells them apart. A created context must then be closed and made
// anew; for the primary context, close what was made in it and call
// Device.ResetPrimaryContext, or start a new process.
package core
