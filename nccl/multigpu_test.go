package nccl_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/collcheck"
	"github.com/cudago/cudago/internal/testing/libtest"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/nccl"
)

// The multi-GPU tests make every GPU of the machine a rank of one
// communicator in this process (InitAll) and check every collective's
// result on every rank against the CPU (internal/testing/collcheck: the inputs
// are small integers, so that every result is exact). They skip with
// fewer GPUs than they need, saying how many.

// devices returns every device, skipping with fewer than need.
func devices(t *testing.T, need int) []*core.Device {
	t.Helper()
	testenv.RequireGPU(t)
	devs, err := core.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) < need {
		t.Skipf("%d GPU(s) here: this test needs %d or more", len(devs), need)
	}
	return devs
}

// world is one rank per device, with a stream each.
type world struct {
	devs    []*core.Device
	comms   []*nccl.Comm
	streams []*core.Stream
}

func (w *world) n() int { return len(w.comms) }

// newWorld makes the communicator of devs (InitAll) and a stream per
// rank; they are closed when the test ends.
func newWorld(t *testing.T, devs []*core.Device) *world {
	t.Helper()
	comms, err := nccl.InitAll(devs)
	if err != nil {
		t.Fatalf("InitAll of %d devices: %v", len(devs), err)
	}
	w := &world{devs: devs, comms: comms}
	t.Cleanup(func() {
		for r, c := range w.comms {
			if err := c.Close(); err != nil {
				t.Errorf("rank %d: Close: %v", r, err)
			}
		}
	})
	for r, d := range devs {
		if c := comms[r]; c.Rank() != r || c.Count() != len(devs) || c.Device() != d {
			t.Fatalf("InitAll's comm %d is %v", r, c)
		}
		s, err := d.NewStream(&core.StreamOptions{NonBlocking: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		w.streams = append(w.streams, s)
	}
	return w
}

// wait waits for every rank's stream, watching for NCCL's errors.
func (w *world) wait(t *testing.T) {
	t.Helper()
	for r, c := range w.comms {
		if err := c.Wait(t.Context(), w.streams[r]); err != nil {
			t.Fatalf("rank %d: Wait: %v", r, err)
		}
	}
}

func version(t *testing.T) string {
	t.Helper()
	v, err := nccl.Version()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// atLeast reports whether the loaded NCCL is version x.y.z or newer.
func atLeast(t *testing.T, x, y, z int) bool {
	t.Helper()
	v := version(t)
	var a, b, c int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &a, &b, &c); err != nil {
		t.Fatalf("NCCL version %q: %v", v, err)
	}
	return ncclb.VersionCodeOf(a, b, c) >= ncclb.VersionCodeOf(x, y, z)
}

// has228 reports whether the loaded NCCL has AlltoAll, Gather and Scatter.
func has228(t *testing.T) bool {
	t.Helper()
	if v := version(t); !atLeast(t, 2, 28, 3) {
		t.Logf("NCCL %s has no AlltoAll, Gather or Scatter (2.28.3): their cases are left out (TestChecks228 covers the error)", v)
		return false
	}
	return true
}

// bufs is what one rank needs for a list of cases: its inputs (one for
// Prod, one for the others) and a recv per case.
type bufs struct {
	in, prod *core.Buffer
	recv     []*core.Buffer // by case; nil where the rank has none
	all      []*core.Buffer // to close
}

func (b *bufs) close() {
	for _, x := range b.all {
		x.Close()
	}
}

// alloc allocates n bytes on s and records it in b.
func (b *bufs) alloc(t *testing.T, d *core.Device, s *core.Stream, n int) *core.Buffer {
	t.Helper()
	x, err := d.Allocate(max(n, 1), s)
	if err != nil {
		t.Fatalf("allocating %d bytes on %v: %v", n, d, err)
	}
	b.all = append(b.all, x)
	return x
}

// setup makes rank r's Buffers for cases: inputs filled by collcheck, and
// recvs filled with 0xA5 bytes, which no result holds.
func setup(t *testing.T, w *world, r int, cases []collcheck.Case) *bufs {
	t.Helper()
	n, d, s := w.n(), w.devs[r], w.streams[r]
	b := &bufs{recv: make([]*core.Buffer, len(cases))}
	var sendMax, prodMax int
	for _, c := range cases {
		if c.Prod() {
			prodMax = max(prodMax, c.SendElems(r, n)*c.Type.Size())
		} else {
			sendMax = max(sendMax, c.SendElems(r, n)*c.Type.Size())
		}
	}
	dt := cases[0].Type
	for _, x := range []struct {
		dst   **core.Buffer
		bytes int
		prod  bool
	}{{&b.in, sendMax, false}, {&b.prod, prodMax, true}} {
		if x.bytes == 0 {
			continue
		}
		*x.dst = b.alloc(t, d, s, x.bytes)
		if err := core.CopyToDevice(*x.dst, collcheck.Input(dt, r, x.bytes/dt.Size(), x.prod)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cases {
		if c.Type != dt {
			t.Fatalf("cases of %v and %v in one batch", dt, c.Type)
		}
		if m := c.RecvElems(r, n) * dt.Size(); m > 0 {
			b.recv[i] = b.alloc(t, d, s, m)
			if err := b.recv[i].Memset8(0xA5); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// send is rank r's send Buffer for c: the start of its input (nil where
// the rank passes none).
func (b *bufs) send(t *testing.T, c collcheck.Case, r, n int) *core.Buffer {
	t.Helper()
	m := c.SendElems(r, n) * c.Type.Size()
	if m == 0 {
		return nil
	}
	src := b.in
	if c.Prod() {
		src = b.prod
	}
	v, err := src.View(0, m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkAll reads every rank's recvs and checks them, the ranks in
// parallel.
func checkAll(t *testing.T, w *world, cases []collcheck.Case, rb []*bufs) {
	t.Helper()
	n := w.n()
	errs := make([][]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			for i, c := range cases {
				out := rb[r].recv[i]
				if out == nil {
					continue
				}
				got := make([]byte, out.Size())
				if err := core.CopyFromDevice(got, out); err != nil {
					errs[r] = append(errs[r], fmt.Errorf("%v, rank %d: reading the result: %w", c, r, err))
					continue
				}
				if err := c.Check(r, n, got); err != nil {
					errs[r] = append(errs[r], err)
				}
			}
		})
	}
	wg.Wait()
	for _, es := range errs {
		for _, err := range es {
			t.Error(err)
		}
	}
}

// runGrouped runs cases on every rank of w: the collectives in one Group,
// then the point-to-point ones in another, each operation added for every
// rank in turn; then it checks every rank's results.
func runGrouped(t *testing.T, w *world, cases []collcheck.Case) {
	t.Helper()
	n := w.n()
	rb := make([]*bufs, n)
	for r := range n {
		rb[r] = setup(t, w, r, cases)
		defer rb[r].close()
	}
	for _, p2p := range []bool{false, true} {
		var g nccl.Group
		for i, c := range cases {
			if c.Kind.PointToPoint() != p2p {
				continue
			}
			for r := range n {
				if err := c.Add(&g, w.comms[r], w.streams[r], rb[r].send(t, c, r, n), rb[r].recv[i]); err != nil {
					t.Fatalf("%v, rank %d: adding it to the group: %v", c, r, err)
				}
			}
		}
		if g.Len() == 0 {
			continue
		}
		if err := g.Run(); err != nil {
			t.Fatalf("Group.Run of %d operations (point to point: %v): %v", g.Len(), p2p, err)
		}
	}
	w.wait(t)
	checkAll(t, w, cases, rb)
}

// without228 leaves out the cases the loaded NCCL cannot run.
func without228(cases []collcheck.Case, has bool) []collcheck.Case {
	if has {
		return cases
	}
	var out []collcheck.Case
	for _, c := range cases {
		if !c.Kind.Needs228() {
			out = append(out, c)
		}
	}
	return out
}

// TestGPUMultiCollectives runs every operation (AllReduce, Reduce and
// ReduceScatter with every Op; Broadcast, AllGather, AlltoAll, Gather,
// Scatter, a Send/Recv ring) on every GPU for float32, float64, bfloat16
// and int32, at 1, 7, 1000 and 2^20+3 elements, in Groups, and checks
// every rank's result.
func TestGPUMultiCollectives(t *testing.T) {
	w := newWorld(t, devices(t, 2))
	has := has228(t)
	start := time.Now()
	checked := 0
	for _, dt := range collcheck.Types {
		for i, count := range collcheck.Counts {
			t.Run(fmt.Sprintf("%v/%d", dt, count), func(t *testing.T) {
				cases := without228(collcheck.Cases(dt, count, w.n(), i), has)
				runGrouped(t, w, cases)
				checked += len(cases)
			})
		}
	}
	for r, c := range w.comms {
		if err := c.AsyncError(); err != nil {
			t.Errorf("rank %d: AsyncError: %v", r, err)
		}
	}
	t.Logf("%d ranks (%v ... %v), NCCL %s: %d cases checked on every rank in %v", w.n(), w.devs[0], w.devs[w.n()-1], version(t), checked, time.Since(start).Round(time.Millisecond))
}

// largeCases are the 1 GiB cases: each operation once, with a type of
// its own. The size is the largest Buffer's, as nccl-tests counts it:
// AllGather's and Gather's recv, ReduceScatter's, AlltoAll's and
// Scatter's send.
func largeCases(n int) []collcheck.Case {
	const size = 1 << 30
	out := []collcheck.Case{
		{Kind: collcheck.AllReduce, Op: nccl.Sum, Type: nccl.Float32},
		{Kind: collcheck.Broadcast, Type: nccl.Int32, Root: n - 1},
		{Kind: collcheck.Reduce, Op: nccl.Max, Type: nccl.Float64, Root: 1},
		{Kind: collcheck.AllGather, Type: nccl.BFloat16},
		{Kind: collcheck.ReduceScatter, Op: nccl.Sum, Type: nccl.Int32},
		{Kind: collcheck.AlltoAll, Type: nccl.Float32},
		{Kind: collcheck.Gather, Type: nccl.Float64, Root: 0},
		{Kind: collcheck.Scatter, Type: nccl.BFloat16, Root: n - 1},
		{Kind: collcheck.SendRecv, Type: nccl.Float32},
	}
	for i := range out {
		c := &out[i]
		c.Count = size / c.Type.Size()
		switch c.Kind {
		case collcheck.AllGather, collcheck.Gather, collcheck.ReduceScatter, collcheck.AlltoAll, collcheck.Scatter:
			c.Count /= n
		}
	}
	return out
}

// TestGPUMultiLarge runs each operation at 1 GiB on every GPU, one type
// per operation, and checks every rank's result.
func TestGPUMultiLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB per rank and operation: not in -short")
	}
	w := newWorld(t, devices(t, 2))
	for _, c := range without228(largeCases(w.n()), has228(t)) {
		t.Run(c.Kind.String(), func(t *testing.T) {
			start := time.Now()
			runGrouped(t, w, []collcheck.Case{c})
			t.Logf("%v: run and checked on %d ranks in %v", c, w.n(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// callGeneric issues c on one rank with the generic function of the Go
// type of c.Type (AllReduce[float32], ...), or the Comm's method for a
// type Go lacks.
func callGeneric(c collcheck.Case, comm *nccl.Comm, s *core.Stream, send, recv *core.Buffer) error {
	switch c.Type {
	case nccl.Float32:
		return callT[float32](c, comm, s, send, recv)
	case nccl.Float64:
		return callT[float64](c, comm, s, send, recv)
	case nccl.Int32:
		return callT[int32](c, comm, s, send, recv)
	}
	return c.Call(comm, s, send, recv)
}

func callT[T nccl.Elem](c collcheck.Case, comm *nccl.Comm, s *core.Stream, send, recv *core.Buffer) error {
	switch c.Kind {
	case collcheck.AllReduce:
		return nccl.AllReduce[T](comm, s, send, recv, c.Count, c.Op)
	case collcheck.Broadcast:
		return nccl.Broadcast[T](comm, s, send, recv, c.Count, c.Root)
	case collcheck.Reduce:
		return nccl.Reduce[T](comm, s, send, recv, c.Count, c.Op, c.Root)
	case collcheck.AllGather:
		return nccl.AllGather[T](comm, s, send, recv, c.Count)
	case collcheck.ReduceScatter:
		return nccl.ReduceScatter[T](comm, s, send, recv, c.Count, c.Op)
	case collcheck.AlltoAll:
		return nccl.AlltoAll[T](comm, s, send, recv, c.Count)
	case collcheck.Gather:
		return nccl.Gather[T](comm, s, send, recv, c.Count, c.Root)
	case collcheck.Scatter:
		return nccl.Scatter[T](comm, s, send, recv, c.Count, c.Root)
	}
	// A ring: this rank's Send and Recv in a group of their own.
	n, r := comm.Count(), comm.Rank()
	var g nccl.Group
	if err := g.Send(comm, s, send, c.Count, nccl.TypeOf[T](), (r+1)%n); err != nil {
		return err
	}
	if err := g.Recv(comm, s, recv, c.Count, nccl.TypeOf[T](), (r+n-1)%n); err != nil {
		return err
	}
	return g.Run()
}

// TestGPUMultiGoroutines issues every operation from one goroutine per
// rank, each by itself (no Group across ranks): the Comm methods for
// bfloat16, the generic functions for float32, float64 and int32.
func TestGPUMultiGoroutines(t *testing.T) {
	w := newWorld(t, devices(t, 2))
	has := has228(t)
	n := w.n()
	for i, dt := range collcheck.Types {
		t.Run(dt.String(), func(t *testing.T) {
			cases := without228(collcheck.Cases(dt, 4099, n, i), has)
			rb := make([]*bufs, n)
			for r := range n {
				rb[r] = setup(t, w, r, cases)
				defer rb[r].close()
			}
			sends := make([][]*core.Buffer, n)
			for r := range n {
				for _, c := range cases {
					sends[r] = append(sends[r], rb[r].send(t, c, r, n))
				}
			}
			errs := make([]error, n)
			// A rank that stops leaves the others waiting inside NCCL for
			// it: then every communicator is aborted, which ends the waits.
			var abort sync.Once
			var wg sync.WaitGroup
			for r := range n {
				wg.Go(func() {
					for j, c := range cases {
						if err := callGeneric(c, w.comms[r], w.streams[r], sends[r][j], rb[r].recv[j]); err != nil {
							errs[r] = fmt.Errorf("%v, rank %d: %w", c, r, err)
							abort.Do(func() {
								for _, c := range w.comms {
									c.Abort()
								}
							})
							return
						}
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			w.wait(t)
			checkAll(t, w, cases, rb)
		})
	}
}

// TestGPUMultiInPlace runs the in-place forms on every GPU, float32: send
// and recv the same Buffer (AllReduce, Broadcast, Reduce), or one the
// view of the other at the rank's block (AllGather, ReduceScatter, and
// Gather and Scatter on the root).
func TestGPUMultiInPlace(t *testing.T) {
	w := newWorld(t, devices(t, 2))
	has := has228(t)
	n := w.n()
	const count = 1000 + 3
	const esz = 4
	root := n - 1
	cases := without228([]collcheck.Case{
		{Kind: collcheck.AllReduce, Op: nccl.Sum, Type: nccl.Float32, Count: count},
		{Kind: collcheck.Broadcast, Type: nccl.Float32, Count: count, Root: root},
		{Kind: collcheck.Reduce, Op: nccl.Min, Type: nccl.Float32, Count: count, Root: root},
		{Kind: collcheck.AllGather, Type: nccl.Float32, Count: count},
		{Kind: collcheck.ReduceScatter, Op: nccl.Max, Type: nccl.Float32, Count: count},
		{Kind: collcheck.Gather, Type: nccl.Float32, Count: count, Root: root},
		{Kind: collcheck.Scatter, Type: nccl.Float32, Count: count, Root: root},
	}, has)
	view := func(b *core.Buffer, off, size int) *core.Buffer {
		v, err := b.View(off, size)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range cases {
		t.Run(c.Kind.String(), func(t *testing.T) {
			var g nccl.Group
			var pool []*core.Buffer
			defer func() {
				for _, b := range pool {
					b.Close()
				}
			}()
			res := make([]*core.Buffer, n) // what each rank's result is read from
			for r := range n {
				d, s := w.devs[r], w.streams[r]
				in := collcheck.Input(nccl.Float32, r, count*n, false)
				blk := r * count * esz
				whole, err := d.Allocate(count*n*esz, s)
				if err != nil {
					t.Fatal(err)
				}
				pool = append(pool, whole)
				if err := whole.Memset8(0xA5); err != nil {
					t.Fatal(err)
				}
				var send, recv *core.Buffer
				switch c.Kind {
				case collcheck.AllGather:
					// The rank's input is its block of recv.
					send, recv = view(whole, blk, count*esz), whole
					if err := core.CopyToDevice(send, in[:count*esz]); err != nil {
						t.Fatal(err)
					}
				case collcheck.ReduceScatter:
					send, recv = whole, view(whole, blk, count*esz)
					if err := core.CopyToDevice(send, in); err != nil {
						t.Fatal(err)
					}
				case collcheck.Gather:
					send = view(whole, blk, count*esz)
					if err := core.CopyToDevice(send, in[:count*esz]); err != nil {
						t.Fatal(err)
					}
					if r == root {
						recv = whole
					}
				case collcheck.Scatter:
					recv = view(whole, blk, count*esz)
					if r == root {
						send = whole
						if err := core.CopyToDevice(send, in); err != nil {
							t.Fatal(err)
						}
					}
				default: // AllReduce, Broadcast, Reduce: one Buffer of count
					send = view(whole, 0, count*esz)
					recv = send
					if err := core.CopyToDevice(send, in[:count*esz]); err != nil {
						t.Fatal(err)
					}
					if c.Kind == collcheck.Reduce && r != root {
						recv = nil
					}
				}
				if c.RecvElems(r, n) > 0 {
					res[r] = recv
				}
				if err := c.Add(&g, w.comms[r], s, send, recv); err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if err := g.Run(); err != nil {
				t.Fatal(err)
			}
			w.wait(t)
			for r := range n {
				if res[r] == nil {
					continue
				}
				got := libtest.Download[byte](t, res[r], res[r].Size())
				if err := c.Check(r, n, got); err != nil {
					t.Error("in place:", err)
				}
			}
		})
	}
}

// TestGPUMultiSplitShrink splits the ranks by parity (keys reversing
// their order), runs an AllReduce on each half and checks it; then the
// ranks but one shrink the communicator (NCCL 2.27.3 and newer) and run
// an AllReduce and an AlltoAll on the rest.
func TestGPUMultiSplitShrink(t *testing.T) {
	w := newWorld(t, devices(t, 2))
	has := has228(t)
	n := w.n()
	colors := make([]int, n)
	keys := make([]int, n)
	for r := range n {
		colors[r], keys[r] = r%2, -r
	}
	subs, err := nccl.SplitAll(w.comms, colors, keys, &nccl.Config{CommName: "split"})
	if err != nil {
		t.Fatalf("SplitAll: %v", err)
	}
	defer func() {
		for _, c := range subs {
			c.Close()
		}
	}()
	// members[color] are the old ranks of each new communicator, in their
	// new order (keys reverse it).
	members := [2][]int{}
	for r := n - 1; r >= 0; r-- {
		members[r%2] = append(members[r%2], r)
	}
	for r, c := range subs {
		m := members[r%2]
		want := -1
		for i, x := range m {
			if x == r {
				want = i
			}
		}
		if c == nil || c.Count() != len(m) || c.Rank() != want || c.Device() != w.devs[r] {
			t.Fatalf("rank %d: Split gave %v, want rank %d of %d", r, c, want, len(m))
		}
	}
	const count = 70001
	sumOf := func(ranks []int) []float32 {
		out := make([]float32, count)
		for _, q := range ranks {
			for j := range out {
				out[j] += float32(collcheck.Val(q, j))
			}
		}
		return out
	}
	// allReduce runs an AllReduce of each old rank's input on comms
	// (indexed by old rank; nil: not a member) and checks it against want.
	allReduce := func(what string, comms []*nccl.Comm, want func(r int) []float32) {
		t.Helper()
		var g nccl.Group
		bufs := make([]*core.Buffer, n)
		for r, c := range comms {
			if c == nil {
				continue
			}
			b, err := w.devs[r].Allocate(4*count, w.streams[r])
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := core.CopyToDevice(b, collcheck.Input(nccl.Float32, r, count, false)); err != nil {
				t.Fatal(err)
			}
			bufs[r] = b
			if err := g.AllReduce(c, w.streams[r], b, b, count, nccl.Float32, nccl.Sum); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for r, c := range comms {
			if c == nil {
				continue
			}
			if err := c.Wait(t.Context(), w.streams[r]); err != nil {
				t.Fatal(err)
			}
			got := libtest.Download[float32](t, bufs[r], count)
			exp := want(r)
			for j := range got {
				if got[j] != exp[j] {
					t.Errorf("%s, old rank %d: element %d is %g, want %g", what, r, j, got[j], exp[j])
					break
				}
			}
		}
	}
	allReduce("AllReduce on the halves of Split", subs, func(r int) []float32 { return sumOf(members[r%2]) })

	if !atLeast(t, 2, 27, 3) {
		t.Skipf("NCCL %s has no ncclCommShrink (2.27.3)", version(t))
	}
	// Every rank but ex shrinks it away, from its own goroutine: each call
	// returns when all have called.
	ex := n / 2
	shrunk := make([]*nccl.Comm, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range w.comms {
		if r == ex {
			continue
		}
		wg.Go(func() {
			shrunk[r], errs[r] = c.Shrink([]int{ex}, nil, false)
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range shrunk {
			c.Close()
		}
	}()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("Shrink excluding rank %d: %v", ex, err)
	}
	var rest []int
	for r := range n {
		if r != ex {
			rest = append(rest, r)
		}
	}
	for i, r := range rest {
		if c := shrunk[r]; c.Count() != n-1 || c.Rank() != i || c.Device() != w.devs[r] {
			t.Fatalf("old rank %d: Shrink gave %v, want rank %d of %d", r, c, i, n-1)
		}
	}
	allReduce(fmt.Sprintf("AllReduce after shrinking rank %d away", ex), shrunk, func(int) []float32 { return sumOf(rest) })
	if !has {
		return
	}
	// An AlltoAll on the shrunk communicator, checked as collcheck checks
	// a communicator of n-1 ranks (new rank i has old rank rest[i]'s Buffers
	// but collcheck's inputs of new rank i).
	c := collcheck.Case{Kind: collcheck.AlltoAll, Type: nccl.Int32, Count: 513}
	var g nccl.Group
	outs := make([]*core.Buffer, n)
	for i, r := range rest {
		in, err := w.devs[r].Allocate(4*c.Count*(n-1), w.streams[r])
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if err := core.CopyToDevice(in, c.InputFor(i, n-1)); err != nil {
			t.Fatal(err)
		}
		if outs[r], err = w.devs[r].Allocate(4*c.Count*(n-1), w.streams[r]); err != nil {
			t.Fatal(err)
		}
		defer outs[r].Close()
		if err := c.Add(&g, shrunk[r], w.streams[r], in, outs[r]); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Run(); err != nil {
		t.Fatalf("AlltoAll on the shrunk communicator: %v", err)
	}
	for i, r := range rest {
		if err := shrunk[r].Wait(t.Context(), w.streams[r]); err != nil {
			t.Fatal(err)
		}
		got := libtest.Download[byte](t, outs[r], outs[r].Size())
		if err := c.Check(i, n-1, got); err != nil {
			t.Error("after Shrink:", err)
		}
	}
}
