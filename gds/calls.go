package gds

// The library calls package gds makes, one //cudago:call line each: go
// generate (doc.go's line) runs internal/bindgen -calls ., which writes
// calls_gen.go, .h and .c from them, one unexported function per call
// (cuFileRead for cufile.Read) that makes the context current within the cgo
// call. To call another function of the libraries, add its C API name here
// and run go generate. internal/bindgen/calllist.go says what the words
// mean.

//cudago:libs cufile

//cudago:call cuFileBufDeregister
//cudago:call cuFileBufRegister
//cudago:call cuFileDriverClose_v2
//cudago:call cuFileDriverGetProperties
//cudago:call cuFileDriverOpen
//cudago:call cuFileGetVersion
//cudago:call cuFileHandleDeregister
//cudago:call cuFileHandleRegister
//cudago:call cuFileRead errno
//cudago:call cuFileReadAsync
//cudago:call cuFileStreamDeregister
//cudago:call cuFileWrite errno
//cudago:call cuFileWriteAsync
