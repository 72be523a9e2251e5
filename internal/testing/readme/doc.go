// Package readme holds the test that keeps the Go snippets of the
// repository's README.md compiling: every ```go block is type-checked
// against the module's packages as they are. It has no code of its own.
package readme
