package nccl

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/bindings/driver"
	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// opKind is one of NCCL's operations.
type opKind uint8

const (
	opAllReduce opKind = iota
	opBroadcast
	opReduce
	opAllGather
	opReduceScatter
	opSend
	opRecv
	opAlltoAll
	opGather
	opScatter
)

var opKindNames = [...]string{"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "Send", "Recv", "AlltoAll", "Gather", "Scatter"}

func (k opKind) String() string { return opKindNames[k] }

// since228 reports whether the operation is one of NCCL 2.28.3's
// (ncclAlltoAll, ncclGather, ncclScatter), which older libraries lack.
func (k opKind) since228() bool { return k >= opAlltoAll }

// reduces reports whether the operation takes an Op.
func (k opKind) reduces() bool {
	return k == opAllReduce || k == opReduce || k == opReduceScatter
}

// task is one operation on one rank, as a caller describes it: checked
// (check) before anything is called, then run alone (Comm's methods) or
// in a Group.
type task struct {
	kind       opKind
	c          *Comm
	send, recv *core.Buffer
	count      int
	dt         DataType
	red        Op
	peer       int // the root (Broadcast, Reduce) or the peer (Send, Recv)
	s          *core.Stream
}

// check validates o, in pure Go, for function fn: every error names the
// argument. The comm's fields it reads do not change once it is made.
func (o *task) check(fn string) error {
	c := o.c
	if c == nil {
		return argErr(fn, "comm", "comm is nil")
	}
	if c.state == nil || c.closed.Load() {
		return closedErr(fn)
	}
	if !o.dt.valid() {
		return argErr(fn, "dt", "data type %v is not one of NCCL's (Int8 to Float8E5M2)", o.dt)
	}
	if o.dt == Float8E4M3 || o.dt == Float8E5M2 {
		if v, err := libVersion(); err != nil {
			return err
		} else if v < fp8Version {
			return argErr(fn, "dt", "%v needs NCCL 2.24.3 or newer; the loaded NCCL is %s", o.dt, ncclb.VersionString(v))
		}
	}
	if o.kind.reduces() && !o.red.valid() {
		return argErr(fn, "op", "op %v is not Sum, Prod, Max, Min or Avg", o.red)
	}
	if o.count < 0 {
		return argErr(fn, "count", "count = %d is negative", o.count)
	}
	switch o.kind {
	case opBroadcast, opReduce, opGather, opScatter:
		if o.peer < 0 || o.peer >= c.count {
			return argErr(fn, "root", "root = %d is not a rank of %d", o.peer, c.count)
		}
	case opSend, opRecv:
		if o.peer < 0 || o.peer >= c.count {
			return argErr(fn, "peer", "peer = %d is not a rank of %d", o.peer, c.count)
		}
	}
	esz := int64(o.dt.Size())
	n := int64(o.count)
	ranks := max(int64(c.count), 1)
	if n > math.MaxInt64/esz/ranks {
		return argErr(fn, "count", "count = %d of %v is too large", o.count, o.dt)
	}
	one := n * esz     // count elements
	all := one * ranks // count elements per rank
	if err := o.checkBufs(fn, one, all); err != nil {
		return err
	}
	if o.kind.since228() {
		// The bindings' *MissingFunctionError, naming the version needed.
		// After the checks of the arguments, which hold whatever the
		// library, so that those are tested with any library.
		if _, err := ncclb.Proc("nccl" + o.kind.String()); err != nil {
			return fmt.Errorf("nccl: %s: %w", fn, err)
		}
	}
	if o.s == nil {
		return argErr(fn, "stream", "stream is nil")
	}
	if d := o.s.Device(); d != c.dev {
		return argErr(fn, "stream", "stream is on %v, but %v", d, c)
	}
	if !o.s.Context().IsPrimary() {
		return argErr(fn, "stream", "stream is in a context made with CreateContext: NCCL works in the device's primary context (the CUDA runtime's)")
	}
	return nil
}

// checkBufs checks the Buffers the operation reads and writes; one is
// count elements in bytes, all count elements per rank.
func (o *task) checkBufs(fn string, one, all int64) error {
	// rootOnly is what a Buffer of a rooted operation needs that only the
	// root reads or writes: n bytes at the root, optional elsewhere.
	rootOnly := func(n int64) int64 {
		if o.peer == o.c.rank {
			return n
		}
		return optional
	}
	switch o.kind {
	case opAllReduce:
		return o.bufs(fn, one, one)
	case opBroadcast:
		return o.bufs(fn, rootOnly(one), one) // only the root's send is read
	case opReduce:
		return o.bufs(fn, one, rootOnly(one)) // only the root's recv is written
	case opAllGather:
		return o.bufs(fn, one, all)
	case opReduceScatter:
		return o.bufs(fn, all, one)
	case opAlltoAll:
		if err := o.bufs(fn, all, all); err != nil {
			return err
		}
		// NCCL's AlltoAll has no in-place form: overlapping Buffers would
		// be overwritten before they are sent.
		sp, rp := int64(o.send.Ptr()), int64(o.recv.Ptr())
		if all > 0 && sp != 0 && rp != 0 && sp < rp+all && rp < sp+all {
			return argErr(fn, "recv", "send and recv overlap: AlltoAll does not run in place")
		}
		return nil
	case opGather:
		return o.bufs(fn, one, rootOnly(all)) // only the root's recv is written
	case opScatter:
		return o.bufs(fn, rootOnly(all), one) // only the root's send is read
	case opSend:
		return o.bufs(fn, one, none)
	default: // opRecv
		return o.bufs(fn, none, one)
	}
}

// What bufs needs of a Buffer besides a size: that the operation has none
// (nil or not, it is not used), or that it may have one (the root's only,
// nil elsewhere).
const (
	none     = -2
	optional = -1
)

// bufs checks send and recv against the bytes they must hold, or none or
// optional.
func (o *task) bufs(fn string, sendNeed, recvNeed int64) error {
	one := int64(o.count) * int64(o.dt.Size())
	for _, b := range []struct {
		arg  string
		buf  *core.Buffer
		need int64
	}{{"send", o.send, sendNeed}, {"recv", o.recv, recvNeed}} {
		if b.need == none || b.need == optional && b.buf == nil {
			continue
		}
		if b.buf == nil {
			return argErr(fn, b.arg, "%s is nil", b.arg)
		}
		if b.need > 0 && int64(b.buf.Size()) < b.need {
			h := fmt.Sprintf("count × %d bytes", o.dt.Size())
			if b.need > one {
				h = fmt.Sprintf("count × %d ranks × %d bytes", o.c.count, o.dt.Size())
			}
			return argErr(fn, b.arg, "%s holds %d bytes; %s of count = %d %v needs %d (%s)",
				b.arg, b.buf.Size(), o.kind, o.count, o.dt, b.need, h)
		}
		if mr := b.buf.MemoryResource(); mr != nil {
			if !mr.DeviceAccessible() {
				return argErr(fn, b.arg, "%s is %T memory, which the GPU cannot access", b.arg, mr)
			}
			if d := mr.Device(); d != nil && d != o.c.dev {
				return argErr(fn, b.arg, "%s is memory of %v, but %v", b.arg, d, o.c)
			}
		}
	}
	return nil
}

// bound is a task's handles while it is acquired.
type bound struct {
	ctx        driver.Context
	stream     driver.Stream
	send, recv driver.Deviceptr
}

// acquire holds o's stream and Buffers open; release ends it.
func (o *task) acquire(fn string) (bound, error) {
	var b bound
	var err error
	if b.ctx, b.stream, err = o.s.Acquire(); err != nil {
		return b, fmt.Errorf("nccl: %s: stream: %w", fn, err)
	}
	if o.send != nil {
		if b.send, err = o.send.Acquire(); err != nil {
			o.s.Release()
			return b, fmt.Errorf("nccl: %s: send: %w", fn, err)
		}
	}
	if o.recv != nil {
		if b.recv, err = o.recv.Acquire(); err != nil {
			if o.send != nil {
				o.send.Release()
			}
			o.s.Release()
			return b, fmt.Errorf("nccl: %s: recv: %w", fn, err)
		}
	}
	return b, nil
}

func (o *task) release() {
	if o.recv != nil {
		o.recv.Release()
	}
	if o.send != nil {
		o.send.Release()
	}
	o.s.Release()
}

// call enqueues o (the comm held open and o acquired as b).
func (o *task) call(b bound) error {
	n := uint64(o.count)
	dt := ncclb.DataType(o.dt)
	red := ncclb.RedOp(o.red)
	if o.red == Avg && o.c.count == 1 {
		// On one rank the average is the sum, exactly. NCCL 2.28.3's
		// one-rank Avg (a kernel that scales by 1/1) leaves elements past
		// 2^20 unwritten (seen on the H100) and refuses fp8; Sum copies.
		red = ncclb.RedOp(Sum)
	}
	h, s := o.c.h, ncclb.Stream(b.stream)
	switch o.kind {
	case opAllReduce:
		return ncclAllReduce(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, red, h, s)
	case opBroadcast:
		return ncclBroadcast(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, int32(o.peer), h, s)
	case opReduce:
		return ncclReduce(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, red, int32(o.peer), h, s)
	case opAllGather:
		return ncclAllGather(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, h, s)
	case opReduceScatter:
		return ncclReduceScatter(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, red, h, s)
	case opAlltoAll:
		return ncclAlltoAll(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, h, s)
	case opGather:
		return ncclGather(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, int32(o.peer), h, s)
	case opScatter:
		return ncclScatter(b.ctx, libhandle.Ptr(b.send), libhandle.Ptr(b.recv), n, dt, int32(o.peer), h, s)
	case opSend:
		return ncclSend(b.ctx, libhandle.Ptr(b.send), n, dt, int32(o.peer), h, s)
	default:
		return ncclRecv(b.ctx, libhandle.Ptr(b.recv), n, dt, int32(o.peer), h, s)
	}
}

// run checks o and enqueues it alone: NCCL makes a single call its own
// group, on whatever thread it runs.
func (o *task) run() error {
	fn := o.kind.String()
	if err := o.check(fn); err != nil {
		return err
	}
	if err := o.c.begin(fn); err != nil {
		return err
	}
	defer o.c.end()
	b, err := o.acquire(fn)
	if err != nil {
		return err
	}
	defer o.release()
	return o.call(b)
}

// The operations of one rank, each enqueued on stream s by itself. They
// return once NCCL has queued the work; wait for s (or use Comm.Wait)
// before reading the results. count is in elements of dt. These methods
// take the DataType as a value, for the types Go has none for (Float16,
// BFloat16, fp8) and for one chosen at run time; the generic functions
// below take it from a Go element type. For a communicator of one rank
// per process (InitRank) these are all one needs; ranks of one process
// (InitAll) must issue theirs in a Group.

// AllReduce reduces count elements of every rank's send with op and
// leaves the result in every rank's recv (send and recv may be the same
// Buffer: in place).
func (c *Comm) AllReduce(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op) error {
	return (&task{kind: opAllReduce, c: c, send: send, recv: recv, count: count, dt: dt, red: op, s: s}).run()
}

// Broadcast copies count elements of root's send to every rank's recv.
// send is read on root only (nil elsewhere is fine); send and recv may be
// the same Buffer.
func (c *Comm) Broadcast(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return (&task{kind: opBroadcast, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s}).run()
}

// Reduce reduces count elements of every rank's send with op into root's
// recv (recv is written on root only: nil elsewhere is fine).
func (c *Comm) Reduce(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op, root int) error {
	return (&task{kind: opReduce, c: c, send: send, recv: recv, count: count, dt: dt, red: op, peer: root, s: s}).run()
}

// AllGather gathers count elements of every rank's send into every
// rank's recv, rank i's at element i*count: recv holds count × Count()
// elements. In place: send is the view of recv at rank Rank()'s place.
func (c *Comm) AllGather(s *core.Stream, send, recv *core.Buffer, count int, dt DataType) error {
	return (&task{kind: opAllGather, c: c, send: send, recv: recv, count: count, dt: dt, s: s}).run()
}

// ReduceScatter reduces every rank's send (count × Count() elements) with
// op and leaves block i of the result (count elements) in rank i's recv.
// In place: recv is the view of send at rank Rank()'s block.
func (c *Comm) ReduceScatter(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op) error {
	return (&task{kind: opReduceScatter, c: c, send: send, recv: recv, count: count, dt: dt, red: op, s: s}).run()
}

// AlltoAll sends block j of send (count elements at element j*count) to
// rank j, which receives it as block i of its recv, i being this rank:
// send and recv hold count × Count() elements each, and must not overlap.
// It needs NCCL 2.28.3 or newer; with an older library it returns the
// bindings' *MissingFunctionError.
func (c *Comm) AlltoAll(s *core.Stream, send, recv *core.Buffer, count int, dt DataType) error {
	return (&task{kind: opAlltoAll, c: c, send: send, recv: recv, count: count, dt: dt, s: s}).run()
}

// Gather gathers count elements of every rank's send into root's recv,
// rank i's at element i*count: root's recv holds count × Count()
// elements (recv is written on root only: nil elsewhere is fine). In
// place: root's send is the view of its recv at its own block. NCCL
// 2.28.3 and newer, like AlltoAll.
func (c *Comm) Gather(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return (&task{kind: opGather, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s}).run()
}

// Scatter sends block i of root's send (count elements at element
// i*count) to rank i's recv: root's send holds count × Count() elements
// (send is read on root only: nil elsewhere is fine). In place: root's
// recv is the view of its send at its own block. NCCL 2.28.3 and newer,
// like AlltoAll.
func (c *Comm) Scatter(s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return (&task{kind: opScatter, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s}).run()
}

// Send sends count elements of send to rank peer, which must Recv them.
// A Send and its Recv block each other on the GPU: a rank that both
// sends and receives (or sends to itself) must put them in one Group.
func (c *Comm) Send(s *core.Stream, send *core.Buffer, count int, dt DataType, peer int) error {
	return (&task{kind: opSend, c: c, send: send, count: count, dt: dt, peer: peer, s: s}).run()
}

// Recv receives count elements from rank peer into recv.
func (c *Comm) Recv(s *core.Stream, recv *core.Buffer, count int, dt DataType, peer int) error {
	return (&task{kind: opRecv, c: c, recv: recv, count: count, dt: dt, peer: peer, s: s}).run()
}

// The same, with the DataType of the Go element type T: AllReduce[float32]
// is c.AllReduce(..., Float32, ...).

// AllReduce is c.AllReduce with T's DataType.
func AllReduce[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, op Op) error {
	return c.AllReduce(s, send, recv, count, TypeOf[T](), op)
}

// Broadcast is c.Broadcast with T's DataType.
func Broadcast[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, root int) error {
	return c.Broadcast(s, send, recv, count, TypeOf[T](), root)
}

// Reduce is c.Reduce with T's DataType.
func Reduce[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, op Op, root int) error {
	return c.Reduce(s, send, recv, count, TypeOf[T](), op, root)
}

// AllGather is c.AllGather with T's DataType.
func AllGather[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int) error {
	return c.AllGather(s, send, recv, count, TypeOf[T]())
}

// ReduceScatter is c.ReduceScatter with T's DataType.
func ReduceScatter[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, op Op) error {
	return c.ReduceScatter(s, send, recv, count, TypeOf[T](), op)
}

// AlltoAll is c.AlltoAll with T's DataType.
func AlltoAll[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int) error {
	return c.AlltoAll(s, send, recv, count, TypeOf[T]())
}

// Gather is c.Gather with T's DataType.
func Gather[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, root int) error {
	return c.Gather(s, send, recv, count, TypeOf[T](), root)
}

// Scatter is c.Scatter with T's DataType.
func Scatter[T Elem](c *Comm, s *core.Stream, send, recv *core.Buffer, count int, root int) error {
	return c.Scatter(s, send, recv, count, TypeOf[T](), root)
}

// Send is c.Send with T's DataType.
func Send[T Elem](c *Comm, s *core.Stream, send *core.Buffer, count int, peer int) error {
	return c.Send(s, send, count, TypeOf[T](), peer)
}

// Recv is c.Recv with T's DataType.
func Recv[T Elem](c *Comm, s *core.Stream, recv *core.Buffer, count int, peer int) error {
	return c.Recv(s, recv, count, TypeOf[T](), peer)
}
