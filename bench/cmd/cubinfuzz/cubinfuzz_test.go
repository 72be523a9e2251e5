package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cudago/cudago/fatbin"
)

// The test binary is also the fake child of TestCampaignRestarts: with
// CUBINFUZZ_FAKE_CHILD set it speaks the child protocol, crashing, being
// killed or hanging on chosen mutations, instead of running the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv("CUBINFUZZ_FAKE_CHILD"); spec != "" {
		fakeChild(spec)
		os.Exit(0)
	}
	if os.Getenv("CUBINFUZZ_MAIN") == "1" {
		// The command itself, with the arguments after "--".
		i := slices.Index(os.Args, "--")
		os.Args = append([]string{"cubinfuzz"}, os.Args[i+1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeChild runs the protocol for "n=N from=F step=S" with fates
// "segv=I" (the Go runtime's report of a SIGSEGV in C code, exit 2),
// "kill=I" (SIGKILL), "abort=I" (SIGABRT, which the Go runtime reports and
// exits 2 on), "panic=I" and "hang=I"; other mutations end ok, rejected or error by
// i%3.
func fakeChild(spec string) {
	v := map[string]int{"sleepms": 0, "segv": -1, "kill": -1, "abort": -1, "hang": -1, "panic": -1}
	for _, kv := range strings.Fields(spec) {
		k, val, _ := strings.Cut(kv, "=")
		v[k], _ = strconv.Atoi(val)
	}
	noCoreDumps()
	childLoop(os.Stdout, v["from"], v["step"], v["n"], func(i int) (string, string) {
		switch i {
		case v["segv"]:
			fmt.Fprintln(os.Stderr, "fatal error: unexpected signal during runtime execution")
			fmt.Fprintln(os.Stderr, "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x0]")
			os.Exit(2)
		case v["kill"]:
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		case v["abort"]:
			syscall.Kill(os.Getpid(), syscall.SIGABRT)
		case v["hang"]:
			time.Sleep(time.Hour)
		case v["panic"]:
			panic("a bug")
		}
		time.Sleep(time.Duration(max(v["sleepms"], 10)) * time.Millisecond) // the signals above arrive before the result
		return []string{outOK, outRejected, outError}[i%3], "detail of " + strconv.Itoa(i)
	})
}

// TestCampaignRestarts runs a campaign of fake children: each crash (by a
// signal, or reported by the Go runtime) and each hang is counted on its
// mutation, a new child goes on from the next one, and every other
// mutation is counted once with its outcome.
func TestCampaignRestarts(t *testing.T) {
	const n, jobs = 40, 3
	fates := map[int]string{4: "segv", 11: "kill", 16: "abort", 22: "hang", 30: "panic"}
	var spec []string
	for i, f := range fates {
		spec = append(spec, fmt.Sprintf("%s=%d", f, i))
	}
	var children atomic.Int32 // child is called by the campaign's workers
	var progress []string     // progress is called under the campaign's lock
	c := &campaign{
		n: n, jobs: jobs, timeout: 2 * time.Second, startTimeout: time.Minute,
		child: func(from, step int) *exec.Cmd {
			children.Add(1)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("CUBINFUZZ_FAKE_CHILD=n=%d from=%d step=%d %s", n, from, step, strings.Join(spec, " ")))
			return cmd
		},
		kind:     func(i int) string { return "k" + strconv.Itoa(i%2) },
		progress: func(format string, args ...any) { progress = append(progress, fmt.Sprintf(format, args...)) },
	}
	start := time.Now()
	res, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != n {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	want := map[string]string{
		"segv":  "SIGSEGV (Go runtime report, exit 2)",
		"kill":  "killed by SIGKILL",
		"abort": "SIGABRT (Go runtime report, exit 2)",
		"hang":  "no result after 2s",
		"panic": "Go panic (exit 2): a bug",
	}
	for i, r := range res {
		if r.Index != i || r.Kind != "k"+strconv.Itoa(i%2) {
			t.Errorf("result %d: %+v", i, r)
		}
		switch f, ok := fates[i]; {
		case ok && f == "hang":
			if r.Outcome != outHang || r.Detail != want[f] {
				t.Errorf("mutation %d (%s): %s %q", i, f, r.Outcome, r.Detail)
			}
		case ok:
			if r.Outcome != outCrash || r.Detail != want[f] {
				t.Errorf("mutation %d (%s): %s %q, want crash %q", i, f, r.Outcome, r.Detail, want[f])
			}
		default:
			if wo := []string{outOK, outRejected, outError}[i%3]; r.Outcome != wo || r.Detail != "detail of "+strconv.Itoa(i) {
				t.Errorf("mutation %d: %s %q, want %s", i, r.Outcome, r.Detail, wo)
			}
		}
	}
	// One child per worker, plus one after each crash and hang (the
	// hang's is the last of its worker's share only if 22 were).
	if got := int(children.Load()); got != jobs+len(fates) {
		t.Errorf("%d children started, want %d", got, jobs+len(fates))
	}
	if len(progress) != len(fates) || !strings.Contains(strings.Join(progress, "\n"), "mutation 11 (k1): crash: killed by SIGKILL") {
		t.Errorf("progress lines:\n%s", strings.Join(progress, "\n"))
	}
	t.Logf("%d mutations, %d children, %v", n, children.Load(), time.Since(start))
}

// TestCampaignChildFails: a child that cannot start its work (no GPU, say)
// stops the campaign with its message instead of being restarted forever.
func TestCampaignChildFails(t *testing.T) {
	c := &campaign{
		n: 10, jobs: 2, timeout: time.Second, startTimeout: 10 * time.Second,
		child: func(from, step int) *exec.Cmd {
			return exec.Command("sh", "-c", "echo 'no device here' >&2; exit 1")
		},
		kind: func(int) string { return "k" },
	}
	_, err := c.run()
	if err == nil || !strings.Contains(err.Error(), "no device here") {
		t.Fatalf("err = %v", err)
	}
}

// testSeed is the sm_90 cubin of the fatbin package's plain sample.
func testSeed(t *testing.T) *seedImage {
	t.Helper()
	b, err := os.ReadFile("../../../fatbin/testdata/cuda12.4/plain.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fatbin.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		if e.Kind == fatbin.KindELF && e.Arch == 90 {
			img, err := e.Data()
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSeed(img)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatal("no sm_90 cubin")
	return nil
}

// TestMutateDeterministic: mutation i depends on the PRNG seed and i only;
// every kind is made in about its proportion, and nearly every mutation
// changes the image.
func TestMutateDeterministic(t *testing.T) {
	s := testSeed(t)
	if len(s.kernels) != 1 || s.kernels[0] != "_Z1kPff" || len(s.shdrs) != 14 || len(s.relocs) != 2 || len(s.nvinfo) == 0 || len(s.phdrs) == 0 {
		t.Fatalf("seed analysis: kernels %q, %d sections, %d relocation tables, %d records, %d program headers",
			s.kernels, len(s.shdrs), len(s.relocs), len(s.nvinfo), len(s.phdrs))
	}
	const n = 3000
	counts := map[string]int{}
	same := 0
	for i := range n {
		a, ka := s.mutate(1, i)
		b, kb := s.mutate(1, i)
		if !bytes.Equal(a, b) || ka != kb {
			t.Fatalf("mutation %d differs between two calls", i)
		}
		counts[ka]++
		if bytes.Equal(a, s.img) {
			same++
		}
		if c, _ := s.mutate(2, i); bytes.Equal(a, c) && !bytes.Equal(a, s.img) {
			t.Errorf("mutation %d is the same with PRNG seeds 1 and 2", i)
		}
	}
	for _, k := range kinds {
		if got, want := counts[k.name], n*k.weight/100; got < want*7/10 || got > want*13/10 {
			t.Errorf("kind %s: %d of %d mutations, want about %d", k.name, got, n, want)
		}
	}
	if same > n/20 {
		t.Errorf("%d of %d mutations left the image unchanged", same, n)
	}
	if !bytes.Equal(s.img, testSeed(t).img) {
		t.Error("mutating changed the seed")
	}
}

// TestCheckOnly counts the check's verdicts on mutations: every truncation
// is refused, some mutations of every kind pass, and the check's verdict
// is fatbin.ValidateCubin's.
func TestCheckOnly(t *testing.T) {
	s := testSeed(t)
	res := checkOnly(s, 7, 1500)
	byKind := map[string]map[string]int{}
	for _, r := range res {
		if byKind[r.Kind] == nil {
			byKind[r.Kind] = map[string]int{}
		}
		byKind[r.Kind][r.Outcome]++
		b, _ := s.mutate(7, r.Index)
		if valid := fatbin.ValidateCubin(b) == nil; valid != (r.Outcome == outPassed) {
			t.Fatalf("mutation %d: outcome %s %q, ValidateCubin valid=%v", r.Index, r.Outcome, r.Detail, valid)
		}
	}
	for _, k := range kindNames() {
		c := byKind[k]
		switch {
		case k == "truncate" && c[outPassed] != 0:
			t.Errorf("%d truncations passed", c[outPassed])
		case k != "truncate" && (c[outPassed] == 0 || c[outRejected] == 0):
			t.Errorf("kind %s: %v, want some of each", k, c)
		}
	}
}

// TestChildProcesses runs the command's own child side (-child, mode
// check, which needs no GPU) under a campaign: the children remake the
// mutations from the seed file and report what the check says of each,
// the same as checkOnly in this process.
func TestChildProcesses(t *testing.T) {
	s := testSeed(t)
	seedFile := filepath.Join(t.TempDir(), "seed.cubin")
	if err := os.WriteFile(seedFile, s.img, 0o644); err != nil {
		t.Fatal(err)
	}
	const n, seed = 300, 7
	c := &campaign{
		n: n, jobs: 2, timeout: 30 * time.Second, startTimeout: time.Minute,
		child: func(from, step int) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "-child", "-mode", "check", "-cubin", seedFile,
				"-seed", strconv.Itoa(seed), "-n", strconv.Itoa(n), "-from", strconv.Itoa(from), "-step", strconv.Itoa(step))
			cmd.Env = append(os.Environ(), "CUBINFUZZ_MAIN=1")
			return cmd
		},
		kind: func(i int) string { _, k := s.mutate(seed, i); return k },
	}
	res, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	want := checkOnly(s, seed, n)
	for i := range res {
		if res[i].Outcome != want[i].Outcome || res[i].Kind != want[i].Kind || res[i].Detail != want[i].Detail {
			t.Errorf("mutation %d: child %+v, in process %+v", i, res[i], want[i])
		}
	}
}

// TestCapBuffer: the start and the end of a long output are kept.
func TestCapBuffer(t *testing.T) {
	b := &capBuffer{max: 8}
	for _, s := range []string{"SIGSEGV", ": x", strings.Repeat("-", 100), "the end"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "SIGSEGV:\n...\n-the end" {
		t.Errorf("%q", got)
	}
	b = &capBuffer{max: 8}
	b.Write([]byte("short"))
	b.Write([]byte(" and more"))
	if got := b.String(); got != "short and more" {
		t.Errorf("%q", got)
	}
}

// TestCampaignStop: closing stop ends the campaign at once, the children
// killed, with the mutations done counted and the others skipped.
func TestCampaignStop(t *testing.T) {
	stop := make(chan struct{})
	c := &campaign{
		n: 1000, jobs: 2, timeout: 10 * time.Second, startTimeout: time.Minute, stop: stop,
		child: func(from, step int) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("CUBINFUZZ_FAKE_CHILD=n=1000 from=%d step=%d sleepms=50", from, step))
			return cmd
		},
		kind: func(int) string { return "k" },
	}
	time.AfterFunc(time.Second, func() { close(stop) })
	start := time.Now()
	res, err := c.run()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopped after %v", d)
	}
	done := 0
	for _, r := range res {
		if r.Outcome != outSkipped {
			done++
		}
	}
	if done == 0 || done > 100 {
		t.Errorf("%d of 1000 mutations done in about a second at 20 per second per child", done)
	}
}
