package nvvm_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestCountLargerThanSlice passes counts larger than their slices, and
// sizes larger than their buffers: the calls must fail with a *CountError
// instead of letting libNVVM read past the end.
func TestCountLargerThanSlice(t *testing.T) {
	p := program(t, testenv.SeedNVVMKernel+seedMetadata(t), "simple_kernel.ll")

	const ir = "; not parsed"
	err := nvvm.AddModuleToProgram(p, ir, uint64(len(ir)+2), "k.ll")
	testenv.WantCountError(t, err, "nvvm", "nvvmAddModuleToProgram", "size", "buffer", int64(len(ir)+2), len(ir)+1)
	err = nvvm.LazyAddModuleToProgram(p, ir, 1<<40, "k.ll")
	testenv.WantCountError(t, err, "nvvm", "nvvmLazyAddModuleToProgram", "size", "buffer", 1<<40, len(ir)+1)

	err = nvvm.VerifyProgram(p, 2, []string{"-arch=compute_75"})
	testenv.WantCountError(t, err, "nvvm", "nvvmVerifyProgram", "numOptions", "options", 2, 1)
	err = nvvm.CompileProgram(p, 3, []string{"-arch=compute_75"})
	testenv.WantCountError(t, err, "nvvm", "nvvmCompileProgram", "numOptions", "options", 3, 1)
	err = nvvm.CompileProgram(p, -1, nil)
	testenv.WantCountError(t, err, "nvvm", "nvvmCompileProgram", "numOptions", "options", -1, 0)
	// The second option is invalid; a count of 1 must not pass it.
	if err := nvvm.CompileProgram(p, 1, []string{"-arch=compute_75", "-no-such-option"}); err != nil {
		t.Fatalf("CompileProgram with a prefix of the options: %v", err)
	}
}
