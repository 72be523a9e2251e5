// Package bindtest holds the checks that the tests of the generated
// bindings packages of the math libraries and the runtime share.
package bindtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/internal/version"
	"github.com/cudago/cudago/pathfinder"
)

// Table is a generated package's table of entry points (its procs).
type Table interface {
	Len() int
	Proc(i int) *dl.Proc
	Get(i int) (unsafe.Pointer, error)
}

// Load loads lib and returns it with its version. Without the library the
// test fails (CI installs every library), except on the GPU machine,
// whose CUDA may lack it: there it is skipped.
func Load(t testing.TB, lib pathfinder.Lib) (*pathfinder.Library, string) {
	t.Helper()
	l, err := pathfinder.Load(lib)
	if err != nil {
		if testenv.OnGPUMachine() {
			t.Skipf("%s is not installed on this machine: %v", lib, err)
		}
		t.Fatalf("loading %s: %v (run scripts/setup-cuda.sh)", lib, err)
	}
	v, err := l.Version()
	if err != nil {
		t.Fatalf("%s (%s): no version: %v", lib, l.Path, err)
	}
	if _, err := version.Parse(v); err != nil {
		t.Fatalf("%s (%s): version %q: %v", lib, l.Path, v, err)
	}
	return l, v
}

// Resolves checks every entry point of tab against the loaded lib: each
// one that a header of the loaded version (or older) declares must be
// found, which proves its symbol name right; a newer one is either found
// or reported as a *MissingFunctionError that names the version needing
// it. absent lists functions that headers declare but the library does not
// export (curandGenerateBinomial): those may be missing at any version.
// It returns how many entry points were found.
func Resolves(t *testing.T, lib pathfinder.Lib, tab Table, absent ...string) int {
	t.Helper()
	l, have := Load(t, lib)
	found := 0
	for i := 0; i < tab.Len(); i++ {
		p := tab.Proc(i)
		ptr, err := tab.Get(i)
		if err == nil {
			if ptr == nil {
				t.Errorf("%s: resolved to NULL", p.Name)
			}
			found++
			continue
		}
		var missing *dl.MissingFunctionError
		if !errors.As(err, &missing) {
			t.Errorf("%s: %v (%T), want a *MissingFunctionError", p.Name, err, err)
			continue
		}
		if slices.Contains(absent, p.Name) {
			t.Logf("%s: declared but not exported, as known: %v", p.Name, err)
			continue
		}
		if p.Removed != "" {
			t.Logf("%s: the %s headers no longer declare it, and %s (version %s) lacks it: %v", p.Name, p.Removed, l.Path, have, err)
			continue
		}
		if !version.Less(have, p.Since) {
			t.Errorf("%s: declared since %s, but %s (version %s) lacks %v", p.Name, p.Since, l.Path, have, p.Symbols)
			continue
		}
		if missing.Func != p.Name || missing.Need != p.Since || missing.Have != have {
			t.Errorf("%s: %+v, want Func %s, Need %s, Have %s", p.Name, *missing, p.Name, p.Since, have)
		}
	}
	t.Logf("%s %s (%s): %d of %d entry points found", lib, have, l.Path, found, tab.Len())
	return found
}

// Version loads lib and reads its version through its bindings'
// GetProperty, with the properties major, minor and patch level: it must
// be the version pathfinder reads from the library. It returns the three
// numbers, for the caller to check the library's own GetVersion against.
func Version[P any](t *testing.T, lib pathfinder.Lib, getProperty func(P, *int32) error, major, minor, patch P) [3]int32 {
	t.Helper()
	_, want := Load(t, lib)
	var parts [3]int32
	for i, p := range []P{major, minor, patch} {
		if err := getProperty(p, &parts[i]); err != nil {
			t.Fatalf("GetProperty(%v): %v", p, err)
		}
	}
	if got := fmt.Sprintf("%d.%d.%d", parts[0], parts[1], parts[2]); got != want {
		t.Fatalf("GetProperty says %s; pathfinder says %s", got, want)
	}
	t.Logf("%s %s", lib, want)
	return parts
}

// Named returns the values of a status or enum type below limit that its
// String names: those that do not print as "typ(n)".
func Named[S ~int32 | ~uint32](typ string, limit int) []S {
	var out []S
	for v := range limit {
		if !strings.HasPrefix(fmt.Sprint(S(v)), typ+"(") {
			out = append(out, S(v))
		}
	}
	return out
}

// Create checks a library's first call that needs the GPU (creating a
// handle), through create. With a GPU it must succeed: use, when not nil,
// runs on the handle, destroy frees it, and Create returns a nil error.
// Without one it must fail, not crash: Create returns the handle and the
// error for the caller to check the library's documented code.
func Create[H any](t *testing.T, lib pathfinder.Lib, create func(*H) error, use func(H), destroy func(H) error) (H, error) {
	t.Helper()
	Load(t, lib)
	var h H
	err := create(&h)
	if testenv.GPUError() != nil {
		if err == nil {
			t.Fatalf("creating a %T without a GPU succeeded", h)
		}
		t.Logf("without a GPU: %v", err)
		return h, err
	}
	if err != nil {
		t.Fatalf("creating a %T with a GPU: %v", h, err)
	}
	if use != nil {
		use(h)
	}
	if err := destroy(h); err != nil {
		t.Fatal(err)
	}
	return h, nil
}
