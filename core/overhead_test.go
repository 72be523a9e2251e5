package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/fakecuda"
)

// cudago's own cost on the hot paths (Launch, pool Allocate + Close),
// measured without a GPU: the driver entry points those paths call are
// replaced by C fakes (internal/testing/fakecuda) that return at once, so the
// benchmarks run the real code, cgo calls included, and what they time is
// core's Go side plus the C shims. BenchmarkOverheadLaunch and
// BenchmarkOverheadPool compare with the same C calls made once per
// operation from a Go loop (…PerCall).

// fakeDriver puts the fakes into core's C table for the test, and returns
// a primary context, its device, a stream and an ObjectCode, all fake
// (driver handles that only the fakes see).
type fakeEnv struct {
	dev    *Device
	ctx    *Context
	stream *Stream
	code   *ObjectCode
	mr     *fakeMR
}

const fakeCtx = 0xc7c7

func fakeDriver(tb testing.TB) *fakeEnv {
	tb.Helper()
	driverTable.Load() // before the fakes go in: a later Load would overwrite them
	for name, p := range fakecuda.Procs() {
		old, ok := driverTable.Replace(name, p)
		if !ok {
			tb.Fatalf("core's C table has no %s", name)
		}
		tb.Cleanup(func() { driverTable.Replace(name, old) })
	}
	d := &Device{}
	c := &Context{dev: d, primary: true}
	c.h.Store(fakeCtx)
	c.initStreams()
	d.primary = c
	return &fakeEnv{
		dev:    d,
		ctx:    c,
		stream: &Stream{handle: 0x5, ctx: c, owned: true},
		code:   newObjectCode(CodeCubin, []byte("\x7fELF"), "fake", nil, nil),
		mr:     &fakeMR{},
	}
}

// kernel returns a kernel of the fake code with the given parameter
// layout (offsets and sizes, as cuKernelGetParamInfo would give them).
func (e *fakeEnv) kernel(name string, params ...ArgumentInfo) *Kernel {
	k := newKernel(0xf00, name, e.code)
	lay := paramLayout{params: params}
	for _, p := range params {
		lay.size = max(lay.size, p.Offset+p.Size)
	}
	k.setLayout(lay)
	return k
}

// The benchmarks' kernels, as bench/bench.go's Source declares them.
var (
	fakeSaxpyParams  = []ArgumentInfo{{0, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 4}}
	fakeMixed8Params = []ArgumentInfo{{0, 8}, {8, 4}, {12, 4}, {16, 8}, {24, 8}, {32, 1}, {34, 2}, {40, 8}}
)

type launchCase struct {
	name string
	k    *Kernel
	cfg  LaunchConfig
	args []any
	want []byte // the packed arguments
}

func (e *fakeEnv) launchCases() []launchCase {
	x := NewBuffer(0x1000, 1024, e.mr, nil)
	y := NewBuffer(0x2000, 1024, e.mr, nil)
	out := NewBuffer(0x3000, 1024, e.mr, nil)
	le := binary.LittleEndian
	saxpy := make([]byte, 36)
	le.PutUint32(saxpy[0:], math.Float32bits(2))
	le.PutUint64(saxpy[8:], 0x1000)
	le.PutUint64(saxpy[16:], 0x2000)
	le.PutUint64(saxpy[24:], 0x3000)
	le.PutUint32(saxpy[32:], 256)
	mixed := make([]byte, 48)
	le.PutUint64(mixed[0:], 0x3000)
	le.PutUint32(mixed[8:], 1)
	le.PutUint32(mixed[12:], math.Float32bits(2))
	le.PutUint64(mixed[16:], math.Float64bits(3))
	le.PutUint64(mixed[24:], 4)
	mixed[32] = 5
	le.PutUint16(mixed[34:], 6)
	le.PutUint64(mixed[40:], 0x1000)
	one := LaunchConfig{Grid: Dim(1), Block: Dim(1)}
	return []launchCase{
		{"empty", e.kernel("noargs"), one, nil, nil},
		{"saxpy", e.kernel("saxpy", fakeSaxpyParams...), LaunchConfig{Grid: Dim(1), Block: Dim(256)},
			[]any{float32(2), x, y, out, int32(256)}, saxpy},
		{"mixed8", e.kernel("mixed", fakeMixed8Params...), one,
			[]any{out, int32(1), float32(2), float64(3), int64(4), uint8(5), int16(6), x}, mixed},
	}
}

// TestFakeDriverLaunch checks that Launch, run against the fakes, reaches
// the driver once per launch with the arguments packed as the kernel
// declares them, allocating nothing, and that the checks still come first.
func TestFakeDriverLaunch(t *testing.T) {
	e := fakeDriver(t)
	for _, c := range e.launchCases() {
		before := fakecuda.Calls().Launches
		for range 3 {
			if err := Launch(e.stream, c.cfg, c.k, c.args...); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if n := fakecuda.Calls().Launches - before; n != 3 {
			t.Errorf("%s: %d driver launches, want 3", c.name, n)
		}
		if got := fakecuda.LastArgs(); !bytes.Equal(got, c.want) {
			t.Errorf("%s: packed arguments\n%x, want\n%x", c.name, got, c.want)
		}
		if !raceEnabled {
			if a := testing.AllocsPerRun(100, func() { Launch(e.stream, c.cfg, c.k, c.args...) }); a != 0 {
				t.Errorf("%s: %v allocations per Launch", c.name, a)
			}
		}
		// The same launch with a bad shape, then a bad argument count,
		// fails before the driver and does not change the next launch.
		before = fakecuda.Calls().Launches
		bad := c.cfg
		bad.Block = Dim(2048)
		if err := Launch(e.stream, bad, c.k, c.args...); err == nil || !bytesContains(err.Error(), "more than 1024") {
			t.Errorf("%s with block 2048: %v", c.name, err)
		}
		if err := Launch(e.stream, c.cfg, c.k, append(c.args, 1)...); err == nil || !bytesContains(err.Error(), "arguments, got") {
			t.Errorf("%s with an argument too many: %v", c.name, err)
		}
		// A closed stream, or code, fails as such before a bad argument
		// is looked at, as when Launch held them before packing.
		closed := &Stream{handle: 0x6, ctx: e.ctx, owned: true}
		closed.life.close()
		if err := Launch(closed, c.cfg, c.k, append(c.args, 1)...); err != ErrClosed {
			t.Errorf("%s on a closed stream with an argument too many: %v, want ErrClosed", c.name, err)
		}
		if n := fakecuda.Calls().Launches - before; n != 0 {
			t.Errorf("%s: %d driver launches for refused launches", c.name, n)
		}
	}
	// Its ObjectCode closed, a kernel refuses to launch, whatever the
	// arguments; before, launches of it came through.
	k := e.launchCases()[1].k
	if err := e.code.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Launch(e.stream, LaunchConfig{Grid: Dim(1), Block: Dim(1)}, k); !errors.Is(err, ErrClosed) || !bytesContains(err.Error(), "its ObjectCode is closed") {
		t.Errorf("Launch of a kernel of closed code: %v", err)
	}
}

// TestLaunchConfigCommon checks the shortcut Launch takes past Validate:
// every shape it passes, Validate passes, and the usual shapes take it.
func TestLaunchConfigCommon(t *testing.T) {
	vals := []uint32{0, 1, 2, 3, 31, 32, 63, 64, 65, 255, 256, 1023, 1024, 1025, 65535, 65536, math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32}
	n := 0
	for _, gx := range vals {
		for _, gy := range vals {
			for _, bx := range vals {
				for _, by := range vals {
					for _, bz := range []uint32{0, 1, 2, 64, 65, 1024} {
						for _, cl := range []Dim3{{}, {1, 1, 1}, {2, 1, 1}} {
							c := LaunchConfig{Grid: Dim3{gx, gy, 1}, Block: Dim3{bx, by, bz}, Cluster: cl}
							if c.common() {
								n++
								if err := c.Validate(); err != nil {
									t.Fatalf("%+v passes the shortcut but Validate says %v", c, err)
								}
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no shape took the shortcut")
	}
	for _, c := range []LaunchConfig{
		{Grid: Dim(1), Block: Dim(1)},
		{Grid: Dim(4096), Block: Dim(256)},
		{Grid: Dim(1<<31 - 1), Block: Dim(1024)},
		{Grid: Dim(64, 64, 8), Block: Dim(16, 16, 4)},
		{Grid: Dim(65535, 65535, 65535), Block: Dim(8, 8, 16), SharedMemory: 48 << 10, Cooperative: true},
	} {
		if !c.common() {
			t.Errorf("%+v does not take the shortcut", c)
		}
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// TestFakeDriverPool checks that the pool path, run against the fakes,
// makes one driver allocation and one free per Allocate + Close without
// reuse, none with reuse after the first, and keeps its guards.
func TestFakeDriverPool(t *testing.T) {
	e := fakeDriver(t)
	for _, noReuse := range []bool{true, false} {
		r := &DeviceMemoryResource{dev: e.dev, NoReuse: noReuse}
		c0 := fakecuda.Calls()
		for range 10 {
			b, err := r.Allocate(1<<20, e.stream)
			if err != nil {
				t.Fatal(err)
			}
			if b.Ptr() == 0 || b.Size() != 1<<20 || b.Stream() != e.stream || b.MemoryResource() != r {
				t.Fatalf("buffer: %#x, %d bytes", b.Ptr(), b.Size())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if b.Ptr() != 0 || !errors.Is(b.Memset8(0), ErrClosed) {
				t.Fatal("a closed Buffer is still usable")
			}
			if err := b.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		}
		c1 := fakecuda.Calls()
		wantAllocs, wantFrees := int64(10), int64(10)
		if !noReuse {
			wantAllocs, wantFrees = 1, 0 // the rest is reused; the kept block is still kept
		}
		if c1.Allocs-c0.Allocs != wantAllocs || c1.Frees-c0.Frees != wantFrees {
			t.Errorf("NoReuse %v: %d allocations and %d frees reached the driver, want %d and %d",
				noReuse, c1.Allocs-c0.Allocs, c1.Frees-c0.Frees, wantAllocs, wantFrees)
		}
		e.ctx.flushReuse(fakeCtx, nil)
	}
}

// TestFakeDriverForgottenBuffer checks that a pool Buffer dropped without
// Close is freed (cuMemFreeAsync) once collected.
func TestFakeDriverForgottenBuffer(t *testing.T) {
	e := fakeDriver(t)
	r := &DeviceMemoryResource{dev: e.dev, NoReuse: true}
	f0 := fakecuda.Calls().Frees
	for range 10 {
		if _, err := r.Allocate(4096, e.stream); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for fakecuda.Calls().Frees-f0 < 10 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := fakecuda.Calls().Frees - f0; n != 10 {
		t.Errorf("%d of 10 forgotten Buffers freed", n)
	}
}

// TestFakeDriverDestroyForgotten checks the cleanup of a forgotten driver
// object: destroyed in its context, the error recorded for the next Sync.
func TestFakeDriverDestroyForgotten(t *testing.T) {
	e := fakeDriver(t)
	var got []uint64
	destroyForgotten(e.ctx, "CUDA array", driver.Array(0x7a), func(c driver.Context, a driver.Array) error {
		if c != fakeCtx {
			t.Errorf("destroyed in context %#x, want %#x", c, fakeCtx)
		}
		got = append(got, uint64(a))
		return errFake
	})
	destroyForgotten(e.ctx, "texture object", driver.TexObject(0x7b), func(_ driver.Context, x driver.TexObject) error {
		got = append(got, uint64(x))
		return nil
	})
	if !slices.Equal(got, []uint64{0x7a, 0x7b}) {
		t.Errorf("destroyed %#x, want [0x7a 0x7b]", got)
	}
	err := e.ctx.withRecorded(nil)
	if !errors.Is(err, errFake) || err.Error() != "core: destroying a forgotten CUDA array 0x7a: fake failure" {
		t.Errorf("recorded %v", err)
	}
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// loopCPU runs f b.N times (b.Loop) on one locked thread and reports that
// thread's CPU time per call as cpu-ns/op: on a shared machine it is
// steadier than the wall clock (it leaves out the time the thread waits
// for a core, and the GC work that other threads do).
func loopCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	t0, n := threadCPU(), 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
}

// objectRanges returns the memory of the objects (pointers to them, or
// slices: their arrays), for fakecuda.SetFlush.
func objectRanges(objs ...any) []fakecuda.Range {
	var out []fakecuda.Range
	for _, o := range objs {
		v := reflect.ValueOf(o)
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				out = append(out, fakecuda.Range{Start: v.Pointer(), End: v.Pointer() + v.Type().Elem().Size()})
			}
		case reflect.Slice:
			if v.Len() > 0 {
				out = append(out, fakecuda.Range{Start: v.Pointer(), End: v.Pointer() + uintptr(v.Len())*v.Type().Elem().Size()})
			}
		}
	}
	return out
}

// typeRanges returns the first 64 bytes of the type descriptor of each
// value (its size, hash and kind, which type switches read).
func typeRanges(vals []any) []fakecuda.Range {
	var out []fakecuda.Range
	for _, v := range vals {
		t := uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[0])
		out = append(out, fakecuda.Range{Start: t, End: t + 64})
	}
	return out
}

// temps runs f as the sub-benchmarks hot (the fakes return at once) and
// cold: before returning, the fakes evict from every cache level the
// objects that flush returns (fakecuda.SetFlush), as a real driver call
// evicts much of what its caller touched; the Go code then pays a cache
// miss for each of those lines it reads, and more for each it changes
// with an atomic add. A rough model: the misses cost DRAM latency here,
// and a line written since the last flush makes the flush itself (in the
// C side's time) dearer. Compare cold numbers of versions of the same
// code, not with the hot ones. Without x86 there is no cold variant.
func temps(b *testing.B, flush func() []fakecuda.Range, f func(b *testing.B)) {
	b.Run("hot", f)
	b.Run("cold", func(b *testing.B) {
		if !fakecuda.SetFlush(flush()) {
			b.Skip("no clflush here")
		}
		defer fakecuda.SetFlush(nil)
		f(b)
	})
}

// launchFlush is what a launch of c reads that belongs to cudago or the
// caller (not the stack): the stream, its context, the kernel, its code,
// parameter layout, the Buffers among the arguments, and the arguments'
// type descriptors.
func (e *fakeEnv) launchFlush(c launchCase) []fakecuda.Range {
	lay := c.k.layout()
	objs := []any{e.stream, e.ctx, c.k, e.code, lay, lay.params}
	for _, a := range c.args {
		if b, ok := a.(*Buffer); ok {
			objs = append(objs, b)
		}
	}
	return append(objectRanges(objs...), typeRanges(c.args)...)
}

// BenchmarkOverheadLaunch is Launch of the bench package's three cases
// (bench.go) through the fakes; BenchmarkOverheadLaunchPerCall is their C
// side alone, the same C work as one cgo call per launch from a Go loop
// (with the same evictions when cold). The difference is Launch's Go side.
func BenchmarkOverheadLaunch(b *testing.B) {
	e := fakeDriver(b)
	for _, c := range e.launchCases() {
		b.Run(c.name, func(b *testing.B) {
			temps(b, func() []fakecuda.Range { return e.launchFlush(c) }, func(b *testing.B) {
				loopCPU(b, func() {
					if err := Launch(e.stream, c.cfg, c.k, c.args...); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}

func BenchmarkOverheadLaunchPerCall(b *testing.B) {
	e := fakeDriver(b)
	for _, c := range e.launchCases() {
		b.Run(c.name, func(b *testing.B) {
			temps(b, func() []fakecuda.Range { return e.launchFlush(c) }, func(b *testing.B) {
				var buf [64]byte
				copy(buf[:], c.want)
				loopCPU(b, func() { fakecuda.Shim(fakeCtx, 0xf00, unsafe.Pointer(&buf[0]), len(c.want)) })
			})
		})
	}
}

// poolFlush is what a pool Allocate + Close reads of cudago's: the
// resource, its device, the stream, its context (with the kept blocks).
func (e *fakeEnv) poolFlush(r *DeviceMemoryResource) []fakecuda.Range {
	return objectRanges(r, e.dev, e.stream, e.ctx)
}

// BenchmarkOverheadPool is DeviceMemoryResource.Allocate + Buffer.Close of
// 1 MiB on a stream through the fakes: NoReuse (a driver allocation and
// free each time), and stream-ordered reuse (no driver call but the
// capture checks). BenchmarkOverheadPoolPerCall is NoReuse's C side alone:
// the same two C calls, one cgo call each, from a Go loop.
func BenchmarkOverheadPool(b *testing.B) {
	e := fakeDriver(b)
	for _, noReuse := range []bool{true, false} {
		name := "NoReuse"
		if !noReuse {
			name = "Reuse"
		}
		b.Run(name, func(b *testing.B) {
			r := &DeviceMemoryResource{dev: e.dev, NoReuse: noReuse}
			temps(b, func() []fakecuda.Range { return e.poolFlush(r) }, func(b *testing.B) {
				loopCPU(b, func() {
					buf, err := r.Allocate(1<<20, e.stream)
					if err != nil {
						b.Fatal(err)
					}
					if err := buf.Close(); err != nil {
						b.Fatal(err)
					}
				})
				e.ctx.flushReuse(fakeCtx, nil)
			})
		})
	}
}

func BenchmarkOverheadPoolPerCall(b *testing.B) {
	e := fakeDriver(b)
	r := &DeviceMemoryResource{dev: e.dev, NoReuse: true}
	temps(b, func() []fakecuda.Range { return e.poolFlush(r) }, func(b *testing.B) {
		loopCPU(b, func() {
			p := fakecuda.AllocCall(fakeCtx, 0x5, 1<<20)
			fakecuda.FreeCall(fakeCtx, 0x5, p)
		})
	})
}
