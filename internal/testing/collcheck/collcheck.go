// Package collcheck is the cases, inputs and expected results of NCCL's
// collectives, checked on the CPU: package nccl's multi-GPU tests (every
// rank in one process) and bench/cmd/nccltest (one process per GPU) run
// the same cases and check every rank's result the same way.
//
// Rank q's input holds, at element j, Val(q, j): an integer from -15 to
// 15 drawn from a hash of q and j, so that a block that lands at the
// wrong place, or comes from the wrong rank, is seen. Prod's inputs are
// ProdVal(q, j), one of -2, -1, 1 and 2. Every sum, product, maximum,
// minimum and average of them over up to 8 ranks is exact in float32,
// float64, bfloat16 and int32, in whatever order NCCL combines them
// (bfloat16 holds integers up to 256 exactly; an average of floating-point
// values is exact when the number of ranks is a power of two, since NCCL
// multiplies each input by 1/n), so results are compared exactly; only a
// floating-point Avg over another number of ranks is compared within a
// tolerance. An integer Avg is the sum divided by n, rounded towards zero,
// as NCCL computes it.
//
// Every rank can compute what every rank must hold from the formulas
// alone, without the others' inputs: one process per GPU checks itself.
package collcheck

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/nccl"
)

// Kind is an NCCL operation, as the cases run it.
type Kind int

// The operations. SendRecv is a ring: every rank sends to the next and
// receives from the previous, in one group.
const (
	AllReduce Kind = iota
	Broadcast
	Reduce
	AllGather
	ReduceScatter
	AlltoAll
	Gather
	Scatter
	SendRecv
)

var kindNames = [...]string{"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter", "SendRecv"}

// Kinds lists every operation.
func Kinds() []Kind {
	out := make([]Kind, len(kindNames))
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Reduces reports whether the operation takes an Op.
func (k Kind) Reduces() bool { return k == AllReduce || k == Reduce || k == ReduceScatter }

// Rooted reports whether the operation has a root.
func (k Kind) Rooted() bool { return k == Broadcast || k == Reduce || k == Gather || k == Scatter }

// PointToPoint reports whether NCCL runs the operation as sends and
// receives (AlltoAll, Gather and Scatter are built on them): the cases
// put these in a group of their own, apart from the collectives.
func (k Kind) PointToPoint() bool { return k >= AlltoAll }

// Needs228 reports whether the operation needs NCCL 2.28.3 or newer.
func (k Kind) Needs228() bool { return k == AlltoAll || k == Gather || k == Scatter }

// Types are the element types the cases cover.
var Types = []nccl.DataType{nccl.Float32, nccl.Float64, nccl.BFloat16, nccl.Int32}

// Counts are the counts the checks use: one element, an odd few, a
// thousand, and just past 2^20 (past NCCL's switch between protocols and
// between its small and large algorithms).
var Counts = []int{1, 7, 1000, 1<<20 + 3}

// Supported reports whether the package can make inputs of dt and check
// results of it.
func Supported(dt nccl.DataType) bool {
	switch dt {
	case nccl.Float32, nccl.Float64, nccl.BFloat16, nccl.Int32:
		return true
	}
	return false
}

// Case is one operation on every rank.
type Case struct {
	Kind  Kind
	Op    nccl.Op // the reduction, for the kinds that reduce
	Type  nccl.DataType
	Count int // the count the call takes: elements per rank, or per block
	Root  int // the root, for the rooted kinds
}

// String names the case: "AllReduce Sum Float32 count=7", "Gather
// BFloat16 count=1000 root=2".
func (c Case) String() string {
	s := c.Kind.String()
	if c.Kind.Reduces() {
		s += " " + c.Op.String()
	}
	s += fmt.Sprintf(" %v count=%d", c.Type, c.Count)
	if c.Kind.Rooted() {
		s += fmt.Sprintf(" root=%d", c.Root)
	}
	return s
}

// Cases returns the cases of one type and count on n ranks: AllReduce,
// Reduce and ReduceScatter with every Op, Broadcast and AllGather (the
// collectives), then AlltoAll, Gather, Scatter and SendRecv (point to
// point). The roots move with seed and between the kinds, so that a run
// over several seeds has every rank as a root.
func Cases(dt nccl.DataType, count, n, seed int) []Case {
	var out []Case
	for _, op := range nccl.Ops() {
		out = append(out,
			Case{Kind: AllReduce, Op: op, Type: dt, Count: count},
			Case{Kind: Reduce, Op: op, Type: dt, Count: count, Root: (seed + int(op)) % n},
			Case{Kind: ReduceScatter, Op: op, Type: dt, Count: count})
	}
	out = append(out,
		Case{Kind: Broadcast, Type: dt, Count: count, Root: (seed + 1) % n},
		Case{Kind: AllGather, Type: dt, Count: count},
		Case{Kind: AlltoAll, Type: dt, Count: count},
		Case{Kind: Gather, Type: dt, Count: count, Root: (seed + 2) % n},
		Case{Kind: Scatter, Type: dt, Count: count, Root: (seed + 3) % n},
		Case{Kind: SendRecv, Type: dt, Count: count})
	return out
}

// Prod reports whether the case's inputs are ProdVal's.
func (c Case) Prod() bool { return c.Kind.Reduces() && c.Op == nccl.Prod }

// extent is how many elements one of a case's Buffers holds on a rank.
type extent int

const (
	countAll         extent = iota // Count, on every rank
	countPerRank                   // Count per rank, on every rank
	countRoot                      // Count on the root; nil elsewhere
	countPerRankRoot               // Count per rank on the root; nil elsewhere
)

// extents gives each Kind's send and recv extents; the ones left out send
// and receive Count on every rank.
var extents = map[Kind][2]extent{
	Broadcast:     {countRoot, countAll},
	Reduce:        {countAll, countRoot},
	AllGather:     {countAll, countPerRank},
	ReduceScatter: {countPerRank, countAll},
	AlltoAll:      {countPerRank, countPerRank},
	Gather:        {countAll, countPerRankRoot},
	Scatter:       {countPerRankRoot, countAll},
}

// elems is the number of elements of a Buffer of extent e on rank of n.
func (c Case) elems(e extent, rank, n int) int {
	if (e == countRoot || e == countPerRankRoot) && rank != c.Root {
		return 0
	}
	if e == countPerRank || e == countPerRankRoot {
		return c.Count * n
	}
	return c.Count
}

// SendElems is the number of elements of rank's send Buffer; 0 means the
// rank passes nil (the send of a rooted operation that only the root
// reads).
func (c Case) SendElems(rank, n int) int { return c.elems(extents[c.Kind][0], rank, n) }

// RecvElems is the number of elements of rank's recv Buffer, which Check
// checks; 0 means the rank passes nil (the recv of a rooted operation that
// only the root writes).
func (c Case) RecvElems(rank, n int) int { return c.elems(extents[c.Kind][1], rank, n) }

// Add adds rank comm's part of the case to g: one operation, or a Send
// and a Recv for SendRecv.
func (c Case) Add(g *nccl.Group, comm *nccl.Comm, s *core.Stream, send, recv *core.Buffer) error {
	switch c.Kind {
	case AllReduce:
		return g.AllReduce(comm, s, send, recv, c.Count, c.Type, c.Op)
	case Broadcast:
		return g.Broadcast(comm, s, send, recv, c.Count, c.Type, c.Root)
	case Reduce:
		return g.Reduce(comm, s, send, recv, c.Count, c.Type, c.Op, c.Root)
	case AllGather:
		return g.AllGather(comm, s, send, recv, c.Count, c.Type)
	case ReduceScatter:
		return g.ReduceScatter(comm, s, send, recv, c.Count, c.Type, c.Op)
	case AlltoAll:
		return g.AlltoAll(comm, s, send, recv, c.Count, c.Type)
	case Gather:
		return g.Gather(comm, s, send, recv, c.Count, c.Type, c.Root)
	case Scatter:
		return g.Scatter(comm, s, send, recv, c.Count, c.Type, c.Root)
	case SendRecv:
		n, r := comm.Count(), comm.Rank()
		if err := g.Send(comm, s, send, c.Count, c.Type, (r+1)%n); err != nil {
			return err
		}
		return g.Recv(comm, s, recv, c.Count, c.Type, (r+n-1)%n)
	}
	return fmt.Errorf("collcheck: %v is no operation", c.Kind)
}

// Call issues rank comm's part of the case by itself, with the Comm's
// methods (SendRecv, whose Send and Recv must be grouped, in a Group of
// its own).
func (c Case) Call(comm *nccl.Comm, s *core.Stream, send, recv *core.Buffer) error {
	switch c.Kind {
	case AllReduce:
		return comm.AllReduce(s, send, recv, c.Count, c.Type, c.Op)
	case Broadcast:
		return comm.Broadcast(s, send, recv, c.Count, c.Type, c.Root)
	case Reduce:
		return comm.Reduce(s, send, recv, c.Count, c.Type, c.Op, c.Root)
	case AllGather:
		return comm.AllGather(s, send, recv, c.Count, c.Type)
	case ReduceScatter:
		return comm.ReduceScatter(s, send, recv, c.Count, c.Type, c.Op)
	case AlltoAll:
		return comm.AlltoAll(s, send, recv, c.Count, c.Type)
	case Gather:
		return comm.Gather(s, send, recv, c.Count, c.Type, c.Root)
	case Scatter:
		return comm.Scatter(s, send, recv, c.Count, c.Type, c.Root)
	}
	var g nccl.Group
	if err := c.Add(&g, comm, s, send, recv); err != nil {
		return err
	}
	return g.Run()
}

// hash mixes a rank and an element index.
func hash(q, j int) uint32 {
	return (uint32(j)*0x9E3779B1 ^ uint32(q)*0x85EBCA77 ^ 0x27D4EB2F) * 0xC2B2AE3D
}

// Val is element j of rank q's input: an integer from -15 to 15.
func Val(q, j int) float64 { return float64(int(hash(q, j)>>16%31) - 15) }

var prodVals = [4]float64{-2, -1, 1, 2}

// ProdVal is element j of rank q's input to Prod: -2, -1, 1 or 2.
func ProdVal(q, j int) float64 { return prodVals[hash(q, j)>>30] }

// Input returns rank's input of elems elements of dt, as the bytes to
// copy to the GPU: Val(rank, j), or ProdVal(rank, j) with prod.
func Input(dt nccl.DataType, rank, elems int, prod bool) []byte {
	if !Supported(dt) {
		panic(fmt.Sprintf("collcheck: no inputs of %v", dt))
	}
	b := make([]byte, elems*dt.Size())
	val := Val
	if prod {
		val = ProdVal
	}
	parallel(elems, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			put(dt, b, j, val(rank, j))
		}
	})
	return b
}

// InputFor is rank's input for case c: SendElems elements (at least one,
// so that a Buffer can be made of it).
func (c Case) InputFor(rank, n int) []byte {
	return Input(c.Type, rank, max(c.SendElems(rank, n), 1), c.Prod())
}

func put(dt nccl.DataType, b []byte, i int, v float64) {
	le := binary.LittleEndian
	switch dt {
	case nccl.Float32:
		le.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case nccl.Float64:
		le.PutUint64(b[8*i:], math.Float64bits(v))
	case nccl.BFloat16:
		le.PutUint16(b[2*i:], uint16(math.Float32bits(float32(v))>>16))
	case nccl.Int32:
		le.PutUint32(b[4*i:], uint32(int32(v)))
	}
}

func get(dt nccl.DataType, b []byte, i int) float64 {
	le := binary.LittleEndian
	switch dt {
	case nccl.Float32:
		return float64(math.Float32frombits(le.Uint32(b[4*i:])))
	case nccl.Float64:
		return math.Float64frombits(le.Uint64(b[8*i:]))
	case nccl.BFloat16:
		return float64(math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16))
	default: // Int32
		return float64(int32(le.Uint32(b[4*i:])))
	}
}

// Want is element k of what rank's recv must hold after the case ran on
// n ranks.
func (c Case) Want(rank, n, k int) float64 {
	switch c.Kind {
	case AllReduce, Reduce:
		return c.reduce(n, k)
	case ReduceScatter:
		return c.reduce(n, rank*c.Count+k)
	case Broadcast:
		return Val(c.Root, k)
	case AllGather, Gather:
		return Val(k/c.Count, k%c.Count)
	case AlltoAll:
		return Val(k/c.Count, rank*c.Count+k%c.Count)
	case Scatter:
		return Val(c.Root, rank*c.Count+k)
	default: // SendRecv
		return Val((rank+n-1)%n, k)
	}
}

// reduce is the reduction of element j of every rank's input.
func (c Case) reduce(n, j int) float64 {
	if c.Op == nccl.Prod {
		p := 1.0
		for q := range n {
			p *= ProdVal(q, j)
		}
		return p
	}
	acc := Val(0, j)
	for q := 1; q < n; q++ {
		x := Val(q, j)
		switch c.Op {
		case nccl.Max:
			acc = max(acc, x)
		case nccl.Min:
			acc = min(acc, x)
		default: // Sum, Avg
			acc += x
		}
	}
	if c.Op == nccl.Avg {
		acc /= float64(n)
		if c.Type == nccl.Int32 {
			acc = math.Trunc(acc)
		}
	}
	return acc
}

// tolerance is how far a result may be from Want: 0 but for a
// floating-point average over a number of ranks that is no power of two,
// where NCCL's 1/n is rounded.
func (c Case) tolerance(n int) float64 {
	if c.Kind.Reduces() && c.Op == nccl.Avg && n&(n-1) != 0 {
		switch c.Type {
		case nccl.BFloat16:
			return 0.25 // 1/n and each product rounded to 8 bits, of values up to 15
		case nccl.Float32:
			return 1e-5
		case nccl.Float64:
			return 1e-12
		}
	}
	return 0
}

// Check compares got, rank's recv after the case ran on n ranks, with
// Want, element by element; the error names the case, the rank, the first
// element that differs (and its block, for the kinds with blocks) and how
// many differ.
func (c Case) Check(rank, n int, got []byte) error {
	elems := c.RecvElems(rank, n)
	if esz := c.Type.Size(); len(got) != elems*esz {
		return fmt.Errorf("%v, rank %d of %d: %d bytes to check, want %d (%d elements)", c, rank, n, len(got), elems*esz, elems)
	}
	tol := c.tolerance(n)
	var (
		mu    sync.Mutex
		first = -1
		bad   int
	)
	parallel(elems, func(lo, hi int) {
		f, nb := -1, 0
		for k := lo; k < hi; k++ {
			d := get(c.Type, got, k) - c.Want(rank, n, k)
			if d != 0 && !(math.Abs(d) <= tol) {
				if f < 0 {
					f = k
				}
				nb++
			}
		}
		if nb > 0 {
			mu.Lock()
			if first < 0 || f < first {
				first = f
			}
			bad += nb
			mu.Unlock()
		}
	})
	if bad == 0 {
		return nil
	}
	where := fmt.Sprintf("element %d", first)
	if elems > c.Count && c.Count > 0 {
		where += fmt.Sprintf(" (block %d, element %d)", first/c.Count, first%c.Count)
	}
	return fmt.Errorf("%v, rank %d of %d: %s is %g, want %g (%d of %d elements differ)",
		c, rank, n, where, get(c.Type, got, first), c.Want(rank, n, first), bad, elems)
}

// parallel runs f over [0, n) in chunks, on up to GOMAXPROCS goroutines
// when n is large.
func parallel(n int, f func(lo, hi int)) {
	const minChunk = 1 << 16
	w := min(runtime.GOMAXPROCS(0), (n+minChunk-1)/minChunk)
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, min(lo+step, n))
		}()
	}
	wg.Wait()
}
