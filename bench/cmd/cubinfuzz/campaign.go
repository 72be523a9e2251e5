package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The protocol of a child on its standard output, one line each:
//
//	@cf ready                   set up, about to load
//	@cf B <i>                   loading mutation i
//	@cf R <i> <outcome> <text>  mutation i done: outcome is ok, rejected or error
//	@cf done                    every mutation of its share done
//
// A child that dies between B and R crashed on that mutation; one that
// prints no R within the timeout hangs on it.
const protoPrefix = "@cf "

// Outcomes of one mutation.
const (
	outOK       = "ok"       // loaded, kernels found and queried
	outRejected = "rejected" // refused by cudago's check before the driver
	outError    = "error"    // the driver returned an error
	outCrash    = "crash"    // the child died
	outHang     = "hang"     // the child did not finish it in time
	outSkipped  = "skipped"  // not loaded: the campaign stopped early
)

// result is what happened to one mutation.
type result struct {
	Index   int    `json:"index"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"` // the error, or how the child died
}

// campaign loads mutations 0..n-1 in child processes, jobs of them at a
// time, each child taking every jobs-th index from its start.
type campaign struct {
	n, jobs      int
	timeout      time.Duration // per mutation
	startTimeout time.Duration // from start to "ready"
	// child makes the command of a child that loads mutations from, from+step, ...
	child func(from, step int) *exec.Cmd
	kind  func(i int) string
	// stop, when not nil, ends the campaign when it is closed: the
	// children are killed and the mutations not done stay "skipped".
	stop <-chan struct{}
	// progress, when not nil, gets a line now and then and one per crash or hang.
	progress func(format string, args ...any)
}

// run runs the campaign and returns one result per mutation. It fails
// only when a child cannot start or dies before it is ready (no GPU, a
// broken install): restarting would fail the same way.
func (c *campaign) run() ([]result, error) {
	res := make([]result, c.n)
	for i := range res {
		res[i] = result{Index: i, Kind: c.kind(i), Outcome: outSkipped}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		finished int
	)
	record := func(r result) {
		mu.Lock()
		defer mu.Unlock()
		res[r.Index].Outcome, res[r.Index].Detail = r.Outcome, r.Detail
		finished++
		if c.progress != nil {
			switch {
			case r.Outcome == outCrash || r.Outcome == outHang:
				c.progress("mutation %d (%s): %s: %s", r.Index, res[r.Index].Kind, r.Outcome, r.Detail)
			case finished%1000 == 0:
				c.progress("%d/%d done", finished, c.n)
			}
		}
	}
	for w := range min(c.jobs, c.n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.worker(w, record); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// worker runs children for the indices from, from+jobs, ... until all are
// done, starting a new child after each crash or hang.
func (c *campaign) worker(from int, record func(result)) error {
	for next := from; next < c.n && !c.stopped(); {
		last, err := c.runChild(next, record)
		if err != nil {
			return err
		}
		next = last + c.jobs
	}
	return nil
}

func (c *campaign) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

var sigRE = regexp.MustCompile(`\bSIG[A-Z]+\b`)

// runChild runs one child from index from and returns the last index it
// dealt with (done, crashed or hung on).
func (c *campaign) runChild(from int, record func(result)) (int, error) {
	cmd := c.child(from, c.jobs)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	stderr := &capBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a hung child is killed with what it started
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting a child: %w", err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), protoPrefix); ok {
				lines <- l
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range lines {
		}
		cmd.Wait()
	}
	ready := false
	pending := -1 // the index between B and R
	last := from - c.jobs
	timer := time.NewTimer(c.startTimeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				werr := cmd.Wait()
				if !ready {
					return 0, fmt.Errorf("a child died before it was ready (%v): %s", werr, strings.TrimSpace(stderr.String()))
				}
				if pending < 0 {
					return 0, fmt.Errorf("a child exited between mutations, after %d (%v): %s", last, werr, strings.TrimSpace(stderr.String()))
				}
				record(result{Index: pending, Outcome: outCrash, Detail: deathReason(cmd, werr, stderr.String())})
				return pending, nil
			}
			f := strings.SplitN(l, " ", 4)
			switch f[0] {
			case "ready":
				ready = true
			case "B":
				pending, _ = strconv.Atoi(f[1])
			case "R":
				i, _ := strconv.Atoi(f[1])
				r := result{Index: i}
				if len(f) > 2 {
					r.Outcome = f[2]
				}
				if len(f) > 3 {
					r.Detail = f[3]
				}
				if i >= 0 && i < c.n {
					record(r)
				}
				pending, last = -1, i
			case "done":
				for range lines {
				}
				if err := cmd.Wait(); err != nil {
					return 0, fmt.Errorf("a child failed after its last mutation (%v): %s", err, strings.TrimSpace(stderr.String()))
				}
				return c.n, nil
			}
			timer.Reset(c.timeout)
		case <-c.stop:
			kill()
			return c.n, nil
		case <-timer.C:
			if !ready {
				kill()
				return 0, fmt.Errorf("a child was not ready after %v: %s", c.startTimeout, strings.TrimSpace(stderr.String()))
			}
			kill()
			i := pending
			if i < 0 {
				i = last + c.jobs // stuck between mutations: count the next one
			}
			if i >= c.n {
				return c.n, nil
			}
			record(result{Index: i, Outcome: outHang, Detail: fmt.Sprintf("no result after %v", c.timeout)})
			return i, nil
		}
	}
}

// deathReason says how a child died: the signal that killed it, a Go
// panic (a bug on the Go side, not the driver's), the signal the Go runtime
// reported before it exited (a SIGSEGV in C code makes it print "SIGSEGV:
// segmentation violation" and exit 2), or the exit status.
func deathReason(cmd *exec.Cmd, werr error, stderr string) string {
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + sigName(ws.Signal())
	}
	code := cmd.ProcessState.ExitCode()
	if werr == nil {
		return "exited 0 in the middle of a mutation"
	}
	if _, after, ok := strings.Cut(stderr, "panic: "); ok {
		line, _, _ := strings.Cut(after, "\n")
		return fmt.Sprintf("Go panic (exit %d): %s", code, line)
	}
	if m := sigRE.FindString(stderr); m != "" {
		return fmt.Sprintf("%s (Go runtime report, exit %d)", m, code)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	return fmt.Sprintf("exit %d: %s", code, lines[len(lines)-1])
}

// sigName is SIGSEGV for syscall.SIGSEGV.
func sigName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
		syscall.SIGFPE: "SIGFPE", syscall.SIGILL: "SIGILL", syscall.SIGKILL: "SIGKILL",
		syscall.SIGTRAP: "SIGTRAP", syscall.SIGSYS: "SIGSYS",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

// capBuffer keeps the first and the last max bytes written to it: the Go
// runtime's report of a signal comes first, a goroutine dump may follow,
// and an error message comes last.
type capBuffer struct {
	mu         sync.Mutex
	max        int
	head, tail []byte
	dropped    bool
}

func (t *capBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := t.max - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > t.max {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-t.max:]...)
		t.dropped = true
	}
	return n, nil
}

func (t *capBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return string(t.head) + "\n...\n" + string(t.tail)
	}
	return string(t.head) + string(t.tail)
}
