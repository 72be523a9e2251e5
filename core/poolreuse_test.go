package core

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// TestPoolReuseBookkeeping checks the kept-block list without a GPU:
// matching by stream and size, newest first, the limits and takeAll.
func TestPoolReuseBookkeeping(t *testing.T) {
	var p poolReuse
	s1, s2 := &Stream{}, &Stream{}
	if out := p.put(reuseBlock{0x1000, 100, s1}); len(out) != 0 {
		t.Fatalf("put pushed out %v", out)
	}
	p.put(reuseBlock{0x2000, 100, s1})
	p.put(reuseBlock{0x3000, 100, s2})
	if got := p.take(s1, 200); got != 0 {
		t.Errorf("take of another size = %#x, want 0", got)
	}
	if got := p.take(s2, 100); got != 0x3000 {
		t.Errorf("take(s2) = %#x, want 0x3000", got)
	}
	if got := p.take(s1, 100); got != 0x2000 {
		t.Errorf("take(s1) = %#x, want the newest, 0x2000", got)
	}
	if p.len() != 1 || p.bytes != 100 {
		t.Fatalf("len %d bytes %d, want 1 and 100", p.len(), p.bytes)
	}
	// The block limit pushes out the oldest.
	var out []reuseBlock
	for i := range poolReuseBlocks {
		out = append(out, p.put(reuseBlock{driver.Deviceptr(0x10000 + i), 10, s2})...)
	}
	if len(out) != 1 || out[0].ptr != 0x1000 {
		t.Fatalf("pushed out %v, want the oldest block 0x1000", out)
	}
	// The byte limit too.
	out = p.put(reuseBlock{0x9000, poolReuseBytes, s1})
	if len(out) != poolReuseBlocks || p.len() != 1 || p.bytes != poolReuseBytes {
		t.Fatalf("pushed out %d blocks, %d kept (%d bytes); want %d, 1", len(out), p.len(), p.bytes, poolReuseBlocks)
	}
	p.put(reuseBlock{0xa000, 0, s2})
	if got := p.takeAll(s1); len(got) != 1 || got[0].ptr != 0x9000 {
		t.Errorf("takeAll(s1) = %v", got)
	}
	if got := p.takeAll(nil); len(got) != 1 || p.len() != 0 || p.bytes != 0 {
		t.Errorf("takeAll(nil) = %v, then %d kept, %d bytes", got, p.len(), p.bytes)
	}
}

// TestGPUPoolReuse checks stream-ordered reuse on the GPU: a block closed
// on a stream comes back to the next allocation of its size on that
// stream only, the data written through the new buffer is right, Sync and
// Close give blocks back, NoReuse turns it off, and nothing is reused into
// or out of a graph capture.
// wantKept checks that c's pool keeps want blocks, when says when.
func wantKept(t *testing.T, c *Context, want int, when string) {
	t.Helper()
	if k := c.pool.len(); k != want {
		t.Errorf("%s: %d blocks kept, want %d", when, k, want)
	}
}

func TestGPUPoolReuse(t *testing.T) {
	dev := requireGPU(t)
	ctx := dev.PrimaryContext()
	mr := NewDeviceMemoryResource(dev)
	s := testStream(t, dev)
	s2 := try(dev.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s2.Close()
	if err := dev.Sync(); err != nil { // start with nothing kept
		t.Fatal(err)
	}
	const n = 1 << 20
	a := try(mr.Allocate(n, s)).must(t)
	if err := a.Memset32Async(s, 0xdeadbeef); err != nil {
		t.Fatal(err)
	}
	pa := a.Ptr()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ctx.pool.len() != 1 {
		t.Fatalf("%d blocks kept after Close, want 1", ctx.pool.len())
	}
	// Another stream or another size does not get it.
	c := try(mr.Allocate(n, s2)).must(t)
	if c.Ptr() == pa {
		t.Errorf("a block kept for one stream was handed to another")
	}
	c.Close()
	d := try(mr.Allocate(n/2, s)).must(t)
	if d.Ptr() == pa {
		t.Errorf("a block of %d bytes was handed out for %d", n, n/2)
	}
	d.Close()
	b := try(mr.Allocate(n, s)).must(t)
	if b.Ptr() != pa {
		t.Errorf("Allocate on the same stream got %#x, want the kept block %#x", b.Ptr(), pa)
	}
	// Work through the reused block is ordered after the old buffer's.
	if err := b.Memset32Async(s, 7); err != nil {
		t.Fatal(err)
	}
	out := make([]uint32, n/4)
	if err := CopyFromDeviceAsync(s, out, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 7 {
			t.Fatalf("out[%d] = %#x, want 7", i, v)
		}
	}
	b.Close()
	if ctx.pool.len() == 0 {
		t.Fatal("nothing kept after Close")
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, blk := range ctx.pool.takeAll(nil) { // s2's block: put it back
		ctx.pool.put(blk)
		if blk.stream == s {
			t.Errorf("Stream.Sync left block %#x of its stream kept", blk.ptr)
		}
	}
	// Past the limit, the oldest blocks go back to the driver, each on
	// its own stream (s2's here, from a Close on s).
	var many []*Buffer
	for i := range poolReuseBlocks {
		b := try(mr.Allocate(4096*(i+1), s)).must(t)
		many = append(many, b)
	}
	for _, b := range many {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wantKept(t, ctx, poolReuseBlocks, "at the limit")
	for _, blk := range ctx.pool.takeAll(nil) {
		ctx.pool.put(blk)
		if blk.stream == s2 {
			t.Errorf("s2's block, the oldest, was not pushed out")
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	wantKept(t, ctx, 0, "after the other stream's Close")

	// A created context gives its blocks back when it is closed.
	cc := try(dev.CreateContext(0)).must(t)
	cs := try(cc.NewStream(nil)).must(t)
	cb := try(mr.Allocate(n, cs)).must(t)
	cb.Close()
	wantKept(t, cc, 1, "in the created context")
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	wantKept(t, cc, 0, "after Context.Close")

	// NoReuse.
	off := NewDeviceMemoryResource(dev)
	off.NoReuse = true
	e := try(off.Allocate(n, s)).must(t)
	e.Close()
	wantKept(t, ctx, 0, "NoReuse")

	// Capture: a kept block stays out of the graph, and the graph's own
	// allocation is freed in it, never kept.
	f := try(mr.Allocate(n, s)).must(t)
	pf := f.Ptr()
	f.Close()
	if err := s.BeginCapture(CaptureRelaxed); err != nil {
		t.Fatal(err)
	}
	g, err := mr.Allocate(n, s)
	if err != nil {
		s.EndCapture()
		t.Fatal(err)
	}
	if g.Ptr() == pf {
		t.Errorf("an allocation captured into a graph reused kept block %#x", pf)
	}
	wantKept(t, ctx, 1, "during capture (the 1 from before)")
	if err := g.Close(); err != nil {
		t.Error(err)
	}
	wantKept(t, ctx, 1, "after a captured free")
	graph := try(s.EndCapture()).must(t)
	exec := try(graph.Instantiate()).must(t)
	for range 2 { // the graph allocates and frees its own block each run
		if err := exec.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	exec.Close()
	graph.Close()
	wantKept(t, ctx, 0, "after Sync")
}

// TestGPUPoolReuseOutOfMemory fills the device with 1 GiB pool buffers
// on one stream, closes them (one is kept for reuse), and fills it again
// with slightly smaller buffers, which the kept block does not fit: the
// allocation that fails for lack of memory gives the kept block back and
// succeeds, so as many fit as before.
func TestGPUPoolReuseOutOfMemory(t *testing.T) {
	dev := requireGPU(t)
	ctx := dev.PrimaryContext()
	s := testStream(t, dev)
	mr := NewDeviceMemoryResource(dev)
	fill := func(size int) (bufs []*Buffer, oom error) {
		for range 1024 {
			b, err := mr.Allocate(size, s)
			if err != nil {
				return bufs, err
			}
			bufs = append(bufs, b)
		}
		return bufs, nil
	}
	closeAll := func(bufs []*Buffer) {
		for _, b := range bufs {
			if err := b.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	const chunk = 1 << 30
	first, oom := fill(chunk)
	closeAll(first)
	if !errors.Is(oom, driver.ErrorOutOfMemory) {
		t.Fatalf("filling the device: %v, want out of memory", oom)
	}
	if k := ctx.pool.len(); k != 1 {
		t.Fatalf("%d blocks kept, want 1 (the limit is 1 GiB)", k)
	}
	second, oom := fill(chunk - 2<<20)
	closeAll(second)
	if !errors.Is(oom, driver.ErrorOutOfMemory) {
		t.Fatalf("filling the device again: %v, want out of memory", oom)
	}
	t.Logf("1 GiB buffers: %d; 1 GiB - 2 MiB buffers: %d", len(first), len(second))
	if len(second) < len(first) {
		t.Errorf("only %d smaller buffers fit after %d: the kept block was not given back", len(second), len(first))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestLargePages(t *testing.T) {
	for size, want := range map[int]uint64{
		0: 0, 1: 1, 2<<20 - 1: 2<<20 - 1, 2 << 20: 2 << 20, 2<<20 + 1: 4 << 20,
		64<<20 + 8: 66 << 20, 1 << 30: 1 << 30,
	} {
		if got := largePages(size); got != want {
			t.Errorf("largePages(%d) = %d, want %d", size, got, want)
		}
	}
}

// TestGPUPoolLargePages: a block after an odd-sized large one starts as
// far past a 2 MiB page as that one did (the pool gives whole pages), and
// the Buffers keep the sizes asked for; in the device's pool and in an
// IPC pool.
func TestGPUPoolLargePages(t *testing.T) {
	dev := requireGPU(t)
	s := testStream(t, dev)
	ipc, err := NewIPCMemoryResource(dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ipc.Close()
	for name, mr := range map[string]MemoryResource{"device": NewDeviceMemoryResource(dev), "ipc": ipc} {
		t.Run(name, func(t *testing.T) { largePagesOf(t, mr, s) })
	}
}

func largePagesOf(t *testing.T, mr MemoryResource, s *Stream) {
	const odd = 64<<20 + 8 // an R2C output of 2^23+1 complex64
	a := try(mr.Allocate(odd, s)).must(t)
	defer a.Close()
	b := try(mr.Allocate(64<<20, s)).must(t)
	defer b.Close()
	if a.Size() != odd || b.Size() != 64<<20 {
		t.Errorf("sizes %d and %d, want %d and %d", a.Size(), b.Size(), odd, 64<<20)
	}
	const page = 2 << 20
	t.Logf("a at %#x, b at %#x", a.Ptr(), b.Ptr())
	if a.Ptr()%page != b.Ptr()%page {
		t.Errorf("b at %#x is %#x past a 2 MiB page, a at %#x %#x: the pool did not give a whole number of pages", b.Ptr(), b.Ptr()%page, a.Ptr(), a.Ptr()%page)
	}
}
