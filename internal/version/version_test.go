package version

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"12":       "12",
		"12.4":     "12.4",
		"12.10":    "12.10",
		"12.4.131": "12.4.131",
		"1.9.1":    "1.9.1",
		"2.0":      "2.0",
		"12.04":    "12.4", // leading zeros are dropped
		"0":        "0",
	} {
		v, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := v.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", in, got, want)
		}
		if !v.Valid() {
			t.Errorf("Parse(%q) is not Valid", in)
		}
	}
}

func TestParseBad(t *testing.T) {
	for in, msg := range map[string]string{
		"":             "empty version",
		".":            "empty component",
		"12.":          "empty component",
		".4":           "empty component",
		"12..4":        "empty component",
		"12.x":         `"x" is not a number`,
		"-1":           `"-1" is not a number`,
		"+12.4":        `"+12" is not a number`,
		" 12.4":        `" 12" is not a number`,
		"12.4\n":       "is not a number",
		"12.4-rc1":     `"4-rc1" is not a number`,
		"v12.4":        `"v12" is not a number`,
		"12,4":         "is not a number",
		"1.2345678901": "is too long",
		"٣.٤":          "is not a number", // Arabic-Indic digits are not ASCII digits
	} {
		v, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, v)
			continue
		}
		if !strings.HasPrefix(err.Error(), "version: ") || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q): error %q, want one with %q", in, err, msg)
		}
		if v.Valid() || v.String() != "" {
			t.Errorf("Parse(%q) failed but returned %q (valid %v)", in, v, v.Valid())
		}
	}
}

func TestCompare(t *testing.T) {
	// Each pair is older, newer.
	for _, c := range [][2]string{
		{"12.4", "12.10"}, // a float compare says 12.10 < 12.4
		{"12.9", "12.10"},
		{"12.10", "13.0"},
		{"12.4", "13.0"},
		{"12.4", "12.4.131"}, // 12.4 is 12.4.0
		{"12.4.99", "12.4.131"},
		{"12.4.131", "12.5"},
		{"2.0", "12.4"},
		{"9", "10"},
		{"bogus", "0"}, // an invalid version is older than every valid one
		{"", "12.4"},
	} {
		older, newer := c[0], c[1]
		if got := Compare(older, newer); got != -1 {
			t.Errorf("Compare(%q, %q) = %d, want -1", older, newer, got)
		}
		if got := Compare(newer, older); got != 1 {
			t.Errorf("Compare(%q, %q) = %d, want 1", newer, older, got)
		}
		if !Less(older, newer) || Less(newer, older) {
			t.Errorf("Less(%q, %q) = %v, Less(%q, %q) = %v, want true, false",
				older, newer, Less(older, newer), newer, older, Less(newer, older))
		}
	}
	for _, c := range [][2]string{
		{"12.4", "12.4"},
		{"12.4", "12.4.0"},
		{"12", "12.0.0"},
		{"12.04", "12.4"},
		{"bogus", ""}, // invalid versions are equal to each other
	} {
		if got := Compare(c[0], c[1]); got != 0 {
			t.Errorf("Compare(%q, %q) = %d, want 0", c[0], c[1], got)
		}
		if Less(c[0], c[1]) || Less(c[1], c[0]) {
			t.Errorf("Less says %q and %q differ", c[0], c[1])
		}
	}
}

func TestSortOrder(t *testing.T) {
	in := []string{"13.0", "12.10", "x", "12.4.131", "12.4", "11.8", "12.9"}
	slices.SortStableFunc(in, Compare)
	want := []string{"x", "11.8", "12.4", "12.4.131", "12.9", "12.10", "13.0"}
	if !slices.Equal(in, want) {
		t.Errorf("sorted: %q, want %q", in, want)
	}
}

func TestFromCUDA(t *testing.T) {
	for in, want := range map[int]string{
		12040: "12.4",
		12000: "12.0",
		12100: "12.10",
		13000: "13.0",
		11080: "11.8",
		3020:  "3.2",
		0:     "0.0",
	} {
		v, err := FromCUDA(in)
		if err != nil {
			t.Errorf("FromCUDA(%d): %v", in, err)
			continue
		}
		if got := v.String(); got != want {
			t.Errorf("FromCUDA(%d) = %q, want %q", in, got, want)
		}
	}
	if v, err := FromCUDA(-1); err == nil || v.Valid() {
		t.Errorf("FromCUDA(-1) = %q, %v; want an error", v, err)
	}
	a, _ := FromCUDA(12040)
	b, _ := Parse("12.4")
	if a.Compare(b) != 0 {
		t.Errorf("FromCUDA(12040) = %q does not equal Parse(12.4) = %q", a, b)
	}
	c, _ := FromCUDA(12100)
	if !a.Less(c) {
		t.Errorf("FromCUDA: 12.4 is not older than 12.10")
	}
}

func TestMajorMinor(t *testing.T) {
	for in, want := range map[string][2]int{
		"12.4.131": {12, 4},
		"13":       {13, 0},
		"bad":      {0, 0},
	} {
		v, _ := Parse(in)
		if v.Major() != want[0] || v.Minor() != want[1] {
			t.Errorf("Parse(%q): Major, Minor = %d, %d, want %d, %d", in, v.Major(), v.Minor(), want[0], want[1])
		}
	}
}
