package fft

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Plan is a cuFFT plan for one Desc, bound to one Stream: every transform
// it runs is queued on that stream, in its context. It owns its work area,
// a Buffer allocated on that stream. A Plan is safe for concurrent use by
// several goroutines; their transforms are serialized (cuFFT allows no
// concurrent calls on one plan, and one work area serves one transform at a
// time).
//
// Close destroys a plan from NewPlan; a forgotten one is destroyed by a
// cleanup when it is collected. A plan from a Cache belongs to the Cache,
// which closes it.
type Plan struct {
	l      layout
	stream *core.Stream
	dev    *core.Device
	h      cufft.Handle
	work   *core.Buffer // nil when cuFFT needs no work area

	mu      sync.Mutex // held around every call that uses h
	closed  bool
	cached  bool // owned by a Cache: Close does nothing
	cleanup runtime.Cleanup
}

// NewPlan makes a plan for d on stream s. Making a plan costs far more
// than running it (cuFFT chooses its kernels and may load them), so make
// it once and reuse it, or let a Cache do that.
func NewPlan(s *core.Stream, d Desc) (*Plan, error) {
	if s == nil {
		return nil, errors.New("fft: NewPlan: nil *core.Stream")
	}
	l, err := d.check()
	if err != nil {
		return nil, err
	}
	return newPlan(s, l, false)
}

// newPlan makes the plan; cached marks it as a Cache's before anyone
// else sees it.
func newPlan(s *core.Stream, l layout, cached bool) (*Plan, error) {
	ctx, sh, err := s.Acquire()
	if err != nil {
		return nil, err
	}
	defer s.Release()
	var h cufft.Handle
	if err := cufftCreate(ctx, &h); err != nil {
		return nil, err
	}
	p := &Plan{l: l, stream: s, dev: s.Device(), h: h, cached: cached}
	if err := p.setup(ctx, sh); err != nil {
		// err stays the library's own error unless cleaning up fails too.
		if derr := cufftDestroy(ctx, h); derr != nil {
			err = errors.Join(err, derr)
		}
		if p.work != nil {
			if cerr := p.work.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		return nil, err
	}
	p.cleanup = runtime.AddCleanup(p, destroyPlan, planRef{p.h, s, p.work})
	return p, nil
}

// setup makes the cuFFT plan with a work area of ours and binds it to the
// stream. The work area is a Buffer from the stream's device, allocated on
// the plan's stream (stream-ordered, from the pool, as CuPy takes it from
// its pool), rather than cuFFT's own cudaMalloc: its memory is the
// program's to account and reuse, and it is freed in stream order when the
// plan closes.
func (p *Plan) setup(ctx driver.Context, sh driver.Stream) error {
	// Off before the plan is made, so that cuFFT allocates nothing itself.
	if err := cufftSetAutoAllocation(ctx, p.h, 0); err != nil {
		return err
	}
	a := p.l.planArgs()
	ws, err := cufftMakePlanMany64(ctx, p.h, int32(len(a.n)), &a.n[0], first(a.inembed), 1, a.idist,
		first(a.onembed), 1, a.odist, p.l.cufftType(), int64(p.l.batch))
	if err != nil {
		return err
	}
	if ws > 0 {
		if ws > maxBytes {
			return fmt.Errorf("fft: cuFFT asks for a work area of %d bytes", ws)
		}
		if p.work, err = allocWork(p.stream, int(ws)); err != nil {
			return fmt.Errorf("fft: allocating the plan's work area (%d bytes): %w", ws, err)
		}
		if err := cufftSetWorkArea(ctx, p.h, rawPtr(p.work.Ptr())); err != nil {
			return err
		}
	}
	return cufftSetStream(ctx, p.h, sh)
}

// allocWork allocates n bytes of device memory on s, from the device's
// memory resource unless that is not plain device memory (pinned or
// managed memory would slow every transform down).
func allocWork(s *core.Stream, n int) (*core.Buffer, error) {
	dev := s.Device()
	mr := dev.MemoryResource()
	if mr == nil || !mr.DeviceAccessible() || mr.HostAccessible() {
		mr = core.NewDeviceMemoryResource(dev)
	}
	return mr.Allocate(n, s)
}

func first(s []int64) *int64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// planRef is what destroying a plan needs, without the Plan itself (a
// cleanup must not keep its object reachable).
type planRef struct {
	h      cufft.Handle
	stream *core.Stream
	work   *core.Buffer
}

// destroyPlan is the cleanup of a forgotten Plan. Nothing can receive its
// error; the plan is unreachable, so nothing else uses it.
func destroyPlan(r planRef) { _ = r.destroy() }

// destroy destroys the cuFFT plan in its context, then frees the work
// area in the stream's order, after the transforms queued there.
func (r planRef) destroy() error {
	var err error
	if ctx, _, aerr := r.stream.Acquire(); aerr == nil {
		err = cufftDestroy(ctx, r.h)
		r.stream.Release()
	} else if ctx, cerr := r.stream.Context().Handle(); cerr == nil {
		// The stream is closed but its context lives, and the plan in it.
		err = cufftDestroy(ctx, r.h)
	}
	// Otherwise the context is destroyed, and the plan's device memory
	// with it: cuFFT cannot be called in it any more.
	if r.work != nil {
		err = errors.Join(err, r.work.Close())
	}
	return err
}

// Close destroys a plan made by NewPlan and frees its work area, after the
// transforms already queued on its stream. Later transforms return
// core.ErrClosed; closing twice is not an error. On a plan from a Cache it
// does nothing: the Cache's Close closes it.
func (p *Plan) Close() error {
	if p == nil || p.cached {
		return nil
	}
	return p.close()
}

func (p *Plan) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.cleanup.Stop()
	return planRef{p.h, p.stream, p.work}.destroy()
}

// Desc returns the description the plan was made for (Batch at least 1,
// InPlace false for C2C).
func (p *Plan) Desc() Desc {
	d := p.l.Desc
	d.Shape = append([]int(nil), d.Shape...)
	d.Batch = p.l.batch
	return d
}

// Bytes returns the sizes, in bytes, that the input and output Buffers of
// the plan's transforms need (both the one Buffer's size in place).
func (p *Plan) Bytes() (in, out int) { return p.l.inBytes, p.l.outBytes }

// WorkSize returns the size in bytes of the plan's work area.
func (p *Plan) WorkSize() int {
	if p.work == nil {
		return 0
	}
	return p.work.Size()
}

// Stream returns the stream the plan runs on.
func (p *Plan) Stream() *core.Stream { return p.stream }

// Forward queues the forward transform (exponent sign -1) of in into out
// on the plan's stream: C2C or R2C. For an out-of-place plan, in and out
// must not overlap; for an in-place R2C plan (Desc.InPlace) they are the
// same memory; a C2C plan accepts both. Sizes, alignment and placement
// are checked before anything is queued. Like cuFFT, the transform is
// unnormalized.
func (p *Plan) Forward(in, out *core.Buffer) error {
	return p.exec("Forward", cufft.Forward, in, out, nil)
}

// Inverse queues the inverse transform (exponent sign +1) of in into out
// on the plan's stream: C2C or C2R. It is unnormalized, as cuFFT's (and
// FFTW's) is: Inverse of Forward of x is N·x, where N is the product of
// Shape; InverseNormalized divides by N. A C2R transform may overwrite its
// input, even out of place (cuFFT documents this for its C2R transforms),
// and reads a Hermitian half spectrum: the imaginary parts that Hermitian
// symmetry makes zero (of the zero and, for even sizes, the Nyquist
// frequency) are ignored.
func (p *Plan) Inverse(in, out *core.Buffer) error {
	return p.exec("Inverse", cufft.Inverse, in, out, nil)
}

// InverseNormalized is Inverse followed by a division of out by N, the
// product of Shape, so that it undoes Forward (numpy's and CuPy's default
// "backward" normalization). The division is one more pass over out, by a
// small kernel that NVRTC compiles on first use (once per GPU
// architecture in the process, cached on disk by core); it is queued on
// the plan's stream after the transform.
func (p *Plan) InverseNormalized(in, out *core.Buffer) error {
	if p == nil {
		return errors.New("fft: Plan.InverseNormalized: nil *Plan")
	}
	if err := p.checkDirection("InverseNormalized", cufft.Inverse); err != nil {
		return err
	}
	k, err := scaleKernel(p.dev, p.l.Precision)
	if err != nil {
		return err
	}
	return p.exec("InverseNormalized", cufft.Inverse, in, out, k)
}

func (p *Plan) checkDirection(op string, dir int32) error {
	switch {
	case dir == cufft.Forward && p.l.Type == C2R:
		return fmt.Errorf("fft: Plan.%s: a C2R plan only runs the inverse transform", op)
	case dir == cufft.Inverse && p.l.Type == R2C:
		return fmt.Errorf("fft: Plan.%s: an R2C plan only runs the forward transform", op)
	}
	return nil
}

// exec checks the Buffers against the plan and queues the transform, then
// the normalization when scale is not nil.
func (p *Plan) exec(op string, dir int32, in, out *core.Buffer, scale *core.Kernel) error {
	if p == nil {
		return fmt.Errorf("fft: Plan.%s: nil *Plan", op)
	}
	if in == nil || out == nil {
		return fmt.Errorf("fft: Plan.%s: nil input or output *core.Buffer", op)
	}
	if err := p.checkDirection(op, dir); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return core.ErrClosed
	}
	ip, err := in.Acquire()
	if err != nil {
		return fmt.Errorf("fft: Plan.%s: input: %w", op, err)
	}
	defer in.Release()
	opp, err := out.Acquire()
	if err != nil {
		return fmt.Errorf("fft: Plan.%s: output: %w", op, err)
	}
	defer out.Release()
	if err := p.checkBuffers(op, in, ip, out, opp); err != nil {
		return err
	}
	ctx, _, err := p.stream.Acquire()
	if err != nil {
		return fmt.Errorf("fft: Plan.%s: the plan's stream: %w", op, err)
	}
	defer p.stream.Release()
	if err := p.run(ctx, dir, ip, opp); err != nil {
		return err
	}
	if scale != nil {
		return launchScale(p.stream, scale, out, p.l)
	}
	return nil
}

// run calls the cuFFT exec function of the plan's type.
func (p *Plan) run(ctx driver.Context, dir int32, in, out driver.Deviceptr) error {
	h := p.h
	switch p.l.cufftType() {
	case cufft.C2C:
		return cufftExecC2C(ctx, h, ptrOf[cufft.Complex](in), ptrOf[cufft.Complex](out), dir)
	case cufft.Z2Z:
		return cufftExecZ2Z(ctx, h, ptrOf[cufft.DoubleComplex](in), ptrOf[cufft.DoubleComplex](out), dir)
	case cufft.R2C:
		return cufftExecR2C(ctx, h, ptrOf[cufft.Real](in), ptrOf[cufft.Complex](out))
	case cufft.D2Z:
		return cufftExecD2Z(ctx, h, ptrOf[cufft.DoubleReal](in), ptrOf[cufft.DoubleComplex](out))
	case cufft.C2R:
		return cufftExecC2R(ctx, h, ptrOf[cufft.Complex](in), ptrOf[cufft.Real](out))
	default: // Z2D
		return cufftExecZ2D(ctx, h, ptrOf[cufft.DoubleComplex](in), ptrOf[cufft.DoubleReal](out))
	}
}

// rawPtr and ptrOf convert a device address to the pointer types the
// bindings take. Go never dereferences it; converting through the
// address's own storage keeps go vet's unsafe.Pointer(uintptr) check
// quiet.
func rawPtr(p driver.Deviceptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func ptrOf[T any](p driver.Deviceptr) *T { return (*T)(rawPtr(p)) }

// checkBuffers checks the Buffers of a transform against the plan, before
// anything is queued: their sizes against the shape and precision (cuFFT
// would read and write past a short Buffer), the alignment cuFFT requires,
// how they overlap against the plan's placement, and their device.
func (p *Plan) checkBuffers(op string, in *core.Buffer, ip driver.Deviceptr, out *core.Buffer, opp driver.Deviceptr) error {
	l := &p.l
	inElem, outElem := l.elemNames()
	if n := in.Size(); n < l.inBytes {
		return fmt.Errorf("fft: Plan.%s: input Buffer has %d bytes; %s needs %d (%d %s)",
			op, n, l, l.inBytes, l.inBytes/elemSize(inElem), inElem)
	}
	if n := out.Size(); n < l.outBytes {
		return fmt.Errorf("fft: Plan.%s: output Buffer has %d bytes; %s needs %d (%d %s)",
			op, n, l, l.outBytes, l.outBytes/elemSize(outElem), outElem)
	}
	// cuFFT requires both pointers aligned to the complex type, even
	// the real side's.
	align := driver.Deviceptr(l.Precision.complexSize())
	if ip%align != 0 {
		return fmt.Errorf("fft: Plan.%s: input Buffer address %#x is not aligned to %d bytes, as cuFFT requires for %s data", op, uint64(ip), align, l.Precision)
	}
	if opp%align != 0 {
		return fmt.Errorf("fft: Plan.%s: output Buffer address %#x is not aligned to %d bytes, as cuFFT requires for %s data", op, uint64(opp), align, l.Precision)
	}
	same := ip == opp
	overlap := ip < opp+driver.Deviceptr(l.outBytes) && opp < ip+driver.Deviceptr(l.inBytes)
	switch {
	case l.InPlace && !same:
		return fmt.Errorf("fft: Plan.%s: the plan is in place (Desc.InPlace): pass one Buffer as input and output", op)
	case !l.InPlace && same && l.Type != C2C:
		return fmt.Errorf("fft: Plan.%s: input and output are the same memory, but the %v plan is out of place: make it with Desc.InPlace, for the padded in-place layout", op, l.Type)
	case !same && overlap:
		return fmt.Errorf("fft: Plan.%s: input and output overlap without being the same memory", op)
	}
	if err := p.checkDevice(op, "input", in); err != nil {
		return err
	}
	return p.checkDevice(op, "output", out)
}

func (p *Plan) checkDevice(op, what string, b *core.Buffer) error {
	mr := b.MemoryResource()
	if mr == nil {
		return nil
	}
	if !mr.DeviceAccessible() {
		return fmt.Errorf("fft: Plan.%s: %s Buffer is not device-accessible memory (%T)", op, what, mr)
	}
	if d := mr.Device(); d != nil && p.dev != nil && d != p.dev {
		return fmt.Errorf("fft: Plan.%s: %s Buffer is on %v, the plan on %v", op, what, d, p.dev)
	}
	return nil
}

// elemNames names the Go element types of the input and output.
func (l *layout) elemNames() (in, out string) {
	c, r := "complex64", "float32"
	if l.Precision == Double {
		c, r = "complex128", "float64"
	}
	switch {
	case l.Type == C2C, l.InPlace:
		return c, c
	case l.Type == R2C:
		return r, c
	}
	return c, r
}

func elemSize(name string) int {
	switch name {
	case "float32":
		return 4
	case "float64", "complex64":
		return 8
	}
	return 16
}

// String describes the transform, as errors name it.
func (l *layout) String() string {
	s := fmt.Sprintf("%v %v %v", l.Precision, l.Type, l.Shape)
	if l.batch > 1 {
		s += fmt.Sprintf(" batch %d", l.batch)
	}
	if l.InPlace {
		s += " in place"
	}
	return s
}
