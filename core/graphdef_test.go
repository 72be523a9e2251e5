package core

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// The checks of graphs built node by node that need no GPU. The graphs
// here never reach the driver: their context is closed, so an operation
// that got past its checks would fail with a bare ErrClosed from the
// context, which no case below expects.

// cpuGraph returns a top-level graph in a closed context.
func cpuGraph() *Graph { return &Graph{ctx: closedContext(), hs: (&graphHandles{}).ref()} }

// cpuBody returns a body of a conditional node of top.
func cpuBody(top, parent *Graph) *Graph {
	return &Graph{ctx: top.ctx, hs: top.hs, top: top, parent: parent}
}

// layoutKernel returns a kernel whose parameter layout is known, so that
// its arguments are packed without the driver.
func layoutKernel(name string, params ...ArgumentInfo) *Kernel {
	k := newKernel(7, name, nil)
	lay := paramLayout{params: params}
	for _, p := range params {
		lay.size = max(lay.size, p.Offset+p.Size)
	}
	k.setLayout(lay)
	return k
}

// wantErr fails unless err's message holds want.
func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want an error with %q", what, err, want)
	}
}

func TestGraphNodeChecks(t *testing.T) {
	g, other := cpuGraph(), cpuGraph()
	mine := &GraphNode{g: g, handle: 1}
	theirs := &GraphNode{g: other, handle: 2}
	k := layoutKernel("k", ArgumentInfo{0, 8}, ArgumentInfo{8, 4}) // (int*, int)
	mr := &fakeMR{}
	buf, _ := mr.Allocate(64, nil)
	small, _ := mr.Allocate(16, nil)
	odd, _ := mr.Allocate(6, nil)
	closedBuf, _ := mr.Allocate(16, nil)
	closedBuf.Close()
	view, _ := buf.View(8, 32)
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(32)}
	closedCode := newObjectCode(CodeCubin, []byte("\x7fELF"), "fake", nil, nil)
	closedCode.Close()
	closedEv := &Event{}
	closedEv.life.close()
	closedChild := cpuGraph()
	closedChild.life.close()
	gmr := &GraphMemoryResource{}
	gbuf := &Buffer{ptr: 0x2000, size: 64, mr: gmr}
	gview, _ := gbuf.View(16, 16)
	many := make([]*GraphNode, 20)
	for i := range many {
		many[i] = &GraphNode{g: g, handle: driver.GraphNode(i + 1)}
	}
	many[19] = many[3]

	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Kernel(nil)", second(g.Kernel(cfg, nil, nil)), "Graph.Kernel: nil *Kernel"},
		{"Kernel(block 2048)", second(g.Kernel(LaunchConfig{Grid: Dim(1), Block: Dim(2048)}, k, nil)), "more than 1024"},
		{"Kernel(cluster)", second(g.Kernel(LaunchConfig{Grid: Dim(2), Block: Dim(1), Cluster: Dim(2)}, k, []any{buf, int32(1)})), "clusters and cooperative launches are not supported"},
		{"Kernel(cooperative)", second(g.Kernel(LaunchConfig{Grid: Dim(2), Block: Dim(1), Cooperative: true}, k, []any{buf, int32(1)})), "clusters and cooperative launches are not supported"},
		{"Kernel(1 argument)", second(g.Kernel(cfg, k, []any{buf})), "Graph.Kernel k: kernel takes 2 arguments, got 1"},
		{"Kernel(int for int32)", second(g.Kernel(cfg, k, []any{buf, 5})), "argument 1 is int (8 bytes) but parameter 1 takes 4 bytes"},
		{"Kernel(nil *Buffer)", second(g.Kernel(cfg, k, []any{(*Buffer)(nil), int32(1)})), "argument 0 is a nil *Buffer"},
		{"Kernel(closed Buffer)", second(g.Kernel(cfg, k, []any{closedBuf, int32(1)})), "argument 0: core: use of a closed resource"},
		{"Kernel(zero ConditionalHandle)", second(g.Kernel(cfg, k, []any{ConditionalHandle{}, int32(1)})), "argument 0 is a zero ConditionalHandle"},
		{"Kernel(closed code)", second(g.Kernel(cfg, newKernel(1, "kc", closedCode), nil)), "Graph.Kernel kc: its ObjectCode is closed"},
		{"Kernel(nil dependency)", second(g.Kernel(cfg, k, []any{buf, int32(1)}, mine, nil)), "Graph.Kernel: dependency 1 is nil"},
		{"Kernel(another graph's node)", second(g.Kernel(cfg, k, []any{buf, int32(1)}, mine, theirs)), "Graph.Kernel: dependency 1 is a node of another graph"},
		{"Kernel(repeated dependency)", second(g.Kernel(cfg, k, []any{buf, int32(1)}, mine, mine)), "dependency 1 repeats dependency 0"},
		{"Empty(repeated among 20)", second(g.Empty(many...)), "dependency 19 repeats dependency 3"},
		{"Empty(another graph's node)", second(g.Empty(theirs)), "dependency 0 is a node of another graph"},

		{"Memcpy(nil)", second(g.Memcpy(nil, buf)), "Graph.Memcpy: nil *Buffer"},
		{"Memcpy(64 into 16)", second(g.Memcpy(small, buf)), "64 bytes do not fit in a buffer of 16 bytes"},
		{"Memcpy(overlap)", second(g.Memcpy(buf, view)), "source and destination overlap"},
		{"Memcpy(closed dst)", second(g.Memcpy(closedBuf, small)), "Graph.Memcpy: destination: core: use of a closed resource"},
		{"Memcpy(closed src)", second(g.Memcpy(buf, closedBuf)), "Graph.Memcpy: source: core: use of a closed resource"},
		{"Memcpy(bad dependency)", second(g.Memcpy(buf, small, theirs)), "Graph.Memcpy: dependency 0 is a node of another graph"},
		{"Memset8(nil)", second(g.Memset8(nil, 1)), "Graph.Memset8: nil *Buffer"},
		{"Memset32(6 bytes)", second(g.Memset32(odd, 1)), "Graph.Memset32: size 6 is not a multiple of 4"},
		{"Memset32(closed)", second(g.Memset32(closedBuf, 1)), "Graph.Memset32: core: use of a closed resource"},

		{"HostFunc(nil)", second(g.HostFunc(nil)), "Graph.HostFunc: nil func"},
		{"HostFunc(bad dependency)", second(g.HostFunc(func() {}, theirs)), "Graph.HostFunc: dependency 0 is a node of another graph"},
		{"Record(nil)", second(g.Record(nil)), "Graph.Record: nil *Event"},
		{"Record(closed)", second(g.Record(closedEv)), "Graph.Record: core: use of a closed resource"},
		{"Wait(nil)", second(g.Wait(nil)), "Graph.Wait: nil *Event"},
		{"Wait(closed)", second(g.Wait(closedEv)), "Graph.Wait: core: use of a closed resource"},
		{"Child(nil)", second(g.Child(nil)), "Graph.Child: nil *Graph"},
		{"Child(itself)", second(g.Child(g)), "a graph cannot be its own child"},
		{"Child(closed)", second(g.Child(closedChild)), "Graph.Child: the child graph: core: use of a closed resource"},
		{"Child(bad dependency)", second(g.Child(other, theirs)), "Graph.Child: dependency 0 is a node of another graph"},

		{"Alloc(0)", third(g.Alloc(0)), "Graph.Alloc: size 0 is not positive"},
		{"Alloc(-1)", third(g.Alloc(-1)), "Graph.Alloc: size -1 is not positive"},
		{"Free(nil)", second(g.Free(nil)), "Graph.Free: nil *Buffer"},
		{"Free(pool memory)", second(g.Free(buf)), "is *core.fakeMR memory, not graph memory"},
		{"Free(view)", second(g.Free(gview)), "a view at offset 16 of an allocation"},

		{"If(zero handle)", third(g.If(ConditionalHandle{})), "Graph.If: zero ConditionalHandle"},
		{"While(another graph's handle)", third(g.While(ConditionalHandle{h: 1, g: other})), "Graph.While: the ConditionalHandle was made on another graph"},
		{"Switch(0 cases)", third(g.Switch(ConditionalHandle{h: 1, g: g}, 0)), "Graph.Switch: 0 cases"},
		{"IfElse(zero handle)", fourth(g.IfElse(ConditionalHandle{})), "Graph.IfElse: zero ConditionalHandle"},
		{"If(bad dependency)", third(g.If(ConditionalHandle{h: 1, g: g}, theirs)), "Graph.If: dependency 0 is a node of another graph"},

		{"DebugDot(\"\")", g.DebugDot("", false), "Graph.DebugDot: empty path"},
	} {
		wantErr(t, c.name, c.err, c.want)
	}
	if mr.freed.Load() != 1 {
		t.Errorf("the fake resource freed %d buffers, want 1 (the closed one)", mr.freed.Load())
	}
}

func second[A any](_ A, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }
func fourth[A, B, C any](_ A, _ B, _ C, err error) error {
	return err
}

func TestGraphBodyChecks(t *testing.T) {
	g := cpuGraph()
	body := cpuBody(g, g)
	inner := cpuBody(g, body)
	ev := &Event{}
	gbuf := &Buffer{ptr: 0x2000, size: 64, mr: &GraphMemoryResource{}}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"HostFunc", second(body.HostFunc(func() {})), "Graph.HostFunc: a conditional body holds only kernel, memcpy, memset, empty, child graph and conditional nodes"},
		{"Record", second(body.Record(ev)), "Graph.Record: a conditional body holds only"},
		{"Wait", second(inner.Wait(ev)), "Graph.Wait: a conditional body holds only"},
		{"Alloc", third(body.Alloc(64)), "Graph.Alloc: a conditional body holds only"},
		{"Free", second(inner.Free(gbuf)), "Graph.Free: a conditional body holds only"},
		{"Instantiate", second(body.Instantiate()), "the body of a conditional node is instantiated with the graph that holds it"},
		{"Update", (&GraphExec{}).Update(body), "the body of a conditional node cannot stand for a whole graph"},
		// A handle made on a body drives a node in that body (or deeper),
		// not in the graph holding it.
		{"If(a body's handle at the top)", third(g.If(ConditionalHandle{h: 1, g: body})), "the ConditionalHandle was made on another graph"},
		{"a body's node in its parent", second(g.Empty(&GraphNode{g: body})), "dependency 0 is a node of another graph"},
	} {
		wantErr(t, c.name, c.err, c.want)
	}
	// A handle of the top-level graph may drive a node in a body: the
	// check passes and the closed context is what stops it.
	if _, _, err := inner.While(ConditionalHandle{h: 1, g: g}); err != ErrClosed {
		t.Errorf("While in a body with the top's handle: %v, want the closed context's bare ErrClosed", err)
	}
	if !inner.within(g) || !inner.within(body) || g.within(body) {
		t.Error("within: wrong")
	}
	// A body closes with its top-level graph.
	if err := body.Close(); err != nil {
		t.Errorf("body.Close: %v", err)
	}
	if g.life.closed() || body.life.closed() {
		t.Error("closing a body closed something")
	}
	if body.Parent() != g || inner.Parent() != body || g.Parent() != nil {
		t.Error("Parent: wrong")
	}
	g.Close()
	if _, err := inner.Empty(); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "Graph.Empty: ") {
		t.Errorf("a body's Empty after its graph's Close: %v", err)
	}
}

// TestGraphClosed checks that every node method of a closed graph returns
// ErrClosed from the graph (the message names the method), before the
// context is consulted.
func TestGraphClosed(t *testing.T) {
	g := cpuGraph()
	closeTwice(t, g)
	k := layoutKernel("k", ArgumentInfo{0, 4})
	mr := &fakeMR{}
	buf, _ := mr.Allocate(64, nil)
	src, _ := mr.Allocate(16, nil)
	gbuf := &Buffer{ptr: 0x2000, size: 64, mr: &GraphMemoryResource{}}
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(1)}
	h := ConditionalHandle{h: 1, g: g}
	callbacksBefore := callbackCount()
	for _, c := range []struct {
		name string
		err  error
	}{
		{"Empty", second(g.Empty())},
		{"Kernel", second(g.Kernel(cfg, k, []any{int32(1)}))},
		{"Memcpy", second(g.Memcpy(buf, src))},
		{"Memset8", second(g.Memset8(buf, 1))},
		{"Memset32", second(g.Memset32(buf, 1))},
		{"HostFunc", second(g.HostFunc(func() {}))},
		{"Record", second(g.Record(&Event{}))},
		{"Wait", second(g.Wait(&Event{}))},
		{"Child", second(g.Child(cpuGraph()))},
		{"Alloc", third(g.Alloc(64))},
		{"Free", second(g.Free(gbuf))},
		{"NewCondition", second(g.NewCondition(1))},
		{"If", third(g.If(h))},
		{"IfElse", fourth(g.IfElse(h))},
		{"While", third(g.While(h))},
		{"Switch", third(g.Switch(h, 3))},
		{"NodeCount", second(g.NodeCount())},
		{"DebugDot", g.DebugDot("x.dot", false)},
		{"Instantiate", second(g.Instantiate())},
	} {
		if !errors.Is(c.err, ErrClosed) || !strings.Contains(c.err.Error(), "Graph."+c.name+": ") {
			t.Errorf("%s on a closed graph: %v, want ErrClosed naming Graph.%s", c.name, c.err, c.name)
		}
	}
	if n := callbackCount(); n != callbacksBefore {
		t.Errorf("%d host callbacks registered before, %d after", callbacksBefore, n)
	}
}

// callbackCount counts the registered host callbacks.
func callbackCount() int {
	n := 0
	callbacks.m.Range(func(any, any) bool { n++; return true })
	return n
}

func TestGraphExecSetKernelChecks(t *testing.T) {
	g, other := cpuGraph(), cpuGraph()
	e := &GraphExec{ctx: g.ctx, hs: &handleSet{}, src: g}
	k := layoutKernel("k", ArgumentInfo{0, 4})
	kn := &GraphNode{g: g, handle: 1, typ: driver.GraphNodeTypeKernel}
	body := cpuBody(g, g)
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(1)}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil node", e.SetKernel(nil, cfg, k, int32(1)), "GraphExec.SetKernel: nil or zero *GraphNode"},
		{"zero node", e.SetKernel(&GraphNode{}, cfg, k, int32(1)), "GraphExec.SetKernel: nil or zero *GraphNode"},
		{"memset node", e.SetKernel(&GraphNode{g: g, typ: driver.GraphNodeTypeMemset}, cfg, k, int32(1)), "the node is a CU_GRAPH_NODE_TYPE_MEMSET node, not a kernel node"},
		{"another graph's node", e.SetKernel(&GraphNode{g: other, typ: driver.GraphNodeTypeKernel}, cfg, k, int32(1)), "the node belongs to another graph than the one the executable graph was made from"},
		{"nil kernel", e.SetKernel(kn, cfg, nil), "GraphExec.SetKernel: nil *Kernel"},
		{"bad shape", e.SetKernel(kn, LaunchConfig{Grid: Dim(0), Block: Dim(1)}, k, int32(1)), "zero dimension"},
		{"bad arguments", e.SetKernel(kn, cfg, k, 1.5), "GraphExec.SetKernel k: argument 0 is float64 (8 bytes) but parameter 0 takes 4 bytes"},
		{"no executable graph source", (&GraphExec{}).SetKernel(kn, cfg, k, int32(1)), "the node belongs to another graph"},
	} {
		wantErr(t, c.name, c.err, c.want)
	}
	// A body's node is one of the graph's: only the closed context stops
	// it.
	if err := e.SetKernel(&GraphNode{g: body, typ: driver.GraphNodeTypeKernel}, cfg, k, int32(1)); err == nil || err.Error() != ErrClosed.Error()+" (the node's graph)" {
		t.Errorf("SetKernel of a body's node: %v, want the closed context's ErrClosed", err)
	}
	g.Close()
	if err := e.SetKernel(kn, cfg, k, int32(1)); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "(the node's graph)") {
		t.Errorf("SetKernel of a node of a closed graph: %v", err)
	}
	e.life.close()
	if err := e.SetKernel(kn, cfg, k, int32(1)); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "GraphExec.SetKernel: ") {
		t.Errorf("SetKernel on a closed GraphExec: %v", err)
	}
}

// TestGraphKernelNodeParams checks the parameters of a kernel node: the
// shape, and a pointer to each packed argument.
func TestGraphKernelNodeParams(t *testing.T) {
	k := layoutKernel("k", ArgumentInfo{0, 8}, ArgumentInfo{8, 4}, ArgumentInfo{16, 8}, ArgumentInfo{24, 2})
	buf := NewBuffer(0xabc000, 16, &fakeMR{}, nil)
	g := cpuGraph()
	cond := ConditionalHandle{h: 0x1122334455, g: g}
	cfg := LaunchConfig{Grid: Dim(3, 4, 5), Block: Dim(32, 2), SharedMemory: 96}
	var p driver.GraphNodeParams
	ka, err := kernelNodeParams("Graph.Kernel", nil, &cfg, k, []any{buf, int32(-9), cond, uint16(0xbeef)}, &p)
	if err != nil {
		t.Fatal(err)
	}
	defer ka.done()
	kp := p.Anon2.Kernel()
	if p.Type != driver.GraphNodeTypeKernel || kp.Kern != 7 || kp.Func != 0 {
		t.Errorf("type %v, kernel %#x, func %#x", p.Type, kp.Kern, kp.Func)
	}
	if kp.GridDimX != 3 || kp.GridDimY != 4 || kp.GridDimZ != 5 || kp.BlockDimX != 32 || kp.BlockDimY != 2 || kp.BlockDimZ != 1 || kp.SharedMemBytes != 96 {
		t.Errorf("shape %+v", *kp)
	}
	ptrs := unsafe.Slice((*unsafe.Pointer)(kp.KernelParams), 4)
	le := binary.LittleEndian
	arg := func(i, n int) []byte { return unsafe.Slice((*byte)(ptrs[i]), n) }
	if v := le.Uint64(arg(0, 8)); v != 0xabc000 {
		t.Errorf("argument 0 = %#x, want the buffer's address", v)
	}
	if v := int32(le.Uint32(arg(1, 4))); v != -9 {
		t.Errorf("argument 1 = %d", v)
	}
	if v := le.Uint64(arg(2, 8)); v != 0x1122334455 {
		t.Errorf("argument 2 = %#x, want the conditional handle", v)
	}
	if v := le.Uint16(arg(3, 2)); v != 0xbeef {
		t.Errorf("argument 3 = %#x", v)
	}
	if uintptr(ptrs[1])-uintptr(ptrs[0]) != 8 || uintptr(ptrs[3])-uintptr(ptrs[0]) != 24 {
		t.Error("the pointers do not follow the layout's offsets")
	}
	if got := buffersOf([]any{buf, 1, cond, buf}); len(got) != 2 || got[0] != buf {
		t.Errorf("buffersOf = %v", got)
	}

	// No parameters: no pointer array.
	var q driver.GraphNodeParams
	ka2, err := kernelNodeParams("Graph.Kernel", nil, &cfg, layoutKernel("none"), nil, &q)
	if err != nil {
		t.Fatal(err)
	}
	ka2.done()
	if q.Anon2.Kernel().KernelParams != nil {
		t.Error("a kernel without parameters got a parameter array")
	}
}

func TestPackConditionalHandle(t *testing.T) {
	g := cpuGraph()
	buf := make([]byte, 8)
	if err := packArgs(buf, "k", []ArgumentInfo{{0, 8}}, []any{ConditionalHandle{h: 0xfeed, g: g}}); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint64(buf); v != 0xfeed {
		t.Errorf("packed %#x", v)
	}
	wantErr(t, "a ConditionalHandle for a 4-byte parameter", packArgs(make([]byte, 4), "k", []ArgumentInfo{{0, 4}}, []any{ConditionalHandle{h: 1, g: g}}),
		"core: Launch k: argument 0 is core.ConditionalHandle (8 bytes) but parameter 0 takes 4 bytes")
	wantErr(t, "a zero ConditionalHandle", packArgs(make([]byte, 8), "k", []ArgumentInfo{{0, 8}}, []any{ConditionalHandle{}}),
		"core: Launch k: argument 0 is a zero ConditionalHandle")
	if h := (ConditionalHandle{h: 42, g: g}).Handle(); h != 42 {
		t.Errorf("Handle() = %d", h)
	}
}

// TestGraphHandlesKeep checks that a graph's host callbacks and those of
// the graphs cloned into it live until the last holder lets them go.
func TestGraphHandlesKeep(t *testing.T) {
	ran := 0
	child := (&graphHandles{}).ref()
	cid := registerCallback(graphFunc(func() { ran++ }))
	child.add(cid)
	parent := (&graphHandles{}).ref()
	pid := registerCallback(graphFunc(func() { ran += 10 }))
	parent.add(pid)
	parent.addSub(child)
	parent.addSub(parent) // ignored: no self-reference
	parent.hold(nil, 1, "x")
	if len(parent.keep) != 2 {
		t.Errorf("kept %d values, want 2 (nil is skipped)", len(parent.keep))
	}
	exec := &handleSet{}
	exec.add(parent) // an executable graph made from the parent

	child.unref() // the child graph is closed: the parent still runs its function
	runCallback(cid, driver.Success)
	parent.unref() // the parent graph is closed: its GraphExec still runs both
	runCallback(cid, driver.Success)
	runCallback(pid, driver.Success)
	if ran != 12 {
		t.Fatalf("ran = %d, want 12", ran)
	}
	exec.unref() // the GraphExec is closed: both are gone
	runCallback(cid, driver.Success)
	runCallback(pid, driver.Success)
	if ran != 12 {
		t.Errorf("callbacks ran after every holder was closed: ran = %d", ran)
	}
	if parent.keep != nil || parent.subs != nil {
		t.Error("the last unref kept its values")
	}
}

// wantPoolErrs checks that Trim, Info and ResetHigh of r fail with want;
// where follows their names in the messages.
func wantPoolErrs(t *testing.T, r *GraphMemoryResource, want error, where string) {
	t.Helper()
	for _, c := range []struct {
		name string
		err  error
	}{{"Trim", r.Trim()}, {"Info", second(r.Info())}, {"ResetHigh", r.ResetHigh()}} {
		if !errors.Is(c.err, want) {
			t.Errorf("%s%s: %v", c.name, where, c.err)
		}
	}
}

func TestGraphMemoryResourceChecks(t *testing.T) {
	dev := &Device{primary: closedContext()}
	r := NewGraphMemoryResource(dev)
	if r.Device() != dev || !r.DeviceAccessible() || r.HostAccessible() {
		t.Error("GraphMemoryResource: wrong properties")
	}
	s := closedStream()
	s.ctx.dev = dev
	wantErr(t, "Allocate(nil stream)", second(r.Allocate(16, nil)), "GraphMemoryResource.Allocate: nil stream")
	wantErr(t, "Allocate(-1)", second(r.Allocate(-1, s)), "negative size -1")
	wantErr(t, "Allocate(another device's stream)", second(NewGraphMemoryResource(&Device{}).Allocate(16, s)), "the resource on")
	if _, err := r.Allocate(16, s); !errors.Is(err, ErrClosed) {
		t.Errorf("Allocate on a closed stream: %v", err)
	}
	if err := r.Deallocate(0, 16, s); err != nil {
		t.Errorf("Deallocate(0): %v", err)
	}
	wantPoolErrs(t, r, ErrClosed, " in a closed context")
	// A graph allocation's Buffer owns nothing: closing it frees nothing.
	root := &Buffer{ptr: 0x1000, size: 16, mr: r}
	b := &Buffer{ptr: 0x1000, size: 16, mr: r, parent: root}
	if err := b.Close(); err != nil {
		t.Errorf("Close of a graph allocation's Buffer: %v", err)
	}
	if root.closed() {
		t.Error("closing the Buffer closed the allocation")
	}
}

// TestGraphSourceCompiles compiles the kernels of the GPU tests without a
// GPU: cudaGraphSetConditional, declared in the source, needs no header
// and no relocatable device code; the call stays an external symbol of
// the cubin, which the driver resolves when it loads the code.
func TestGraphSourceCompiles(t *testing.T) {
	p := mustProgram(t, graphSource, "c++", &ProgramOptions{Name: "graphdef_test.cu", Arch: "sm_90", NoCache: true})
	code := mustCompile(t, p, "cubin").Code()
	checkCubin(t, code, 90, "addi", "iota", "put", "set_cond", "count_until", "slow_set")
	if !strings.Contains(string(code), "cudaGraphSetConditional") {
		t.Error("the cubin does not name cudaGraphSetConditional")
	}
}

// A nil or zero GraphMemoryResource gives errors, never a panic.
func TestGraphMemoryResourceZero(t *testing.T) {
	for _, r := range []*GraphMemoryResource{nil, {}, NewGraphMemoryResource(nil)} {
		if _, err := r.Allocate(16, nil); !errors.Is(err, errNoGraphDevice) {
			t.Errorf("Allocate: %v", err)
		}
		wantPoolErrs(t, r, errNoGraphDevice, "")
		if err := r.Deallocate(0x1000, 16, nil); !errors.Is(err, errNoGraphDevice) {
			t.Errorf("Deallocate: %v", err)
		}
	}
}
