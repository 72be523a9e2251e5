// Package libtest is the setup that the GPU tests of the library packages
// (blas, fft, rng, solver, sparse) share: a stream on device 0, an object
// closed when the test ends, Buffers made from and read into Go slices.
// Only tests import it.
package libtest

import (
	"io"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// Stream skips t without a GPU (fails it with CUDAGO_REQUIRE_GPU=1) and
// returns a new stream on device 0 with opts, closed when t ends.
func Stream(t testing.TB, opts core.StreamOptions) *core.Stream {
	t.Helper()
	testenv.RequireGPU(t)
	dev, err := core.GetDevice(0)
	if err != nil {
		t.Fatalf("GetDevice(0): %v", err)
	}
	s, err := dev.NewStream(&opts)
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// SyncedStream is Stream, synchronized before it is closed: an error of
// the work queued there fails t.
func SyncedStream(t testing.TB, opts core.StreamOptions) *core.Stream {
	t.Helper()
	s := Stream(t, opts)
	t.Cleanup(func() {
		if err := s.Sync(); err != nil {
			t.Errorf("Stream.Sync: %v", err)
		}
	})
	return s
}

// Open calls open and returns what it made, failing t on its error; the
// object is closed when t ends, and an error of its Close fails t.
func Open[T io.Closer](t testing.TB, open func() (T, error)) T {
	t.Helper()
	v, err := open()
	if err != nil {
		t.Fatalf("%T: %v", v, err)
	}
	t.Cleanup(func() {
		if err := v.Close(); err != nil {
			t.Errorf("%T.Close: %v", v, err)
		}
	})
	return v
}

// Upload copies v to a new Buffer allocated on s (one element at least),
// closed when t ends.
func Upload[T any](t testing.TB, s *core.Stream, v []T) *core.Buffer {
	t.Helper()
	var z T
	b, err := s.Device().Allocate(max(len(v), 1)*int(unsafe.Sizeof(z)), s)
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	if err := core.CopyToDevice(b, v); err != nil {
		t.Fatalf("CopyToDevice: %v", err)
	}
	return b
}

// Download copies the first n elements of b, after the work queued on
// b's stream.
func Download[T any](t testing.TB, b *core.Buffer, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := core.CopyFromDevice(out, b); err != nil {
		t.Fatalf("CopyFromDevice: %v", err)
	}
	return out
}

// Concurrently runs work in 2·n goroutines at once and fails t with the
// errors they return. Goroutines 0 to n-1 get s and shared (a Handle
// made on s); the others each a new stream of s's device and an object
// that open makes on it, both closed when work returns.
func Concurrently[T io.Closer](t testing.TB, n int, s *core.Stream, shared T, open func(*core.Stream) (T, error), work func(w int, s *core.Stream, h T) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for w := range 2 * n {
		wg.Go(func() {
			if w < n {
				errs <- work(w, s, shared)
				return
			}
			ws, err := s.Device().NewStream(nil)
			if err != nil {
				errs <- err
				return
			}
			defer ws.Close()
			h, err := open(ws)
			if err != nil {
				errs <- err
				return
			}
			defer h.Close()
			errs <- work(w, ws, h)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// Fakes returns Buffers of the given sizes with no memory behind them,
// views of one root Buffer at distinct 256-byte-aligned addresses from
// 256 on, for the checks that compare sizes, alignment and overlap.
func Fakes(sizes ...int) []*core.Buffer {
	step := func(n int) int { return (n + 255) &^ 255 }
	total := 256
	for _, n := range sizes {
		total += step(n)
	}
	root := core.NewBuffer(0, total, nil, nil)
	out := make([]*core.Buffer, len(sizes))
	off := 256
	for i, n := range sizes {
		v, err := root.View(off, n)
		if err != nil {
			panic(err) // within root by construction
		}
		out[i], off = v, off+step(n)
	}
	return out
}
