package testenv

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/internal/dl"
)

// WantCountError requires err to be the *dl.CountError that a generated
// function of bindings package lib returns for fn's count parameter count,
// set to value, over counted, which holds n elements.
func WantCountError(t *testing.T, err error, lib, fn, count, counted string, value int64, n int) {
	t.Helper()
	var ce *dl.CountError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: got %v (%T), want a *CountError", fn, err, err)
	}
	want := dl.CountError{Lib: lib, Func: fn, Count: count, Value: value, Counted: counted, Len: n}
	if *ce != want {
		t.Fatalf("%s: got %+v, want %+v", fn, *ce, want)
	}
	if ce.Error() == "" {
		t.Fatal("empty error text")
	}
}
