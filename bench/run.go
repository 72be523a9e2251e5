package bench

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cudago/cudago/bench/cbase"
	"github.com/cudago/cudago/bench/chart"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Result is one case's outcome: per-iteration times (median over the
// repetitions) of both sides.
type Result struct {
	Case   *Case
	Go, C  time.Duration // per iteration, divided by PerOp
	Allocs float64       // per iteration of the cudago side; -1 unmeasured
	Err    error
}

// Ratio is cudago time / C time (below 1: cudago is faster).
func (r *Result) Ratio() float64 { return float64(r.Go) / float64(r.C) }

// GBps converts a per-iteration time of a copy case to GB/s (1e9 B/s).
func (r *Result) GBps(d time.Duration) float64 {
	return float64(r.Case.Bytes) / d.Seconds() / 1e9
}

// Met reports whether the case meets its target.
func (r *Result) Met() bool {
	if r.Err != nil {
		return false
	}
	if r.Case.MinSpeedup > 0 {
		return 1/r.Ratio() >= r.Case.MinSpeedup
	}
	if r.Case.CheckAllocs && r.Allocs > 0 && strings.HasPrefix(r.Case.Name, "Launch") {
		return false
	}
	return r.Case.Target == 0 || r.Ratio() <= r.Case.Target
}

// Measure runs each case matching filter: a warm-up, then reps timed
// repetitions of Iters iterations of each side, alternating which side
// goes first, and keeps the medians.
func Measure(cases []*Case, filter *regexp.Regexp, reps int, log io.Writer) []*Result {
	var out []*Result
	for _, c := range cases {
		if filter != nil && !filter.MatchString(c.Name) {
			continue
		}
		r := &Result{Case: c, Allocs: -1}
		out = append(out, r)
		r.Err = measure(c, r, reps)
		if log != nil {
			if r.Err != nil {
				fmt.Fprintf(log, "%-24s error: %v\n", c.Name, r.Err)
			} else {
				fmt.Fprintf(log, "%-24s cudago %v  C %v  ratio %.3f\n", c.Name, r.Go, r.C, r.Ratio())
			}
		}
	}
	return out
}

// timeGo times n iterations of the cudago side: at once, or in chunks
// with untimed drains between them (Chunk).
func (c *Case) timeGo(n int) (time.Duration, error) {
	if c.GoTimer != nil {
		var w Stopwatch
		err := c.GoTimer(n, &w)
		return w.Elapsed, err
	}
	if c.Chunk <= 0 {
		t0 := time.Now()
		err := c.Go(n)
		return time.Since(t0), err
	}
	var total time.Duration
	if err := c.Drain(); err != nil {
		return 0, err
	}
	for done := 0; done < n; {
		m := min(c.Chunk, n-done)
		t0 := time.Now()
		err := c.Go(m)
		total += time.Since(t0)
		if err != nil {
			return total, err
		}
		if err := c.Drain(); err != nil {
			return total, err
		}
		done += m
	}
	return total, nil
}

func measure(c *Case, r *Result, reps int) error {
	if c.Setup != nil {
		if err := c.Setup(); err != nil {
			return err
		}
	}
	warm := max(1, c.Iters/10)
	if err := c.Go(warm); err != nil {
		return err
	}
	if _, err := c.C(warm); err != nil {
		return err
	}
	// Each repetition times m iterations of each side; with Chunk the
	// sides are paired chunk by chunk instead (Iters/Chunk pairs a
	// repetition): the driver's launch cost drifts by ±10% over tens of
	// milliseconds, and adjacent chunks see the same drift. per is the
	// operations one timing covers; allocs, the iterations AllocsPerRun
	// divides by.
	pairs, m, per, allocs := reps, c.Iters, max(1, c.PerOp)*c.Iters, min(c.Iters, 1000)
	if c.Chunk > 0 {
		pairs, m, per, allocs = reps*max(1, c.Iters/c.Chunk), c.Chunk, c.Chunk, c.Chunk
	}
	var gos, cs []time.Duration
	goSide := func() error {
		d, err := c.timeGo(m)
		gos = append(gos, d)
		return err
	}
	cSide := func() error {
		cbase.SetChunk(c.Chunk)
		d, err := c.C(m)
		cbase.SetChunk(0)
		cs = append(cs, d)
		return err
	}
	// The sides alternate which goes first, so that neither always runs
	// on the other's leftovers.
	for i := range pairs {
		first, second := goSide, cSide
		if i%2 == 1 {
			first, second = cSide, goSide
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
	}
	r.Go = median(gos) / time.Duration(per)
	r.C = median(cs) / time.Duration(per)
	if c.CheckAllocs {
		r.Allocs = testing.AllocsPerRun(3, func() { c.Go(allocs) }) / float64(allocs)
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// fmtDur prints a per-operation time in µs.
func fmtDur(d time.Duration) string { return fmt.Sprintf("%.2f µs", float64(d)/1e3) }

// WriteTable writes the results as one Markdown table.
func WriteTable(w io.Writer, rs []*Result) {
	fmt.Fprintln(w, "| case | operation | cudago | C, same run | cudago vs C | allocs/op | target | met |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
	for _, r := range rs {
		c := r.Case
		if r.Err != nil {
			fmt.Fprintf(w, "| %s | %s | error: %v | | | | | no |\n", c.Name, c.What, r.Err)
			continue
		}
		var gv, cv, ratio, target string
		if c.Bytes > 0 {
			gv = fmt.Sprintf("%.1f GB/s", r.GBps(r.Go))
			cv = fmt.Sprintf("%.1f GB/s", r.GBps(r.C))
			ratio = fmt.Sprintf("%.2f×", 1/r.Ratio())
			target = fmt.Sprintf("≥ %.2f× C", c.MinSpeedup)
		} else {
			gv, cv = fmtDur(r.Go), fmtDur(r.C)
			ratio = fmt.Sprintf("%.3f×", r.Ratio())
			target = fmt.Sprintf("≤ %.2f× C", c.Target)
		}
		if c.Baseline != "" {
			cv += " (" + c.Baseline + ")"
		}
		allocs := ""
		if r.Allocs >= 0 {
			allocs = fmt.Sprintf("%.2f", r.Allocs)
			if strings.HasPrefix(c.Name, "Launch") {
				target += ", 0 allocs"
			}
		}
		met := "no"
		if r.Met() {
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Name, c.What, gv, cv, ratio, allocs, target, met)
	}
}

// ChartReport gives the results in the form cudagobench -json saves and
// the chart is drawn from; line is the run's header.
func ChartReport(line string, rs []*Result) *chart.Report {
	rep := &chart.Report{Line: line}
	for _, r := range rs {
		c := r.Case
		cc := chart.Case{
			Name: c.Name, What: c.What, Bytes: c.Bytes, Allocs: r.Allocs, Baseline: c.Baseline,
			Target: c.Target, MinSpeedup: c.MinSpeedup, Met: r.Met(), OffChart: c.OffChart,
		}
		if r.Err != nil {
			cc.Error = r.Err.Error()
		} else {
			cc.GoNs, cc.CNs = float64(r.Go), float64(r.C)
		}
		rep.Cases = append(rep.Cases, cc)
	}
	return rep
}

// Diagnose attributes the launch and pool overhead of cudago over the C
// loops. Every row times LaunchChunk operations with the stream drained
// before and after, untimed, and the rows take turns, so that all see the
// same drift of the driver; the table gives the median per operation.
func (s *Suite) Diagnose(w io.Writer, reps int) error {
	const n = LaunchChunk
	sh := s.Stream.Handle()
	empty, saxpy := s.Empty.Handle(), s.Saxpy.Handle()
	goLoop := func(launch func() error) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			if err := s.Stream.Sync(); err != nil {
				return 0, err
			}
			t0 := time.Now()
			for range n {
				if err := launch(); err != nil {
					return 0, err
				}
			}
			d := time.Since(t0)
			return d, s.Stream.Sync()
		}
	}
	mr := s.Dev.MemoryResource()
	fn, err := kernelFunction(s.Ctx, empty)
	if err != nil {
		return err
	}
	rows := []struct {
		what string
		run  func() (time.Duration, error)
	}{
		{"bare cgo call (empty C function) from Go", func() (time.Duration, error) {
			t0 := time.Now()
			for range n {
				cbase.Noop()
			}
			return time.Since(t0), nil
		}},
		{"cuCtxGetCurrent, C loop", func() (time.Duration, error) { return cbase.CtxGetCurrent(s.Ctx, n) }},
		{"cuStreamIsCapturing, C loop (the pool reuse's check, once on Allocate and once on Close)", func() (time.Duration, error) {
			return cbase.StreamIsCapturing(s.Ctx, sh, n)
		}},
		{"cuLaunchKernel (empty), C loop", func() (time.Duration, error) { return cbase.LaunchEmpty(s.Ctx, empty, sh, n, false) }},
		{"cuLaunchKernel (empty) of the context's CUfunction (cuKernelGetFunction) instead of the CUkernel, C loop", func() (time.Duration, error) {
			return cbase.LaunchEmpty(s.Ctx, driver.Kernel(fn), sh, n, false)
		}},
		{"cuCtxGetCurrent + cuLaunchKernel (empty), C loop (what core's C layer runs)", func() (time.Duration, error) {
			return cbase.LaunchEmptyChecked(s.Ctx, empty, sh, n)
		}},
		{"cuLaunchKernel (empty), one bare cgo call per launch from a Go loop", func() (time.Duration, error) {
			return cbase.LaunchEmptyPerCall(s.Ctx, empty, sh, n)
		}},
		{"core's C launch shim (empty), one cgo call per launch from a Go loop", func() (time.Duration, error) {
			return cbase.LaunchShimPerCall(s.Ctx, empty, sh, n, nil)
		}},
		{"the same with core.Launch's Go-side work (validation, 4 atomics, packing 5 args) before each", func() (time.Duration, error) {
			return cbase.LaunchShimPerCall(s.Ctx, empty, sh, n, goWork)
		}},
		{"the same with 16 Go cache lines (of a 256 KiB array) read before each", func() (time.Duration, error) {
			return cbase.LaunchShimPerCall(s.Ctx, empty, sh, n, func() { touchLines(16) })
		}},
		{"core.Launch (empty), Go", goLoop(func() error { return core.Launch(s.Stream, one, s.Empty) })},
		{"core.Launch (empty), Go, goroutine locked to its thread", func() (time.Duration, error) { return lockedLaunches(s, n) }},
		{"cuLaunchKernel (saxpy), C loop, kernelParams", func() (time.Duration, error) {
			return cbase.LaunchSaxpy(s.Ctx, saxpy, sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n)
		}},
		{"cuLaunchKernel (saxpy), C loop, packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, as core)", func() (time.Duration, error) {
			return cbase.LaunchSaxpyExtra(s.Ctx, saxpy, sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n)
		}},
		{"core.Launch (saxpy), Go", goLoop(func() error {
			return core.Launch(s.Stream, saxpyCfg, s.Saxpy, float32(2), s.X, s.Y, s.Out, int32(SaxpyN))
		})},
		{"cuMemAllocAsync + cuMemFreeAsync 1 MiB, C loop", func() (time.Duration, error) { return cbase.MemPool(s.Ctx, sh, 1<<20, n) }},
		{"the same, one bare cgo call each from a Go loop", func() (time.Duration, error) { return cbase.PoolPerCall(s.Ctx, sh, 1<<20, n) }},
		{"DeviceMemoryResource.Allocate + Buffer.Close, Go (stream-ordered reuse)", goLoop(func() error {
			b, err := mr.Allocate(1<<20, s.Stream)
			if err != nil {
				return err
			}
			return b.Close()
		})},
		{"DeviceMemoryResource.Allocate + Buffer.Close, Go, NoReuse (two driver calls)", goLoop(func() error {
			b, err := s.poolNoReuse.Allocate(1<<20, s.Stream)
			if err != nil {
				return err
			}
			return b.Close()
		})},
	}
	cbase.SetChunk(n)
	defer cbase.SetChunk(0)
	times := make([][]time.Duration, len(rows))
	samples := reps * 40
	for i := range samples {
		for j := range rows {
			r := rows[(i+j)%len(rows)] // rotate the order
			d, err := r.run()
			if err != nil {
				return fmt.Errorf("%s: %w", r.what, err)
			}
			k := (i + j) % len(rows)
			times[k] = append(times[k], d/n)
		}
	}
	fmt.Fprintf(w, "| diagnostic (median of %d × %d, rows interleaved, drains untimed) | per call |\n| --- | ---: |\n", samples, n)
	for j, r := range rows {
		fmt.Fprintf(w, "| %s | %d ns |\n", r.what, median(times[j]))
	}
	return nil
}

// kernelFunction returns the CUfunction of kernel k in context ctx.
func kernelFunction(ctx driver.Context, k driver.Kernel) (driver.Function, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return 0, err
	}
	return driver.KernelGetFunction(k)
}

// lockedLaunches times n empty launches from a goroutine locked to its OS
// thread, to tell thread migration apart from the launch's own cost.
func lockedLaunches(s *Suite, n int) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	for range n {
		if err := core.Launch(s.Stream, one, s.Empty); err != nil {
			return 0, err
		}
	}
	d := time.Since(t0)
	return d, s.Stream.Sync()
}

// goWork stands for the Go-side work of core.Launch: a config check, two
// acquire/release pairs of atomic counters, a zeroed 512-byte stack buffer
// and five arguments packed through a type switch.
var (
	workCount [2]atomic.Int64
	workSink  byte
	workArgs  = []any{float32(2), uint64(1), uint64(2), uint64(3), int32(256)}
)

func goWork() {
	if one.Validate() != nil {
		panic("bad config")
	}
	for i := range workCount {
		workCount[i].Add(1)
	}
	var stack [512]byte
	off := 0
	for _, a := range workArgs {
		switch v := a.(type) {
		case float32:
			binary.LittleEndian.PutUint32(stack[off:], math.Float32bits(v))
			off += 8
		case uint64:
			binary.LittleEndian.PutUint64(stack[off:], v)
			off += 8
		case int32:
			binary.LittleEndian.PutUint32(stack[off:], uint32(v))
			off += 4
		}
	}
	workSink += stack[3] + stack[off-1]
	for i := range workCount {
		workCount[i].Add(-1)
	}
}

// touchArena is read by touchLines: n fixed cache lines 16 KiB apart, the
// same every call, as a launch reads the same few objects every time.
var (
	touchArena [256 << 10]byte
	touchSink  byte
)

func touchLines(n int) {
	var x byte
	for i := range n {
		x += touchArena[(i*16<<10)%len(touchArena)]
	}
	touchSink += x
}
