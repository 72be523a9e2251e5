package rng

// The library calls package rng makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (curandGenerateUniform for curand.GenerateUniform) that makes the context
// current within the cgo call. To call another function of the libraries,
// add its C API name here and run go generate. internal/bindgen/calllist.go
// says what the words mean.

//cudago:libs curand

//cudago:call curandCreateGenerator
//cudago:call curandDestroyGenerator
//cudago:call curandGenerate
//cudago:call curandGenerateLogNormal
//cudago:call curandGenerateLogNormalDouble
//cudago:call curandGenerateLongLong
//cudago:call curandGenerateNormal
//cudago:call curandGenerateNormalDouble
//cudago:call curandGeneratePoisson
//cudago:call curandGenerateUniform
//cudago:call curandGenerateUniformDouble
//cudago:call curandSetGeneratorOffset
//cudago:call curandSetGeneratorOrdering
//cudago:call curandSetPseudoRandomGeneratorSeed
//cudago:call curandSetQuasiRandomGeneratorDimensions
//cudago:call curandSetStream
