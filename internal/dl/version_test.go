package dl

import "testing"

// VersionLess and CUDAVersion forward to internal/version; these check that
// the forwards keep their meaning for the bindings.
func TestVersionForwards(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"12.4", "12.10", true},
		{"12.10", "12.4", false},
		{"12.10", "13.0", true},
		{"12.4", "12.4.131", true},
		{"12.4", "12.4", false},
		{"", "12.4", true},
	} {
		if got := VersionLess(c.a, c.b); got != c.less {
			t.Errorf("VersionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
	for v, want := range map[int]string{12040: "12.4", 13000: "13.0", 12100: "12.10", -5: "-5"} {
		if got := CUDAVersion(v); got != want {
			t.Errorf("CUDAVersion(%d) = %q, want %q", v, got, want)
		}
	}
}
