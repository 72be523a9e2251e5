package nvvm_test

import (
	"fmt"

	"github.com/cudago/cudago/bindings/nvvm"
)

// Ask libNVVM which NVVM IR version it reads.
func ExampleIRVersion() {
	major, _, _, _, err := nvvm.IRVersion()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reads NVVM IR", major, "or compatible:", major >= 1)
}

// Compile NVVM IR to PTX.
func ExampleCompileProgram() {
	const ir = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @k() {
  ret void
}
!nvvmir.version = !{!0}
!0 = !{i32 2, i32 0}
!nvvm.annotations = !{!1}
!1 = !{void ()* @k, !"kernel", i32 1}
`
	p, err := nvvm.CreateProgram()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nvvm.DestroyProgram(&p)
	if err := nvvm.AddModuleToProgram(p, ir, uint64(len(ir)), "k.ll"); err != nil {
		fmt.Println(err)
		return
	}
	if err := nvvm.CompileProgram(p, 1, []string{"-arch=compute_75"}); err != nil {
		fmt.Println(err)
		return
	}
	ptx, err := nvvm.CompiledResult(p)
	fmt.Println(len(ptx) > 0, err)
	// Output: true <nil>
}
