package core

// The driver calls package core makes, one //cudago: line each
// (internal/bindgen/calllist.go says what the words mean). go generate
// (drivercalls.go's line) runs internal/bindgen -lib driver -core ., which
// writes drivercalls_gen.h, .c and .go from them: a C shim (cgx_<name>)
// per call, which makes the context current first when the line says
// inctx, and an unexported Go function of the C API's name
// (cuStreamSynchronize(ctx, hStream)); conly lines are only table entries
// for core's hand-written C (fastpath.h). Every other driver call of
// core's non-test code is refused by TestNoDirectDriverCalls: to call
// another driver function, add its line here and run go generate ./core.

// Making a context current (CGX_ENTER, Context.SetCurrent).
//cudago:call cuCtxGetCurrent conly
//cudago:call cuCtxSetCurrent nocallback

// Contexts. cuCtxCreate_v2 is cg_ctx_create's fallback for drivers
// before 12.5.
//cudago:call cuCtxCreate conly
//cudago:call cuCtxCreate_v2 conly
//cudago:call cuCtxPopCurrent conly
//cudago:call cuCtxDestroy
//cudago:call cuCtxSynchronize inctx
//cudago:call cuCtxGetStreamPriorityRange inctx noescape nocallback out=leastPriority,greatestPriority
//cudago:call cuCtxEnablePeerAccess inctx
//cudago:call cuMemGetInfo inctx noescape nocallback

// The driver and devices: no context.
//cudago:call cuInit
//cudago:call cuDriverGetVersion noescape nocallback
//cudago:call cuGetErrorString noescape nocallback
//cudago:call cuDeviceGetCount noescape nocallback
//cudago:call cuDeviceGet noescape nocallback
//cudago:call cuDeviceGetName noescape nocallback
//cudago:call cuDeviceGetUuid noescape nocallback
//cudago:call cuDeviceGetPCIBusId noescape nocallback
//cudago:call cuDeviceTotalMem noescape nocallback
//cudago:call cuDeviceGetAttribute noescape nocallback
//cudago:call cuDeviceCanAccessPeer noescape nocallback
//cudago:call cuDeviceGetMemPool noescape nocallback out=pool
//cudago:call cuDevicePrimaryCtxRetain noescape nocallback
//cudago:call cuDevicePrimaryCtxRelease
//cudago:call cuDevicePrimaryCtxReset

// Streams.
//cudago:call cuStreamCreateWithPriority inctx noescape nocallback
//cudago:call cuStreamDestroy inctx
//cudago:call cuStreamSynchronize inctx nocallback
//cudago:call cuStreamQuery inctx nocallback
//cudago:call cuStreamWaitEvent inctx nocallback
//cudago:call cuStreamAddCallback conly
//cudago:call cuLaunchHostFunc conly
// cuStreamIsCapturing serves cg_capturing too.
//cudago:call cuStreamIsCapturing inctx noescape nocallback
//cudago:call cuStreamBeginCapture inctx
//cudago:call cuStreamEndCapture inctx noescape nocallback out=phGraph

// Events. cuEventElapsedTime is _v2 (12.8) in the headers; older
// drivers have the first revision, with the same C signature.
//cudago:call cuEventCreate inctx noescape nocallback
//cudago:call cuEventDestroy inctx
//cudago:call cuEventRecord inctx nocallback
//cudago:call cuEventSynchronize inctx nocallback
//cudago:call cuEventQuery inctx nocallback
//cudago:call cuEventElapsedTime inctx noescape nocallback out=pMilliseconds fallback=2000
//cudago:call cuIpcGetEventHandle inctx noescape nocallback out=pHandle
//cudago:call cuIpcOpenEventHandle inctx noescape nocallback

// Memory.
//cudago:call cuMemAlloc inctx noescape nocallback
//cudago:call cuMemFree inctx
//cudago:call cuMemAllocAsync inctx noescape nocallback
//cudago:call cuMemFreeAsync inctx nocallback
//cudago:call cuMemHostAlloc inctx noescape nocallback
//cudago:call cuMemFreeHost inctx
//cudago:call cuMemAllocManaged inctx noescape nocallback
//cudago:call cuPointerGetAttribute inctx noescape nocallback

// Managed memory (managed.go): advice, prefetches, discards and what the
// driver knows of a range. cuMemAdvise and cuMemPrefetchAsync are _v2
// (12.2, taking a CUmemLocation) in the header; the batched calls came
// with 13.0, and an older driver lacks them (*driver.MissingFunctionError).
// The driver reads the batches' arrays during the call.
//cudago:call cuMemAdvise inctx noescape nocallback
//cudago:call cuMemPrefetchAsync inctx noescape nocallback
//cudago:call cuMemPrefetchBatchAsync inctx noescape nocallback
//cudago:call cuMemDiscardBatchAsync inctx noescape nocallback
//cudago:call cuMemDiscardAndPrefetchBatchAsync inctx noescape nocallback
//cudago:call cuMemRangeGetAttribute inctx noescape nocallback

// Pools of their own, shared between processes (IPCMemoryResource).
// The pool is an output the header does not mark as one.
//cudago:call cuMemPoolCreate inctx noescape nocallback out=pool
//cudago:call cuMemPoolDestroy inctx
//cudago:call cuMemAllocFromPoolAsync inctx noescape nocallback
//cudago:call cuMemPoolExportToShareableHandle inctx noescape nocallback
//cudago:call cuMemPoolImportFromShareableHandle inctx noescape nocallback
//cudago:call cuMemPoolExportPointer inctx noescape nocallback
//cudago:call cuMemPoolImportPointer inctx noescape nocallback
//cudago:call cuMemPoolGetAccess inctx noescape nocallback
//cudago:call cuMemPoolSetAccess inctx noescape nocallback

// Virtual memory (VirtualMemoryResource).
//cudago:call cuMemGetAllocationGranularity inctx noescape nocallback
//cudago:call cuMemAddressReserve inctx noescape nocallback
//cudago:call cuMemAddressFree inctx
//cudago:call cuMemCreate inctx noescape nocallback
//cudago:call cuMemRelease inctx
//cudago:call cuMemMap inctx
//cudago:call cuMemUnmap inctx
//cudago:call cuMemSetAccess inctx noescape nocallback

// Copies and sets.
//cudago:call cuMemcpyHtoDAsync conly
//cudago:call cuMemcpyDtoHAsync conly
//cudago:call cuMemcpyDtoDAsync inctx nocallback
//cudago:call cuMemcpyPeerAsync inctx
//cudago:call cuMemsetD8Async inctx nocallback
//cudago:call cuMemsetD32Async inctx nocallback

// Strided copies (strided.go): cg_memcpy3d in fastpath.c queues
// one or more 3-D copies and waits in the same C call. One
// descriptor covers views of rank 1 to 3, and cuMemcpy3D, unlike
// cuMemcpy2D, documents no pitch restriction on intra-device copies.
// The copies of CUDA arrays (array.go) call it from Go.
//cudago:call cuMemcpy3DAsync inctx noescape nocallback

// Kernels.
//cudago:call cuLaunchKernel conly
//cudago:call cuLaunchKernelEx conly
//cudago:call cuKernelGetFunction inctx noescape nocallback
//cudago:call cuKernelGetParamInfo inctx noescape nocallback out=paramSize
//cudago:call cuKernelGetAttribute inctx noescape nocallback
//cudago:call cuKernelSetAttribute inctx
//cudago:call cuOccupancyMaxActiveBlocksPerMultiprocessor inctx noescape nocallback
//cudago:call cuOccupancyMaxPotentialBlockSize inctx noescape nocallback

// Graphs.
//cudago:call cuGraphInstantiateWithFlags inctx noescape nocallback
//cudago:call cuGraphLaunch inctx nocallback
//cudago:call cuGraphUpload inctx
//cudago:call cuGraphExecUpdate inctx noescape nocallback out=resultInfo
//cudago:call cuGraphDestroy inctx
//cudago:call cuGraphExecDestroy inctx

// Graphs built node by node (graphdef.go). cuGraphAddNode is _v2
// (12.3, with edge data) in the 13.0 header; the first revision has
// another signature, so there is no fallback.
//cudago:call cuGraphCreate inctx noescape nocallback
//cudago:call cuGraphAddNode inctx noescape nocallback
//cudago:call cuGraphExecNodeSetParams inctx noescape nocallback
//cudago:call cuGraphConditionalHandleCreate inctx noescape nocallback out=pHandle_out
//cudago:call cuGraphGetNodes inctx noescape nocallback
//cudago:call cuGraphDebugDotPrint inctx noescape nocallback

// The device's graph memory pool (GraphMemoryResource).
//cudago:call cuDeviceGraphMemTrim inctx
//cudago:call cuDeviceGetGraphMemAttribute inctx noescape nocallback
//cudago:call cuDeviceSetGraphMemAttribute inctx noescape nocallback

// Libraries: context-independent.
//cudago:call cuLibraryLoadData noescape nocallback
//cudago:call cuLibraryGetKernel noescape nocallback
//cudago:call cuLibraryUnload

// The driver's JIT linker (Linker's fallback), in a context.
//cudago:call cuLinkCreate inctx out=stateOut
//cudago:call cuLinkAddData inctx
//cudago:call cuLinkComplete inctx noescape nocallback out=cubinOut,sizeOut
//cudago:call cuLinkDestroy inctx

// Green contexts (greencontext.go): SM resources, their split, the
// descriptor and the green context, its CUcontext and its streams.
// None needs a current context: each names its device, resource or
// green context. The descriptor and the green context are outputs
// the header does not mark as such.
//cudago:call cuDeviceGetDevResource noescape nocallback
//cudago:call cuGreenCtxGetDevResource noescape nocallback
//cudago:call cuDevSmResourceSplitByCount noescape nocallback
//cudago:call cuDevResourceGenerateDesc noescape nocallback out=phDesc
//cudago:call cuGreenCtxCreate noescape nocallback out=phCtx
//cudago:call cuGreenCtxDestroy
//cudago:call cuCtxFromGreenCtx noescape nocallback
//cudago:call cuGreenCtxStreamCreate noescape nocallback

// Tensor maps for TMA (tensormap.go): encoded in the buffer's
// device's primary context (the header lists
// CUDA_ERROR_INVALID_CONTEXT among their errors).
//cudago:call cuTensorMapEncodeTiled inctx noescape nocallback
//cudago:call cuTensorMapEncodeIm2col inctx noescape nocallback
//cudago:call cuTensorMapReplaceAddress inctx noescape nocallback

// CUDA arrays, textures and surfaces (array.go, texture.go): made,
// copied and destroyed in the array's device's primary context.
// Their copies are cuMemcpy3DAsync (above) and cuStreamSynchronize:
// Go memory on the host side is pinned (runtime.Pinner) from the one to
// the other, since the descriptor points to it.
//cudago:call cuArray3DCreate inctx noescape nocallback
//cudago:call cuArray3DGetDescriptor inctx noescape nocallback out=pArrayDescriptor
//cudago:call cuArrayDestroy inctx
//cudago:call cuMipmappedArrayCreate inctx noescape nocallback
//cudago:call cuMipmappedArrayGetLevel inctx noescape nocallback
//cudago:call cuMipmappedArrayDestroy inctx
//cudago:call cuTexObjectCreate inctx noescape nocallback out=pTexObject
//cudago:call cuTexObjectDestroy inctx
//cudago:call cuSurfObjectCreate inctx noescape nocallback out=pSurfObject
//cudago:call cuSurfObjectDestroy inctx

// What fastpath.c takes from the header instead of spelling it.
//cudago:const CU_LAUNCH_ATTRIBUTE_COOPERATIVE
//cudago:const CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
//cudago:const CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT
//cudago:const CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT
//cudago:const CU_LAUNCH_PARAM_END_AS_INT
//cudago:const CU_STREAM_CAPTURE_STATUS_NONE
// cg_memcpy3d's memory types (strided copies).
//cudago:const CU_MEMORYTYPE_HOST
//cudago:const CU_MEMORYTYPE_UNIFIED

// The structs fastpath.c mirrors: launches, and cg_memcpy3d's
// descriptor (strided copies).
//cudago:struct CUlaunchConfig
//cudago:struct CUlaunchAttribute
//cudago:struct CUDA_MEMCPY3D
