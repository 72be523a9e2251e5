package nvjitlink_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/seeds"
)

func TestSeedFunctions(t *testing.T) {
	s := seeds.ParseJIT(t)
	if len(s.JITLinkFuncs) < 13 {
		t.Fatalf("found %d nvJitLink functions in the seed, want 13: %v", len(s.JITLinkFuncs), s.JITLinkFuncs)
	}
	bindtest.SeedBound(t, "nvjitlink", nvjitlink.Functions, s.JITLinkFuncs)
}

// notInHeader are seed InputType names that no nvJitLink.h declares: the
// seed's NVVM_IR/NVVM_BITCODE are in fact NVJITLINK_INPUT_LTOIR.
var notInHeader = map[string]bool{
	"NVJITLINK_INPUT_NVVM_IR":      true,
	"NVJITLINK_INPUT_NVVM_BITCODE": true,
}

func TestSeedEnums(t *testing.T) {
	s := seeds.ParseJIT(t)
	results, inputs := map[string]bool{}, map[string]bool{}
	for i := range 256 {
		results[nvjitlink.Result(i).String()] = true
		inputs[nvjitlink.InputType(i).String()] = true
	}
	for heading, want := range map[string]struct {
		names map[string]bool
		n     int
	}{
		"NVJitLink Result Codes": {results, 7},
		"Input Types":            {inputs, 8},
	} {
		listed := s.Enums[heading]
		if len(listed) != want.n {
			t.Errorf("seed lists %d names under %q, want %d: %v", len(listed), heading, want.n, listed)
		}
		for _, name := range listed {
			switch {
			case notInHeader[name] && want.names[name]:
				t.Errorf("%s is now bound: drop it from notInHeader", name)
			case notInHeader[name]:
				t.Logf("%s (seed) is not in nvJitLink.h; the header has NVJITLINK_INPUT_LTOIR = %d", name, nvjitlink.InputLtoir)
			case !want.names[name]:
				t.Errorf("%s (%s) is not a value of the Go type", name, heading)
			}
		}
	}
	if got := nvjitlink.InputLtoir.String(); got != "NVJITLINK_INPUT_LTOIR" {
		t.Errorf("InputLtoir.String() = %q", got)
	}
}
