package nvvm_test

import (
	"errors"
	"github.com/cudago/cudago/internal/testenv"
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
)

func wantCountError(t *testing.T, err error, fn, count, counted string, value int64, n int) {
	t.Helper()
	var ce *nvvm.CountError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: got %v (%T), want a *CountError", fn, err, err)
	}
	want := nvvm.CountError{Func: fn, Count: count, Value: value, Counted: counted, Len: n}
	if *ce != want {
		t.Fatalf("%s: got %+v, want %+v", fn, *ce, want)
	}
}

// TestCountLargerThanSlice passes counts larger than their slices, and
// sizes larger than their buffers: the calls must fail with a *CountError
// instead of letting libNVVM read past the end.
func TestCountLargerThanSlice(t *testing.T) {
	p := program(t, testenv.SeedNVVMKernel+seedMetadata(t), "simple_kernel.ll")

	const ir = "; not parsed"
	err := nvvm.AddModuleToProgram(p, ir, uint64(len(ir)+2), "k.ll")
	wantCountError(t, err, "nvvmAddModuleToProgram", "size", "buffer", int64(len(ir)+2), len(ir)+1)
	err = nvvm.LazyAddModuleToProgram(p, ir, 1<<40, "k.ll")
	wantCountError(t, err, "nvvmLazyAddModuleToProgram", "size", "buffer", 1<<40, len(ir)+1)

	err = nvvm.VerifyProgram(p, 2, []string{"-arch=compute_75"})
	wantCountError(t, err, "nvvmVerifyProgram", "numOptions", "options", 2, 1)
	err = nvvm.CompileProgram(p, 3, []string{"-arch=compute_75"})
	wantCountError(t, err, "nvvmCompileProgram", "numOptions", "options", 3, 1)
	err = nvvm.CompileProgram(p, -1, nil)
	wantCountError(t, err, "nvvmCompileProgram", "numOptions", "options", -1, 0)
	// The second option is invalid; a count of 1 must not pass it.
	if err := nvvm.CompileProgram(p, 1, []string{"-arch=compute_75", "-no-such-option"}); err != nil {
		t.Fatalf("CompileProgram with a prefix of the options: %v", err)
	}
}
