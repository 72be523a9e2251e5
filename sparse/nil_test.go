package sparse

import "testing"

// TestNilAndZero: nil and zero values give errors or do nothing, never a
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
	if err := SpMV[float32](&zero, NoTrans, 1, nil, nil, 0, nil); err == nil {
		t.Error("SpMV on a zero Handle succeeded")
	}
	var m *Matrix[float32]
	if m.Close() != nil {
		t.Error("nil *Matrix Close")
	}
}
