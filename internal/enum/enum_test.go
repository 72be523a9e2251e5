package enum

import "testing"

type kind int

type small uint8

func TestName(t *testing.T) {
	for v, want := range map[kind]string{0: "A", 1: "B", 2: "kind(2)", -1: "kind(-1)"} {
		if got := Name(v, "kind", "A", "B"); got != want {
			t.Errorf("Name(%d) = %q, want %q", int(v), got, want)
		}
	}
	if got := Name(small(255), "small", "x"); got != "small(255)" {
		t.Errorf("Name(small(255)) = %q", got)
	}
}
