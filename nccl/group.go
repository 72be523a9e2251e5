package nccl

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cudago/cudago/core"
)

// Group is a list of operations that run as one NCCL group: Run issues
// them between ncclGroupStart and ncclGroupEnd, on one OS thread, and
// NCCL launches them together. That is what the ranks of one process
// (InitAll) need, since each of their collectives waits for the others,
// and what a rank that both sends and receives needs (Send and Recv
// block each other on the GPU otherwise); NCCL also fuses the
// operations of one group into fewer launches.
//
// NCCL keeps its group state per OS thread, and a goroutine moves
// between threads: an ncclGroupStart in one cgo call and the calls after
// it in others could run on different threads and be no group at all.
// So a group is built as a value, each operation checked as it is added,
// and Run does the whole group on one locked thread.
//
// The operations take their DataType as a value (Go methods have no type
// parameters): TypeOf[float32]() or Float32. The zero Group is empty and
// ready. Adding returns the operation's *lib.ArgError (or an error
// matching core.ErrClosed) at once, and leaves the group without it. Run
// may be called again: the group keeps its operations until Reset. A
// Group is not safe for concurrent use.
type Group struct {
	tasks []task
}

// Len is the number of operations in the group.
func (g *Group) Len() int { return len(g.tasks) }

// Reset empties the group.
func (g *Group) Reset() { g.tasks = g.tasks[:0] }

func (g *Group) add(t task) error {
	if err := t.check("Group." + t.kind.String()); err != nil {
		return err
	}
	g.tasks = append(g.tasks, t)
	return nil
}

// AllReduce adds c.AllReduce's operation.
func (g *Group) AllReduce(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op) error {
	return g.add(task{kind: opAllReduce, c: c, send: send, recv: recv, count: count, dt: dt, red: op, s: s})
}

// Broadcast adds c.Broadcast's operation.
func (g *Group) Broadcast(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return g.add(task{kind: opBroadcast, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s})
}

// Reduce adds c.Reduce's operation.
func (g *Group) Reduce(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op, root int) error {
	return g.add(task{kind: opReduce, c: c, send: send, recv: recv, count: count, dt: dt, red: op, peer: root, s: s})
}

// AllGather adds c.AllGather's operation.
func (g *Group) AllGather(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType) error {
	return g.add(task{kind: opAllGather, c: c, send: send, recv: recv, count: count, dt: dt, s: s})
}

// ReduceScatter adds c.ReduceScatter's operation.
func (g *Group) ReduceScatter(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, op Op) error {
	return g.add(task{kind: opReduceScatter, c: c, send: send, recv: recv, count: count, dt: dt, red: op, s: s})
}

// AlltoAll adds c.AlltoAll's operation.
func (g *Group) AlltoAll(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType) error {
	return g.add(task{kind: opAlltoAll, c: c, send: send, recv: recv, count: count, dt: dt, s: s})
}

// Gather adds c.Gather's operation.
func (g *Group) Gather(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return g.add(task{kind: opGather, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s})
}

// Scatter adds c.Scatter's operation.
func (g *Group) Scatter(c *Comm, s *core.Stream, send, recv *core.Buffer, count int, dt DataType, root int) error {
	return g.add(task{kind: opScatter, c: c, send: send, recv: recv, count: count, dt: dt, peer: root, s: s})
}

// Send adds c.Send's operation.
func (g *Group) Send(c *Comm, s *core.Stream, send *core.Buffer, count int, dt DataType, peer int) error {
	return g.add(task{kind: opSend, c: c, send: send, count: count, dt: dt, peer: peer, s: s})
}

// Recv adds c.Recv's operation.
func (g *Group) Recv(c *Comm, s *core.Stream, recv *core.Buffer, count int, dt DataType, peer int) error {
	return g.add(task{kind: opRecv, c: c, recv: recv, count: count, dt: dt, peer: peer, s: s})
}

// Run issues the group's operations as one NCCL group and returns once
// NCCL has queued them on their streams (ncclGroupEnd; for the ranks of
// one process, also once they have all connected). It holds the
// communicators, streams and Buffers open meanwhile, and checks the
// operations again first (a communicator closed since). An operation
// that NCCL refuses ends the group: ncclGroupEnd is still called, to
// leave the thread outside any group, and the error names the operation.
// An empty group does nothing.
func (g *Group) Run() error {
	if len(g.tasks) == 0 {
		return nil
	}
	fns := make([]string, len(g.tasks))
	for i := range g.tasks {
		fns[i] = fmt.Sprintf("Group.Run: operation %d (%v)", i, g.tasks[i].kind)
		if err := g.tasks[i].check(fns[i]); err != nil {
			return err
		}
	}
	// Each communicator is held once: a second RLock of one could wait
	// behind a Close waiting for the first.
	var held []*Comm
	defer func() {
		for _, c := range held {
			c.end()
		}
	}()
	for i := range g.tasks {
		c := g.tasks[i].c
		if containsComm(held, c) {
			continue
		}
		if err := c.begin("Group.Run"); err != nil {
			return err
		}
		held = append(held, c)
	}
	bs := make([]bound, len(g.tasks))
	n := 0
	defer func() {
		for i := range n {
			g.tasks[i].release()
		}
	}()
	for i := range g.tasks {
		t := &g.tasks[i]
		b, err := t.acquire(fns[i])
		if err != nil {
			return err
		}
		bs[i] = b
		n++
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := ncclGroupStart(0); err != nil {
		return err
	}
	var errs []error
	for i := range g.tasks {
		t := &g.tasks[i]
		if err := t.call(bs[i]); err != nil {
			errs = append(errs, fmt.Errorf("nccl: %s on %v: %w", fns[i], t.c, err))
			break
		}
	}
	if err := ncclGroupEnd(0); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func containsComm(cs []*Comm, c *Comm) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
