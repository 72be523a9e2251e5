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
	var gos, cs []time.Duration
	goSide := func() error {
		d, err := c.timeGo(c.Iters)
		gos = append(gos, d)
		return err
	}
	cSide := func() error {
		cbase.SetChunk(c.Chunk)
		d, err := c.C(c.Iters)
		cbase.SetChunk(0)
		cs = append(cs, d)
		return err
	}
	for i := range reps {
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
	per := max(1, c.PerOp) * c.Iters
	r.Go = median(gos) / time.Duration(per)
	r.C = median(cs) / time.Duration(per)
	if c.CheckAllocs {
		n := min(c.Iters, 1000)
		r.Allocs = testing.AllocsPerRun(3, func() { c.Go(n) }) / float64(n)
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

// Diagnose attributes the launch overhead of cudago over the C loop: a
// bare cgo call, cuCtxGetCurrent (which core's C layer calls before every
// operation), and the C launch loop with and without it, interleaved,
// medians over reps.
func (s *Suite) Diagnose(w io.Writer, reps int) error {
	const n = 20000
	sh := s.Stream.Handle()
	var cgo, getcur, plain, checked, golaunch, percall, saxpyKP, saxpyExtra, gosaxpy, locked, shim, shimWork, poolC, poolGo, poolCore, touch4, touch16 []time.Duration
	for range reps {
		t0 := time.Now()
		for range n {
			cbase.Noop()
		}
		cgo = append(cgo, time.Since(t0)/n)
		d, err := cbase.CtxGetCurrent(s.Ctx, n)
		if err != nil {
			return err
		}
		getcur = append(getcur, d/n)
		if d, err = cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), sh, n, false); err != nil {
			return err
		}
		plain = append(plain, d/n)
		if d, err = cbase.LaunchEmptyChecked(s.Ctx, s.Empty.Handle(), sh, n); err != nil {
			return err
		}
		checked = append(checked, d/n)
		t0 = time.Now()
		for range n {
			if err := core.Launch(s.Stream, one, s.Empty); err != nil {
				return err
			}
		}
		if err := s.Stream.Sync(); err != nil {
			return err
		}
		golaunch = append(golaunch, time.Since(t0)/n)
		if d, err = cbase.LaunchEmptyPerCall(s.Ctx, s.Empty.Handle(), sh, n); err != nil {
			return err
		}
		percall = append(percall, d/n)
		if d, err = cbase.LaunchSaxpy(s.Ctx, s.Saxpy.Handle(), sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n); err != nil {
			return err
		}
		saxpyKP = append(saxpyKP, d/n)
		if d, err = cbase.LaunchSaxpyExtra(s.Ctx, s.Saxpy.Handle(), sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n); err != nil {
			return err
		}
		saxpyExtra = append(saxpyExtra, d/n)
		t0 = time.Now()
		for range n {
			if err := core.Launch(s.Stream, saxpyCfg, s.Saxpy, float32(2), s.X, s.Y, s.Out, int32(SaxpyN)); err != nil {
				return err
			}
		}
		if err := s.Stream.Sync(); err != nil {
			return err
		}
		gosaxpy = append(gosaxpy, time.Since(t0)/n)
		d, err = lockedLaunches(s, n)
		if err != nil {
			return err
		}
		locked = append(locked, d/n)
		if d, err = cbase.LaunchShimPerCall(s.Ctx, s.Empty.Handle(), sh, n, nil); err != nil {
			return err
		}
		shim = append(shim, d/n)
		if d, err = cbase.LaunchShimPerCall(s.Ctx, s.Empty.Handle(), sh, n, goWork); err != nil {
			return err
		}
		shimWork = append(shimWork, d/n)
		if d, err = cbase.LaunchShimPerCall(s.Ctx, s.Empty.Handle(), sh, n, func() { touchLines(4) }); err != nil {
			return err
		}
		touch4 = append(touch4, d/n)
		if d, err = cbase.LaunchShimPerCall(s.Ctx, s.Empty.Handle(), sh, n, func() { touchLines(16) }); err != nil {
			return err
		}
		touch16 = append(touch16, d/n)
		if d, err = cbase.MemPool(s.Ctx, sh, 1<<20, n); err != nil {
			return err
		}
		poolC = append(poolC, d/n)
		if d, err = cbase.PoolPerCall(s.Ctx, sh, 1<<20, n); err != nil {
			return err
		}
		poolGo = append(poolGo, d/n)
		mr := s.Dev.MemoryResource()
		t0 = time.Now()
		for range n {
			b, err := mr.Allocate(1<<20, s.Stream)
			if err != nil {
				return err
			}
			if err := b.Close(); err != nil {
				return err
			}
		}
		if err := s.Stream.Sync(); err != nil {
			return err
		}
		poolCore = append(poolCore, time.Since(t0)/n)
	}
	fmt.Fprintf(w, "| diagnostic (median of %d × %d) | per call |\n| --- | ---: |\n", reps, n)
	fmt.Fprintf(w, "| bare cgo call (empty C function) from Go | %d ns |\n", median(cgo))
	fmt.Fprintf(w, "| cuCtxGetCurrent, C loop | %d ns |\n", median(getcur))
	fmt.Fprintf(w, "| cuLaunchKernel (empty), C loop | %d ns |\n", median(plain))
	fmt.Fprintf(w, "| cuCtxGetCurrent + cuLaunchKernel, C loop (what core's C layer runs) | %d ns |\n", median(checked))
	fmt.Fprintf(w, "| core.Launch (empty), Go | %d ns |\n", median(golaunch))
	fmt.Fprintf(w, "| cuLaunchKernel (empty), one bare cgo call per launch from a Go loop | %d ns |\n", median(percall))
	fmt.Fprintf(w, "| cuLaunchKernel (saxpy), C loop, kernelParams | %d ns |\n", median(saxpyKP))
	fmt.Fprintf(w, "| cuLaunchKernel (saxpy), C loop, packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) | %d ns |\n", median(saxpyExtra))
	fmt.Fprintf(w, "| core.Launch (saxpy), Go | %d ns |\n", median(gosaxpy))
	fmt.Fprintf(w, "| core.Launch (empty), Go, goroutine locked to its thread | %d ns |\n", median(locked))
	fmt.Fprintf(w, "| core's C launch shim, one cgo call per launch from a Go loop | %d ns |\n", median(shim))
	fmt.Fprintf(w, "| the same with core.Launch's Go-side work (validation, 4 atomics, packing 5 args) before each | %d ns |\n", median(shimWork))
	fmt.Fprintf(w, "| the same with 4 Go cache lines (of a 256 KiB array) read before each | %d ns |\n", median(touch4))
	fmt.Fprintf(w, "| the same with 16 Go cache lines read before each | %d ns |\n", median(touch16))
	fmt.Fprintf(w, "| cuMemAllocAsync + cuMemFreeAsync 1 MiB, C loop | %d ns |\n", median(poolC))
	fmt.Fprintf(w, "| the same, one cgo call each from a Go loop | %d ns |\n", median(poolGo))
	fmt.Fprintf(w, "| DeviceMemoryResource.Allocate + Buffer.Close, Go | %d ns |\n", median(poolCore))
	return nil
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
