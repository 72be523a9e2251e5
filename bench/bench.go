// Package bench measures cudago against the CUDA driver API called from C
// in the same process: every case has a cudago side (package core, from
// Go) and a C twin (package cbase: the same work as one loop in C, through
// the driver entry points core resolves). The go test benchmarks of this
// package and the runner (bench/cmd/cudagobench, which prints one table)
// share the cases defined here.
package bench

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bench/cbase"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Source holds the benchmarks' kernels: kernels.cu, which
// bench_cuda_python.py compiles too, so that both sides launch the same code.
//
//go:embed kernels.cu
var Source string

// CopySize is the size of the copy cases.
const CopySize = 256 << 20

// SaxpyN is the element count of the saxpy launches (one block).
const SaxpyN = 256

// Suite is what the cases share: device 0, a stream, the kernels and
// buffers.
type Suite struct {
	Dev    *core.Device
	Ctx    driver.Context
	Stream *core.Stream
	// NB is a non-blocking stream (cuda.core's default), for the sync
	// round trips: a blocking stream's launch also orders against the
	// legacy default stream, which cuda.core's figures never pay.
	NB                   *core.Stream
	Empty, Saxpy, Mixed  *core.Kernel
	X, Y, Out            *core.Buffer
	code                 *core.ObjectCode
	graph                *core.Graph
	exec                 *core.GraphExec
	dev, pinned          *core.Buffer // CopySize each, made on first use
	pageable             []byte       // Go memory, CopySize
	cPageable            unsafe.Pointer
	legacy               *core.LegacyMemoryResource
	pool, poolNoReuse    *core.DeviceMemoryResource
	prepared             [3]*core.PreparedLaunch // empty, saxpy, mixed8
	CompileTime, LoadDur time.Duration
}

// NewSuite compiles the kernels for device 0 and allocates the small
// buffers.
func NewSuite() (*Suite, error) {
	dev, err := core.GetDevice(0)
	if err != nil {
		return nil, err
	}
	s := &Suite{Dev: dev}
	if s.Ctx, err = dev.PrimaryContext().Handle(); err != nil {
		return nil, err
	}
	if s.Stream, err = dev.NewStream(nil); err != nil {
		return nil, err
	}
	if s.NB, err = dev.NewStream(&core.StreamOptions{NonBlocking: true}); err != nil {
		return nil, err
	}
	t0 := time.Now()
	p, err := core.NewProgram(Source, "c++", &core.ProgramOptions{Name: "bench", Arch: "sm_" + dev.Arch()})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if s.code, err = p.Compile(core.CodeCubin); err != nil {
		return nil, err
	}
	s.CompileTime = time.Since(t0)
	for name, k := range map[string]**core.Kernel{"noargs": &s.Empty, "saxpy": &s.Saxpy, "mixed": &s.Mixed} {
		if *k, err = s.code.Kernel(name); err != nil {
			return nil, err
		}
	}
	for _, b := range []**core.Buffer{&s.X, &s.Y, &s.Out} {
		if *b, err = dev.Allocate(SaxpyN*4, s.Stream); err != nil {
			return nil, err
		}
		if err := (*b).Memset32(0x3f800000); err != nil { // 1.0f
			return nil, err
		}
	}
	s.legacy = core.NewLegacyMemoryResource(dev)
	s.pool = core.NewDeviceMemoryResource(dev)
	s.poolNoReuse = core.NewDeviceMemoryResource(dev)
	s.poolNoReuse.NoReuse = true
	return s, nil
}

// Close releases what the suite holds.
func (s *Suite) Close() {
	if s == nil {
		return
	}
	s.Stream.Sync()
	if s.NB != nil {
		s.NB.Sync()
	}
	for _, p := range s.prepared {
		if p != nil {
			p.Close()
		}
	}
	for _, b := range []*core.Buffer{s.X, s.Y, s.Out, s.dev, s.pinned} {
		if b != nil {
			b.Close()
		}
	}
	if s.exec != nil {
		s.exec.Close()
		s.graph.Close()
	}
	if s.cPageable != nil {
		cbase.Free(s.cPageable)
	}
	s.Stream.Close()
	if s.NB != nil {
		s.NB.Close()
	}
	s.code.Close()
}

// LaunchChunk is the number of async launches timed between two untimed
// stream drains (Case.Chunk).
const LaunchChunk = 500

var one = core.LaunchConfig{Grid: core.Dim(1), Block: core.Dim(1)}
var saxpyCfg = core.LaunchConfig{Grid: core.Dim(1), Block: core.Dim(SaxpyN)}

// Case is one measurement: the cudago side and its C twin.
type Case struct {
	Name  string // BenchmarkName without "Benchmark"
	What  string
	Iters int // iterations per timed repetition (runner)
	// PerOp divides the time of one iteration (Graph100: per kernel).
	PerOp int
	// Bytes is what one iteration moves (copies: the table shows GB/s).
	Bytes int64
	// Target is the ratio the issue asks for: cudago time / C time at
	// most Target (MinSpeedup == 0), or C time / cudago time at least
	// MinSpeedup (copies).
	Target, MinSpeedup float64
	// Baseline names the C twin when it is not the same operation.
	Baseline string
	// CheckAllocs reports allocations per iteration of the cudago side.
	CheckAllocs bool
	// OffChart leaves the case out of cudagobench's chart, where its scale
	// would flatten the others; the table keeps it.
	OffChart bool
	// Chunk, for async launches, times Chunk iterations at a time and
	// drains the stream (Drain) between chunks, untimed, on both sides:
	// what is measured is the CPU cost of a launch, as the table
	// asks, not the rate at which the GPU empties a full launch queue
	// (which made the ratio swing by ±10% from run to run).
	Chunk int
	Drain func() error

	Setup func() error
	Go    func(n int) error
	// GoTimer, when set, is what the runner and the benchmarks time of
	// the cudago side, for cases with untimed work in every iteration (a
	// fresh slice to make): it runs n iterations and times only what it
	// brackets with t.StartTimer and t.StopTimer. Go then runs it with a
	// Stopwatch nobody reads.
	GoTimer func(n int, t Timer) error
	C       func(n int) (time.Duration, error)
}

// Timer is what GoTimer brackets its timed parts with: a *testing.B or a
// *Stopwatch.
type Timer interface {
	StartTimer()
	StopTimer()
}

// Stopwatch sums the time between StartTimer and StopTimer.
type Stopwatch struct {
	Elapsed time.Duration
	t0      time.Time
}

func (w *Stopwatch) StartTimer() { w.t0 = time.Now() }
func (w *Stopwatch) StopTimer()  { w.Elapsed += time.Since(w.t0) }

// Cases returns the cases, in table order.
func (s *Suite) Cases() []*Case {
	st := s.Stream
	sh := st.Handle()
	return []*Case{
		{
			Name: "LaunchEmpty", What: "launch of an empty kernel, no args, async", Iters: 20000, Target: 1.03, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Go: func(n int) error {
				for range n {
					if err := core.Launch(st, one, s.Empty); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) { return cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), sh, n, false) },
		},
		{
			Name: "LaunchSaxpy", What: "launch of saxpy (5 args), async", Iters: 20000, Target: 1.03, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Go: func(n int) error {
				for range n {
					if err := core.Launch(st, saxpyCfg, s.Saxpy, float32(2), s.X, s.Y, s.Out, int32(SaxpyN)); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchSaxpy(s.Ctx, s.Saxpy.Handle(), sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n)
			},
		},
		{
			Name: "LaunchMixed8", What: "launch with 8 mixed-type args, async", Iters: 20000, Target: 1.03, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Go: func(n int) error {
				for range n {
					if err := core.Launch(st, one, s.Mixed, s.Out, int32(1), float32(2), float64(3), int64(4), uint8(5), int16(6), s.X); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchMixed8(s.Ctx, s.Mixed.Handle(), sh, s.Out.Ptr(), 1, 2, 3, 4, 5, 6, s.X.Ptr(), n)
			},
		},
		{
			Name: "LaunchPreparedEmpty", What: "PreparedLaunch.Launch of an empty kernel, async", Iters: 20000, Target: 1.06, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Setup: s.setupPrepared,
			Go:    func(n int) error { return launchN(s.prepared[0], st, n) },
			C:     func(n int) (time.Duration, error) { return cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), sh, n, false) },
		},
		{
			Name: "LaunchPreparedSaxpy", What: "PreparedLaunch.Launch of saxpy (5 args), async", Iters: 20000, Target: 1.06, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Setup: s.setupPrepared,
			Go:    func(n int) error { return launchN(s.prepared[1], st, n) },
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchSaxpy(s.Ctx, s.Saxpy.Handle(), sh, 2, s.X.Ptr(), s.Y.Ptr(), s.Out.Ptr(), SaxpyN, n)
			},
		},
		{
			Name: "LaunchPreparedMixed8", What: "PreparedLaunch.Launch with 8 mixed-type args, async", Iters: 20000, Target: 1.06, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Setup: s.setupPrepared,
			Go:    func(n int) error { return launchN(s.prepared[2], st, n) },
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchMixed8(s.Ctx, s.Mixed.Handle(), sh, s.Out.Ptr(), 1, 2, 3, 4, 5, 6, s.X.Ptr(), n)
			},
		},
		{
			Name: "LaunchPreparedSync", What: "PreparedLaunch.Launch + stream sync round trip, non-blocking stream", Iters: 5000, Target: 1.02, CheckAllocs: true,
			Setup: s.setupPrepared,
			Go: func(n int) error {
				for range n {
					if err := s.prepared[0].Launch(s.NB); err != nil {
						return err
					}
					if err := s.NB.Sync(); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), s.NB.Handle(), n, true)
			},
		},
		{
			Name: "LaunchSync", What: "launch + stream sync round trip", Iters: 5000, Target: 1.03, CheckAllocs: true,
			Go: func(n int) error { return launchSync(st, s.Empty, n) },
			C:  func(n int) (time.Duration, error) { return cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), sh, n, true) },
		},
		{
			Name: "LaunchSyncNB", What: "launch + stream sync round trip, non-blocking stream (cuda.core's default)", Iters: 5000, Target: 1.02, CheckAllocs: true,
			Go: func(n int) error { return launchSync(s.NB, s.Empty, n) },
			C: func(n int) (time.Duration, error) {
				return cbase.LaunchEmpty(s.Ctx, s.Empty.Handle(), s.NB.Handle(), n, true)
			},
		},
		{
			Name: "MemAllocFree", What: "cuMemAlloc + cuMemFree, 1 MiB (LegacyMemoryResource)", Iters: 500, Target: 1.1, CheckAllocs: true, OffChart: true,
			Go: func(n int) error {
				for range n {
					b, err := s.legacy.Allocate(1<<20, nil)
					if err != nil {
						return err
					}
					if err := b.Close(); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) { return cbase.MemAllocFree(s.Ctx, 1<<20, n) },
		},
		{
			Name: "MemPool", What: "DeviceMemoryResource.Allocate + Buffer.Close, 1 MiB, same stream (stream-ordered reuse) vs cuMemAllocAsync + cuMemFreeAsync", Iters: 20000, Target: 1.1, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Go: func(n int) error { return poolLoop(s.pool, st, n) },
			C:  func(n int) (time.Duration, error) { return cbase.MemPool(s.Ctx, sh, 1<<20, n) },
		},
		{
			Name: "MemPoolNoReuse", What: "the same with NoReuse: cuMemAllocAsync + cuMemFreeAsync through core", Iters: 20000, Target: 1.1, CheckAllocs: true, Chunk: LaunchChunk, Drain: st.Sync,
			Go: func(n int) error { return poolLoop(s.poolNoReuse, st, n) },
			C:  func(n int) (time.Duration, error) { return cbase.MemPool(s.Ctx, sh, 1<<20, n) },
		},
		{
			Name: "Graph100", What: "replay of a captured 100-kernel graph + sync, per kernel", Iters: 300, PerOp: 100, Target: 1.05, CheckAllocs: true,
			Setup: s.setupGraph,
			Go: func(n int) error {
				for range n {
					if err := s.exec.Launch(st); err != nil {
						return err
					}
					if err := st.Sync(); err != nil {
						return err
					}
				}
				return nil
			},
			C: func(n int) (time.Duration, error) { return cbase.GraphLaunch(s.Ctx, s.exec.Handle(), sh, n) },
		},
		{
			Name: "CopyH2DPinned_256MiB", What: "CopyToDevice from pinned memory vs cuMemcpyHtoD", Iters: 8, Bytes: CopySize, MinSpeedup: 0.97,
			Setup: s.setupCopies,
			Go:    func(n int) error { return repeat(n, func() error { return core.CopyToDevice(s.dev, s.pinnedBytes()) }) },
			C: func(n int) (time.Duration, error) {
				return cbase.MemcpyHtoD(s.Ctx, s.dev.Ptr(), unsafe.Pointer(&s.pinnedBytes()[0]), CopySize, n)
			},
		},
		{
			Name: "CopyH2DPageable_256MiB", What: "CopyToDevice from a Go slice vs cuMemcpyHtoD from malloc", Iters: 4, Bytes: CopySize, MinSpeedup: 3,
			Baseline: "pageable cuMemcpyHtoD",
			Setup:    s.setupCopies,
			Go:       func(n int) error { return repeat(n, func() error { return core.CopyToDevice(s.dev, s.pageable) }) },
			C: func(n int) (time.Duration, error) {
				return cbase.MemcpyHtoD(s.Ctx, s.dev.Ptr(), s.cPageable, CopySize, n)
			},
		},
		{
			Name: "CopyD2HPinned_256MiB", What: "CopyFromDevice to pinned memory vs cuMemcpyDtoH", Iters: 8, Bytes: CopySize, MinSpeedup: 0.97,
			Setup: s.setupCopies,
			Go: func(n int) error {
				return repeat(n, func() error { return core.CopyFromDevice(s.pinnedBytes(), s.dev) })
			},
			C: func(n int) (time.Duration, error) {
				return cbase.MemcpyDtoH(s.Ctx, unsafe.Pointer(&s.pinnedBytes()[0]), s.dev.Ptr(), CopySize, n)
			},
		},
		{
			Name: "CopyD2HPageable_256MiB", What: "CopyFromDevice to a Go slice vs cuMemcpyDtoH to malloc", Iters: 4, Bytes: CopySize, MinSpeedup: 3,
			Baseline: "pageable cuMemcpyDtoH",
			Setup:    s.setupCopies,
			Go:       func(n int) error { return repeat(n, func() error { return core.CopyFromDevice(s.pageable, s.dev) }) },
			C: func(n int) (time.Duration, error) {
				return cbase.MemcpyDtoH(s.Ctx, s.cPageable, s.dev.Ptr(), CopySize, n)
			},
		},
		s.freshCase(CopySize, 4, 3),
		// The smallest copy staged (stagingMin in core): no slower than
		// the driver.
		s.freshCase(16<<20, 16, 1),
	}
}

// freshCase copies size bytes into a slice made fresh for every
// iteration (out := make([]float32, n); core.CopyFromDevice(out, buf)),
// against cuMemcpyDtoH into freshly mapped memory. The make is untimed,
// and first the heap's free memory goes back to the OS
// (debug.FreeOSMemory, untimed): else Go would hand back the previous
// iteration's memory, zeroing it in make, which touches every page.
func (s *Suite) freshCase(size, iters int, minSpeedup float64) *Case {
	fresh := func(n int, t Timer) error {
		// The other copy cases leave their own bytes in s.dev and the
		// pinned buffer: put back setupCopies' pattern, which the check
		// below reads.
		pb := s.pinnedBytes()
		for i := range pb {
			pb[i] = byte(i)
		}
		if err := core.CopyToDevice(s.dev, pb); err != nil {
			return err
		}
		for range n {
			var out []float32
			var b []byte
			for try := 0; ; try++ {
				debug.FreeOSMemory()
				out = make([]float32, size/4)
				b = unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), size)
				if untouched(b) {
					break
				}
				if try == 2 { // Go zeroed memory freed since, three times
					return errors.New("bench: the Go heap handed back touched memory for the fresh slice")
				}
			}
			t.StartTimer()
			err := core.CopyFromDevice(out, s.dev)
			t.StopTimer()
			if err != nil {
				return err
			}
			for _, i := range []int{0, 1, size/2 + 3, size - 1} { // setupCopies' pattern
				if b[i] != byte(i) {
					return fmt.Errorf("bench: fresh copy: byte %d is %d, want %d", i, b[i], byte(i))
				}
			}
		}
		return nil
	}
	return &Case{
		Name: fmt.Sprintf("CopyD2HFresh_%dMiB", size>>20), Iters: iters, Bytes: int64(size), MinSpeedup: minSpeedup,
		What:     "CopyFromDevice to a fresh (untouched) Go slice vs cuMemcpyDtoH to fresh mmap'd memory",
		Baseline: "pageable cuMemcpyDtoH, fresh",
		Setup:    s.setupCopies,
		GoTimer:  fresh,
		Go:       func(n int) error { return fresh(n, new(Stopwatch)) },
		C: func(n int) (time.Duration, error) {
			return cbase.MemcpyDtoHFresh(s.Ctx, s.dev.Ptr(), size, n)
		},
	}
}

// untouched reports whether the first and last pages of b are absent
// (mincore), as those of memory no one has touched are.
func untouched(b []byte) bool {
	ps := uintptr(os.Getpagesize())
	for _, p := range []uintptr{uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))} {
		var vec [1]byte
		_, _, e := syscall.Syscall(syscall.SYS_MINCORE, p&^(ps-1), ps, uintptr(unsafe.Pointer(&vec[0])))
		if e != 0 || vec[0]&1 != 0 {
			return false
		}
	}
	return true
}

// launchSync launches k (one thread) on st and waits for it, n times: the
// sync round trip cases, on either stream.
func launchSync(st *core.Stream, k *core.Kernel, n int) error {
	for range n {
		if err := core.Launch(st, one, k); err != nil {
			return err
		}
		if err := st.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// poolLoop allocates and closes n buffers of 1 MiB from mr on st.
func poolLoop(mr *core.DeviceMemoryResource, st *core.Stream, n int) error {
	for range n {
		b, err := mr.Allocate(1<<20, st)
		if err != nil {
			return err
		}
		if err := b.Close(); err != nil {
			return err
		}
	}
	return nil
}

func repeat(n int, f func() error) error {
	for range n {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Suite) pinnedBytes() []byte {
	b, _ := s.pinned.Bytes()
	return b
}

// setupGraph captures 100 empty-kernel launches and instantiates them.
func (s *Suite) setupGraph() error {
	if s.exec != nil {
		return nil
	}
	st := s.Stream
	if err := st.BeginCapture(core.CaptureRelaxed); err != nil {
		return err
	}
	for range 100 {
		if err := core.Launch(st, one, s.Empty); err != nil {
			st.EndCapture()
			return err
		}
	}
	g, err := st.EndCapture()
	if err != nil {
		return err
	}
	e, err := g.Instantiate()
	if err != nil {
		g.Close()
		return err
	}
	s.graph, s.exec = g, e
	return e.Upload(st)
}

// setupCopies allocates the copy buffers once: device, pinned, Go and C
// pageable memory, all touched.
func (s *Suite) setupCopies() error {
	if s.dev != nil {
		return nil
	}
	var err error
	if s.dev, err = s.Dev.Allocate(CopySize, nil); err != nil {
		return err
	}
	if s.pinned, err = core.NewPinnedMemoryResource(s.Dev).Allocate(CopySize, nil); err != nil {
		return err
	}
	b := s.pinnedBytes()
	for i := range b {
		b[i] = byte(i)
	}
	s.pageable = make([]byte, CopySize)
	for i := range s.pageable {
		s.pageable[i] = byte(i * 7)
	}
	if s.cPageable = cbase.Malloc(CopySize); s.cPageable == nil {
		return errors.New("bench: malloc failed")
	}
	return core.CopyToDevice(s.dev, b)
}

// Validate runs every case's both sides a few times and checks results
// that can be checked (saxpy's output).
func (s *Suite) Validate() error {
	for _, c := range s.Cases() {
		if c.Setup != nil {
			if err := c.Setup(); err != nil {
				return fmt.Errorf("%s: setup: %w", c.Name, err)
			}
		}
		if err := c.Go(2); err != nil {
			return fmt.Errorf("%s (cudago): %w", c.Name, err)
		}
		if _, err := c.C(2); err != nil {
			return fmt.Errorf("%s (C): %w", c.Name, err)
		}
	}
	out := make([]float32, SaxpyN)
	if err := core.Launch(s.Stream, saxpyCfg, s.Saxpy, float32(2), s.X, s.Y, s.Out, int32(SaxpyN)); err != nil {
		return err
	}
	if err := s.Stream.Sync(); err != nil {
		return err
	}
	if err := core.CopyFromDevice(out, s.Out); err != nil {
		return err
	}
	for i, v := range out {
		if v != 3 {
			return fmt.Errorf("saxpy: out[%d] = %v, want 3", i, v)
		}
	}
	return nil
}

// setupPrepared prepares the three launch cases' launches, once.
func (s *Suite) setupPrepared() error {
	if s.prepared[0] != nil {
		return nil
	}
	var err error
	if s.prepared[0], err = s.Empty.Prepare(one); err != nil {
		return err
	}
	if s.prepared[1], err = s.Saxpy.Prepare(saxpyCfg, float32(2), s.X, s.Y, s.Out, int32(SaxpyN)); err != nil {
		return err
	}
	s.prepared[2], err = s.Mixed.Prepare(one, s.Out, int32(1), float32(2), float64(3), int64(4), uint8(5), int16(6), s.X)
	return err
}

func launchN(p *core.PreparedLaunch, st *core.Stream, n int) error {
	for range n {
		if err := p.Launch(st); err != nil {
			return err
		}
	}
	return nil
}
