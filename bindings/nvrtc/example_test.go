package nvrtc_test

import (
	"bytes"
	"fmt"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// Compile the saxpy kernel to PTX and find its entry point.
func Example() {
	p, err := nvrtc.CreateProgram(testenv.SeedSaxpy, "saxpy.cu", 0, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nvrtc.DestroyProgram(&p)
	if err := nvrtc.CompileProgram(p, 1, []string{"-arch=compute_80"}); err != nil {
		fmt.Println(err)
		return
	}
	ptx, err := nvrtc.PTX(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("compiled; PTX has saxpy:", bytes.Contains(ptx, []byte(".entry saxpy(")))
	// Output: compiled; PTX has saxpy: true
}
