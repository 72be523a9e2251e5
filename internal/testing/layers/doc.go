// Package layers holds the test that keeps the module's imports running
// downward, as docs/design.md draws them: runtime support under the
// bindings, the bindings under core, core under the library packages, and
// the test helpers (internal/testing/...) and the generator
// (internal/bindgen) beside them, imported by no program. It has no code
// of its own.
package layers
