package solver

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/core"
)

// TestNilAndZero: nil and zero Handles give errors or do nothing, never a
// panic.
func TestNilAndZero(t *testing.T) {
	var nilH *Handle
	if nilH.Close() != nil || nilH.Stream() != nil || nilH.WorkspaceSize() != 0 {
		t.Error("nil *Handle")
	}
	var zero Handle
	if zero.Close() != nil || zero.Stream() != nil || zero.WorkspaceSize() != 0 {
		t.Error("zero Handle")
	}
	a := core.NewBuffer(0x1000, 64, nil, nil)
	if _, err := FactorCholesky[float32](&zero, a, 4, Lower); !errors.Is(err, core.ErrClosed) {
		t.Errorf("FactorCholesky(zero Handle) = %v, want ErrClosed", err)
	}
}
