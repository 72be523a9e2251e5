package calltest

// The library calls package calltest makes, one //cudago:call line each: go
// generate (calltest.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cublasSgemm for cublas.Sgemm) that makes the context current within the
// cgo call. To call another function of the libraries, add its C API name
// here and run go generate. internal/bindgen/calllist.go says what the words
// mean.

// A few calls of every math library (and a count-checked one of NVVM),
// for the generator's tests: internal/testing/calltest calls them without a GPU
// and compares them with the bindings.
//cudago:libs cublas cublaslt curand cufft cusparse cusolver nvvm cufile

//cudago:call cublasCreate
//cudago:call cublasDestroy
//cudago:call cublasGetVersion noescape nocallback
//cudago:call cublasSetStream
//cudago:call cublasSgemm
//cudago:call cublasSgemm_64
//cudago:call cublasLoggerConfigure
//cudago:call cublasLtCreate
//cudago:call cublasLtDestroy
//cudago:call cublasLtMatmulDescCreate
//cudago:call cublasLtMatmul
//cudago:call curandCreateGenerator
//cudago:call curandCreateGeneratorHost
//cudago:call curandDestroyGenerator
//cudago:call curandSetPseudoRandomGeneratorSeed
//cudago:call curandGenerateUniform
//cudago:call curandGenerateBinomial
//cudago:call curandGetVersion noescape nocallback
//cudago:call cufftCreate
//cudago:call cufftDestroy
//cudago:call cufftMakePlan1d
//cudago:call cufftExecC2C
//cudago:call cufftEstimate1d noescape nocallback
//cudago:call cusparseCreate
//cudago:call cusparseDestroy
//cudago:call cusparseCreateMatDescr
//cudago:call cusparseDestroyMatDescr
//cudago:call cusparseCcsr2csr_compress
//cudago:call cusolverDnCreate
//cudago:call cusolverDnDestroy
//cudago:call cusolverDnSgetrf_bufferSize
//cudago:call cusolverDnSgetrf
//cudago:call nvvmCreateProgram noescape nocallback
//cudago:call nvvmAddModuleToProgram
//cudago:call nvvmDestroyProgram
//cudago:call cuFileGetVersion
//cudago:call cuFileDriverOpen
//cudago:call cuFileUseCount
//cudago:call cuFileHandleDeregister
//cudago:call cuFileRead errno
