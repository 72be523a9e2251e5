package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// sideLog records the calls of a fake case's two sides: "go n" and "C n".
type sideLog []string

func (l *sideLog) goSide(n int) error {
	*l = append(*l, fmt.Sprint("go ", n))
	return nil
}

// cSide reports 5µs an iteration, so that the C medians are exact.
func (l *sideLog) cSide(n int) (time.Duration, error) {
	*l = append(*l, fmt.Sprint("C ", n))
	return time.Duration(n) * 5 * time.Microsecond, nil
}

// TestMeasurePairs checks, without a GPU, the runner's schedule: a
// warm-up of each side, then pairs that alternate which side goes first,
// of Iters iterations, or of Chunk with the drains between chunks; and
// the per-operation medians.
func TestMeasurePairs(t *testing.T) {
	var log sideLog
	c := &Case{Name: "Fake", Iters: 100, PerOp: 4, C: log.cSide, Go: log.goSide,
		GoTimer: func(n int, tm Timer) error {
			tm.(*Stopwatch).Elapsed = time.Duration(n) * 10 * time.Microsecond
			return log.goSide(n)
		}}
	var r Result
	if err := measure(c, &r, 3); err != nil {
		t.Fatal(err)
	}
	want := []string{"go 10", "C 10", "go 100", "C 100", "C 100", "go 100", "go 100", "C 100"}
	if !slices.Equal(log, want) {
		t.Errorf("calls %q, want %q", log, want)
	}
	// 1000µs and 500µs a repetition of 100 iterations of 4 operations.
	if r.Go != 2500*time.Nanosecond || r.C != 1250*time.Nanosecond {
		t.Errorf("Go %v, C %v; want 2.5µs and 1.25µs", r.Go, r.C)
	}

	log = nil
	drains := 0
	c = &Case{Name: "FakeChunked", Iters: 100, Chunk: 25, C: log.cSide, Go: log.goSide,
		Drain: func() error { drains++; return nil }}
	if err := measure(c, &r, 2); err != nil {
		t.Fatal(err)
	}
	want = []string{"go 10", "C 10"}
	for i := range 8 { // 2 repetitions of 100/25 chunk pairs
		if i%2 == 0 {
			want = append(want, "go 25", "C 25")
		} else {
			want = append(want, "C 25", "go 25")
		}
	}
	if !slices.Equal(log, want) {
		t.Errorf("chunked calls %q, want %q", log, want)
	}
	if drains != 16 { // before and after the one chunk of each Go timing
		t.Errorf("%d drains, want 16", drains)
	}
	if r.C != 5*time.Microsecond || r.Go <= 0 {
		t.Errorf("chunked Go %v, C %v; want C 5µs a launch", r.Go, r.C)
	}
}
