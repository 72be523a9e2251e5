package solver

// The library calls package solver makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cusolverDnSgetrf for cusolver.DnSgetrf) that makes the context current
// within the cgo call. To call another function of the libraries, add its C
// API name here and run go generate. internal/bindgen/calllist.go says what
// the words mean.

//cudago:libs cusolver

//cudago:call cusolverDnCreate
//cudago:call cusolverDnDestroy
//cudago:call cusolverDnDgetrf
//cudago:call cusolverDnDgetrf_bufferSize
//cudago:call cusolverDnDgetrs
//cudago:call cusolverDnDpotrf
//cudago:call cusolverDnDpotrf_bufferSize
//cudago:call cusolverDnDpotrs
//cudago:call cusolverDnDsyevd
//cudago:call cusolverDnDsyevd_bufferSize
//cudago:call cusolverDnSetStream
//cudago:call cusolverDnSgetrf
//cudago:call cusolverDnSgetrf_bufferSize
//cudago:call cusolverDnSgetrs
//cudago:call cusolverDnSpotrf
//cudago:call cusolverDnSpotrf_bufferSize
//cudago:call cusolverDnSpotrs
//cudago:call cusolverDnSsyevd
//cudago:call cusolverDnSsyevd_bufferSize
