//go:build !cgo

package dl

// cudago opens NVIDIA's libraries with dlopen through cgo, so every package
// that calls CUDA needs cgo. Without it the go command would only say that
// build constraints exclude all Go files in internal/dl; this undefined name
// makes the compiler say what to do instead.
var _ = cudago_needs_cgo__set_CGO_ENABLED_1_and_install_a_C_compiler_such_as_gcc
