// Package version parses and compares the dotted version numbers of CUDA
// and its libraries: "12.4", "13.0", "12.4.131" (from a file name), "2.0"
// (NVVM), "1.9.1" (cuFile). Components compare as numbers, so 12.10 is
// newer than 12.4, which comparing them as floats or as text gets wrong.
//
// It needs no cgo, so the generator, pathfinder and the bindings share it.
package version

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxDigits bounds one component so that it fits in an int everywhere.
const maxDigits = 9

// Version is a parsed dotted version. Missing trailing components count
// as zero when comparing ("12.4" equals "12.4.0"), but String writes the
// components that were given. The zero Version is not valid.
type Version struct {
	nums []int
}

// Parse parses one or more decimal numbers separated by dots: "12",
// "12.4", "12.4.131". Anything else (empty components, signs, spaces,
// suffixes such as "12.4-rc1", more than 9 digits in a component) is an
// error.
func Parse(s string) (Version, error) {
	if s == "" {
		return Version{}, errors.New("version: empty version")
	}
	parts := strings.Split(s, ".")
	nums := make([]int, len(parts))
	for i, p := range parts {
		if p == "" {
			return Version{}, fmt.Errorf("version: bad version %q: empty component", s)
		}
		if len(p) > maxDigits {
			return Version{}, fmt.Errorf("version: bad version %q: component %q is too long", s, p)
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return Version{}, fmt.Errorf("version: bad version %q: %q is not a number", s, p)
			}
		}
		nums[i], _ = strconv.Atoi(p) // digits only and short: cannot fail
	}
	return Version{nums: nums}, nil
}

// FromCUDA converts a version number as CUDA encodes it, 1000*major +
// 10*minor (cuDriverGetVersion, CUDA_VERSION), to major.minor: 12040 is
// 12.4, 13000 is 13.0. A negative number is an error.
func FromCUDA(v int) (Version, error) {
	if v < 0 {
		return Version{}, fmt.Errorf("version: bad CUDA version number %d", v)
	}
	return Version{nums: []int{v / 1000, v % 1000 / 10}}, nil
}

// Valid reports whether v came from Parse or FromCUDA without error.
func (v Version) Valid() bool { return len(v.nums) > 0 }

// Major returns the first component (0 for the zero Version).
func (v Version) Major() int { return v.at(0) }

// Minor returns the second component (0 when absent).
func (v Version) Minor() int { return v.at(1) }

func (v Version) at(i int) int {
	if i < len(v.nums) {
		return v.nums[i]
	}
	return 0
}

// String writes the version as it was given, without leading zeros:
// "12.4", "12.4.131". The zero Version is "".
func (v Version) String() string {
	var b strings.Builder
	for i, n := range v.nums {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than
// w. A zero (invalid) Version is older than every valid one and equal to
// another zero Version.
func (v Version) Compare(w Version) int {
	switch {
	case !v.Valid() && !w.Valid():
		return 0
	case !v.Valid():
		return -1
	case !w.Valid():
		return 1
	}
	for i := range max(len(v.nums), len(w.nums)) {
		if c := cmp.Compare(v.at(i), w.at(i)); c != 0 {
			return c
		}
	}
	return 0
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool { return v.Compare(w) < 0 }

// Compare parses a and b and compares them as Version.Compare does. A
// string that does not parse is older than every valid version and equal
// to every other invalid one, as golang.org/x/mod/semver orders them, so
// that sorting never fails.
func Compare(a, b string) int {
	va, _ := Parse(a)
	vb, _ := Parse(b)
	return va.Compare(vb)
}

// Less reports whether version a is older than b (see Compare for strings
// that do not parse).
func Less(a, b string) bool { return Compare(a, b) < 0 }
