package fft

import (
	"testing"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestOnlyGeneratedCalls: every library call goes through the generated
// in-context calls (calls_gen.go), which make the stream's context current
// within the cgo call; no other file calls a bindings function itself.
func TestOnlyGeneratedCalls(t *testing.T) {
	testenv.OnlyGeneratedCalls(t, map[string]map[string]string{"cufft": cufft.Functions, "driver": driver.Functions})
}
