package libtest

import (
	"errors"
	"testing"
)

type closer struct {
	closed int
	err    error
}

func (c *closer) Close() error { c.closed++; return c.err }

// fakeT records what Open reports through it.
type fakeT struct {
	testing.TB
	cleanups []func()
	errs     int
	fatal    bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.errs++ }
func (f *fakeT) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeT) run() {
	for _, fn := range f.cleanups {
		fn()
	}
}

// TestOpen: the object is closed once when the test ends, a failing Close
// is reported, and an error of open is fatal.
func TestOpen(t *testing.T) {
	ft := &fakeT{}
	c := Open(ft, func() (*closer, error) { return &closer{err: errors.New("x")}, nil })
	if c.closed != 0 || ft.fatal {
		t.Fatal("closed before the end, or failed")
	}
	ft.run()
	if c.closed != 1 || ft.errs != 1 {
		t.Errorf("closed %d times, %d errors; want 1 and 1", c.closed, ft.errs)
	}
	ft = &fakeT{}
	Open(ft, func() (*closer, error) { return nil, errors.New("open failed") })
	if !ft.fatal {
		t.Error("an error of open is not fatal")
	}
}
