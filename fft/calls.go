package fft

// The library calls package fft makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cufftExecC2C for cufft.ExecC2C) that makes the context current within the
// cgo call. To call another function of the libraries, add its C API name
// here and run go generate. internal/bindgen/calllist.go says what the words
// mean. The exec calls are unchecked: their data are device addresses, so
// cgo need not check them for Go pointers on every transform.

//cudago:libs cufft

//cudago:call cufftCreate
//cudago:call cufftDestroy
//cudago:call cufftExecC2C unchecked
//cudago:call cufftExecC2R unchecked
//cudago:call cufftExecD2Z unchecked
//cudago:call cufftExecR2C unchecked
//cudago:call cufftExecZ2D unchecked
//cudago:call cufftExecZ2Z unchecked
//cudago:call cufftMakePlanMany64
//cudago:call cufftSetAutoAllocation
//cudago:call cufftSetStream
//cudago:call cufftSetWorkArea
