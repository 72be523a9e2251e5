package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/collcheck"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"8", 8}, {"1GiB", 1 << 30}, {"64MiB", 64 << 20}, {"32 KiB", 32 << 10}, {"2G", 2 << 30}, {"1MB", 1 << 20}, {"100B", 100}} {
		if got, err := parseBytes(c.in); err != nil || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "1TiB", "GiB", "1.5GiB", "9999999999999GiB"} {
		if _, err := parseBytes(bad); err == nil || !strings.Contains(err.Error(), "-bytes") {
			t.Errorf("parseBytes(%q): %v", bad, err)
		}
	}
	if got, err := parseCounts("1, 7,1000,,1048579"); err != nil || len(got) != 4 || got[3] != 1<<20+3 {
		t.Errorf("parseCounts: %v, %v", got, err)
	}
	if _, err := parseCounts("1,0"); err == nil {
		t.Error("count 0 accepted")
	}
	if got, err := parseOps("allreduce,alltoall"); err != nil || len(got) != 2 {
		t.Errorf("parseOps: %v, %v", got, err)
	}
	if _, err := parseOps("allreduce,broadcast"); err == nil || !strings.Contains(err.Error(), `"broadcast"`) {
		t.Errorf("parseOps(broadcast): %v", err)
	}
}

// TestBusbw: nccl-tests' factors, and the sizes the RESULT lines report.
func TestBusbw(t *testing.T) {
	for _, c := range []struct {
		kind   collcheck.Kind
		n      int
		factor float64
		count  int
		bytes  int
	}{
		{collcheck.AllReduce, 4, 1.5, 1 << 28, 1 << 30},
		{collcheck.AllReduce, 2, 1, 1 << 28, 1 << 30},
		{collcheck.AllGather, 4, 0.75, 1 << 26, 1 << 30},
		{collcheck.ReduceScatter, 8, 0.875, 1 << 25, 1 << 30},
		{collcheck.AlltoAll, 4, 0.75, 1 << 26, 1 << 30},
		{collcheck.AlltoAll, 3, 2.0 / 3, 89478485, 89478485 * 12},
	} {
		bc := benchCase(c.kind, 1<<30, c.n)
		if f := busFactor(c.kind, c.n); f != c.factor || bc.Count != c.count || opBytes(bc, c.n) != c.bytes {
			t.Errorf("%v on %d ranks: factor %g count %d bytes %d; want %g %d %d", c.kind, c.n, f, bc.Count, opBytes(bc, c.n), c.factor, c.count, c.bytes)
		}
	}
	if c := benchCase(collcheck.AllReduce, 8, 4); c.Count != 2 || opBytes(c, 4) != 8 {
		t.Errorf("8 bytes: %v", c)
	}
}

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"2.28.3": true, "2.28.9": true, "2.29.0": true, "2.22.3": false, "2.27.7": false, "x": false} {
		if versionAtLeast(v, 2, 28, 3) != want {
			t.Errorf("%s", v)
		}
	}
}

// TestBadFlags: the program refuses bad flags before it looks for a GPU
// or a launcher.
func TestBadFlags(t *testing.T) {
	if os.Getenv("NCCLTEST_CHILD") == "1" {
		os.Args = append([]string{"nccltest"}, strings.Fields(os.Getenv("NCCLTEST_ARGS"))...)
		main()
		return
	}
	for args, want := range map[string]string{
		"-bytes 1TiB":    "-bytes",
		"-counts 1,x":    "-counts",
		"-ops gather":    "-ops",
		"-iters 0":       "-iters",
		"-lat-warmup -1": "warm-ups",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBadFlags$")
		cmd.Env = append(os.Environ(), "NCCLTEST_CHILD=1", "NCCLTEST_ARGS="+args)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "nccltest: ") || !strings.Contains(string(out), want) {
			t.Errorf("nccltest %s: %v\n%s", args, err, out)
		}
	}
}
