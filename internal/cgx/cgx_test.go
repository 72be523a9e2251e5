package cgx

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
)

// status is a library status type, as the bindings generate them.
type status int32

func (s status) Error() string { return fmt.Sprintf("STATUS_%d", int32(s)) }

type statusErr struct {
	fn string
	s  status
}

func (e *statusErr) Error() string { return e.fn + ": " + e.s.Error() }

var (
	fnA, fnB, fnC byte // addresses to resolve to
	errNoLib      = errors.New("libfake: not found")
)

func fakeProc(name string) (unsafe.Pointer, error) {
	switch name {
	case "a":
		return unsafe.Pointer(&fnA), nil
	case "b":
		return unsafe.Pointer(&fnB), nil
	case "nil":
		return nil, nil
	case "nolib":
		return nil, errNoLib
	}
	return nil, &dl.MissingFunctionError{Func: name, Lib: "libfake", Need: "9.9"}
}

func fakeStatus(name string, s status) error { return &statusErr{name, s} }

func TestTable(t *testing.T) {
	lib := NewLib("libfake", fakeProc, fakeStatus)
	c := make([]unsafe.Pointer, 6) // the C table
	tab := NewTable(c, []Entry{
		{Name: "a", Lib: lib},
		{Name: "b", Lib: lib},
		{Name: "old", Lib: lib, Fallback: func(name string) unsafe.Pointer { return unsafe.Pointer(&fnC) }},
		{Name: "gone", Lib: lib, Fallback: func(name string) unsafe.Pointer { return nil }},
		{Name: "nolib", Lib: lib},
		{Name: "nil", Lib: lib},
		{Name: "beyond", Lib: lib},
	})
	if tab.LoadErr(4) != nil || c[0] != nil {
		t.Fatal("resolved before Load")
	}
	tab.Load()
	tab.Load()
	if c[0] != unsafe.Pointer(&fnA) || c[1] != unsafe.Pointer(&fnB) || c[2] != unsafe.Pointer(&fnC) || c[3] != nil || c[4] != nil || c[5] != nil {
		t.Fatalf("C table %v", c)
	}
	for i, want := range []bool{false, false, false, true, true, true, true} {
		if got := tab.LoadErr(i) != nil; got != want {
			t.Errorf("entry %d (%s): load error %v", i, tab.Name(i), tab.LoadErr(i))
		}
	}
	if tab.Len() != 7 || tab.Index("nolib") != 4 || tab.Index("x") != -1 || tab.Name(-1) != "?" || tab.Name(7) != "?" || tab.LoadErr(99) != nil {
		t.Error("Len, Index or Name")
	}

	ret := func(i int, code uint32) uint64 { return uint64(i)<<32 | uint64(code) }
	if err := tab.Err(0); err != nil {
		t.Errorf("Err(0) = %v", err)
	}
	// A status: the library's error for the entry's function and the code,
	// negative codes of signed status types included.
	var se *statusErr
	if err := tab.Err(ret(1, 7)); !errors.As(err, &se) || se.fn != "b" || se.s != 7 {
		t.Errorf("status 7 of b: %v", err)
	}
	if err := tab.Err(ret(0, uint32(0xffffffff))); !errors.As(err, &se) || se.fn != "a" || se.s != -1 {
		t.Errorf("status -1 of a: %v", err)
	}
	// Missing: what resolving it said, the very value.
	if err := tab.Err(ret(4, Missing)); err != tab.LoadErr(4) || !errors.Is(err, errNoLib) {
		t.Errorf("missing nolib: %v", err)
	}
	var mf *dl.MissingFunctionError
	if err := tab.Err(ret(3, Missing)); !errors.As(err, &mf) || mf.Func != "gone" || mf.Need != "9.9" {
		t.Errorf("missing gone: %v, want Proc's error (the fallback found nothing)", err)
	}
	if err := tab.Err(ret(5, Missing)); !errors.As(err, &mf) || mf.Func != "nil" || mf.Lib != "libfake" {
		t.Errorf("missing nil: %v", err)
	}
	if err := tab.Err(ret(6, Missing)); !errors.As(err, &mf) || mf.Func != "beyond" {
		t.Errorf("beyond the C table: %v", err)
	}
	// Missing without a recorded error (a shim called before Load).
	fresh := NewTable(make([]unsafe.Pointer, 1), []Entry{{Name: "a", Lib: lib}})
	if err := fresh.Err(ret(0, Missing)); !errors.As(err, &mf) || mf.Func != "a" || mf.Lib != "libfake" {
		t.Errorf("missing before Load: %v", err)
	}
	// A cg_ret that no shim returns: an error, not a panic.
	if err := tab.Err(ret(70, 1)); err == nil {
		t.Error("an index outside the table gives no error")
	}
	noLib := NewTable(make([]unsafe.Pointer, 1), []Entry{{Name: "x"}})
	noLib.Load()
	if err := noLib.Err(ret(0, 3)); !errors.As(err, &mf) || mf.Func != "x" {
		t.Errorf("an entry without a library: %v", err)
	}
}
