package collcheck

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/cudago/cudago/nccl"
)

// round is x rounded to dt, as the GPU rounds each step: to nearest even.
func round(dt nccl.DataType, x float64) float64 {
	switch dt {
	case nccl.Float32:
		return float64(float32(x))
	case nccl.BFloat16:
		b := math.Float32bits(float32(x))
		b += 0x7fff + (b >> 16 & 1)
		return float64(math.Float32frombits(b &^ 0xffff))
	case nccl.Int32:
		return float64(int32(int64(x)))
	}
	return x
}

// simulate runs c on n ranks on the CPU, from the inputs' bytes, the way
// a GPU might: reductions in reverse rank order, rounding to the type at
// every step, Avg of floating point as NCCL's PreMulSum (each input times
// 1/n rounded to the type), of integers as a sum then a division rounded
// towards zero. It returns each rank's recv (nil where none).
func simulate(c Case, n int, in [][]byte) [][]byte {
	dt, cnt, esz := c.Type, c.Count, c.Type.Size()
	red := func(j int) float64 {
		acc := math.NaN()
		for q := n - 1; q >= 0; q-- {
			x := get(dt, in[q], j)
			if c.Op == nccl.Avg && dt != nccl.Int32 {
				x = round(dt, x*round(dt, 1/float64(n)))
			}
			switch {
			case math.IsNaN(acc):
				acc = x
			case c.Op == nccl.Prod:
				acc = round(dt, acc*x)
			case c.Op == nccl.Max:
				acc = max(acc, x)
			case c.Op == nccl.Min:
				acc = min(acc, x)
			default:
				acc = round(dt, acc+x)
			}
		}
		if c.Op == nccl.Avg && dt == nccl.Int32 {
			acc = math.Trunc(acc / float64(n))
		}
		return acc
	}
	out := make([][]byte, n)
	for r := range n {
		m := c.RecvElems(r, n)
		if m == 0 {
			continue
		}
		o := make([]byte, m*esz)
		for k := range m {
			var v float64
			switch c.Kind {
			case AllReduce, Reduce:
				v = red(k)
			case ReduceScatter:
				v = red(r*cnt + k)
			case Broadcast:
				v = get(dt, in[c.Root], k)
			case AllGather, Gather:
				v = get(dt, in[k/cnt], k%cnt)
			case AlltoAll:
				v = get(dt, in[k/cnt], r*cnt+k%cnt)
			case Scatter:
				v = get(dt, in[c.Root], r*cnt+k)
			case SendRecv:
				v = get(dt, in[(r+n-1)%n], k)
			}
			put(dt, o, k, v)
		}
		out[r] = o
	}
	return out
}

// TestSimulated: what a correct NCCL leaves passes Check on every rank,
// for every case, type and rank count; a changed element, or two blocks
// swapped, fails it, and the error names the element.
func TestSimulated(t *testing.T) {
	for _, n := range []int{2, 3, 4, 8} {
		for _, dt := range Types {
			for i, count := range []int{1, 7, 300} {
				for _, c := range Cases(dt, count, n, i) {
					in := make([][]byte, n)
					for q := range n {
						in[q] = Input(dt, q, count*n, c.Prod())
					}
					outs := simulate(c, n, in)
					for r, o := range outs {
						if c.RecvElems(r, n) == 0 {
							continue
						}
						if err := c.Check(r, n, o); err != nil {
							t.Fatalf("n=%d: the simulated result fails: %v", n, err)
						}
						// One element changed by 1 (more than any tolerance).
						k := (r*31 + 5) % len(o) / dt.Size()
						bad := append([]byte(nil), o...)
						put(dt, bad, k, get(dt, o, k)+1)
						err := c.Check(r, n, bad)
						if err == nil || !strings.Contains(err.Error(), "element ") || !strings.Contains(err.Error(), "(1 of ") {
							t.Fatalf("%v rank %d of %d, element %d changed: %v", c, r, n, k, err)
						}
						if err := c.Check(r, n, o[:len(o)-1]); err == nil {
							t.Fatalf("%v: a short result passed", c)
						}
					}
				}
			}
		}
	}
}

// TestBlocksSwapped: blocks of the right values in the wrong places fail.
func TestBlocksSwapped(t *testing.T) {
	const n, count = 4, 5
	for _, k := range []Kind{AllGather, AlltoAll, Gather} {
		c := Case{Kind: k, Type: nccl.Float32, Count: count, Root: 1}
		in := make([][]byte, n)
		for q := range n {
			in[q] = Input(c.Type, q, count*n, false)
		}
		o := simulate(c, n, in)[1]
		bs := count * 4
		sw := append([]byte(nil), o...)
		copy(sw[bs:2*bs], o[2*bs:3*bs])
		copy(sw[2*bs:3*bs], o[bs:2*bs])
		err := c.Check(1, n, sw)
		if err == nil || !strings.Contains(err.Error(), "(block 1, element ") {
			t.Errorf("%v with blocks 1 and 2 swapped: %v", c, err)
		}
	}
	// A rank's SendRecv from the wrong neighbour.
	c := Case{Kind: SendRecv, Type: nccl.Int32, Count: 1000}
	if err := c.Check(2, 4, Input(nccl.Int32, 3, 1000, false)); err == nil {
		t.Error("SendRecv from the next rank passed")
	}
}

// TestValues: inputs hold Val and ProdVal in every type, bit for bit as
// the type writes them; the ranks' inputs differ.
func TestValues(t *testing.T) {
	seen := map[float64]bool{}
	for _, dt := range Types {
		for q := range 3 {
			b := Input(dt, q, 1<<17+1, false) // parallel
			p := Input(dt, q, 100, true)
			for j := range 1<<17 + 1 {
				v := Val(q, j)
				if v < -15 || v > 15 || v != math.Trunc(v) || get(dt, b, j) != v {
					t.Fatalf("%v rank %d element %d: %g, Val %g", dt, q, j, get(dt, b, j), v)
				}
				seen[v] = true
			}
			for j := range 100 {
				if v := get(dt, p, j); v != ProdVal(q, j) || v == 0 || math.Abs(v) > 2 {
					t.Fatalf("%v rank %d: ProdVal %g", dt, q, v)
				}
			}
		}
	}
	if len(seen) != 31 {
		t.Errorf("Val takes %d values, want the 31 of -15..15", len(seen))
	}
	same := 0
	for j := range 1000 {
		if Val(0, j) == Val(1, j) {
			same++
		}
	}
	if same > 100 {
		t.Errorf("ranks 0 and 1 agree on %d of 1000 elements", same)
	}
	// bfloat16 is the top half of the float32.
	b := Input(nccl.BFloat16, 0, 1, false)
	if f := math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16); float64(f) != Val(0, 0) {
		t.Errorf("bfloat16 bits %#x", b)
	}
}

func TestCaseShapes(t *testing.T) {
	cs := Cases(nccl.Float32, 10, 4, 1)
	if len(cs) != 3*len(nccl.Ops())+6 {
		t.Fatalf("%d cases", len(cs))
	}
	kinds := map[Kind]bool{}
	for _, c := range cs {
		kinds[c.Kind] = true
		if c.Root < 0 || c.Root >= 4 {
			t.Errorf("%v: root", c)
		}
	}
	if len(kinds) != len(Kinds()) {
		t.Errorf("the cases cover %d kinds of %d", len(kinds), len(Kinds()))
	}
	for _, x := range []struct {
		c          Case
		rank       int
		send, recv int
		name       string
	}{
		{Case{Kind: AllGather, Count: 10}, 0, 10, 40, "AllGather Float32 count=10"},
		{Case{Kind: ReduceScatter, Op: nccl.Max, Count: 10}, 3, 40, 10, "ReduceScatter Max Float32 count=10"},
		{Case{Kind: AlltoAll, Count: 10}, 1, 40, 40, "AlltoAll Float32 count=10"},
		{Case{Kind: Gather, Count: 10, Root: 2}, 2, 10, 40, "Gather Float32 count=10 root=2"},
		{Case{Kind: Gather, Count: 10, Root: 2}, 1, 10, 0, ""},
		{Case{Kind: Scatter, Count: 10, Root: 0}, 0, 40, 10, ""},
		{Case{Kind: Scatter, Count: 10, Root: 0}, 3, 0, 10, ""},
		{Case{Kind: Broadcast, Count: 10, Root: 0}, 3, 0, 10, ""},
		{Case{Kind: Reduce, Op: nccl.Sum, Count: 10, Root: 0}, 3, 10, 0, ""},
		{Case{Kind: SendRecv, Count: 10}, 3, 10, 10, "SendRecv Float32 count=10"},
	} {
		x.c.Type = nccl.Float32
		if s, r := x.c.SendElems(x.rank, 4), x.c.RecvElems(x.rank, 4); s != x.send || r != x.recv {
			t.Errorf("%v rank %d: send %d recv %d, want %d %d", x.c, x.rank, s, r, x.send, x.recv)
		}
		if x.name != "" && x.c.String() != x.name {
			t.Errorf("%q, want %q", x.c.String(), x.name)
		}
	}
	if !AlltoAll.Needs228() || AllGather.Needs228() || !SendRecv.PointToPoint() || Broadcast.PointToPoint() || Kind(9).String() != "Kind(9)" {
		t.Error("kind properties")
	}
}
