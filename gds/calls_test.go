package gds

import (
	"testing"

	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestOnlyGeneratedCalls: every libcufile call goes through the generated
// in-context calls (calls_gen.go); no other file calls a bindings function
// itself (cufile.Proc, which only looks a symbol up, is not one).
func TestOnlyGeneratedCalls(t *testing.T) {
	testenv.OnlyGeneratedCalls(t, map[string]map[string]string{"cufile": cufile.Functions, "driver": driver.Functions})
}
