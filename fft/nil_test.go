package fft

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/core"
)

// TestNilAndZero: a nil Cache and a zero Plan give errors or nothing,
// never a panic.
func TestNilAndZero(t *testing.T) {
	var c *Cache
	if c.Len() != 0 {
		t.Error("nil *Cache Len")
	}
	var p Plan
	b := fakeBuffer(0x1000, 1<<20)
	if err := p.Forward(b, b); err == nil {
		t.Error("Forward on a zero Plan succeeded")
	} else if !errors.Is(err, core.ErrClosed) {
		t.Logf("zero Plan: %v", err)
	}
}
