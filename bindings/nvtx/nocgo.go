//go:build !cgo

package nvtx

// NVTX 3's implementation is C compiled in through cgo. Without cgo the go
// command would only say that build constraints exclude all Go files here;
// this undefined name makes the compiler say what to do instead.
var _ = cudago_needs_cgo__set_CGO_ENABLED_1_and_install_a_C_compiler_such_as_gcc
