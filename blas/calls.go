package blas

// The library calls package blas makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cublasSgemm for cublas.Sgemm) that makes the context current within the
// cgo call. To call another function of the libraries, add its C API name
// here and run go generate. internal/bindgen/calllist.go says what the words
// mean. cublasLtMatmul is unchecked: the matrices and workspace it takes
// are device addresses, and the scalars and algorithm host memory without
// Go pointers, so cgo need not check each (a fifth of a small Matmul's Go
// side). No call is marked noescape nocallback: cuBLAS may call a logger
// callback installed through the bindings, which would then be fatal.

//cudago:libs cublas cublaslt

//cudago:call cublasCaxpy
//cudago:call cublasCdotc
//cudago:call cublasCdotu
//cudago:call cublasCgemm
//cudago:call cublasCgemmBatched
//cudago:call cublasCgemmStridedBatched
//cudago:call cublasCgemv
//cudago:call cublasCreate
//cudago:call cublasDaxpy
//cudago:call cublasDdot
//cudago:call cublasDestroy
//cudago:call cublasDgemm
//cudago:call cublasDgemmBatched
//cudago:call cublasDgemmGroupedBatched
//cudago:call cublasDgemmStridedBatched
//cudago:call cublasDgemv
//cudago:call cublasDnrm2
//cudago:call cublasDznrm2
//cudago:call cublasGemmGroupedBatchedEx
//cudago:call cublasLtCreate
//cudago:call cublasLtDestroy
//cudago:call cublasLtGetVersion
//cudago:call cublasLtMatmul unchecked
//cudago:call cublasLtMatmulAlgoCheck
//cudago:call cublasLtMatmulAlgoGetHeuristic
//cudago:call cublasLtMatmulDescCreate
//cudago:call cublasLtMatmulDescDestroy
//cudago:call cublasLtMatmulDescSetAttribute
//cudago:call cublasLtMatmulPreferenceCreate
//cudago:call cublasLtMatmulPreferenceDestroy
//cudago:call cublasLtMatmulPreferenceSetAttribute
//cudago:call cublasLtMatrixLayoutCreate
//cudago:call cublasLtMatrixLayoutDestroy
//cudago:call cublasLtMatrixLayoutSetAttribute
//cudago:call cublasSaxpy
//cudago:call cublasScnrm2
//cudago:call cublasSdot
//cudago:call cublasSetMathMode
//cudago:call cublasSetPointerMode
//cudago:call cublasSetStream
//cudago:call cublasSetWorkspace
//cudago:call cublasSgemm
//cudago:call cublasSgemmBatched
//cudago:call cublasSgemmGroupedBatched
//cudago:call cublasSgemmStridedBatched
//cudago:call cublasSgemv
//cudago:call cublasSnrm2
//cudago:call cublasZaxpy
//cudago:call cublasZdotc
//cudago:call cublasZdotu
//cudago:call cublasZgemm
//cudago:call cublasZgemmBatched
//cudago:call cublasZgemmStridedBatched
//cudago:call cublasZgemv
