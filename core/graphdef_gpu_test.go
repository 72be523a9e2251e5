package core

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// The GPU tests of graphs built node by node: every node kind, with the
// results checked on the CPU.

// graphSource holds the kernels of these tests. cudaGraphSetConditional
// is declared as cuda.core's tests do: NVRTC has no header for it, and
// the driver resolves it when the code is loaded.
const graphSource = `
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

extern "C" __global__ void addi(int* x, int v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] += v;
}

extern "C" __global__ void iota(int* x, int v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = i + v;
}

// out[idx] = idx + v, by one thread.
extern "C" __global__ void put(int* out, int idx, int v) {
	if (blockIdx.x == 0 && threadIdx.x == 0) out[idx] = idx + v;
}

extern "C" __global__ void set_cond(cudaGraphConditionalHandle h, const unsigned int* v) {
	if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(h, *v);
}

// One more turn of a loop: counts it, and ends the loop at limit turns.
extern "C" __global__ void count_until(cudaGraphConditionalHandle h, int* counter, int limit) {
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		int c = ++counter[0];
		cudaGraphSetConditional(h, c < limit ? 1u : 0u);
	}
}

// x[0] = v after spinning for cycles clock cycles: work that is still
// running when the host queues what must wait for it.
extern "C" __global__ void slow_set(int* x, int v, long long cycles) {
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		long long t0 = clock64();
		while (clock64() - t0 < cycles) {
		}
		x[0] = v;
	}
}
`

var graphKernelsState testKernelSet

// graphKernels compiles graphSource for dev once per test binary, through
// Program and ObjectCode.
func graphKernels(t *testing.T, dev *Device) map[string]*Kernel {
	t.Helper()
	return graphKernelsState.get(t, "the graph test kernels", graphSource, &ProgramOptions{Name: "graphdef_test.cu", Arch: "sm_" + dev.Arch()},
		"addi", "iota", "put", "set_cond", "count_until", "slow_set")
}

var one = LaunchConfig{Grid: Dim(1), Block: Dim(1)}

func gridFor(n int) LaunchConfig {
	return LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}
}

func testStream(t *testing.T, dev *Device) *Stream {
	t.Helper()
	s, err := dev.NewStream(&StreamOptions{NonBlocking: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// devZeros allocates n 4-byte elements (int32 or float32) on dev, set to
// 0, closed at the test's end.
func devZeros(t *testing.T, dev *Device, s *Stream, n int) *Buffer {
	t.Helper()
	b, err := dev.Allocate(n*4, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Memset32(0); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkInts compares b with want(i) element by element.
func checkInts(t *testing.T, what string, b *Buffer, want func(i int) int32) {
	t.Helper()
	bad := 0
	for i, v := range readBack[int32](t, b, b.Size()/4) {
		if w := want(i); v != w {
			if bad < 5 {
				t.Errorf("%s[%d] = %d, want %d", what, i, v, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d elements wrong", what, bad)
	}
}

// graphTest is the start of most graph tests: the device, its graph
// kernels and a stream.
func graphTest(t *testing.T) (*Device, map[string]*Kernel, *Stream) {
	t.Helper()
	dev := gpuDevice(t)
	return dev, graphKernels(t, dev), testStream(t, dev)
}

func buildGraph(t *testing.T, dev *Device) *Graph {
	t.Helper()
	g := try(dev.NewGraph()).must(t)
	t.Cleanup(func() { g.Close() })
	return g
}

func instantiate(t *testing.T, g *Graph, o InstantiateOptions) *GraphExec {
	t.Helper()
	e := try(g.InstantiateWith(&o)).must(t)
	t.Cleanup(func() { e.Close() })
	return e
}

// launch launches e on s times times and waits.
func launch(t *testing.T, e *GraphExec, s *Stream, times int) {
	t.Helper()
	for range times {
		if err := e.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUGraphNodes builds one graph of memset, kernel, memcpy (device to
// device, device to pinned host, pinned host to device), host, child
// graph and empty nodes, and checks every result after two launches.
func TestGPUGraphNodes(t *testing.T) {
	dev, ks, s := graphTest(t)
	const n = 1000
	cfg := gridFor(n)
	a, b, c := devZeros(t, dev, s, n), devZeros(t, dev, s, n), devZeros(t, dev, s, n)
	pinned := NewPinnedMemoryResource(dev)
	pinnedInts := func() (*Buffer, []int32) {
		buf := try(pinned.Allocate(n*4, nil)).must(t)
		t.Cleanup(func() { buf.Close() })
		return buf, try(HostSlice[int32](buf)).must(t)
	}
	hout, houtS := pinnedInts()
	hin, hinS := pinnedInts()
	hback, hbackS := pinnedInts()
	for i := range hinS {
		hinS[i] = int32(3 * i)
	}
	bytes8 := try(dev.Allocate(64, s)).must(t)
	defer bytes8.Close()

	g := buildGraph(t, dev)
	var runs atomic.Int32
	var seen atomic.Int64
	m1 := try(g.Memset32(a, 7)).must(t)
	k1 := try(g.Kernel(cfg, ks["addi"], []any{a, int32(3), int32(n)}, m1)).must(t) // a = 10
	c1 := try(g.Memcpy(b, a, k1)).must(t)                                          // b = 10
	k2 := try(g.Kernel(cfg, ks["addi"], []any{b, int32(5), int32(n)}, c1)).must(t) // b = 15
	d := try(g.Memcpy(hout, b, k2)).must(t)                                        // hout = 15
	h := try(g.HostFunc(func() {
		var sum int64
		for _, v := range houtS {
			sum += int64(v)
		}
		seen.Store(sum)
		runs.Add(1)
	}, d)).must(t)
	up := try(g.Memcpy(c, hin)).must(t)                                            // c = 3i
	k3 := try(g.Kernel(cfg, ks["addi"], []any{c, int32(1), int32(n)}, up)).must(t) // c = 3i+1
	down := try(g.Memcpy(hback, c, k3)).must(t)                                    // hback = 3i+1
	m8 := try(g.Memset8(bytes8, 0xab)).must(t)

	// A child graph adds 100 to a, after c1 has read a.
	child := try(dev.NewGraph()).must(t)
	try(child.Kernel(cfg, ks["addi"], []any{a, int32(100), int32(n)})).must(t)
	ch := try(g.Child(child, k1, c1)).must(t)
	// g holds a copy: a node added to child later, and closing child,
	// change nothing in g.
	try(child.Kernel(cfg, ks["addi"], []any{a, int32(1000), int32(n)})).must(t)
	if err := child.Close(); err != nil {
		t.Fatal(err)
	}
	join := try(g.Empty(h, down, m8, ch)).must(t)
	if join.Graph() != g || join.Type() != driver.GraphNodeTypeEmpty || k1.Type() != driver.GraphNodeTypeKernel || join.Handle() == 0 {
		t.Errorf("node accessors: graph %p (want %p), types %v %v", join.Graph(), g, join.Type(), k1.Type())
	}
	if got := try(g.NodeCount()).must(t); got != 12 {
		t.Errorf("NodeCount = %d, want 12", got)
	}

	e := instantiate(t, g, InstantiateOptions{})
	if err := e.Upload(s); err != nil {
		t.Fatal(err)
	}
	launch(t, e, s, 2)
	checkInts(t, "a", a, func(int) int32 { return 110 })
	checkInts(t, "b", b, func(int) int32 { return 15 })
	checkInts(t, "c", c, func(i int) int32 { return int32(3*i + 1) })
	for i := range n {
		if houtS[i] != 15 || hbackS[i] != int32(3*i+1) {
			t.Fatalf("pinned host copies: hout[%d] = %d (want 15), hback[%d] = %d (want %d)", i, houtS[i], i, hbackS[i], 3*i+1)
		}
	}
	if r, sum := runs.Load(), seen.Load(); r != 2 || sum != 15*n {
		t.Errorf("host node: ran %d times (want 2), saw a sum of %d (want %d)", r, sum, 15*n)
	}
	wantEach(t, "memset8", readBack[byte](t, bytes8, 64), func(int) byte { return 0xab })

	// The executable graph outlives its graph; the graph is then closed
	// to new nodes.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	launch(t, e, s, 1)
	if r := runs.Load(); r != 3 {
		t.Errorf("host node after the graph's Close: ran %d times, want 3", r)
	}
	if _, err := g.Empty(); !errors.Is(err, ErrClosed) {
		t.Errorf("Empty on a closed graph: %v", err)
	}
}

// TestGPUGraphEvents orders two graphs, a graph and a stream, and a stream
// and a graph with event record and wait nodes. The first of each pair
// spins before it writes, so that the second reads too early unless the
// wait holds it.
func TestGPUGraphEvents(t *testing.T) {
	dev := gpuDevice(t)
	ks := graphKernels(t, dev)
	s1, s2 := testStream(t, dev), testStream(t, dev)
	x, y := devZeros(t, dev, s1, 1), devZeros(t, dev, s1, 1)
	const cycles = int64(20_000_000) // about 10 ms
	ev := try(dev.NewEvent(nil)).must(t)
	defer ev.Close()

	g1 := buildGraph(t, dev)
	set := try(g1.Kernel(one, ks["slow_set"], []any{x, int32(5), cycles})).must(t)
	try(g1.Record(ev, set)).must(t)
	g2 := buildGraph(t, dev)
	w := try(g2.Wait(ev)).must(t)
	cp := try(g2.Memcpy(y, x, w)).must(t)
	try(g2.Kernel(one, ks["addi"], []any{y, int32(1), int32(1)}, cp)).must(t)
	e1, e2 := instantiate(t, g1, InstantiateOptions{}), instantiate(t, g2, InstantiateOptions{})

	// Graph to graph.
	if err := e1.Launch(s1); err != nil {
		t.Fatal(err)
	}
	launch(t, e2, s2, 1)
	checkInts(t, "y after the graph waited for the graph", y, func(int) int32 { return 6 })
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}

	// Graph to stream.
	if err := x.Memset32(0); err != nil {
		t.Fatal(err)
	}
	if err := e1.Launch(s1); err != nil {
		t.Fatal(err)
	}
	if err := s2.Wait(ev); err != nil {
		t.Fatal(err)
	}
	if err := y.CopyFromAsync(s2, x); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	checkInts(t, "y after the stream waited for the graph", y, func(int) int32 { return 5 })
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}

	// Stream to graph.
	if err := x.Memset32(0); err != nil {
		t.Fatal(err)
	}
	if err := Launch(s1, one, ks["slow_set"], x, int32(7), cycles); err != nil {
		t.Fatal(err)
	}
	if err := ev.Record(s1); err != nil {
		t.Fatal(err)
	}
	launch(t, e2, s2, 1)
	checkInts(t, "y after the graph waited for the stream", y, func(int) int32 { return 8 })
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUGraphAllocFree uses graph memory from Alloc nodes: freed in the
// graph, left allocated with AutoFreeOnLaunch, and left allocated without
// it, which the driver refuses to launch again until it is freed.
func TestGPUGraphAllocFree(t *testing.T) {
	dev, ks, s := graphTest(t)
	const n = 4096
	cfg := gridFor(n)
	out := devZeros(t, dev, s, n)
	gmr := NewGraphMemoryResource(dev)
	if err := gmr.ResetHigh(); err != nil {
		t.Fatal(err)
	}

	// Allocated, used by a kernel, copied out and freed in the graph.
	g := buildGraph(t, dev)
	an, buf, err := g.Alloc(n * 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := buf.MemoryResource().(*GraphMemoryResource); !ok || buf.Ptr() == 0 || buf.Size() != n*4 || buf.Device() != dev {
		t.Errorf("the Alloc node's Buffer: %#x, %d bytes, %v", buf.Ptr(), buf.Size(), buf.Device())
	}
	k := try(g.Kernel(cfg, ks["iota"], []any{buf, int32(10), int32(n)}, an)).must(t)
	cp := try(g.Memcpy(out, buf, k)).must(t)
	try(g.Free(buf, cp)).must(t)
	e := instantiate(t, g, InstantiateOptions{})
	launch(t, e, s, 2)
	checkInts(t, "out (alloc, kernel, copy, free)", out, func(i int) int32 { return int32(i + 10) })
	if err := buf.Close(); err != nil { // owns nothing
		t.Errorf("closing the Alloc node's Buffer: %v", err)
	}
	info := try(gmr.Info()).must(t)
	if info.UsedHigh < n*4 || info.ReservedHigh < info.UsedHigh {
		t.Errorf("graph memory after the launches: %+v, want UsedHigh >= %d <= ReservedHigh", info, n*4)
	}

	// Left allocated, freed by the next launch.
	g2 := buildGraph(t, dev)
	an2, buf2, err := g2.Alloc(n * 4)
	if err != nil {
		t.Fatal(err)
	}
	k2 := try(g2.Kernel(cfg, ks["iota"], []any{buf2, int32(20), int32(n)}, an2)).must(t)
	try(g2.Memcpy(out, buf2, k2)).must(t)
	e2 := instantiate(t, g2, InstantiateOptions{AutoFreeOnLaunch: true})
	launch(t, e2, s, 2)
	checkInts(t, "out (AutoFreeOnLaunch)", out, func(i int) int32 { return int32(i + 20) })
	// The last launch left it allocated: stream work may still use it.
	checkInts(t, "the allocation after the launch", buf2, func(i int) int32 { return int32(i + 20) })
	if err := gmr.Deallocate(buf2.Ptr(), buf2.Size(), s); err != nil {
		t.Fatal(err)
	}

	// Left allocated without AutoFreeOnLaunch: the second launch fails
	// until the memory is freed.
	g3 := buildGraph(t, dev)
	an3, buf3, err := g3.Alloc(n * 4)
	if err != nil {
		t.Fatal(err)
	}
	try(g3.Kernel(cfg, ks["iota"], []any{buf3, int32(30), int32(n)}, an3)).must(t)
	e3 := instantiate(t, g3, InstantiateOptions{})
	launch(t, e3, s, 1)
	if err := e3.Launch(s); !errors.Is(err, driver.ErrorInvalidValue) {
		t.Errorf("relaunch with its allocation unfreed: %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
	if err := gmr.Deallocate(buf3.Ptr(), buf3.Size(), s); err != nil {
		t.Fatal(err)
	}
	launch(t, e3, s, 1)
	checkInts(t, "the allocation of the third graph", buf3, func(i int) int32 { return int32(i + 30) })
	if err := gmr.Deallocate(buf3.Ptr(), buf3.Size(), s); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := gmr.Trim(); err != nil {
		t.Errorf("Trim: %v", err)
	}
}

// TestGPUGraphMemoryResourceCapture allocates graph memory during a
// capture and frees it there, and is refused outside one.
func TestGPUGraphMemoryResourceCapture(t *testing.T) {
	dev, ks, s := graphTest(t)
	const n = 2048
	out := devZeros(t, dev, s, n)
	gmr := NewGraphMemoryResource(dev)
	if _, err := gmr.Allocate(64, s); err == nil || !strings.Contains(err.Error(), "is not capturing a graph") {
		t.Errorf("Allocate on a stream that is not capturing: %v", err)
	}
	if err := s.BeginCapture(CaptureRelaxed); err != nil {
		t.Fatal(err)
	}
	g, err := func() (*Graph, error) {
		b, err := gmr.Allocate(n*4, s)
		if err == nil {
			err = Launch(s, gridFor(n), ks["iota"], b, int32(3), int32(n))
		}
		if err == nil {
			err = out.CopyFromAsync(s, b)
		}
		if err == nil {
			err = b.Close() // a free node
		}
		g, err2 := s.EndCapture()
		return g, errors.Join(err, err2)
	}()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	e := instantiate(t, g, InstantiateOptions{})
	launch(t, e, s, 2)
	checkInts(t, "out (graph memory allocated during a capture)", out, func(i int) int32 { return int32(i + 3) })
}

// TestGPUGraphIf sets an if node's condition from a kernel that reads it
// from memory, and checks both ways with one executable graph; a second
// graph runs on the handle's initial value.
func TestGPUGraphIf(t *testing.T) {
	dev, ks, s := graphTest(t)
	x, flag := devZeros(t, dev, s, 1), devZeros(t, dev, s, 1)

	g := buildGraph(t, dev)
	h := try(g.NewCondition(0)).must(t)
	set := try(g.Kernel(one, ks["set_cond"], []any{h, flag})).must(t)
	n, then, err := g.If(h, set)
	if err != nil {
		t.Fatal(err)
	}
	if then.Parent() != g || n.Type() != driver.GraphNodeTypeConditional {
		t.Errorf("If: body's parent %p (want %p), node type %v", then.Parent(), g, n.Type())
	}
	try(then.Kernel(one, ks["addi"], []any{x, int32(1), int32(1)})).must(t)
	e := instantiate(t, g, InstantiateOptions{})
	for _, v := range []uint32{1, 0, 5} {
		if err := x.Memset32(0); err != nil {
			t.Fatal(err)
		}
		if err := flag.Memset32(v); err != nil {
			t.Fatal(err)
		}
		launch(t, e, s, 1)
		want := int32(0)
		if v != 0 {
			want = 1
		}
		checkInts(t, "x after if", x, func(int) int32 { return want })
	}

	// No kernel sets it: the initial value decides, at every launch.
	g2 := buildGraph(t, dev)
	h2 := try(g2.NewCondition(1)).must(t)
	_, then2, err := g2.If(h2)
	if err != nil {
		t.Fatal(err)
	}
	try(then2.Kernel(one, ks["addi"], []any{x, int32(10), int32(1)})).must(t)
	if err := x.Memset32(0); err != nil {
		t.Fatal(err)
	}
	launch(t, instantiate(t, g2, InstantiateOptions{}), s, 2)
	checkInts(t, "x after if on the initial value, twice", x, func(int) int32 { return 20 })
}

// TestGPUGraphIfElse checks both bodies of an if/else node (CUDA 12.8).
func TestGPUGraphIfElse(t *testing.T) {
	dev, ks, s := graphTest(t)
	x, flag := devZeros(t, dev, s, 1), devZeros(t, dev, s, 1)
	g := buildGraph(t, dev)
	h := try(g.NewCondition(0)).must(t)
	set := try(g.Kernel(one, ks["set_cond"], []any{h, flag})).must(t)
	_, then, els, err := g.IfElse(h, set)
	if err != nil {
		t.Fatal(err)
	}
	try(then.Kernel(one, ks["addi"], []any{x, int32(1), int32(1)})).must(t)
	try(els.Kernel(one, ks["addi"], []any{x, int32(100), int32(1)})).must(t)
	e := instantiate(t, g, InstantiateOptions{})
	for _, v := range []uint32{1, 0, 2, 0} {
		if err := x.Memset32(0); err != nil {
			t.Fatal(err)
		}
		if err := flag.Memset32(v); err != nil {
			t.Fatal(err)
		}
		launch(t, e, s, 1)
		want := int32(100)
		if v != 0 {
			want = 1
		}
		checkInts(t, "x after if/else", x, func(int) int32 { return want })
	}
}

// TestGPUGraphWhile runs a loop on the GPU until a kernel in its body has
// counted limit turns, and checks the count, what the body did, and the
// node after the loop; a loop whose condition starts at 0 never runs.
func TestGPUGraphWhile(t *testing.T) {
	dev, ks, s := graphTest(t)
	x, counter, y := devZeros(t, dev, s, 1), devZeros(t, dev, s, 1), devZeros(t, dev, s, 1)
	const limit = 37

	g := buildGraph(t, dev)
	h := try(g.NewCondition(1)).must(t)
	z1 := try(g.Memset32(x, 0)).must(t)
	z2 := try(g.Memset32(counter, 0)).must(t)
	wn, body, err := g.While(h, z1, z2)
	if err != nil {
		t.Fatal(err)
	}
	b1 := try(body.Kernel(one, ks["addi"], []any{x, int32(2), int32(1)})).must(t)
	try(body.Kernel(one, ks["count_until"], []any{h, counter, int32(limit)}, b1)).must(t)
	try(g.Kernel(one, ks["addi"], []any{x, int32(1000), int32(1)}, wn)).must(t)
	if _, _, err := g.If(h); err == nil || !strings.Contains(err.Error(), "drives another conditional node already") {
		t.Errorf("a second node on the same handle: %v", err)
	}
	if _, err := body.Empty(wn); err == nil || !strings.Contains(err.Error(), "a node of another graph") {
		t.Errorf("the while node as a dependency in its own body: %v", err)
	}

	// A loop that does not start: its condition is 0 at launch.
	h0 := try(g.NewCondition(0)).must(t)
	z3 := try(g.Memset32(y, 0)).must(t)
	_, body0, err := g.While(h0, z3)
	if err != nil {
		t.Fatal(err)
	}
	try(body0.Kernel(one, ks["addi"], []any{y, int32(1), int32(1)})).must(t)

	e := instantiate(t, g, InstantiateOptions{})
	launch(t, e, s, 2)
	checkInts(t, "loop count", counter, func(int) int32 { return limit })
	checkInts(t, "x after the loop", x, func(int) int32 { return 2*limit + 1000 })
	checkInts(t, "y after a loop that does not start", y, func(int) int32 { return 0 })
}

// TestGPUGraphSwitch runs each case of a switch node, and none for a value
// past the last case (CUDA 12.8).
func TestGPUGraphSwitch(t *testing.T) {
	dev, ks, s := graphTest(t)
	const cases = 3
	x, flag := devZeros(t, dev, s, cases), devZeros(t, dev, s, 1)
	g := buildGraph(t, dev)
	h := try(g.NewCondition(0)).must(t)
	z := try(g.Memset32(x, 0)).must(t)
	set := try(g.Kernel(one, ks["set_cond"], []any{h, flag}, z)).must(t)
	_, bodies, err := g.Switch(h, cases, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != cases {
		t.Fatalf("Switch returned %d bodies, want %d", len(bodies), cases)
	}
	for i, b := range bodies {
		try(b.Kernel(one, ks["put"], []any{x, int32(i), int32(100)})).must(t)
	}
	e := instantiate(t, g, InstantiateOptions{})
	for v := range cases + 1 {
		if err := flag.Memset32(uint32(v)); err != nil {
			t.Fatal(err)
		}
		launch(t, e, s, 1)
		checkInts(t, "x after switch", x, func(i int) int32 {
			if i == v {
				return int32(i + 100)
			}
			return 0
		})
	}
}

// TestGPUGraphSetKernel1000 updates the arguments and the shape of all
// 1,000 kernel nodes of an executable graph in place, and checks that the
// graph itself keeps the old ones.
func TestGPUGraphSetKernel1000(t *testing.T) {
	dev, ks, s := graphTest(t)
	const nodes = 1000
	out := devZeros(t, dev, s, nodes)
	g := buildGraph(t, dev)
	ns := make([]*GraphNode, nodes)
	for i := range ns {
		ns[i] = try(g.Kernel(one, ks["put"], []any{out, int32(i), int32(0)})).must(t)
	}
	e := instantiate(t, g, InstantiateOptions{})
	launch(t, e, s, 1)
	checkInts(t, "out", out, func(i int) int32 { return int32(i) })

	wide := LaunchConfig{Grid: Dim(2), Block: Dim(64)}
	for i, n := range ns {
		if err := e.SetKernel(n, wide, ks["put"], out, int32(i), int32(7+i%3)); err != nil {
			t.Fatalf("SetKernel of node %d: %v", i, err)
		}
	}
	if err := out.Memset32(0); err != nil {
		t.Fatal(err)
	}
	launch(t, e, s, 1)
	checkInts(t, "out after SetKernel", out, func(i int) int32 { return int32(i + 7 + i%3) })

	// The graph was not changed: another executable graph of it runs the
	// old arguments, and e keeps the new ones.
	e2 := instantiate(t, g, InstantiateOptions{})
	if err := out.Memset32(0); err != nil {
		t.Fatal(err)
	}
	launch(t, e2, s, 1)
	checkInts(t, "out from a new executable graph", out, func(i int) int32 { return int32(i) })
	launch(t, e, s, 1)
	checkInts(t, "out from the updated one again", out, func(i int) int32 { return int32(i + 7 + i%3) })
	if err := e2.SetKernel(ns[0], one, ks["put"], out); err == nil {
		t.Error("SetKernel with too few arguments: no error")
	}
}

// TestGPUGraphCapturedThenBuilt adds a node to a captured graph and
// updates it in the executable graph.
func TestGPUGraphCapturedThenBuilt(t *testing.T) {
	dev, ks, s := graphTest(t)
	const n = 512
	x, y := devZeros(t, dev, s, n), devZeros(t, dev, s, n)
	if err := s.BeginCapture(CaptureRelaxed); err != nil {
		t.Fatal(err)
	}
	err := Launch(s, gridFor(n), ks["addi"], x, int32(1), int32(n))
	g, err2 := s.EndCapture()
	if err := errors.Join(err, err2); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	k := try(g.Kernel(gridFor(n), ks["addi"], []any{y, int32(10), int32(n)})).must(t)
	if got := try(g.NodeCount()).must(t); got != 2 {
		t.Errorf("NodeCount = %d, want 2", got)
	}
	e := instantiate(t, g, InstantiateOptions{})
	launch(t, e, s, 1)
	if err := e.SetKernel(k, gridFor(n), ks["addi"], y, int32(20), int32(n)); err != nil {
		t.Fatal(err)
	}
	launch(t, e, s, 1)
	checkInts(t, "x", x, func(int) int32 { return 2 })
	checkInts(t, "y", y, func(int) int32 { return 30 })
}

// TestGPUGraphDebugDot writes a graph of five nodes as DOT and counts its
// node statements.
func TestGPUGraphDebugDot(t *testing.T) {
	dev, ks, s := graphTest(t)
	x := devZeros(t, dev, s, 256)
	g := buildGraph(t, dev)
	a := try(g.Memset32(x, 0)).must(t)
	b := try(g.Kernel(gridFor(256), ks["addi"], []any{x, int32(1), int32(256)}, a)).must(t)
	c := try(g.Kernel(gridFor(256), ks["addi"], []any{x, int32(2), int32(256)}, b)).must(t)
	try(g.Empty(c)).must(t)
	try(g.Memset8(x, 0, a)).must(t) // a second branch after a
	const want = 5
	if got := try(g.NodeCount()).must(t); got != want {
		t.Errorf("NodeCount = %d, want %d", got, want)
	}
	dir := t.TempDir()
	plain, verbose := filepath.Join(dir, "g.dot"), filepath.Join(dir, "gv.dot")
	if err := g.DebugDot(plain, false); err != nil {
		t.Fatal(err)
	}
	if err := g.DebugDot(verbose, true); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(data)), "digraph") {
		t.Errorf("the DOT file does not start with digraph:\n%.300s", data)
	}
	// Node statements: a quoted id ending in node_<k>, then its attributes
	// ("graph_1_node_0"[style=...]); edges have "->" after the id instead.
	nodes := regexp.MustCompile(`(?m)^"[^"\n]*node_[0-9]+"\s*\[`).FindAll(data, -1)
	if len(nodes) != want {
		t.Errorf("the DOT file has %d node statements, want %d:\n%s", len(nodes), want, data)
	}
	if fi, err := os.Stat(verbose); err != nil || fi.Size() == 0 {
		t.Errorf("the verbose DOT file: %v, %v", fi, err)
	}
}
