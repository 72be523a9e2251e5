package nccl

// The library calls package nccl makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (ncclAllReduce for nccl.AllReduce) that makes the context current within
// the cgo call. To call another function of the libraries, add its C API
// name here and run go generate. internal/bindgen/calllist.go says what the
// words mean.

// NCCL: communicators, the collectives and point-to-point calls, groups.
//cudago:libs nccl

//cudago:call ncclAllGather
//cudago:call ncclAllReduce
//cudago:call ncclAlltoAll
//cudago:call ncclBroadcast
//cudago:call ncclCommAbort
//cudago:call ncclCommCount noescape nocallback
//cudago:call ncclCommCuDevice noescape nocallback
//cudago:call ncclCommDestroy
//cudago:call ncclCommGetAsyncError noescape nocallback
//cudago:call ncclCommInitAll
//cudago:call ncclCommInitRankConfig
//cudago:call ncclCommShrink
//cudago:call ncclCommSplit
//cudago:call ncclCommUserRank noescape nocallback
//cudago:call ncclGather
//cudago:call ncclGetUniqueId noescape nocallback
//cudago:call ncclGetVersion noescape nocallback
//cudago:call ncclGroupEnd
//cudago:call ncclGroupStart
//cudago:call ncclRecv
//cudago:call ncclReduce
//cudago:call ncclReduceScatter
//cudago:call ncclScatter
//cudago:call ncclSend
