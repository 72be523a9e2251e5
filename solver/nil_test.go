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
	if err := checkHandle("X", &zero, 4); !errors.Is(err, core.ErrClosed) {
		t.Errorf("checkHandle(zero) = %v, want ErrClosed", err)
	}
}
