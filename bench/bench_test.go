package bench

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/bench/cbase"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
)

var suite struct {
	once sync.Once
	s    *Suite
	err  error
}

func getSuite(tb testing.TB) *Suite {
	tb.Helper()
	testenv.RequireGPU(tb)
	suite.once.Do(func() { suite.s, suite.err = NewSuite() })
	if suite.err != nil {
		tb.Fatal(suite.err)
	}
	return suite.s
}

func findCase(s *Suite, name string) *Case {
	for _, c := range s.Cases() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// runCase benchmarks a case's cudago side and its C twin as sub-benchmarks.
func runCase(b *testing.B, name string) {
	s := getSuite(b)
	c := findCase(s, name)
	if c.Setup != nil {
		if err := c.Setup(); err != nil {
			b.Fatal(err)
		}
	}
	per := float64(max(1, c.PerOp))
	b.Run("cudago", func(b *testing.B) {
		b.ReportAllocs()
		if c.Bytes > 0 {
			b.SetBytes(c.Bytes)
		}
		c.Go(1)
		b.ResetTimer()
		if c.GoTimer != nil { // times only what it brackets
			b.StopTimer()
			if err := c.GoTimer(b.N, b); err != nil {
				b.Fatal(err)
			}
		} else if c.Chunk > 0 { // drain the stream between chunks, untimed (Case.Chunk)
			for done := 0; done < b.N; done += c.Chunk {
				if err := c.Go(min(c.Chunk, b.N-done)); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := c.Drain(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		} else if err := c.Go(b.N); err != nil {
			b.Fatal(err)
		}
		if c.PerOp > 1 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, "ns/kernel")
		}
	})
	b.Run("C", func(b *testing.B) {
		if c.Bytes > 0 {
			b.SetBytes(c.Bytes)
		}
		c.C(1)
		b.ResetTimer()
		cbase.SetChunk(c.Chunk)
		d, err := c.C(b.N)
		cbase.SetChunk(0)
		if err != nil {
			b.Fatal(err)
		}
		// The C loop's own clock, without the one cgo call around it.
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "c-ns/op")
		if c.PerOp > 1 {
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N)/per, "ns/kernel")
		}
	})
}

func BenchmarkLaunchEmpty(b *testing.B)            { runCase(b, "LaunchEmpty") }
func BenchmarkLaunchSaxpy(b *testing.B)            { runCase(b, "LaunchSaxpy") }
func BenchmarkLaunchMixed8(b *testing.B)           { runCase(b, "LaunchMixed8") }
func BenchmarkLaunchSync(b *testing.B)             { runCase(b, "LaunchSync") }
func BenchmarkMemAllocFree(b *testing.B)           { runCase(b, "MemAllocFree") }
func BenchmarkMemPool(b *testing.B)                { runCase(b, "MemPool") }
func BenchmarkMemPoolNoReuse(b *testing.B)         { runCase(b, "MemPoolNoReuse") }
func BenchmarkGraph100(b *testing.B)               { runCase(b, "Graph100") }
func BenchmarkCopyH2DPinned_256MiB(b *testing.B)   { runCase(b, "CopyH2DPinned_256MiB") }
func BenchmarkCopyH2DPageable_256MiB(b *testing.B) { runCase(b, "CopyH2DPageable_256MiB") }
func BenchmarkCopyD2HPinned_256MiB(b *testing.B)   { runCase(b, "CopyD2HPinned_256MiB") }
func BenchmarkCopyD2HPageable_256MiB(b *testing.B) { runCase(b, "CopyD2HPageable_256MiB") }
func BenchmarkCopyD2HFresh_256MiB(b *testing.B)    { runCase(b, "CopyD2HFresh_256MiB") }
func BenchmarkCopyD2HFresh_16MiB(b *testing.B)     { runCase(b, "CopyD2HFresh_16MiB") }

// TestSuite runs both sides of every case and checks saxpy's result.
func TestSuite(t *testing.T) {
	s := getSuite(t)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// Every case has a benchmark of its name.
	for _, c := range s.Cases() {
		if c.Go == nil || c.C == nil || c.Iters <= 0 {
			t.Errorf("%s: incomplete", c.Name)
		}
	}
}

// TestLaunchAllocs: Launch allocates nothing, with 0, 5 and 8 arguments.
func TestLaunchAllocs(t *testing.T) {
	s := getSuite(t)
	for _, name := range []string{"LaunchEmpty", "LaunchSaxpy", "LaunchMixed8"} {
		c := findCase(s, name)
		if a := testing.AllocsPerRun(5, func() { c.Go(100) }) / 100; a != 0 {
			t.Errorf("%s: %.2f allocations per launch", name, a)
		}
	}
}

// TestStagedCopies round-trips pageable Go memory through the staged
// copy path (sizes around the chunk and threshold sizes) and checks it
// against the pinned (direct) path.
func TestStagedCopies(t *testing.T) {
	s := getSuite(t)
	for _, n := range []int{1<<20 + 3, 16 << 20, 16<<20 + 1, 37<<20 + 5, 64<<20 - 7} {
		src := make([]byte, n)
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		d, err := s.Dev.Allocate(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := core.CopyToDevice(d, src); err != nil {
			t.Fatal(err)
		}
		back := make([]byte, n)
		if err := core.CopyFromDevice(back, d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, src) {
			i := 0
			for back[i] == src[i] {
				i++
			}
			t.Fatalf("%d bytes: first difference at %d", n, i)
		}
		// Through pinned memory (direct path) the device holds the same.
		p, err := core.NewPinnedMemoryResource(s.Dev).Allocate(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := p.Bytes()
		if err := core.CopyFromDevice(pb, d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pb, src) {
			t.Fatalf("%d bytes: pinned read-back differs", n)
		}
		// Typed slices go the same way.
		f := make([]float32, n/4)
		if err := core.CopyFromDevice(f, d); err != nil {
			t.Fatal(err)
		}
		p.Close()
		d.Close()
	}
	// Concurrent staged copies share the staging buffers.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 40<<20 + g
			src := bytes.Repeat([]byte{byte(g + 1)}, n)
			d, err := s.Dev.Allocate(n, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer d.Close()
			back := make([]byte, n)
			for range 3 {
				if err := core.CopyToDevice(d, src); err != nil {
					t.Error(err)
					return
				}
				if err := core.CopyFromDevice(back, d); err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(back, src) {
					t.Errorf("goroutine %d: data differs", g)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestTable checks the table without a GPU.
func TestTable(t *testing.T) {
	rs := []*Result{
		{Case: &Case{Name: "LaunchEmpty", What: "x", Target: 1.03, CheckAllocs: true}, Go: 3100, C: 3000, Allocs: 0},
		{Case: &Case{Name: "CopyH2DPageable_256MiB", What: "y", Bytes: CopySize, MinSpeedup: 3, Baseline: "pageable"}, Go: 5 * time.Millisecond, C: 25 * time.Millisecond, Allocs: -1},
		{Case: &Case{Name: "MemPool", What: "z", Target: 1.1}, Go: 2000, C: 1500, Allocs: -1},
	}
	var buf bytes.Buffer
	WriteTable(&buf, rs)
	out := buf.String()
	for _, want := range []string{"| LaunchEmpty | x | 3.10 µs | 3.00 µs | 1.033× | 0.00 | ≤ 1.03× C, 0 allocs | no |",
		"53.7 GB/s", "10.7 GB/s (pageable)", "5.00×", "| yes |", "1.333×"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^\| --- `).MatchString(out) {
		t.Error("no header rule")
	}
}
