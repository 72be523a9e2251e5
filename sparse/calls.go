package sparse

// The library calls package sparse makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cusparseSpMV for cusparse.SpMV) that makes the context current within the
// cgo call. To call another function of the libraries, add its C API name
// here and run go generate. internal/bindgen/calllist.go says what the words
// mean.

//cudago:libs cusparse

//cudago:call cusparseCreate
//cudago:call cusparseCreateCoo
//cudago:call cusparseCreateCsr
//cudago:call cusparseCreateDnMat
//cudago:call cusparseCreateDnVec
//cudago:call cusparseDestroy
//cudago:call cusparseDestroyDnMat
//cudago:call cusparseDestroyDnVec
//cudago:call cusparseDestroySpMat
//cudago:call cusparseSetStream
//cudago:call cusparseSpMM
//cudago:call cusparseSpMM_bufferSize
//cudago:call cusparseSpMV
//cudago:call cusparseSpMV_bufferSize
