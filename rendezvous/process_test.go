package rendezvous

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Multi-process tests: the test binary re-executes itself as the ranks of
// a torchrun-style job (TestHelperRendezvous), so they also run where test
// binaries are run from a folder.

const childVar = "CUDAGO_RENDEZVOUS_TEST_CHILD"

// TestHelperRendezvous is one rank when started by the tests below: it
// reads its Env from the environment, exchanges (rank 0 with a random
// 128-byte payload) and prints "PAYLOAD <hex>" or "ERROR <message>".
func TestHelperRendezvous(t *testing.T) {
	if os.Getenv(childVar) != "1" {
		t.Skip("a rank of the multi-process tests, not a test")
	}
	testHookRegistered = func(rank int) { fmt.Printf("REGISTERED %d\n", rank) }
	exit := func(code int, format string, args ...any) {
		fmt.Printf(format+"\n", args...)
		os.Exit(code)
	}
	env, err := FromEnv()
	if err != nil {
		exit(2, "ERROR %v", err)
	}
	var payload []byte
	if env.Rank == 0 {
		payload = make([]byte, 128)
		rand.Read(payload)
	}
	fmt.Printf("START %s\n", env)
	// No deadline here: CUDAGO_RENDEZVOUS_TIMEOUT gives it.
	got, err := env.Exchange(context.Background(), payload)
	if err != nil {
		exit(1, "ERROR %v", err)
	}
	exit(0, "PAYLOAD %s", hex.EncodeToString(got))
}

// rankProc is a running rank and its output, line by line.
type rankProc struct {
	rank  int
	cmd   *exec.Cmd
	start time.Time

	mu    sync.Mutex
	lines []string
	more  chan struct{} // signalled on each line
	done  chan struct{} // closed once the process has exited and its output is read
	took  time.Duration
	code  int
}

// job is a torchrun-style job on 127.0.0.1 whose agent (this test) holds
// MASTER_PORT, so rank 0 listens on MASTER_PORT+1.
type job struct {
	t          *testing.T
	world      int
	masterPort int
	rank0Addr  string
	timeout    string         // CUDAGO_RENDEZVOUS_TIMEOUT
	timeouts   map[int]string // per rank, where it differs
}

func newJob(t *testing.T, world int, timeout string) *job {
	t.Helper()
	for range 20 {
		agent, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := agent.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err != nil {
			agent.Close()
			continue
		}
		next.Close()
		t.Cleanup(func() { agent.Close() })
		return &job{t: t, world: world, masterPort: p, rank0Addr: "127.0.0.1:" + strconv.Itoa(p+1), timeout: timeout}
	}
	t.Fatal("found no two free consecutive ports")
	return nil
}

// start starts rank r, with WORLD_SIZE world (the job's unless given).
func (j *job) start(r int, world ...int) *rankProc {
	j.t.Helper()
	ws := j.world
	if len(world) > 0 {
		ws = world[0]
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRendezvous$", "-test.count=1")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(launcherVars, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childVar+"=1",
		"RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(ws),
		"LOCAL_RANK="+strconv.Itoa(r), "LOCAL_WORLD_SIZE="+strconv.Itoa(ws),
		"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(j.masterPort),
		"TORCHELASTIC_USE_AGENT_STORE=True", "CUDAGO_RENDEZVOUS_TIMEOUT="+cmp.Or(j.timeouts[r], j.timeout))
	rd, wr, err := os.Pipe()
	if err != nil {
		j.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = wr, wr
	p := &rankProc{rank: r, cmd: cmd, more: make(chan struct{}, 1), done: make(chan struct{})}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	wr.Close()
	go func() {
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
		rd.Close()
		cmd.Wait()
		p.took = time.Since(p.start)
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	j.t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the rank to exit and returns its last line.
func (p *rankProc) wait(t *testing.T, limit time.Duration) string {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		t.Fatalf("rank %d still runs after %v; output:\n%s", p.rank, limit, p.output())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lines) == 0 {
		t.Fatalf("rank %d exited %d without output", p.rank, p.code)
	}
	return p.lines[len(p.lines)-1]
}

// waitLine waits until the rank prints line.
func (p *rankProc) waitLine(t *testing.T, line string, limit time.Duration) {
	t.Helper()
	timeout := time.After(limit)
	for {
		p.mu.Lock()
		found := slices.Contains(p.lines, line)
		p.mu.Unlock()
		if found {
			return
		}
		select {
		case <-p.more:
		case <-p.done:
			t.Fatalf("rank %d exited before printing %q; output:\n%s", p.rank, line, p.output())
		case <-timeout:
			t.Fatalf("rank %d did not print %q within %v; output:\n%s", p.rank, line, limit, p.output())
		}
	}
}

func (p *rankProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// samePayload checks that every rank printed rank 0's 128 bytes.
func samePayload(t *testing.T, procs []*rankProc) {
	t.Helper()
	var want string
	for _, p := range procs {
		last := p.wait(t, 10*time.Second)
		hexPayload, ok := strings.CutPrefix(last, "PAYLOAD ")
		if !ok || p.code != 0 {
			t.Fatalf("rank %d exited %d: %s", p.rank, p.code, p.output())
		}
		if b, err := hex.DecodeString(hexPayload); err != nil || len(b) != 128 {
			t.Fatalf("rank %d printed %q", p.rank, hexPayload)
		}
		if want == "" {
			want = hexPayload
		} else if hexPayload != want {
			t.Fatalf("rank %d got %s, rank %d got %s", p.rank, hexPayload, procs[0].rank, want)
		}
	}
}

func skipInShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
}

func TestProcessFourRanks(t *testing.T) {
	skipInShort(t)
	j := newJob(t, 4, "5s")
	var procs []*rankProc
	for r := range 4 {
		procs = append(procs, j.start(r))
	}
	samePayload(t, procs)
	if !strings.Contains(procs[0].output(), "START torchrun: rank 0 of 4 (local 0 of 4), rank 0 at "+j.rank0Addr) {
		t.Fatalf("rank 0 did not use MASTER_PORT+1:\n%s", procs[0].output())
	}
}

func TestProcessRanksBeforeRank0(t *testing.T) {
	skipInShort(t)
	j := newJob(t, 4, "5s")
	procs := []*rankProc{j.start(3), j.start(1), j.start(2)}
	for _, p := range procs {
		p.waitLine(t, fmt.Sprintf("START torchrun: rank %d of 4 (local %d of 4), rank 0 at %s", p.rank, p.rank, j.rank0Addr), 5*time.Second)
	}
	time.Sleep(300 * time.Millisecond) // they dial and retry meanwhile
	procs = append([]*rankProc{j.start(0)}, procs...)
	samePayload(t, procs)
}

func TestProcessMissingRank(t *testing.T) {
	skipInShort(t)
	j := newJob(t, 3, "2s")
	// Rank 1 waits longer than rank 0, to hear why rank 0 gave up.
	j.timeouts = map[int]string{1: "20s"}
	p0, p1 := j.start(0), j.start(1) // rank 2 never comes
	last0 := p0.wait(t, 8*time.Second)
	if !strings.Contains(last0, "ERROR rendezvous: rank 0 waited 2s on "+j.rank0Addr+", but rank 2 never connected (2 of 3 ranks arrived)") {
		t.Fatalf("rank 0:\n%s", p0.output())
	}
	last1 := p1.wait(t, 8*time.Second)
	if !strings.Contains(last1, "ERROR rendezvous: rank 1: rank 0 at "+j.rank0Addr+" answered: rank 0 gave up after 2s: rank 2 never connected") {
		t.Fatalf("rank 1:\n%s", p1.output())
	}
	// Rank 0 gives up at its deadline, not much later (process start-up
	// under -race included).
	if p0.took > 7*time.Second {
		t.Errorf("rank 0 took %v with a 2s timeout", p0.took)
	}
}

func TestProcessRank0Dies(t *testing.T) {
	skipInShort(t)
	// A long timeout: the ranks must fail because rank 0 went away, not
	// because their deadline passed.
	j := newJob(t, 4, "60s")
	p0 := j.start(0)
	p1, p2 := j.start(1), j.start(2) // rank 3 never comes: rank 0 keeps waiting
	p0.waitLine(t, "REGISTERED 1", 10*time.Second)
	p0.waitLine(t, "REGISTERED 2", 10*time.Second)
	killed := time.Now()
	if err := p0.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*rankProc{p1, p2} {
		last := p.wait(t, 5*time.Second)
		if !strings.Contains(last, fmt.Sprintf("ERROR rendezvous: rank %d: rank 0 at %s closed the connection before the exchange finished (did rank 0 exit?)", p.rank, j.rank0Addr)) {
			t.Fatalf("rank %d:\n%s", p.rank, p.output())
		}
	}
	if d := time.Since(killed); d > 5*time.Second {
		t.Errorf("ranks noticed rank 0's death after %v", d)
	}
}

func TestProcessStrayClient(t *testing.T) {
	skipInShort(t)
	j := newJob(t, 2, "5s")
	p0 := j.start(0)
	var c net.Conn
	for range 500 {
		var err error
		if c, err = net.Dial("tcp", j.rank0Addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c == nil {
		t.Fatalf("rank 0 never listened:\n%s", p0.output())
	}
	garbage := make([]byte, 64)
	rand.Read(garbage)
	c.Write(garbage)
	c.Close()
	silent, err := net.Dial("tcp", j.rank0Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	samePayload(t, []*rankProc{p0, j.start(1)})
}

func TestProcessWorldSizeMismatch(t *testing.T) {
	skipInShort(t)
	j := newJob(t, 3, "60s")
	p0, p1 := j.start(0), j.start(1, 2)
	want := "rank 1 at 127.0.0.1:"
	last0 := p0.wait(t, 10*time.Second)
	if !strings.Contains(last0, "ERROR rendezvous: "+want) || !strings.Contains(last0, "has world size 2, rank 0 has 3") {
		t.Fatalf("rank 0:\n%s", p0.output())
	}
	last1 := p1.wait(t, 10*time.Second)
	if !strings.Contains(last1, "ERROR rendezvous: rank 1: rank 0 at "+j.rank0Addr+" answered: "+want) || !strings.Contains(last1, "has world size 2, rank 0 has 3") {
		t.Fatalf("rank 1:\n%s", p1.output())
	}
}
