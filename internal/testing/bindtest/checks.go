package bindtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/internal/testing/seeds"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// The checks that several bindings packages' tests make alike: their
// generated tables and codes against the numbers counted from the
// headers, a call's documented failure, the seed's functions, a compiler
// library's version and its refusal of bad sources.

// Count checks that tab has want entry points and functions (a generated
// Functions map) want C names.
func Count(t *testing.T, tab Table, functions map[string]string, want int) {
	t.Helper()
	if tab.Len() != want || len(functions) != want {
		t.Errorf("%d entry points and %d names, want %d", tab.Len(), len(functions), want)
	}
}

// Names checks that table (a generated Functions or Types map, called
// name in the messages) gives every C name of want its Go name.
func Names(t *testing.T, name string, table, want map[string]string) {
	t.Helper()
	for c, g := range want {
		if table[c] != g {
			t.Errorf("%s[%q] = %q, want %q", name, c, table[c], g)
		}
	}
}

// Codes checks that a status or enum type has want values below limit
// that its String names (see Named).
func Codes[S ~int32 | ~uint32](t *testing.T, typ string, limit, want int) {
	t.Helper()
	if n := len(Named[S](typ, limit)); n != want {
		t.Errorf("%s has %d values, want %d", typ, n, want)
	}
}

// Explained returns how many status codes below limit typ's String names,
// and fails t for each of them that has no explanation from the header.
func Explained[C dl.Code](t *testing.T, typ string, limit int) int {
	t.Helper()
	codes := Named[C](typ, limit)
	for _, c := range codes {
		if c.Explanation() == "" {
			t.Errorf("%v has no explanation", c)
		}
	}
	return len(codes)
}

// Failed fails t unless err is a failed call of fn (a *dl.Error[C]) with
// one of codes, the library's documented ones, and returns it for the
// caller's further checks.
func Failed[C dl.Code](t *testing.T, err error, fn string, codes ...C) *dl.Error[C] {
	t.Helper()
	var e *dl.Error[C]
	is := func(c C) bool { return errors.Is(err, c) }
	if !errors.As(err, &e) || e.Func != fn || !slices.ContainsFunc(codes, is) {
		t.Fatalf("%s = %v (%T), want %v", fn, err, err, codes)
	}
	return e
}

// SeedBound checks that each of the functions that the seed (cuda-python's
// list, see internal/testing/seeds) names for package pkg has a Go binding
// in functions (a generated Functions map).
func SeedBound(t *testing.T, pkg string, functions map[string]string, seedFuncs []string) {
	t.Helper()
	for _, py := range seedFuncs {
		if g, ok := seeds.GoName(functions, py); !ok {
			t.Errorf("seed function %s.%s has no Go binding", pkg, py)
		} else {
			t.Logf("%s -> %s", py, g)
		}
	}
}

// AtLeast reads a compiler library's version with version (nvrtcVersion,
// nvJitLinkVersion, ...), logs it, and fails t when it is older than
// wantMajor.wantMinor. It returns the version.
func AtLeast[N int32 | uint32](t *testing.T, lib string, version func() (N, N, error), wantMajor, wantMinor N) (major, minor N) {
	t.Helper()
	major, minor, err := version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %d.%d", lib, major, minor)
	if major < wantMajor || major == wantMajor && minor < wantMinor {
		t.Errorf("Version = %d.%d, want %d.%d or newer", major, minor, wantMajor, wantMinor)
	}
	return major, minor
}

// BadSource is one case of a compiler's bad-input test (see BadSources):
// a source and options it must refuse with Code (any code when Code is
// zero) and a log holding Log.
type BadSource[C any] struct {
	Name, Src string
	Opts      []string
	Code      C
	Log       string
}

// BadSources runs each case in a subtest through compile, which creates
// a program of src, compiles it with opts, destroys it on every path and
// returns the error and the log: the failure must be an E as
// testenv.BadInput checks it, and 200 more must grow the process by at
// most limit bytes. With mayPass, a case without a Code may compile
// instead: then nothing crashed, which is all it checks.
func BadSources[E error, C interface {
	comparable
	error
}](t *testing.T, cases []BadSource[C], limit int64, mayPass bool, compile func(src string, opts []string) (error, string)) {
	t.Helper()
	var none C
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			err, log := compile(c.Src, c.Opts)
			t.Logf("%v\nlog: %s", err, log)
			if mayPass && c.Code == none && err == nil {
				return
			}
			testenv.BadInput[E](t, err, c.Code, log, c.Log, limit, func() { compile(c.Src, c.Opts) })
		})
	}
}
