package core

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Graphs built node by node.
//
// A Graph from NewGraph starts empty; each node method adds one node
// (cuGraphAddNode) that runs after the nodes given as its dependencies,
// and returns it as a *GraphNode for later nodes to depend on. Nodes
// without dependencies are roots. Captured graphs (EndCapture) take nodes
// the same way. The arguments are checked before the driver is called: a
// node of another graph as a dependency, a closed graph, Buffer or Event,
// bad kernel arguments are clear errors. What a node uses (Buffers,
// Kernels and their ObjectCode, Events, host functions, child graphs) is
// kept from being collected while the graph or an executable graph made
// from it lives; closing one of those while a launch may still use it is
// the caller's error, as with work queued on a stream.
//
// Conditional nodes (If, IfElse, While, Switch) run body graphs, built the
// same way, on the device, depending on a ConditionalHandle that a kernel
// sets (cudaGraphSetConditional). Bodies belong to their top-level graph:
// they are closed, locked and instantiated with it.

// NewGraph returns an empty graph in context c, to be built node by node.
// It needs a CUDA 12.3 driver (cuGraphAddNode with edge data).
func (c *Context) NewGraph() (*Graph, error) {
	h, err := c.acquire()
	if err != nil {
		return nil, err
	}
	defer c.release()
	gh, err := cuGraphCreate(h, 0)
	if err != nil {
		return nil, err
	}
	return newGraph(gh, c, (&graphHandles{}).ref()), nil
}

// NewGraph returns an empty graph in the device's primary context.
func (d *Device) NewGraph() (*Graph, error) { return d.primary.NewGraph() }

// enter holds g's top-level graph (against Close, and its lock against
// concurrent driver calls) and g's context for a driver call; every
// successful enter needs an exit.
func (g *Graph) enter(op string) (driver.Context, error) {
	t := g.topGraph()
	if !t.life.acquire() {
		return 0, fmt.Errorf("core: %s: %w", op, ErrClosed)
	}
	h, err := g.ctx.acquire()
	if err != nil {
		t.life.release()
		return 0, err
	}
	t.mu.Lock()
	return h, nil
}

func (g *Graph) exit() {
	t := g.topGraph()
	t.mu.Unlock()
	g.ctx.release()
	t.life.release()
}

// topGraph returns the top-level graph g belongs to: g itself, or the one
// holding the conditional node g is a body of.
func (g *Graph) topGraph() *Graph {
	if g.top != nil {
		return g.top
	}
	return g
}

// Context returns the graph's context.
func (g *Graph) Context() *Context { return g.ctx }

// Parent returns the graph holding the conditional node whose body g is,
// or nil for a top-level graph.
func (g *Graph) Parent() *Graph { return g.parent }

// GraphNode is a node of a Graph: what later nodes of the same graph
// depend on, and what GraphExec.SetKernel updates.
type GraphNode struct {
	g      *Graph
	handle driver.GraphNode
	typ    driver.GraphNodeType
}

// Handle returns the driver's CUgraphNode.
func (n *GraphNode) Handle() driver.GraphNode { return n.handle }

// Graph returns the graph the node belongs to.
func (n *GraphNode) Graph() *Graph { return n.g }

// Type returns the node's type (driver.GraphNodeTypeKernel, ...).
func (n *GraphNode) Type() driver.GraphNodeType { return n.typ }

// ConditionalHandle is the value that decides what a conditional node
// runs: made by Graph.NewCondition, given to one of If, IfElse, While or
// Switch, and passed to kernels as an argument (8 bytes, a
// cudaGraphConditionalHandle), which set it with cudaGraphSetConditional.
// NVRTC has no header declaring that function: declare it in the kernel
// source, as cuda.core's tests do,
//
//	extern "C" __device__ __cudart_builtin__ void CUDARTAPI
//	cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
//
// The call needs no relocatable device code: the driver resolves it when
// the code is loaded.
type ConditionalHandle struct {
	h driver.GraphConditionalHandle
	g *Graph // the graph it was made on; nil for the zero value
}

// Handle returns the driver's CUgraphConditionalHandle.
func (c ConditionalHandle) Handle() driver.GraphConditionalHandle { return c.h }

// deps checks that every dependency is a node of g, once, and returns
// their handles (in buf when they fit).
func (g *Graph) deps(op string, deps []*GraphNode, buf []driver.GraphNode) ([]driver.GraphNode, error) {
	out := buf[:0]
	var seen map[*GraphNode]int
	if len(deps) > 16 {
		seen = make(map[*GraphNode]int, len(deps))
	}
	for i, d := range deps {
		switch {
		case d == nil:
			return nil, fmt.Errorf("core: %s: dependency %d is nil", op, i)
		case d.g != g:
			return nil, fmt.Errorf("core: %s: dependency %d is a node of another graph", op, i)
		}
		if seen != nil {
			if j, ok := seen[d]; ok {
				return nil, fmt.Errorf("core: %s: dependency %d repeats dependency %d", op, i, j)
			}
			seen[d] = i
		} else {
			for j := range i {
				if deps[j] == d {
					return nil, fmt.Errorf("core: %s: dependency %d repeats dependency %d", op, i, j)
				}
			}
		}
		out = append(out, d.handle)
	}
	return out, nil
}

// bodyRule refuses, in a conditional body, the nodes CUDA does not allow
// there (kernel, empty, memcpy, memset, child graph and conditional nodes
// are allowed).
func (g *Graph) bodyRule(op string) error {
	if g.parent != nil {
		return fmt.Errorf("core: %s: a conditional body holds only kernel, memcpy, memset, empty, child graph and conditional nodes (CUDA's rule)", op)
	}
	return nil
}

// add adds a node of p's type with dependencies ds in context h (entered).
func (g *Graph) add(h driver.Context, ds []driver.GraphNode, p *driver.GraphNodeParams) (*GraphNode, error) {
	var dp *driver.GraphNode
	if len(ds) > 0 {
		dp = &ds[0]
	}
	nh, err := cuGraphAddNode(h, g.handle, dp, nil, uint64(len(ds)), p)
	if err != nil {
		return nil, err
	}
	return &GraphNode{g: g, handle: nh, typ: p.Type}, nil
}

// simple adds a node whose parameters need nothing but the context: fill
// sets them.
func (g *Graph) simple(op string, deps []*GraphNode, typ driver.GraphNodeType, fill func(h driver.Context, p *driver.GraphNodeParams)) (*GraphNode, error) {
	var buf [8]driver.GraphNode
	ds, err := g.deps(op, deps, buf[:])
	if err != nil {
		return nil, err
	}
	h, err := g.enter(op)
	if err != nil {
		return nil, err
	}
	defer g.exit()
	var p driver.GraphNodeParams
	p.Type = typ
	if fill != nil {
		fill(h, &p)
	}
	return g.add(h, ds, &p)
}

// Empty adds a node that does nothing: a join point of its dependencies.
func (g *Graph) Empty(deps ...*GraphNode) (*GraphNode, error) {
	return g.simple("Graph.Empty", deps, driver.GraphNodeTypeEmpty, nil)
}

// Kernel adds a node that launches k with shape cfg and arguments args,
// checked and packed as Launch does them (the node copies their values).
// Clusters and cooperative launches are not supported in nodes yet.
func (g *Graph) Kernel(cfg LaunchConfig, k *Kernel, args []any, deps ...*GraphNode) (*GraphNode, error) {
	const op = "Graph.Kernel"
	if err := checkKernelNode(op, &cfg, k); err != nil {
		return nil, err
	}
	var buf [8]driver.GraphNode
	ds, err := g.deps(op, deps, buf[:])
	if err != nil {
		return nil, err
	}
	if !k.acquire() {
		return nil, fmt.Errorf("core: %s %s: its ObjectCode is closed: %w", op, k.name, ErrClosed)
	}
	defer k.release()
	var p driver.GraphNodeParams
	ka, err := kernelNodeParams(op, g.ctx, &cfg, k, args, &p)
	if err != nil {
		return nil, err
	}
	defer ka.done()
	h, err := g.enter(op)
	if err != nil {
		return nil, err
	}
	defer g.exit()
	p.Anon2.Kernel().Ctx = h
	n, err := g.add(h, ds, &p)
	if err != nil {
		return nil, err
	}
	g.hs.hold(k)
	g.hs.hold(buffersOf(args)...)
	return n, nil
}

// checkKernelNode checks what a kernel node can check without the driver.
func checkKernelNode(op string, cfg *LaunchConfig, k *Kernel) error {
	if k == nil {
		return fmt.Errorf("core: %s: nil *Kernel", op)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("core: %s %s: %w", op, k.name, err)
	}
	if cfg.Cluster != (Dim3{}) || cfg.Cooperative {
		return fmt.Errorf("core: %s %s: clusters and cooperative launches are not supported in graph nodes", op, k.name)
	}
	return nil
}

// buffersOf returns the Buffers among kernel arguments: what a kernel
// node keeps.
func buffersOf(args []any) []any {
	var out []any
	for _, a := range args {
		if b, ok := a.(*Buffer); ok {
			out = append(out, b)
		}
	}
	return out
}

// kernelArgs holds the packed arguments of a kernel node and the array of
// pointers to each that CUDA_KERNEL_NODE_PARAMS takes, in one allocation
// pinned for the driver call: the pointers hide in the params' union,
// where the collector does not see them.
type kernelArgs struct {
	mem []uint64 // [pointer per parameter][packed arguments]
	pin runtime.Pinner
}

func (a *kernelArgs) done() {
	a.pin.Unpin()
	runtime.KeepAlive(a.mem)
}

// kernelNodeParams sets p to launch k with cfg and args: the packed
// arguments and the pointers to them, all but the context (the caller
// sets it once it has entered the graph). The parameter layout is read
// once per kernel, in context c. The caller holds k and calls done after
// the driver call.
func kernelNodeParams(op string, c *Context, cfg *LaunchConfig, k *Kernel, args []any, p *driver.GraphNodeParams) (*kernelArgs, error) {
	lay := k.layout()
	if lay == nil {
		h, err := c.acquire()
		if err != nil {
			return nil, err
		}
		lay, err = k.loadParams(h)
		c.release()
		if err != nil {
			return nil, err
		}
	}
	np := len(lay.params)
	a := &kernelArgs{mem: make([]uint64, np+(lay.size+7)/8)}
	var packed []byte
	if lay.size > 0 {
		packed = unsafe.Slice((*byte)(unsafe.Pointer(&a.mem[np])), lay.size)
	}
	if err := packArgsFor(packed, op, k.name, lay.params, args); err != nil {
		return nil, err
	}
	p.Type = driver.GraphNodeTypeKernel
	kp := p.Anon2.Kernel()
	kp.Kern = k.handle
	kp.GridDimX, kp.GridDimY, kp.GridDimZ = cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z
	kp.BlockDimX, kp.BlockDimY, kp.BlockDimZ = cfg.Block.X, cfg.Block.Y, cfg.Block.Z
	kp.SharedMemBytes = cfg.SharedMemory
	if np > 0 {
		a.pin.Pin(&a.mem[0])
		for i, pi := range lay.params {
			a.mem[i] = uint64(uintptr(unsafe.Pointer(&packed[pi.Offset]))) // in bounds: packArgs checked
		}
		kp.KernelParams = unsafe.Pointer(&a.mem[0])
	}
	return a, nil
}

// Memcpy adds a node that copies all of src into the start of dst, as
// Buffer.CopyFrom does: device, pinned host (PinnedMemoryResource) and
// managed memory, in any direction (the driver tells them apart by
// address). Go memory cannot be copied by a graph node: it would have to
// stay pinned for the graph's life; copy through a pinned Buffer. A copy
// of 0 bytes is an empty node.
func (g *Graph) Memcpy(dst, src *Buffer, deps ...*GraphNode) (*GraphNode, error) {
	const op = "Graph.Memcpy"
	switch {
	case dst == nil || src == nil:
		return nil, fmt.Errorf("core: %s: nil *Buffer", op)
	case src.size > dst.size:
		return nil, boundsErr(op, src.size, dst.size)
	case dst.root() == src.root() && dst.ptr < src.ptr+driver.Deviceptr(src.size) && src.ptr < dst.ptr+driver.Deviceptr(src.size):
		return nil, fmt.Errorf("core: %s: source and destination overlap (%d bytes at %#x and %#x)", op, src.size, src.ptr, dst.ptr)
	}
	if !dst.acquire() {
		return nil, fmt.Errorf("core: %s: destination: %w", op, ErrClosed)
	}
	defer dst.release()
	if !src.acquire() {
		return nil, fmt.Errorf("core: %s: source: %w", op, ErrClosed)
	}
	defer src.release()
	return g.bufferNode(op, deps, src.size, driver.GraphNodeTypeMemcpy, func(h driver.Context, p *driver.GraphNodeParams) {
		mp := p.Anon2.Memcpy()
		mp.CopyCtx = h
		c := &mp.CopyParams
		c.SrcMemoryType, c.SrcDevice = driver.MemorytypeUnified, src.ptr
		c.DstMemoryType, c.DstDevice = driver.MemorytypeUnified, dst.ptr
		// One row of one slice, with pitches as cudaMemcpy's 1-D form
		// sets them.
		w := uint64(src.size)
		c.SrcPitch, c.SrcHeight, c.DstPitch, c.DstHeight = w, 1, w, 1
		c.WidthInBytes, c.Height, c.Depth = w, 1, 1
	}, dst, src)
}

// Memset8 adds a node that sets every byte of dst to v.
func (g *Graph) Memset8(dst *Buffer, v uint8, deps ...*GraphNode) (*GraphNode, error) {
	return g.memset("Graph.Memset8", dst, uint32(v), 1, deps)
}

// Memset32 adds a node that sets every 32-bit word of dst to v; dst's
// size must be a multiple of 4.
func (g *Graph) Memset32(dst *Buffer, v uint32, deps ...*GraphNode) (*GraphNode, error) {
	return g.memset("Graph.Memset32", dst, v, 4, deps)
}

func (g *Graph) memset(op string, dst *Buffer, v uint32, elem int, deps []*GraphNode) (*GraphNode, error) {
	if dst == nil {
		return nil, fmt.Errorf("core: %s: nil *Buffer", op)
	}
	if dst.size%elem != 0 {
		return nil, fmt.Errorf("core: %s: size %d is not a multiple of %d", op, dst.size, elem)
	}
	if !dst.acquire() {
		return nil, fmt.Errorf("core: %s: %w", op, ErrClosed)
	}
	defer dst.release()
	return g.bufferNode(op, deps, dst.size, driver.GraphNodeTypeMemset, func(h driver.Context, p *driver.GraphNodeParams) {
		mp := p.Anon2.Memset()
		mp.Dst, mp.Value, mp.ElementSize = dst.ptr, v, uint32(elem)
		mp.Width, mp.Height = uint64(dst.size/elem), 1
		mp.Ctx = h
	}, dst)
}

// bufferNode is simple for a node of an operation on size bytes of the
// buffers bufs, which the graph keeps for its life; an operation on no
// bytes is an empty node.
func (g *Graph) bufferNode(op string, deps []*GraphNode, size int, typ driver.GraphNodeType, fill func(h driver.Context, p *driver.GraphNodeParams), bufs ...any) (*GraphNode, error) {
	if size == 0 {
		return g.simple(op, deps, driver.GraphNodeTypeEmpty, nil)
	}
	n, err := g.simple(op, deps, typ, fill)
	if err == nil {
		g.hs.hold(bufs...)
	}
	return n, err
}

// hostNodeParams is CUDA_HOST_NODE_PARAMS_v2 with the user data as the
// callback id it is (a number, not a pointer).
type hostNodeParams struct {
	fn   driver.HostFn
	user uintptr
}

var (
	_ [unsafe.Sizeof(driver.HOSTNODEPARAMSV2{}) - unsafe.Sizeof(hostNodeParams{})]struct{}
	_ [unsafe.Sizeof(hostNodeParams{}) - unsafe.Sizeof(driver.HOSTNODEPARAMSV2{})]struct{}
)

// HostFunc adds a node that calls f on a driver thread at every launch of
// the graph, as Stream.LaunchHostFunc does; f must not call CUDA. Not
// allowed in a conditional body.
func (g *Graph) HostFunc(f func(), deps ...*GraphNode) (*GraphNode, error) {
	const op = "Graph.HostFunc"
	if f == nil {
		return nil, fmt.Errorf("core: %s: nil func", op)
	}
	if err := g.bodyRule(op); err != nil {
		return nil, err
	}
	id := registerCallback(graphFunc(f))
	n, err := g.simple(op, deps, driver.GraphNodeTypeHost, func(_ driver.Context, p *driver.GraphNodeParams) {
		hp := (*hostNodeParams)(unsafe.Pointer(&p.Anon2))
		hp.fn, hp.user = hostTrampoline(), id
	})
	if err != nil {
		deleteCallback(id)
		return nil, err
	}
	g.hs.add(id)
	return n, nil
}

// Record adds a node that records e (as Event.Record does on a stream)
// when its dependencies are done: work outside the graph can wait for it.
// Not allowed in a conditional body.
func (g *Graph) Record(e *Event, deps ...*GraphNode) (*GraphNode, error) {
	return g.event("Graph.Record", e, driver.GraphNodeTypeEventRecord, deps)
}

// Wait adds a node that waits for the last record of e (by a stream or a
// graph) before the nodes that depend on it run. Not allowed in a
// conditional body.
func (g *Graph) Wait(e *Event, deps ...*GraphNode) (*GraphNode, error) {
	return g.event("Graph.Wait", e, driver.GraphNodeTypeWaitEvent, deps)
}

func (g *Graph) event(op string, e *Event, typ driver.GraphNodeType, deps []*GraphNode) (*GraphNode, error) {
	if e == nil {
		return nil, fmt.Errorf("core: %s: nil *Event", op)
	}
	if err := g.bodyRule(op); err != nil {
		return nil, err
	}
	if !e.life.acquire() {
		return nil, fmt.Errorf("core: %s: %w", op, ErrClosed)
	}
	defer e.life.release()
	n, err := g.simple(op, deps, typ, func(_ driver.Context, p *driver.GraphNodeParams) {
		// Both node types hold just the event.
		p.Anon2.EventRecord().Event = e.handle
	})
	if err == nil {
		g.hs.hold(e)
	}
	return n, err
}

// Child adds a node that runs a copy of child (its nodes as they are now;
// later changes to child do not reach the copy). child may be captured or
// built, and stays usable; the host functions and resources it uses are
// kept for g's life too. A graph with Alloc or Free nodes cannot be a
// child (CUDA's rule).
func (g *Graph) Child(child *Graph, deps ...*GraphNode) (*GraphNode, error) {
	const op = "Graph.Child"
	switch {
	case child == nil:
		return nil, fmt.Errorf("core: %s: nil *Graph", op)
	case child == g:
		return nil, fmt.Errorf("core: %s: a graph cannot be its own child", op)
	}
	var buf [8]driver.GraphNode
	ds, err := g.deps(op, deps, buf[:])
	if err != nil {
		return nil, err
	}
	ct, gt := child.topGraph(), g.topGraph()
	if ct != gt {
		// Held against Close, and locked against changes while it is
		// copied; the two locks in address order, so that a.Child(b) and
		// b.Child(a) at once cannot deadlock.
		if !ct.life.acquire() {
			return nil, fmt.Errorf("core: %s: the child graph: %w", op, ErrClosed)
		}
		defer ct.life.release()
		if uintptr(unsafe.Pointer(ct)) < uintptr(unsafe.Pointer(gt)) {
			ct.mu.Lock()
			defer ct.mu.Unlock()
		}
	}
	h, err := g.enter(op)
	if err != nil {
		return nil, err
	}
	defer g.exit()
	if ct != gt && uintptr(unsafe.Pointer(ct)) > uintptr(unsafe.Pointer(gt)) {
		ct.mu.Lock()
		defer ct.mu.Unlock()
	}
	var p driver.GraphNodeParams
	p.Type = driver.GraphNodeTypeGraph
	cp := p.Anon2.Graph()
	cp.Graph, cp.Ownership = child.handle, driver.GraphChildGraphOwnershipClone
	n, err := g.add(h, ds, &p)
	if err != nil {
		return nil, err
	}
	g.hs.addSub(ct.hs)
	return n, nil
}

// Alloc adds a node that allocates size bytes of graph memory (from the
// device's graph memory pool, see GraphMemoryResource) and returns it with
// the Buffer of the allocation: its address is fixed for every launch of
// the graph, and nodes that depend on the Alloc node (and come before a
// Free node of it) may use it. The graph frees it at a Free node, or
// leaves it allocated after a launch, for stream work to use until it is
// freed with GraphMemoryResource.Deallocate or the next launch of an
// executable graph made with AutoFreeOnLaunch. The Buffer owns nothing:
// its Close frees nothing. Not allowed in a conditional body.
func (g *Graph) Alloc(size int, deps ...*GraphNode) (*GraphNode, *Buffer, error) {
	const op = "Graph.Alloc"
	if size <= 0 {
		return nil, nil, fmt.Errorf("core: %s: size %d is not positive", op, size)
	}
	if err := g.bodyRule(op); err != nil {
		return nil, nil, err
	}
	var p *driver.GraphNodeParams
	n, err := g.simple(op, deps, driver.GraphNodeTypeMemAlloc, func(_ driver.Context, q *driver.GraphNodeParams) {
		ap := q.Anon2.Alloc()
		ap.PoolProps.AllocType = driver.MemAllocationTypePinned
		ap.PoolProps.Location = driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(g.ctx.dev.ordinal)}
		ap.Bytesize = uint64(size)
		p = q
	})
	if err != nil {
		return nil, nil, err
	}
	ptr := p.Anon2.Alloc().Dptr // set by the driver
	mr := &GraphMemoryResource{dev: g.ctx.dev}
	root := &Buffer{ptr: ptr, size: size, mr: mr}
	return n, &Buffer{ptr: ptr, size: size, mr: mr, parent: root}, nil
}

// Free adds a node that frees b, graph memory: the Buffer of an Alloc node
// of this graph or of another one, or one from GraphMemoryResource. An
// allocation is freed once: in the graph that allocates it, or in one
// other graph (CUDA's rule). Not allowed in a conditional body.
func (g *Graph) Free(b *Buffer, deps ...*GraphNode) (*GraphNode, error) {
	const op = "Graph.Free"
	if b == nil {
		return nil, fmt.Errorf("core: %s: nil *Buffer", op)
	}
	if _, ok := b.mr.(*GraphMemoryResource); !ok {
		return nil, fmt.Errorf("core: %s: the Buffer is %T memory, not graph memory (Graph.Alloc, GraphMemoryResource)", op, b.mr)
	}
	if b.ptr != b.root().ptr {
		return nil, fmt.Errorf("core: %s: the Buffer is a view at offset %d of an allocation: free the allocation", op, b.ptr-b.root().ptr)
	}
	if err := g.bodyRule(op); err != nil {
		return nil, err
	}
	if !b.acquire() {
		return nil, fmt.Errorf("core: %s: %w", op, ErrClosed)
	}
	defer b.release()
	return g.simple(op, deps, driver.GraphNodeTypeMemFree, func(_ driver.Context, p *driver.GraphNodeParams) {
		p.Anon2.Free().Dptr = b.ptr
	})
}

// NewCondition makes a ConditionalHandle for one conditional node of g or
// of a body in g. Its value is initial at the start of every launch
// (CU_GRAPH_COND_ASSIGN_DEFAULT); kernels change it with
// cudaGraphSetConditional. Each handle drives one conditional node, and a
// handle that drives none may make Instantiate fail.
func (g *Graph) NewCondition(initial uint32) (ConditionalHandle, error) {
	h, err := g.enter("Graph.NewCondition")
	if err != nil {
		return ConditionalHandle{}, err
	}
	defer g.exit()
	ch, err := cuGraphConditionalHandleCreate(h, g.handle, h, initial, driver.GraphCondAssignDefault)
	if err != nil {
		return ConditionalHandle{}, err
	}
	if g.conds == nil {
		g.conds = map[driver.GraphConditionalHandle]bool{}
	}
	g.conds[ch] = false
	return ConditionalHandle{h: ch, g: g}, nil
}

// If adds a node that runs then, a body graph built like any other, once
// when c is not zero.
func (g *Graph) If(c ConditionalHandle, deps ...*GraphNode) (n *GraphNode, then *Graph, err error) {
	n, bodies, err := g.conditional("Graph.If", c, driver.GraphCondTypeIf, 1, 0, deps)
	if err != nil {
		return nil, nil, err
	}
	return n, bodies[0], nil
}

// IfElse adds a node that runs then when c is not zero and els when it
// is. It needs a CUDA 12.8 driver.
func (g *Graph) IfElse(c ConditionalHandle, deps ...*GraphNode) (n *GraphNode, then, els *Graph, err error) {
	n, bodies, err := g.conditional("Graph.IfElse", c, driver.GraphCondTypeIf, 2, 12080, deps)
	if err != nil {
		return nil, nil, nil, err
	}
	return n, bodies[0], bodies[1], nil
}

// While adds a node that runs body again and again while c is not zero,
// checking c before each run: a kernel in body sets c to 0 to end the
// loop (or one before the node, to skip it).
func (g *Graph) While(c ConditionalHandle, deps ...*GraphNode) (n *GraphNode, body *Graph, err error) {
	n, bodies, err := g.conditional("Graph.While", c, driver.GraphCondTypeWhile, 1, 0, deps)
	if err != nil {
		return nil, nil, err
	}
	return n, bodies[0], nil
}

// Switch adds a node with count bodies that runs cases[c] once; a value of
// c of count or more runs none. It needs a CUDA 12.8 driver.
func (g *Graph) Switch(c ConditionalHandle, count int, deps ...*GraphNode) (n *GraphNode, cases []*Graph, err error) {
	if count < 1 || uint64(count) > math.MaxUint32 {
		return nil, nil, fmt.Errorf("core: Graph.Switch: %d cases; it takes 1 or more", count)
	}
	return g.conditional("Graph.Switch", c, driver.GraphCondTypeSwitch, count, 12080, deps)
}

// driverVersionNumber is cuDriverGetVersion's (13000 for 13.0), read once; 0 when it failed.
var driverVersionNumber = sync.OnceValue(func() int {
	if initDriver() != nil {
		return 0
	}
	v, err := cuDriverGetVersion()
	if err != nil {
		return 0
	}
	return int(v)
})

func (g *Graph) conditional(op string, c ConditionalHandle, typ driver.GraphConditionalNodeType, size int, needs int, deps []*GraphNode) (*GraphNode, []*Graph, error) {
	if c.g == nil {
		return nil, nil, fmt.Errorf("core: %s: zero ConditionalHandle (make one with Graph.NewCondition)", op)
	}
	if !g.within(c.g) {
		return nil, nil, fmt.Errorf("core: %s: the ConditionalHandle was made on another graph (it must be this graph or one holding it)", op)
	}
	var buf [8]driver.GraphNode
	ds, err := g.deps(op, deps, buf[:])
	if err != nil {
		return nil, nil, err
	}
	if needs > 0 {
		if v := driverVersionNumber(); v > 0 && v < needs {
			return nil, nil, fmt.Errorf("core: %s: needs a CUDA %d.%d driver; this one is %d.%d", op, needs/1000, needs%1000/10, v/1000, v%1000/10)
		}
	}
	h, err := g.enter(op)
	if err != nil {
		return nil, nil, err
	}
	defer g.exit()
	switch used, ok := c.g.conds[c.h]; { // under top.mu, held by enter
	case !ok:
		return nil, nil, fmt.Errorf("core: %s: the ConditionalHandle is not one of its graph's", op)
	case used:
		return nil, nil, fmt.Errorf("core: %s: the ConditionalHandle drives another conditional node already", op)
	}
	var p driver.GraphNodeParams
	p.Type = driver.GraphNodeTypeConditional
	cp := p.Anon2.Conditional()
	cp.Handle, cp.Type, cp.Size, cp.Ctx = c.h, typ, uint32(size), h
	n, err := g.add(h, ds, &p)
	if err != nil {
		return nil, nil, err
	}
	c.g.conds[c.h] = true
	if cp.PhGraphOut == nil {
		return nil, nil, errors.New("core: " + op + ": the driver returned no body graphs")
	}
	hs := unsafe.Slice((*driver.Graph)(cp.PhGraphOut), size) // CUDA's array, valid while the node lives
	bodies := make([]*Graph, size)
	for i, bh := range hs {
		t := g.topGraph()
		bodies[i] = &Graph{handle: bh, ctx: g.ctx, hs: t.hs, top: t, parent: g}
	}
	return n, bodies, nil
}

// within reports whether g is a or a body (at any depth) inside a.
func (g *Graph) within(a *Graph) bool {
	for x := g; x != nil; x = x.parent {
		if x == a {
			return true
		}
	}
	return false
}

// NodeCount returns the number of nodes of g itself (those of child graphs
// and conditional bodies are not counted).
func (g *Graph) NodeCount() (int, error) {
	h, err := g.enter("Graph.NodeCount")
	if err != nil {
		return 0, err
	}
	defer g.exit()
	var n uint64
	if err := cuGraphGetNodes(h, g.handle, nil, &n); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DebugDot writes g as a Graphviz DOT file at path (cuGraphDebugDotPrint),
// with every node's parameters when verbose is set.
func (g *Graph) DebugDot(path string, verbose bool) error {
	if path == "" {
		return errors.New("core: Graph.DebugDot: empty path")
	}
	var flags uint32
	if verbose {
		flags = uint32(driver.GraphDebugDotFlagsVerbose)
	}
	h, err := g.enter("Graph.DebugDot")
	if err != nil {
		return err
	}
	defer g.exit()
	return cuGraphDebugDotPrint(h, g.handle, path, flags)
}

// SetKernel changes, for the launches of e after it, what kernel node n
// launches: shape, kernel and arguments, checked and packed as in
// Graph.Kernel (cuGraphExecNodeSetParams). n is a node of the graph e was
// instantiated from (nodes in conditional bodies included, where the
// driver allows it), which must not be closed. The driver's rules apply:
// the kernel stays in the same context, and a kernel node cannot become
// one that uses device-side launches. The Graph itself does not change.
func (e *GraphExec) SetKernel(n *GraphNode, cfg LaunchConfig, k *Kernel, args ...any) error {
	const op = "GraphExec.SetKernel"
	switch {
	case n == nil || n.g == nil:
		return fmt.Errorf("core: %s: nil or zero *GraphNode (nodes come from a Graph's methods)", op)
	case n.typ != driver.GraphNodeTypeKernel:
		return fmt.Errorf("core: %s: the node is a %v node, not a kernel node", op, n.typ)
	case e.src == nil || n.g.topGraph() != e.src:
		return fmt.Errorf("core: %s: the node belongs to another graph than the one the executable graph was made from", op)
	}
	if err := checkKernelNode(op, &cfg, k); err != nil {
		return err
	}
	if !e.life.acquire() {
		return fmt.Errorf("core: %s: %w", op, ErrClosed)
	}
	defer e.life.release()
	if !k.acquire() {
		return fmt.Errorf("core: %s %s: its ObjectCode is closed: %w", op, k.name, ErrClosed)
	}
	defer k.release()
	g := n.g
	var p driver.GraphNodeParams
	ka, err := kernelNodeParams(op, g.ctx, &cfg, k, args, &p)
	if err != nil {
		return err
	}
	defer ka.done()
	h, err := g.enter(op) // the node's graph: its handle must stay valid
	if err != nil {
		return fmt.Errorf("%w (the node's graph)", err)
	}
	defer g.exit()
	p.Anon2.Kernel().Ctx = h
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := cuGraphExecNodeSetParams(h, e.handle, n.handle, &p); err != nil {
		return err
	}
	if e.keep == nil {
		e.keep = map[driver.GraphNode][]any{}
	}
	// Launches queued before this update may still use what the node
	// used: the previous arguments stay referenced too, until the next
	// update of the node or Close (so update it again only after those
	// launches are done, or keep its old Buffers yourself).
	if e.prev == nil {
		e.prev = map[driver.GraphNode]int{}
	}
	cur := append(buffersOf(args), k)
	last := e.keep[n.handle][:e.prev[n.handle]] // the latest update's, if any
	e.keep[n.handle] = append(cur, last...)
	e.prev[n.handle] = len(cur)
	return nil
}
