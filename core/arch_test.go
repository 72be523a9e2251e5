package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseArch(t *testing.T) {
	for in, want := range map[string]Arch{
		"sm_90": {90, ""}, "compute_90": {90, ""}, "lto_90": {90, ""}, "90": {90, ""},
		"SM_80": {80, ""}, "Compute_86": {86, ""}, "LTO_90A": {90, "a"}, " sm_75 ": {75, ""},
		"sm_90a": {90, "a"}, "lto_100f": {100, "f"}, "120": {120, ""}, "sm_100a": {100, "a"},
		"9.0": {90, ""}, "8.6": {86, ""}, "10.0": {100, ""}, "12.1": {121, ""}, "9.0a": {90, "a"},
	} {
		got, err := ParseArch(in)
		if err != nil || got != want {
			t.Errorf("ParseArch(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", " ", "sm_", "sm_9", "sm_x", "compute_-90", "+90", "90b", "sm_90aa", "sm_090", "sm_1000",
		"sm90", "gfx90a", "sm_9.0", "9.", ".9", "9.10", "0.9", "100.0", "9,0", "compute_", "a", "lto_",
	} {
		a, err := ParseArch(in)
		if err == nil {
			t.Errorf("ParseArch(%q) = %v, want an error", in, a)
			continue
		}
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) || !strings.HasPrefix(err.Error(), "core: bad architecture") {
			t.Errorf("ParseArch(%q) error %q: want ErrInvalidOption naming the input", in, err)
		}
	}
	a := Arch{90, "a"}
	if a.SM() != "sm_90a" || a.Compute() != "compute_90a" || a.LTO() != "lto_90a" || a.Bare() != "90a" || a.String() != "sm_90a" {
		t.Errorf("forms of %#v: %s %s %s %s %s", a, a.SM(), a.Compute(), a.LTO(), a.Bare(), a)
	}
	// Every form written parses back to the same architecture.
	for _, a := range []Arch{{75, ""}, {90, "a"}, {100, "f"}, {121, ""}} {
		for _, s := range []string{a.SM(), a.Compute(), a.LTO(), a.Bare(), strings.ToUpper(a.SM())} {
			if got, err := ParseArch(s); err != nil || got != a {
				t.Errorf("ParseArch(%q) = %v, %v; want %v", s, got, err, a)
			}
		}
	}
}

func TestParseArchList(t *testing.T) {
	archs, err := ParseArchList("sm_90,80", "SM_80", "sm_90a", "", " , ", "compute_90", "lto_75")
	if err != nil || fmt.Sprint(archs) != "[sm_75 sm_80 sm_90 sm_90a]" {
		t.Errorf("ParseArchList = %v, %v", archs, err)
	}
	if got := NewestArch(archs); got != (Arch{90, ""}) {
		t.Errorf("NewestArch(%v) = %v, want sm_90 (the plain one)", archs, got)
	}
	if got := NewestArch([]Arch{{100, "f"}, {90, ""}, {100, "a"}}); got != (Arch{100, "a"}) {
		t.Errorf("NewestArch without a plain newest = %v, want sm_100a", got)
	}
	if got := NewestArch(nil); got != (Arch{}) {
		t.Errorf("NewestArch(nil) = %v", got)
	}
	if archs, err := ParseArchList(); err != nil || len(archs) != 0 {
		t.Errorf("ParseArchList() = %v, %v", archs, err)
	}
	if _, err := ParseArchList("sm_80,volta,sm_90"); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), `"volta"`) {
		t.Errorf("ParseArchList with a bad element: %v", err)
	}
}

// TestExactArchOptions: ProgramOptions.Arch and LinkerOptions.Arch go to
// the compiler as given, so they stay exact (ParseArch reads the rest).
func TestExactArchOptions(t *testing.T) {
	for _, s := range []string{"sm_90", "compute_90", "sm_90a", "compute_100f"} {
		if _, err := (&ProgramOptions{Arch: s}).NVRTCOptions(); err != nil {
			t.Errorf("ProgramOptions.Arch %q: %v", s, err)
		}
		if _, err := (&LinkerOptions{Arch: s}).NVJitLinkOptions(); err != nil {
			t.Errorf("LinkerOptions.Arch %q: %v", s, err)
		}
	}
	for _, s := range []string{"90", "lto_90", "SM_90", "9.0", " sm_90"} {
		_, err := (&ProgramOptions{Arch: s}).NVRTCOptions()
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "ParseArch") {
			t.Errorf("ProgramOptions.Arch %q: %v", s, err)
		}
		if _, err := (&LinkerOptions{Arch: s}).NVJitLinkOptions(); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("LinkerOptions.Arch %q: %v", s, err)
		}
	}
	// What ParseArch reads, SM and Compute make acceptable.
	a, _ := ParseArch("LTO_90a")
	if args, err := (&ProgramOptions{Arch: a.Compute()}).NVVMOptions(); err != nil || args[0] != "-arch=compute_90a" {
		t.Errorf("NVVMOptions of %s: %q, %v", a.Compute(), args, err)
	}
}

func TestFatbinArchForms(t *testing.T) {
	for in, want := range map[string]string{"sm_90": "90", "compute_90a": "90a", "lto_80": "80", "SM_86": "86", "9.0": "90", "100f": "100f"} {
		if got, err := fatbinArch(in); err != nil || got != want {
			t.Errorf("fatbinArch(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := fatbinArch("volta"); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("fatbinArch(volta): %v", err)
	}
}

// FuzzParseArch: ParseArch never panics; what it reads, every form it
// writes reads back the same; what it refuses matches ErrInvalidOption.
func FuzzParseArch(f *testing.F) {
	for _, s := range []string{"sm_90", "LTO_100f", "9.0a", "90", "sm_", "12.", "compute_999", "sm_1000", "\x00", "sm_9\u0660"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArch(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("ParseArch(%q): %v does not match ErrInvalidOption", s, err)
			}
			return
		}
		if a.Number < 10 || a.Number > 999 || a.Suffix != "" && a.Suffix != "a" && a.Suffix != "f" {
			t.Fatalf("ParseArch(%q) = %#v", s, a)
		}
		for _, f := range []string{a.SM(), a.Compute(), a.LTO(), a.Bare()} {
			if b, err := ParseArch(f); err != nil || b != a {
				t.Fatalf("ParseArch(%q) = %v, %v; want %v", f, b, err, a)
			}
			if _, ok := exactArch(a.SM()); !ok {
				t.Fatalf("exactArch(%q) refused", a.SM())
			}
		}
	})
}
