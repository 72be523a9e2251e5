package nvfatbin_test

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/bindings/nvfatbin"
)

func wantCountError(t *testing.T, err error, fn, count, counted string, value int64, n int) {
	t.Helper()
	var ce *nvfatbin.CountError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: got %v (%T), want a *CountError", fn, err, err)
	}
	want := nvfatbin.CountError{Func: fn, Count: count, Value: value, Counted: counted, Len: n}
	if *ce != want {
		t.Fatalf("%s: got %+v, want %+v", fn, *ce, want)
	}
}

// TestCountLargerThanSlice passes counts larger than their slices, and a
// PTX size larger than the PTX: the calls must fail with a *CountError
// instead of letting nvFatbin read past the end.
func TestCountLargerThanSlice(t *testing.T) {
	_, err := nvfatbin.Create([]string{"-cuda"}, 2)
	wantCountError(t, err, "nvFatbinCreate", "optionsCount", "options", 2, 1)
	_, err = nvfatbin.Create(nil, 1)
	wantCountError(t, err, "nvFatbinCreate", "optionsCount", "options", 1, 0)

	// The second option is invalid; a count of 1 must not pass it.
	h, err := nvfatbin.Create([]string{"-cuda", "-no-such-option"}, 1)
	if err != nil {
		t.Fatalf("Create with a prefix of the options: %v", err)
	}
	defer nvfatbin.Destroy(&h)
	const ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"
	err = nvfatbin.AddPTX(h, ptx, uint64(len(ptx)+2), "90", "k", "")
	wantCountError(t, err, "nvFatbinAddPTX", "size", "code", int64(len(ptx)+2), len(ptx)+1)
	if err := nvfatbin.AddPTX(h, ptx, uint64(len(ptx)), "90", "k", ""); err != nil {
		t.Fatalf("AddPTX: %v", err)
	}
	if _, err := nvfatbin.Bytes(h); err != nil {
		t.Fatalf("Bytes: %v", err)
	}
}
