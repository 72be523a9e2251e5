package nvtx_test

import (
	"fmt"

	"github.com/cudago/cudago/bindings/nvtx"
)

func step(lib *nvtx.Domain, i int) {
	// The range covers the rest of the function, on this goroutine's thread.
	defer nvtx.Range("step")()
	lib.MarkEx("batch", nvtx.Attributes{Color: nvtx.RGB(0, 160, 0), Payload: nvtx.Int64(int64(i))})
}

// Run the program under a profiler (nsys profile ./prog) to see the ranges
// and marks; without one, every call is a no-op.
func Example() {
	// A package would keep its domain in a variable: var lib = nvtx.NewDomain("mylib").
	lib := nvtx.NewDomain("example")
	for i := range 3 {
		step(lib, i)
	}
	// Building a name costs something: only do it when a tool listens.
	if nvtx.Enabled() {
		nvtx.Mark(fmt.Sprintf("done after %d steps", 3))
	}
}

// A started range can end on another goroutine.
func ExampleRangeStart() {
	id := nvtx.RangeStart("load")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// ... the work ...
		nvtx.RangeEnd(id)
	}()
	<-done
}
