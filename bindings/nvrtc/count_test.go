package nvrtc_test

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestCountLargerThanSlice passes counts larger than their slices (and
// negative ones): the call must fail with a *CountError instead of letting
// NVRTC read past the end of the slice.
func TestCountLargerThanSlice(t *testing.T) {
	_, err := nvrtc.CreateProgram(testenv.SeedSaxpy, "a.cu", 2, []string{"// h"}, []string{"h.h", "i.h"})
	testenv.WantCountError(t, err, "nvrtc", "nvrtcCreateProgram", "numHeaders", "headers", 2, 1)
	_, err = nvrtc.CreateProgram(testenv.SeedSaxpy, "a.cu", 1, []string{"// h"}, nil)
	testenv.WantCountError(t, err, "nvrtc", "nvrtcCreateProgram", "numHeaders", "includeNames", 1, 0)
	_, err = nvrtc.CreateProgram(testenv.SeedSaxpy, "a.cu", -1, nil, nil)
	testenv.WantCountError(t, err, "nvrtc", "nvrtcCreateProgram", "numHeaders", "headers", -1, 0)

	// A count below the lengths is valid C: NVRTC reads the prefix only.
	p, err := nvrtc.CreateProgram(`#include "h.h"`+"\n"+testenv.SeedSaxpy, "a.cu", 1,
		[]string{"// h", "#error not this one"}, []string{"h.h", "i.h"})
	if err != nil {
		t.Fatalf("CreateProgram with a prefix of the headers: %v", err)
	}
	defer nvrtc.DestroyProgram(&p)

	err = nvrtc.CompileProgram(p, 2, []string{"-arch=compute_80"})
	testenv.WantCountError(t, err, "nvrtc", "nvrtcCompileProgram", "numOptions", "options", 2, 1)
	err = nvrtc.CompileProgram(p, 1, nil)
	testenv.WantCountError(t, err, "nvrtc", "nvrtcCompileProgram", "numOptions", "options", 1, 0)
	// The second option is invalid; a count of 1 must not pass it.
	if err := nvrtc.CompileProgram(p, 1, []string{"-arch=compute_80", "--no-such-option"}); err != nil {
		t.Fatalf("CompileProgram with a prefix of the options: %v", err)
	}
}

// TestGetNVVMSize checks that nvrtcGetNVVMSize's size is a result.
func TestGetNVVMSize(t *testing.T) {
	p := compile(t, testenv.SeedSaxpy, "nvvm.cu", []string{"-arch=compute_80", "-dlto"})
	n, err := nvrtc.GetNVVMSize(p)
	if err != nil {
		var missing *nvrtc.MissingFunctionError
		if errors.As(err, &missing) {
			t.Skipf("the loaded NVRTC lacks nvrtcGetNVVMSize: %v", err)
		}
		t.Fatalf("GetNVVMSize: %v", err)
	}
	want, err := nvrtc.GetLTOIRSize(p)
	if err != nil {
		t.Fatalf("GetLTOIRSize: %v", err)
	}
	if n == 0 || n != want {
		t.Fatalf("GetNVVMSize = %d, want GetLTOIRSize's %d (> 0)", n, want)
	}
}
