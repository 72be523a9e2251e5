package nvfatbin_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestCountLargerThanSlice passes counts larger than their slices, and a
// PTX size larger than the PTX: the calls must fail with a *CountError
// instead of letting nvFatbin read past the end.
func TestCountLargerThanSlice(t *testing.T) {
	_, err := nvfatbin.Create([]string{"-cuda"}, 2)
	testenv.WantCountError(t, err, "nvfatbin", "nvFatbinCreate", "optionsCount", "options", 2, 1)
	_, err = nvfatbin.Create(nil, 1)
	testenv.WantCountError(t, err, "nvfatbin", "nvFatbinCreate", "optionsCount", "options", 1, 0)

	// The second option is invalid; a count of 1 must not pass it.
	h, err := nvfatbin.Create([]string{"-cuda", "-no-such-option"}, 1)
	if err != nil {
		t.Fatalf("Create with a prefix of the options: %v", err)
	}
	defer nvfatbin.Destroy(&h)
	const ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"
	err = nvfatbin.AddPTX(h, ptx, uint64(len(ptx)+2), "90", "k", "")
	testenv.WantCountError(t, err, "nvfatbin", "nvFatbinAddPTX", "size", "code", int64(len(ptx)+2), len(ptx)+1)
	if err := nvfatbin.AddPTX(h, ptx, uint64(len(ptx)), "90", "k", ""); err != nil {
		t.Fatalf("AddPTX: %v", err)
	}
	if _, err := nvfatbin.Bytes(h); err != nil {
		t.Fatalf("Bytes: %v", err)
	}
}
