package fft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/internal/testing/ctwin"
	"github.com/cudago/cudago/pathfinder"
)

// The three FFT targets, each timed as bench/bench_cupy_fft.py
// times CuPy's (cupy.fft.fft, fft2 and rfft of arrays of uniform random
// values in [0, 1)): a plan from a Cache, as CuPy's comes from its plan
// cache, made and run once before the timer starts; then b.N transforms
// queued back to back on one stream, timed on the GPU between two events
// around the loop ("ms/transform"). testing.B's default benchtime makes
// the measured run about a second of transforms, which is what the CuPy
// script times per rep: sustained, not a burst. GB/s counts one read of
// the input and one write of the output, the least a transform moves.
//
// Each has sub-benchmarks:
//
//	cudago  Plan.Forward into an output Buffer made once
//	C       the C twin: a C loop calling cufftExecC2C (or R2C) on the same
//	        cuFFT plan, Buffers and stream (internal/testing/ctwin): whatever
//	        cudago adds on the GPU would show as a difference here
//	cupyplan the C twin on a second plan of the same transform, made as
//	        CuPy 14 makes its plans (cufftMakePlan1d in one dimension,
//	        cufftMakePlanMany with explicit embeds in two, where cudago
//	        calls cufftMakePlanMany64 with cuFFT's basic layout): whether
//	        the planning call changes the kernels
//	alloc   (2^24 C2C only) a new output Buffer per transform, from the
//	        stream's pool, closed after it: what cupy.fft.fft(x) does
//
// The parent benchmark logs, once, which libcufft the process loaded
// (pathfinder's choice: CUDAGO_CUFFT_PATH overrides it), its version and
// the plan's work area, so that a run can be set beside CuPy's.

// BenchmarkFFTC2C2e24 is one forward complex64 C2C transform of 2^24
// points, out of place (cupy.fft.fft(x) of a complex64 x).
func BenchmarkFFTC2C2e24(b *testing.B) { benchFFT(b, Desc{Shape: []int{1 << 24}}, true) }

// BenchmarkFFTC2C2D1024x16 is a batch of 16 forward complex64 2-D
// transforms of 1024×1024, out of place (cupy.fft.fft2(x) of a complex64 x
// of shape (16, 1024, 1024): one cuFFT plan of batch 16).
func BenchmarkFFTC2C2D1024x16(b *testing.B) {
	benchFFT(b, Desc{Shape: []int{1024, 1024}, Batch: 16}, false)
}

// BenchmarkFFTR2C2e24 is one forward R2C transform of 2^24 float32 values
// into 2^23+1 complex64 ones, out of place (cupy.fft.rfft(x) of a float32
// x).
func BenchmarkFFTR2C2e24(b *testing.B) { benchFFT(b, Desc{Shape: []int{1 << 24}, Type: R2C}, false) }

// BenchmarkFFTC2C2e24InPlace is the 2^24 C2C transform in place
// (cupy.fft.fft(x, overwrite_x=True)), on zeros: other data would
// overflow after a few transforms in place.
func BenchmarkFFTC2C2e24InPlace(b *testing.B) {
	dev, s, c := gpuCache(b)
	const n = 1 << 24
	p, err := c.Plan(Desc{Shape: []int{n}})
	must(b, err)
	in, err := dev.Allocate(n*8, s)
	must(b, err)
	defer in.Close()
	must(b, in.Memset32(0))
	run := func(m int) error {
		for range m {
			if err := p.Forward(in, in); err != nil {
				return err
			}
		}
		return nil
	}
	timeGPU(b, dev, s, p, run)
}

// benchData is the input of every benchmark: uniform values in [0, 1),
// as cupy.random.random gives the CuPy side, made once.
var benchData = sync.OnceValue(func() []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, 1<<25)
	for i := range v {
		v[i] = r.Float32()
	}
	return v
})

var logLibrary sync.Once

func benchFFT(b *testing.B, d Desc, alloc bool) {
	dev, s, c := gpuCache(b)
	p, err := c.Plan(d)
	must(b, err)
	ib, ob := p.Bytes()
	in, err := dev.Allocate(ib, s)
	must(b, err)
	defer in.Close()
	out, err := dev.Allocate(ob, s)
	must(b, err)
	defer out.Close()
	must(b, core.CopyToDevice(in, benchData()[:ib/4]))
	logLibrary.Do(func() { b.Log(cufftIdentity()) })
	b.Logf("%v: plan work area %d bytes; in at %#x, out at %#x (offsets in 2 MiB pages %#x, %#x)",
		&p.l, p.WorkSize(), in.Ptr(), out.Ptr(), in.Ptr()%(2<<20), out.Ptr()%(2<<20))

	b.Run("cudago", func(b *testing.B) {
		timeGPU(b, dev, s, p, func(m int) error {
			for range m {
				if err := p.Forward(in, out); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("C", func(b *testing.B) {
		ip, op := acquire(b, in), acquire(b, out)
		timeGPU(b, dev, s, p, func(m int) error {
			ctx, _, err := p.st.Begin()
			if err != nil {
				return err
			}
			defer p.st.End()
			return ctwin.FFTExec(ctx, p.st.Handle(), p.l.cufftType(), ip, op, cufft.Forward, m)
		})
	})
	b.Run("cupyplan", func(b *testing.B) {
		h := cupyPlan(b, dev, s, &p.l)
		ip, op := acquire(b, in), acquire(b, out)
		timeGPU(b, dev, s, p, func(m int) error {
			ctx, _, err := s.Acquire()
			if err != nil {
				return err
			}
			defer s.Release()
			return ctwin.FFTExec(ctx, h, p.l.cufftType(), ip, op, cufft.Forward, m)
		})
	})
	if !alloc {
		return
	}
	b.Run("alloc", func(b *testing.B) {
		timeGPU(b, dev, s, p, func(m int) error {
			for range m {
				o, err := dev.Allocate(ob, s)
				if err != nil {
					return err
				}
				if err := p.Forward(in, o); err != nil {
					o.Close()
					return err
				}
				if err := o.Close(); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// acquire returns buf's address for the C twins, held until b ends.
func acquire(b *testing.B, buf *core.Buffer) driver.Deviceptr {
	ptr, err := buf.Acquire()
	must(b, err)
	b.Cleanup(buf.Release)
	return ptr
}

// timeGPU runs run(1) to warm up, then times run(b.N) on the GPU with
// events on s around it, and reports the time per transform of p and the
// bandwidth of its least traffic.
func timeGPU(b *testing.B, dev *core.Device, s *core.Stream, p *Plan, run func(m int) error) {
	start, err := dev.NewEvent(&core.EventOptions{Timing: true})
	must(b, err)
	defer start.Close()
	end, err := dev.NewEvent(&core.EventOptions{Timing: true})
	must(b, err)
	defer end.Close()
	must(b, run(1)) // kernels loaded, pool grown
	must(b, s.Sync())

	b.ResetTimer()
	must(b, start.Record(s))
	must(b, run(b.N))
	must(b, end.Record(s))
	must(b, end.Sync())
	b.StopTimer()

	gpu, err := core.Elapsed(start, end)
	must(b, err)
	per := gpu.Seconds() / float64(b.N)
	in, out := p.Bytes()
	b.ReportMetric(per*1e3, "ms/transform")
	b.ReportMetric(float64(in+out)/per/1e9, "GB/s")
	if p.l.Type == C2C && p.l.batch == 1 && len(p.l.Shape) == 1 {
		n := float64(p.l.n)
		b.ReportMetric(5*n*math.Log2(n)/per/1e12, "TFLOP/s")
	}
}

// cufftIdentity says which libcufft this process loaded: the file
// pathfinder chose and where it found it, the file it resolves to, the
// version cuFFT reports, and the mappings of /proc/self/maps that name
// libcufft (which would show a second copy, loaded by something else).
func cufftIdentity() string {
	lib, err := pathfinder.Load(pathfinder.CuFFT)
	if err != nil {
		return fmt.Sprintf("libcufft: %v", err)
	}
	var v int32
	verr := cufft.GetVersion(&v)
	real, _ := filepath.EvalSymlinks(lib.Path)
	var maps []string
	if m, err := os.ReadFile("/proc/self/maps"); err == nil {
		seen := map[string]bool{}
		for _, line := range strings.Split(string(m), "\n") {
			if f := strings.Fields(line); len(f) >= 6 && strings.Contains(f[5], "libcufft") && !seen[f[5]] {
				seen[f[5]] = true
				maps = append(maps, f[5])
			}
		}
	}
	return fmt.Sprintf("libcufft: %s (%s) = %s, cufftGetVersion %d (err %v), mapped: %s",
		lib.Path, lib.Found, real, v, verr, strings.Join(maps, ", "))
}

// cupyPlan makes a cuFFT plan of l as CuPy 14 makes its plans
// (cupy/cuda/cufft.pyx): automatic allocation off, cufftMakePlan1d for one
// dimension, cufftMakePlanMany with inembed and onembed equal to the
// shape for more (PlanNd), a work area of its own from the pool, bound to
// s. It calls the bindings, on a thread locked to s's context; the plan
// is destroyed when tb ends.
func cupyPlan(tb testing.TB, dev *core.Device, s *core.Stream, l *layout) cufft.Handle {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, hs, err := s.Acquire()
	must(tb, err)
	defer s.Release()
	must(tb, driver.CtxSetCurrent(ctx))
	var h cufft.Handle
	must(tb, cufft.Create(&h))
	tb.Cleanup(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := driver.CtxSetCurrent(ctx); err == nil {
			cufft.Destroy(h)
		}
	})
	must(tb, cufft.SetAutoAllocation(h, 0))
	var ws uint64
	if len(l.Shape) == 1 {
		ws, err = cufft.MakePlan1d(h, int32(l.Shape[0]), l.cufftType(), int32(l.batch))
	} else {
		n := make([]int32, len(l.Shape))
		for i, v := range l.Shape {
			n[i] = int32(v)
		}
		a := l.planArgs()
		ws, err = cufft.MakePlanMany(h, int32(len(n)), &n[0], &n[0], 1, int32(a.idist), &n[0], 1, int32(a.odist), l.cufftType(), int32(l.batch))
	}
	must(tb, err)
	work, err := dev.Allocate(max(int(ws), 256), s)
	must(tb, err)
	tb.Cleanup(func() { work.Close() })
	must(tb, cufft.SetWorkArea(h, libhandle.Ptr(work.Ptr())))
	must(tb, cufft.SetStream(h, hs))
	tb.Logf("%v, planned as CuPy plans: work area %d bytes", l, ws)
	return h
}

// BenchmarkFFTPlacement times the three transforms with their
// input and output at other places in memory: from the device's pool (as
// the other benchmarks), from cuMemAlloc (CuPy's pool grows by
// cudaMalloc), and from the pool at offsets of 4 KiB, 64 KiB and 1 MiB
// past a 2 MiB boundary, and with the output 0, 2, 4 and 8 MiB past the
// input's last 2 MiB page (gapNMiB); pool-defaultstream runs the pool's
// Buffers on the legacy default stream. A memory-bound transform whose time moves by a
// percent with the place says how far a comparison with another
// program's allocations can be trusted.
func BenchmarkFFTPlacement(b *testing.B) {
	for _, c := range []struct {
		name string
		d    Desc
	}{
		{"C2C2e24", Desc{Shape: []int{1 << 24}}},
		{"C2C2D1024x16", Desc{Shape: []int{1024, 1024}, Batch: 16}},
		{"R2C2e24", Desc{Shape: []int{1 << 24}, Type: R2C}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dev, s := gpuStream(b)
			fc, err := New(s, nil)
			must(b, err)
			defer fc.Close()
			p, err := fc.Plan(c.d)
			must(b, err)
			ib, ob := p.Bytes()
			legacy := core.NewLegacyMemoryResource(dev)
			for _, pl := range []struct {
				name string
				off  int
				mr   core.MemoryResource
			}{{"pool", 0, nil}, {"cuMemAlloc", 0, legacy}, {"pool+4KiB", 4 << 10, nil}, {"pool+64KiB", 64 << 10, nil}, {"pool+1MiB", 1 << 20, nil}} {
				place := func(n int) *core.Buffer {
					var buf *core.Buffer
					var err error
					if pl.mr != nil {
						buf, err = pl.mr.Allocate(n+pl.off, s)
					} else {
						buf, err = dev.Allocate(n+(2<<20)+pl.off, s)
					}
					must(b, err)
					b.Cleanup(func() { buf.Close() })
					skip := 0
					if pl.mr == nil { // to the next 2 MiB boundary, then off
						skip = int((2<<20-buf.Ptr()%(2<<20))%(2<<20)) + pl.off
					}
					v, err := buf.View(skip, n)
					must(b, err)
					return v
				}
				in, out := place(ib), place(ob)
				must(b, core.CopyToDevice(in, benchData()[:ib/4]))
				placed(b, dev, s, p, pl.name, in, out)
				if pl.name == "pool" {
					// The same Buffers through a plan on the legacy default
					// stream, where CuPy runs unless told otherwise.
					ds := dev.DefaultStream()
					dc, err := New(ds, nil)
					must(b, err)
					defer dc.Close()
					dp, err := dc.Plan(c.d)
					must(b, err)
					placed(b, dev, ds, dp, "pool-defaultstream", in, out)
				}
			}
			// Output at a set distance past the input, in one Buffer: the
			// input's size rounded up to 2 MiB pages, plus 0, 2, 4 or 8 MiB.
			const page = 2 << 20
			span := (ib + page - 1) / page * page
			all, err := dev.Allocate(span+8<<20+ob+page, s)
			must(b, err)
			b.Cleanup(func() { all.Close() })
			skip := int((page - all.Ptr()%page) % page)
			for _, gap := range []int{0, 2, 4, 8} {
				in, err := all.View(skip, ib)
				must(b, err)
				out, err := all.View(skip+span+gap*(1<<20), ob)
				must(b, err)
				must(b, core.CopyToDevice(in, benchData()[:ib/4]))
				placed(b, dev, s, p, fmt.Sprintf("gap%dMiB", gap), in, out)
			}
		})
	}
}

// placed times p from in to out, as BenchmarkFFTPlacement's sub-benchmark
// name.
func placed(b *testing.B, dev *core.Device, s *core.Stream, p *Plan, name string, in, out *core.Buffer) {
	b.Run(name, func(b *testing.B) {
		b.Logf("in at %#x, out at %#x", in.Ptr(), out.Ptr())
		timeGPU(b, dev, s, p, func(m int) error {
			for range m {
				if err := p.Forward(in, out); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// BenchmarkFFTPlacementRandom times R2C 2^24 with its work area, input and
// output in three of seven 2 MiB-aligned slots of one slab, chosen at
// random for each of eight trials: how far the places alone move the time
// of the same plan, to set beside a gap to another program, whose arrays
// sit elsewhere.
func BenchmarkFFTPlacementRandom(b *testing.B) {
	dev, s := gpuStream(b)
	p, err := NewPlan(s, Desc{Shape: []int{1 << 24}, Type: R2C})
	must(b, err)
	ib, ob := p.Bytes()
	const page = 2 << 20
	slot := (max(ib, ob, p.WorkSize()) + page - 1) / page * page
	slab, err := dev.Allocate(7*slot+page, s)
	must(b, err)
	b.Cleanup(func() { slab.Close() }) // after p.Close, below
	defer p.Close()
	base := int((page - slab.Ptr()%page) % page)
	at := func(i, n int) *core.Buffer {
		v, err := slab.View(base+i*slot, n)
		must(b, err)
		return v
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 8 {
		pick := r.Perm(7)
		work, in, out := at(pick[0], p.WorkSize()), at(pick[1], ib), at(pick[2], ob)
		ctx, _, err := p.st.Begin()
		must(b, err)
		err = cufftSetWorkArea(ctx, p.st.Handle(), libhandle.Ptr(work.Ptr()))
		p.st.End()
		must(b, err)
		must(b, core.CopyToDevice(in, benchData()[:ib/4]))
		placed(b, dev, s, p, fmt.Sprintf("work%d-in%d-out%d", pick[0], pick[1], pick[2]), in, out)
	}
}
