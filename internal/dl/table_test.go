package dl

import (
	"testing"

	"github.com/cudago/cudago/pathfinder"
)

// TestTableIndex finds entry points by C name, the first of a repeated
// name, and -1 for an unknown one.
func TestTableIndex(t *testing.T) {
	tab := NewTable(pathfinder.Driver, Dlsym, []Proc{{Name: "a"}, {Name: "b"}, {Name: "a"}, {Name: "c"}})
	for name, want := range map[string]int{"a": 0, "b": 1, "c": 3, "": -1, "d": -1} {
		if got := tab.Index(name); got != want {
			t.Errorf("Index(%q) = %d, want %d", name, got, want)
		}
	}
}
