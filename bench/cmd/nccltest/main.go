// Command nccltest runs NCCL's operations from Go with one process per
// GPU, under a launcher (torchrun, Open MPI's mpirun, Slurm's srun, or
// the CUDAGO_* variables: package rendezvous). It checks every
// operation's result on every rank against the CPU, then measures bus
// bandwidth and latency as NVIDIA's nccl-tests defines them, for
// comparison with bench/bench_torch_dist.py (torch.distributed over NCCL)
// on the same machine:
//
//	torchrun --nproc-per-node 4 --no-python ./nccltest
//	torchrun --nproc-per-node 4 bench/bench_torch_dist.py
//
// Checks: AllReduce, Reduce and ReduceScatter with every Op, Broadcast,
// AllGather, AlltoAll, Gather, Scatter and a Send/Recv ring, for float32,
// float64, bfloat16 and int32, at each of -counts elements
// (internal/testing/collcheck says how results are known). Every rank prints
// one line with its tally and one per wrong result:
//
//	CHECK impl=cudago rank=1 ranks=4 cases=336 passed=336 failed=0 skipped=0 seconds=2.1
//	FAIL impl=cudago rank=1 case="Gather Float32 count=7 root=2" error="..."
//
// Measurements, of float32 Buffers; rank 0 prints one line each:
//
//	RESULT impl=cudago op=allreduce dtype=float32 bytes=1073741824 ranks=4 iters=50 time_us=... algbw_GBps=... busbw_GBps=...
//	RESULT impl=cudago op=allreduce_latency dtype=float32 bytes=8 ranks=4 iters=1000 median_us=... p10_us=... p90_us=...
//
// For allreduce, allgather, reducescatter and alltoall at -bytes: after
// -warmup calls, -iters calls are issued back to back on one stream and
// timed to the stream's end; time is the mean per call, averaged over the
// ranks (nccl-tests' default). bytes is the size of the operation's
// largest Buffer (nccl-tests' size: AllGather's recv, ReduceScatter's
// send, AlltoAll's send and recv). algbw = bytes / time, busbw = algbw ×
// 2(n-1)/n for AllReduce and × (n-1)/n for the others. The last call's
// result is checked too. Latency: -lat-iters AllReduces of 8 bytes (two
// float32), each followed by a stream sync and timed alone on the host,
// after -lat-warmup; the median and the 10th and 90th percentiles, each
// averaged over the ranks.
//
// It exits 1 on an error or a wrong result. A library older than NCCL
// 2.28.3 lacks AlltoAll, Gather and Scatter: they fail, or with
// -allow-missing are skipped (SKIP lines).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/collcheck"
	"github.com/cudago/cudago/nccl"
	"github.com/cudago/cudago/pathfinder"
)

type options struct {
	check, bench, verify bool
	counts               []int
	bytes                int
	iters, warmup        int
	latIters, latWarmup  int
	allowMissing         bool
	rendezvousTimeout    time.Duration
	impl                 string
	onlyOps              []string
}

func main() {
	var o options
	counts := flag.String("counts", "1,7,1000,1048579", "element counts of the checks, comma-separated")
	size := flag.String("bytes", "1GiB", "size of the bandwidth measurements (B, KiB, MiB, GiB)")
	ops := flag.String("ops", "allreduce,allgather,reducescatter,alltoall", "operations to measure")
	flag.BoolVar(&o.check, "check", true, "check every operation's result")
	flag.BoolVar(&o.bench, "bench", true, "measure bandwidth and latency")
	flag.BoolVar(&o.verify, "verify", true, "check the result of the last measured call too")
	flag.IntVar(&o.iters, "iters", 50, "timed calls per bandwidth measurement")
	flag.IntVar(&o.warmup, "warmup", 10, "calls before a bandwidth measurement")
	flag.IntVar(&o.latIters, "lat-iters", 1000, "timed 8-byte AllReduces")
	flag.IntVar(&o.latWarmup, "lat-warmup", 100, "8-byte AllReduces before the timed ones")
	flag.BoolVar(&o.allowMissing, "allow-missing", false, "skip, not fail, the operations the library lacks")
	flag.DurationVar(&o.rendezvousTimeout, "rendezvous-timeout", 3*time.Minute, "how long to wait for the other ranks")
	flag.Parse()
	o.impl = "cudago"
	var err error
	if o.counts, err = parseCounts(*counts); err != nil {
		fail(err)
	}
	if o.bytes, err = parseBytes(*size); err != nil {
		fail(err)
	}
	if o.onlyOps, err = parseOps(*ops); err != nil {
		fail(err)
	}
	if o.iters < 1 || o.warmup < 0 || o.latIters < 1 || o.latWarmup < 0 {
		fail(errors.New("-iters and -lat-iters must be at least 1, the warm-ups at least 0"))
	}
	ok, err := run(o)
	if err != nil {
		fail(err)
	}
	if !ok {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "nccltest:", err)
	os.Exit(1)
}

// parseList parses each comma-separated field of s with parse, trimmed;
// empty fields ("1,,7", a trailing comma) are skipped.
func parseList[T any](s string, parse func(f string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseCounts reads "1,7,1000".
func parseCounts(s string) ([]int, error) {
	return parseList(s, func(f string) (int, error) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("-counts: %q is not a count of at least 1", f)
		}
		return n, nil
	})
}

// parseBytes reads a size: "8", "64KiB", "32MiB", "1GiB" (also KB, MB, GB
// as powers of 1024, as nccl-tests reads them, and K, M, G).
func parseBytes(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	for _, u := range []struct {
		suffix string
		m      int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.m
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > math.MaxInt/mult {
		return 0, fmt.Errorf("-bytes: %q is not a size such as 8, 64MiB or 1GiB", s)
	}
	return n * mult, nil
}

// The measured operations, by the names the RESULT lines use.
var benchKinds = map[string]collcheck.Kind{
	"allreduce":     collcheck.AllReduce,
	"allgather":     collcheck.AllGather,
	"reducescatter": collcheck.ReduceScatter,
	"alltoall":      collcheck.AlltoAll,
}

// parseOps reads "allreduce,alltoall": names of benchKinds.
func parseOps(s string) ([]string, error) {
	return parseList(s, func(f string) (string, error) {
		if _, ok := benchKinds[f]; !ok {
			return "", fmt.Errorf("-ops: %q is not one of allreduce, allgather, reducescatter, alltoall", f)
		}
		return f, nil
	})
}

// busFactor is nccl-tests' factor from algbw to busbw on n ranks.
func busFactor(k collcheck.Kind, n int) float64 {
	f := float64(n-1) / float64(n)
	if k == collcheck.AllReduce {
		return 2 * f
	}
	return f
}

// benchCase is the float32 case of kind k whose largest Buffer holds
// about size bytes on n ranks.
func benchCase(k collcheck.Kind, size, n int) collcheck.Case {
	c := collcheck.Case{Kind: k, Op: nccl.Sum, Type: nccl.Float32, Count: max(size/4, 1)}
	if k != collcheck.AllReduce {
		c.Count = max(size/4/n, 1)
	}
	return c
}

// opBytes is the size of c's largest Buffer, nccl-tests' size.
func opBytes(c collcheck.Case, n int) int {
	b := c.Count * c.Type.Size()
	if c.Kind != collcheck.AllReduce {
		b *= n
	}
	return b
}

// rank is this process's rank and what it works with.
type rank struct {
	o    options
	comm *nccl.Comm
	dev  *core.Device
	s    *core.Stream
	ctx  context.Context
	has  bool // the library has AlltoAll, Gather and Scatter
	n, r int
}

func run(o options) (bool, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ictx, cancel := context.WithTimeout(ctx, o.rendezvousTimeout)
	defer cancel()
	comm, err := nccl.InitFromEnv(ictx, nil)
	if err != nil {
		return false, err
	}
	defer comm.Close()
	dev := comm.Device()
	s, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		return false, err
	}
	defer s.Close()
	v, err := nccl.Version()
	if err != nil {
		return false, err
	}
	k := &rank{o: o, comm: comm, dev: dev, s: s, ctx: ctx, n: comm.Count(), r: comm.Rank(), has: versionAtLeast(v, 2, 28, 3)}
	where := "?"
	if lib, err := pathfinder.Load(pathfinder.NCCL); err == nil {
		where = lib.Path + ", " + lib.Found
	}
	fmt.Printf("nccltest: rank %d of %d on %v, NCCL %s (%s), NCCL_NVLS_ENABLE=%s\n", k.r, k.n, dev, v, where, os.Getenv("NCCL_NVLS_ENABLE"))
	ok := true
	if o.check {
		good, err := k.checks()
		if err != nil {
			return false, err
		}
		ok = ok && good
	}
	if o.bench {
		good, err := k.benches()
		if err != nil {
			return false, err
		}
		ok = ok && good
	}
	return ok, nil
}

func versionAtLeast(v string, x, y, z int) bool {
	var a, b, c int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &a, &b, &c); err != nil {
		return false
	}
	return ncclb.VersionCodeOf(a, b, c) >= ncclb.VersionCodeOf(x, y, z)
}

// missing reports whether c needs what the library lacks, printing a SKIP
// line once per kind when that is allowed; without -allow-missing such a
// case runs and fails with NCCL's missing-function error.
func (k *rank) missing(c collcheck.Case, said map[collcheck.Kind]bool) bool {
	if k.has || !c.Kind.Needs228() || !k.o.allowMissing {
		return false
	}
	if !said[c.Kind] {
		said[c.Kind] = true
		if k.r == 0 {
			fmt.Printf("SKIP impl=%s op=%v reason=\"NCCL older than 2.28.3\"\n", k.o.impl, c.Kind)
		}
	}
	return true
}

// checks runs every case at every count and type, and checks this rank's
// results.
func (k *rank) checks() (bool, error) {
	start := time.Now()
	var cases, passed, failed, skipped int
	said := map[collcheck.Kind]bool{}
	for _, dt := range collcheck.Types {
		for i, count := range k.o.counts {
			var run []collcheck.Case
			for _, c := range collcheck.Cases(dt, count, k.n, i) {
				cases++
				if k.missing(c, said) {
					skipped++
					continue
				}
				run = append(run, c)
			}
			errs, err := k.batch(run)
			if err != nil {
				return false, fmt.Errorf("rank %d: %v count %d: %w", k.r, dt, count, err)
			}
			for j, e := range errs {
				if e != nil {
					failed++
					fmt.Printf("FAIL impl=%s rank=%d case=%q error=%q\n", k.o.impl, k.r, run[j].String(), e.Error())
				} else {
					passed++
				}
			}
		}
	}
	fmt.Printf("CHECK impl=%s rank=%d ranks=%d cases=%d passed=%d failed=%d skipped=%d seconds=%.1f\n",
		k.o.impl, k.r, k.n, cases, passed, failed, skipped, time.Since(start).Seconds())
	return failed == 0, nil
}

// batch runs cases (of one type) on this rank, the collectives in one
// Group and the point-to-point ones in another, and checks each result;
// the error is one that stops everything (the other ranks would wait).
func (k *rank) batch(cases []collcheck.Case) ([]error, error) {
	if len(cases) == 0 {
		return nil, nil
	}
	var pool []*core.Buffer
	defer func() {
		for _, b := range pool {
			b.Close()
		}
	}()
	alloc := func(n int) (*core.Buffer, error) {
		b, err := k.dev.Allocate(max(n, 1), k.s)
		if err == nil {
			pool = append(pool, b)
		}
		return b, err
	}
	dt := cases[0].Type
	inputs := map[bool]*core.Buffer{}
	for _, prod := range []bool{false, true} {
		need := 0
		for _, c := range cases {
			if c.Prod() == prod {
				need = max(need, c.SendElems(k.r, k.n))
			}
		}
		if need == 0 {
			continue
		}
		b, err := alloc(need * dt.Size())
		if err != nil {
			return nil, err
		}
		if err := core.CopyToDevice(b, collcheck.Input(dt, k.r, need, prod)); err != nil {
			return nil, err
		}
		inputs[prod] = b
	}
	recvs := make([]*core.Buffer, len(cases))
	for _, p2p := range []bool{false, true} {
		var g nccl.Group
		for i, c := range cases {
			if c.Kind.PointToPoint() != p2p {
				continue
			}
			var send *core.Buffer
			if m := c.SendElems(k.r, k.n) * dt.Size(); m > 0 {
				v, err := inputs[c.Prod()].View(0, m)
				if err != nil {
					return nil, err
				}
				send = v
			}
			if m := c.RecvElems(k.r, k.n) * dt.Size(); m > 0 {
				b, err := alloc(m)
				if err != nil {
					return nil, err
				}
				if err := b.Memset8(0xA5); err != nil {
					return nil, err
				}
				recvs[i] = b
			}
			if err := c.Add(&g, k.comm, k.s, send, recvs[i]); err != nil {
				return nil, fmt.Errorf("%v: %w", c, err)
			}
		}
		if err := g.Run(); err != nil {
			return nil, err
		}
	}
	if err := k.comm.Wait(k.ctx, k.s); err != nil {
		return nil, err
	}
	errs := make([]error, len(cases))
	for i, c := range cases {
		if recvs[i] == nil {
			continue
		}
		got := make([]byte, recvs[i].Size())
		if err := core.CopyFromDevice(got, recvs[i]); err != nil {
			return nil, err
		}
		errs[i] = c.Check(k.r, k.n, got)
	}
	return errs, nil
}

// benches measures bandwidth and latency.
func (k *rank) benches() (bool, error) {
	ok := true
	said := map[collcheck.Kind]bool{}
	for _, name := range k.o.onlyOps {
		c := benchCase(benchKinds[name], k.o.bytes, k.n)
		if k.missing(c, said) {
			continue
		}
		good, err := k.bandwidth(name, c)
		if err != nil {
			return false, fmt.Errorf("rank %d: %s: %w", k.r, name, err)
		}
		ok = ok && good
	}
	good, err := k.latency()
	if err != nil {
		return false, fmt.Errorf("rank %d: latency: %w", k.r, err)
	}
	return ok && good, nil
}

// buffers makes c's send (its input) and recv on this rank.
func (k *rank) buffers(c collcheck.Case) (send, recv *core.Buffer, err error) {
	if send, err = k.dev.Allocate(c.SendElems(k.r, k.n)*c.Type.Size(), k.s); err != nil {
		return nil, nil, err
	}
	if err = core.CopyToDevice(send, c.InputFor(k.r, k.n)); err == nil {
		recv, err = k.dev.Allocate(c.RecvElems(k.r, k.n)*c.Type.Size(), k.s)
	}
	if err != nil {
		send.Close()
		return nil, nil, err
	}
	return send, recv, nil
}

// verify checks c's result in recv, when -verify asks for it.
func (k *rank) verify(c collcheck.Case, recv *core.Buffer) bool {
	if !k.o.verify {
		return true
	}
	got := make([]byte, recv.Size())
	err := core.CopyFromDevice(got, recv)
	if err == nil {
		err = c.Check(k.r, k.n, got)
	}
	if err != nil {
		fmt.Printf("FAIL impl=%s rank=%d case=%q error=%q\n", k.o.impl, k.r, c.String()+" (measured)", err.Error())
		return false
	}
	return true
}

func (k *rank) bandwidth(name string, c collcheck.Case) (bool, error) {
	send, recv, err := k.buffers(c)
	if err != nil {
		return false, err
	}
	defer send.Close()
	defer recv.Close()
	if err := k.queue(c, send, recv, k.o.warmup); err != nil {
		return false, err
	}
	if err := k.comm.Wait(k.ctx, k.s); err != nil {
		return false, err
	}
	start := time.Now()
	if err := k.queue(c, send, recv, k.o.iters); err != nil {
		return false, err
	}
	if err := k.s.Sync(); err != nil {
		return false, err
	}
	per := time.Since(start).Seconds() / float64(k.o.iters)
	if err := k.comm.AsyncError(); err != nil {
		return false, err
	}
	ok := k.verify(c, recv)
	m, err := k.mean([]float64{per})
	if err != nil {
		return false, err
	}
	bytes := opBytes(c, k.n)
	algbw := float64(bytes) / m[0] / 1e9
	if k.r == 0 {
		fmt.Printf("RESULT impl=%s op=%s dtype=float32 bytes=%d ranks=%d iters=%d time_us=%.1f algbw_GBps=%.2f busbw_GBps=%.2f\n",
			k.o.impl, name, bytes, k.n, k.o.iters, m[0]*1e6, algbw, algbw*busFactor(c.Kind, k.n))
	}
	return ok, nil
}

// queue queues n calls of c on the rank's stream, back to back.
func (k *rank) queue(c collcheck.Case, send, recv *core.Buffer, n int) error {
	for range n {
		if err := c.Call(k.comm, k.s, send, recv); err != nil {
			return err
		}
	}
	return nil
}

func (k *rank) latency() (bool, error) {
	c := collcheck.Case{Kind: collcheck.AllReduce, Op: nccl.Sum, Type: nccl.Float32, Count: 2}
	send, recv, err := k.buffers(c)
	if err != nil {
		return false, err
	}
	defer send.Close()
	defer recv.Close()
	for range k.o.latWarmup {
		if err := c.Call(k.comm, k.s, send, recv); err != nil {
			return false, err
		}
		if err := k.s.Sync(); err != nil {
			return false, err
		}
	}
	ts := make([]float64, k.o.latIters)
	for i := range ts {
		t0 := time.Now()
		if err := c.Call(k.comm, k.s, send, recv); err != nil {
			return false, err
		}
		if err := k.s.Sync(); err != nil {
			return false, err
		}
		ts[i] = time.Since(t0).Seconds()
	}
	if err := k.comm.AsyncError(); err != nil {
		return false, err
	}
	ok := k.verify(c, recv)
	slices.Sort(ts)
	q := func(p float64) float64 { return ts[min(int(p*float64(len(ts))), len(ts)-1)] }
	m, err := k.mean([]float64{q(0.5), q(0.1), q(0.9)})
	if err != nil {
		return false, err
	}
	if k.r == 0 {
		fmt.Printf("RESULT impl=%s op=allreduce_latency dtype=float32 bytes=8 ranks=%d iters=%d median_us=%.2f p10_us=%.2f p90_us=%.2f\n",
			k.o.impl, k.n, k.o.latIters, m[0]*1e6, m[1]*1e6, m[2]*1e6)
	}
	return ok, nil
}

// mean averages vals over the ranks, with an NCCL AllReduce.
func (k *rank) mean(vals []float64) ([]float64, error) {
	b, err := k.dev.Allocate(8*len(vals), k.s)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := core.CopyToDevice(b, vals); err != nil {
		return nil, err
	}
	if err := nccl.AllReduce[float64](k.comm, k.s, b, b, len(vals), nccl.Avg); err != nil {
		return nil, err
	}
	if err := k.comm.Wait(k.ctx, k.s); err != nil {
		return nil, err
	}
	out := make([]float64, len(vals))
	return out, core.CopyFromDevice(out, b)
}
