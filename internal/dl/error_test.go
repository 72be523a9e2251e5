package dl

import (
	"errors"
	"fmt"
	"testing"
)

// code is a status type like the generated ones; 7 is sticky.
type code uint32

func (c code) Error() string { return fmt.Sprintf("CODE_%d", uint32(c)) }

func (c code) Explanation() string {
	switch c {
	case 1:
		return "Issue during compilation"
	case 2:
		return "The device broke. See the guide for e.g. more. Really."
	case 7:
		return "A kernel faulted. The process must be relaunched."
	}
	return ""
}

func (c code) Sticky() bool { return c == 7 }

// plain is a status type without Sticky (every library but the driver).
type plain int32

func (p plain) Error() string       { return "PLAIN" }
func (p plain) Explanation() string { return "" }

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&Error[code]{Lib: "lib", Func: "f", Code: 1, Message: "compile failed"}, "lib: f: CODE_1 (compile failed)"},
		// No message of the library's own: the explanation stands in.
		{&Error[code]{Lib: "lib", Func: "f", Code: 1}, "lib: f: CODE_1 (Issue during compilation)"},
		// Only its first sentence.
		{&Error[code]{Lib: "lib", Func: "f", Code: 2}, "lib: f: CODE_2 (The device broke)"},
		// A message that only repeats the name counts as none.
		{&Error[code]{Lib: "lib", Func: "f", Code: 3, Message: "CODE_3"}, "lib: f: CODE_3"},
		{&Error[code]{Lib: "lib", Func: "f", Code: 7, Message: "unspecified launch failure"}, "lib: f: CODE_7 (unspecified launch failure; sticky: the context can no longer be used)"},
		{&Error[code]{Lib: "lib", Func: "f", Code: 7}, "lib: f: CODE_7 (A kernel faulted; sticky: the context can no longer be used)"},
		{&Error[plain]{Lib: "p", Func: "g", Code: 5, Log: "line 1: oops"}, "p: g: PLAIN\nline 1: oops"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestErrorSticky(t *testing.T) {
	wrapped := fmt.Errorf("core: Sync: %w", &Error[code]{Lib: "lib", Func: "f", Code: 7})
	var e *Error[code]
	if !errors.As(wrapped, &e) || !e.Sticky() {
		t.Errorf("errors.As(%v) found no sticky *Error", wrapped)
	}
	if !errors.Is(wrapped, code(7)) {
		t.Error("errors.Is does not match the code")
	}
	if (&Error[code]{Code: 1}).Sticky() {
		t.Error("code 1 is sticky")
	}
	if (&Error[plain]{Code: 1}).Sticky() {
		t.Error("a code type without Sticky is sticky")
	}
	var s interface{ Sticky() bool }
	if !errors.As(wrapped, &s) || !s.Sticky() {
		t.Error("errors.As with an interface{ Sticky() bool } target does not find it")
	}
	if got := (&Error[code]{Code: 2}).Explanation(); got != code(2).Explanation() {
		t.Errorf("Explanation() = %q", got)
	}
}
