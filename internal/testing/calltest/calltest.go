// Package calltest holds a demonstration of the in-context library calls
// that internal/bindgen -calls generates (calls_gen.go, from the
// //cudago: lines of its calls.go): a few calls of every math library,
// which its tests make without a GPU and compare with the bindings.
// Nothing imports it.
package calltest

//go:generate go run ../../bindgen -calls .
