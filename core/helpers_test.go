package core

import (
	"errors"
	"sync"
	"testing"
)

// try(f()).must(t) returns f's value, failing the test on its error.
func try[T any](v T, err error) result[T] { return result[T]{v, err} }

type result[T any] struct {
	v   T
	err error
}

func (r result[T]) must(t testing.TB) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

// wantErrorAs fails t unless err, what a call named what returned, is or
// wraps an E, and returns that E for the checks of its fields.
func wantErrorAs[E error](t testing.TB, what string, err error) E {
	t.Helper()
	var e E
	if err == nil {
		t.Fatalf("%s succeeded", what)
	}
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not a %T: %v", err, e, err)
	}
	return e
}

// readBack copies the first n elements of b to a new slice: how most GPU
// tests fetch a result.
func readBack[T any](t testing.TB, b *Buffer, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := CopyFromDevice(out, b); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantEach fails t at the first element of got that is not want(i), so
// that a wrong result names the element, its value and the expected one.
func wantEach[T comparable](t testing.TB, what string, got []T, want func(i int) T) {
	t.Helper()
	for i, v := range got {
		if w := want(i); v != w {
			t.Fatalf("%s: element %d = %v, want %v", what, i, v, w)
		}
	}
}

// wantSlice is wantEach against the elements of want.
func wantSlice[T comparable](t testing.TB, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	wantEach(t, what, got, func(i int) T { return want[i] })
}

// closeTwice closes c, failing the test if that fails, and closes it
// again, which must do nothing: every Close in core may be called twice.
func closeTwice(t testing.TB, c interface{ Close() error }) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// inParallel runs f(0), ..., f(n-1) on n goroutines and reports their
// errors once all have returned: the fan-out of the concurrency tests.
func inParallel(t testing.TB, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
