package nvvm_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/seeds"
)

func TestSeedFunctions(t *testing.T) {
	s := seeds.ParseJIT(t)
	if len(s.NVVMFuncs) != 8 {
		t.Fatalf("found %d NVVM functions in the seed, want 8: %v", len(s.NVVMFuncs), s.NVVMFuncs)
	}
	bindtest.SeedBound(t, "nvvm", nvvm.Functions, s.NVVMFuncs)
}

func TestSeedEnums(t *testing.T) {
	s := seeds.ParseJIT(t)
	names := map[string]bool{}
	for i := range 256 {
		names[nvvm.Result(i).String()] = true
	}
	listed := s.Enums["NVVM Result Codes"]
	if len(listed) != 9 {
		t.Errorf("seed lists %d NVVM result codes, want 9: %v", len(listed), listed)
	}
	for _, name := range listed {
		if !names[name] {
			t.Errorf("%s is not a value of nvvm.Result", name)
		}
	}
}
