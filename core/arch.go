package core

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Arch is a GPU architecture, which NVIDIA's tools name in several ways:
// sm_90 (real: a cubin for it), compute_90 (virtual: PTX for it), lto_90
// (LTO-IR for it), 90, or the compute capability 9.0. ParseArch reads all
// of them; SM, Compute, LTO and Bare write the form each tool wants.
//
// ProgramOptions.Arch and LinkerOptions.Arch are passed to the compiler
// and linker as given, where sm_ and compute_ mean different things, so
// they take only the exact sm_NN and compute_NN forms: a.SM() or
// a.Compute() of an Arch.
type Arch struct {
	// Number is 10*major + minor of the compute capability: 90 for sm_90
	// (9.0), 100 for sm_100 (10.0).
	Number int
	// Suffix is "", "a" (arch-specific features: sm_90a code runs only on
	// compute capability 9.0) or "f" (family-specific, sm_100f).
	Suffix string
}

// ParseArch reads an architecture in any of the forms NVIDIA's tools
// take: "sm_90", "compute_90", "lto_90", "90" or the compute capability
// "9.0", each with an optional "a" or "f" suffix ("sm_90a", "10.0f"). Case
// and surrounding space do not matter ("SM_90" is sm_90). The number is
// 10 to 999 without leading zeros; a compute capability is major.minor
// with a one-digit minor. Anything else is an error that matches
// ErrInvalidOption and names the input.
func ParseArch(s string) (Arch, error) {
	_, a, ok := parseArchForm(strings.ToLower(strings.TrimSpace(s)))
	if !ok {
		return Arch{}, &archError{s}
	}
	return a, nil
}

// archError is a name ParseArch cannot read.
type archError struct{ s string }

func (e *archError) Error() string {
	return fmt.Sprintf("core: bad architecture %q: want sm_NN, compute_NN, lto_NN, NN or N.N, with an optional a or f suffix (such as sm_90)", e.s)
}

func (e *archError) Unwrap() error { return ErrInvalidOption }

// parseArchForm parses the exact, lower-case forms: it returns the prefix
// ("sm", "compute", "lto", "" for a bare number, "cc" for a compute
// capability) and the architecture.
func parseArchForm(s string) (form string, a Arch, ok bool) {
	for _, p := range []string{"sm", "compute", "lto"} {
		if rest, cut := strings.CutPrefix(s, p+"_"); cut {
			form, s = p, rest
			break
		}
	}
	if n := len(s); n > 0 && (s[n-1] == 'a' || s[n-1] == 'f') {
		a.Suffix, s = s[n-1:], s[:n-1]
	}
	if major, minor, dotted := strings.Cut(s, "."); dotted {
		if form != "" || len(minor) != 1 || !digits(major) || !digits(minor) || major[0] == '0' || len(major) > 2 {
			return "", Arch{}, false
		}
		a.Number = atoi(major)*10 + atoi(minor)
		return "cc", a, true
	}
	// 10 to 999, no sign, no leading zero: sm_9 and sm_090 are typos.
	if len(s) < 2 || len(s) > 3 || !digits(s) || s[0] == '0' {
		return "", Arch{}, false
	}
	a.Number = atoi(s)
	return form, a, true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ParseArchList parses lists of architectures: each element may hold
// several separated by commas ("sm_80,sm_90"), in any form ParseArch
// reads; empty elements are skipped. The result is sorted, oldest first
// (a plain architecture before its "a" and "f" variants), without
// duplicates (sm_90 and compute_90 are one).
func ParseArchList(list ...string) ([]Arch, error) {
	var out []Arch
	for _, l := range list {
		for _, s := range strings.Split(l, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			a, err := ParseArch(s)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	slices.SortFunc(out, compareArch)
	return slices.Compact(out), nil
}

func compareArch(a, b Arch) int {
	if a.Number != b.Number {
		return a.Number - b.Number
	}
	return strings.Compare(a.Suffix, b.Suffix)
}

// NewestArch is the architecture whose PTX a fatbin for archs carries,
// for GPUs newer than all of them: the highest number, preferring the
// plain variant, since the PTX of an "a" or "f" architecture runs only on
// that architecture or family. It is the zero Arch when archs is empty.
func NewestArch(archs []Arch) Arch {
	if len(archs) == 0 {
		return Arch{}
	}
	best := archs[0]
	for _, a := range archs[1:] {
		if a.Number > best.Number || a.Number == best.Number && (a.Suffix == "" || best.Suffix != "" && a.Suffix < best.Suffix) {
			best = a
		}
	}
	return best
}

// SM is the real architecture: "sm_90", "sm_90a".
func (a Arch) SM() string { return "sm_" + a.Bare() }

// Compute is the virtual architecture: "compute_90", "compute_90a".
func (a Arch) Compute() string { return "compute_" + a.Bare() }

// LTO is the LTO-IR architecture: "lto_90", "lto_90a".
func (a Arch) LTO() string { return "lto_" + a.Bare() }

// Bare is the number with its suffix, as nvFatbin takes it: "90", "90a".
func (a Arch) Bare() string { return strconv.Itoa(a.Number) + a.Suffix }

// String is SM.
func (a Arch) String() string { return a.SM() }
