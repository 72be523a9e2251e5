package core

// ObjectCode is compiled device code (CUBIN, fatbin, PTX, LTO-IR, object or
// library) that loads lazily and context-independently.
type ObjectCode struct {
	name string
}
