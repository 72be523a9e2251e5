package blas

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// tuneEvents records the tuning hook's events until the test ends.
func tuneEvents(t *testing.T) func() []tuneEvent {
	var mu sync.Mutex
	var evs []tuneEvent
	tuneHook = func(ev tuneEvent) {
		mu.Lock()
		defer mu.Unlock()
		evs = append(evs, ev)
	}
	t.Cleanup(func() { tuneHook, forceCandidate = nil, -1 })
	return func() []tuneEvent {
		mu.Lock()
		defer mu.Unlock()
		out := evs
		evs = nil
		return out
	}
}

// tuneProblem is a BFloat16 Matmul with its inputs and float64 reference.
type tuneProblem struct {
	m, n, k     int
	alpha, beta float32
	a, b, c     []BFloat16
	ref, bound  []float64
}

func newTuneProblem(t *testing.T, m, n, k int, alpha, beta float32) *tuneProblem {
	r := rng(t)
	p := &tuneProblem{m: m, n: n, k: k, alpha: alpha, beta: beta, a: random[BFloat16](r, m*k), b: random[BFloat16](r, k*n), c: random[BFloat16](r, m*n)}
	p.ref, p.bound = make([]float64, m*n), make([]float64, m*n)
	for i := range m { // row-major: C = A·B
		for j := range n {
			var sum, abs float64
			for l := range k {
				x := float64(p.a[i*k+l].Float32()) * float64(p.b[l*n+j].Float32())
				sum += x
				abs += math.Abs(x)
			}
			c := float64(p.c[i*n+j].Float32())
			p.ref[i*n+j] = float64(alpha)*sum + float64(beta)*c
			p.bound[i*n+j] = math.Abs(float64(alpha))*abs + math.Abs(float64(beta)*c)
		}
	}
	return p
}

// run queues the Matmul on h (C uploaded fresh) and returns C's Buffer.
func (p *tuneProblem) run(t *testing.T, h *Handle) *core.Buffer {
	t.Helper()
	s := h.Stream()
	cb := libtest.Upload(t, s, p.c)
	if err := MatmulRowMajor[BFloat16](h, ComputeFloat32, NoTrans, NoTrans, p.m, p.n, p.k, p.alpha, libtest.Upload(t, s, p.a), p.k, libtest.Upload(t, s, p.b), p.n, p.beta, cb, p.n, nil); err != nil {
		t.Fatal(err)
	}
	return cb
}

func (p *tuneProblem) check(t *testing.T, what string, cb *core.Buffer) {
	t.Helper()
	tol := matmulTol[BFloat16](ComputeFloat32, p.k)
	for i, v := range libtest.Download[BFloat16](t, cb, p.m*p.n) {
		g := float64(v.Float32())
		if d, lim := math.Abs(g-p.ref[i]), tol.rel*p.bound[i]+tol.out*math.Abs(p.ref[i])+tol.abs; !(d <= lim) {
			t.Fatalf("%s: C[%d] = %v, want %v (off by %.3g, tolerance %.3g)", what, i, g, p.ref[i], d, lim)
		}
	}
}

func describe(ev tuneEvent) string {
	s := fmt.Sprintf("%v in %v", ev.source, ev.took)
	if ev.source == tuneMeasured {
		s += fmt.Sprintf(", chose %d of %v", ev.chosen, ev.times)
	}
	return s
}

// TestGPUMatmulTuning: the first Matmul of a shape times the heuristic's
// candidates (into a scratch C when beta ≠ 0: C must come out right), the
// choice is kept by the handle and the process, every candidate computes
// within the same tolerance, TuneOff times nothing, TuneDisk's choice is
// read back by a "new process", and a Matmul queued during a capture does
// not time (and the captured graph computes right).
func TestGPUMatmulTuning(t *testing.T) {
	events := tuneEvents(t)
	p := newTuneProblem(t, 512, 384, 256, 1.5, -0.5)
	tuned.forget()
	_, s, h := gpu(t, nil)

	p.check(t, "first use, tuned", p.run(t, h))
	evs := events()
	if len(evs) != 1 || evs[0].source != tuneMeasured || len(evs[0].times) < 2 {
		t.Fatalf("first use: %d tuning events (%v), want one that timed several candidates", len(evs), evs)
	}
	n := len(evs[0].times)
	t.Logf("first use of %s: %s", evs[0].key, describe(evs[0]))
	p.check(t, "second use", p.run(t, h))
	if evs := events(); len(evs) != 0 {
		t.Errorf("second use on the same handle: %d tuning events, want none (the plan is kept)", len(evs))
	}
	h2 := libtest.Open(t, func() (*Handle, error) { return New(s, nil) })
	p.check(t, "another handle", p.run(t, h2))
	if evs := events(); len(evs) != 1 || evs[0].source != tuneMemory {
		t.Errorf("another handle: %v, want one choice from the process's memory", evs)
	}

	// Every candidate computes within the tolerance.
	for i := range n {
		tuned.forget()
		forceCandidate = i
		hi := libtest.Open(t, func() (*Handle, error) { return New(s, nil) })
		p.check(t, fmt.Sprintf("candidate %d", i), p.run(t, hi))
		if evs := events(); len(evs) != 1 || evs[0].chosen != i {
			t.Errorf("candidate %d: %v", i, evs)
		}
	}
	forceCandidate = -1

	t.Run("TuneOff", func(t *testing.T) {
		tuned.forget()
		_, _, h := gpu(t, &Options{MatmulTuning: TuneOff})
		p.check(t, "TuneOff", p.run(t, h))
		if evs := events(); len(evs) != 0 {
			t.Errorf("TuneOff: %v, want no tuning", evs)
		}
	})

	t.Run("TuneDisk", func(t *testing.T) {
		root := t.TempDir()
		t.Setenv("CUDAGO_CACHE_DIR", root)
		t.Setenv("CUDAGO_CACHE", "")
		tuned.forget()
		_, _, h := gpu(t, &Options{MatmulTuning: TuneDisk})
		p.check(t, "TuneDisk, first process", p.run(t, h))
		if id := h.diskID(); id == "" { // the handle exists now: its workspace is known
			t.Fatalf("no identity for the disk (driver %q, cuBLASLt %q)", driverVersion(), ltVersion())
		} else {
			t.Logf("disk identity: %s", id)
		}
		if evs := events(); len(evs) != 1 || evs[0].source != tuneMeasured {
			t.Fatalf("TuneDisk, first: %v, want a measured choice", evs)
		}
		files, _ := filepath.Glob(filepath.Join(root, "blas-matmul", "*.json"))
		if len(files) != 1 {
			t.Fatalf("%d files in %s/blas-matmul, want 1", len(files), root)
		}
		b, _ := os.ReadFile(files[0])
		t.Logf("%s: %s", files[0], b)
		tuned.forget() // a new process
		_, _, h2 := gpu(t, &Options{MatmulTuning: TuneDisk})
		start := time.Now()
		cb := p.run(t, h2)
		t.Logf("first use with the choice on disk: %v (host time of the call)", time.Since(start))
		p.check(t, "TuneDisk, second process", cb)
		if evs := events(); len(evs) != 1 || evs[0].source != tuneFile {
			t.Errorf("TuneDisk, second: %v, want the choice read from the file", evs)
		}
	})

	t.Run("capture", func(t *testing.T) {
		tuned.forget()
		_, s, h := gpu(t, nil)
		if _, err := Nrm2[float32](h, 2, libtest.Upload(t, s, []float32{3, 4}), 1); err != nil { // makes the handles
			t.Fatal(err)
		}
		a, b := libtest.Upload(t, s, p.a), libtest.Upload(t, s, p.b)
		cb := libtest.Upload(t, s, p.c)
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := s.BeginCapture(core.CaptureRelaxed); err != nil {
			t.Fatal(err)
		}
		err := MatmulRowMajor[BFloat16](h, ComputeFloat32, NoTrans, NoTrans, p.m, p.n, p.k, p.alpha, a, p.k, b, p.n, p.beta, cb, p.n, nil)
		g, gerr := s.EndCapture()
		if err != nil || gerr != nil {
			t.Fatalf("Matmul while capturing: %v; EndCapture: %v", err, gerr)
		}
		defer g.Close()
		if evs := events(); len(evs) != 1 || evs[0].source != tuneSkipped {
			t.Errorf("while capturing: %v, want a choice that timed nothing", evs)
		}
		ge, err := g.Instantiate()
		if err != nil {
			t.Fatal(err)
		}
		defer ge.Close()
		if err := ge.Launch(s); err != nil {
			t.Fatal(err)
		}
		p.check(t, "the captured Matmul", cb)
		p.check(t, "after the capture", p.run(t, h))
		if evs := events(); len(evs) != 1 || evs[0].source != tuneMeasured {
			t.Errorf("after the capture: %v, want the shape tuned now", evs)
		}
	})
}

// BenchmarkMatmulTuneFirstUse is the cost of a Matmul's first use of a
// shape (host and GPU time, the stream drained): descriptors, heuristic
// and, tuned, the timing of its candidates; each iteration forgets every
// choice and plan first. TuneOff is the heuristic alone; "again" is a
// Matmul of a known shape, for scale.
func BenchmarkMatmulTuneFirstUse(b *testing.B) {
	for _, sz := range []int{8192, 4096, 1024, 256} {
		for _, mode := range []struct {
			name string
			opts *Options
		}{{"tuned", nil}, {"TuneOff", &Options{MatmulTuning: TuneOff}}} {
			b.Run(fmt.Sprintf("bfloat16-%d/%s", sz, mode.name), func(b *testing.B) {
				_, s, h := gpu(b, mode.opts)
				a, bb, c := libtest.Upload(b, s, fill[BFloat16](sz*sz)), libtest.Upload(b, s, fill[BFloat16](sz*sz)), libtest.Upload(b, s, make([]BFloat16, sz*sz))
				mm := func() error {
					return Matmul[BFloat16](h, ComputeFloat32, NoTrans, NoTrans, sz, sz, sz, 1, a, sz, bb, sz, 0, c, sz, nil)
				}
				var cands int
				tuneHook = func(ev tuneEvent) { cands = len(ev.times) }
				defer func() { tuneHook = nil }()
				for range 2 { // the handle, the kernels' modules, clocks
					if err := mm(); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					tuned.forget()
					h.plans.clear()
					b.StartTimer()
					if err := mm(); err != nil {
						b.Fatal(err)
					}
					if err := s.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(cands), "candidates")
				start := time.Now()
				const again = 10
				for range again {
					if err := mm(); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/again, "again-ns/op")
			})
		}
	}
}
