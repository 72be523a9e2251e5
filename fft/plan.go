package fft

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
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
// which closes it. A zero Plan acts as a closed one.
type Plan struct {
	l      layout
	st     *libhandle.State[cufft.Handle]
	cached bool // owned by a Cache: Close does nothing
}

// NewPlan makes a plan for d on stream s. Making a plan costs far more
// than running it (cuFFT chooses its kernels and may load them), so make
// it once and reuse it, or let a Cache do that.
func NewPlan(s *core.Stream, d Desc) (*Plan, error) {
	l, err := d.check("NewPlan")
	if err != nil {
		return nil, err
	}
	return newPlan("NewPlan", s, l, false)
}

// newPlan makes the plan, now rather than at its first transform, so that
// its errors are the maker's; cached marks it as a Cache's before anyone
// else sees it.
func newPlan(fn string, s *core.Stream, l layout, cached bool) (*Plan, error) {
	var st *libhandle.State[cufft.Handle]
	st, err := libhandle.New(libhandle.Lib[cufft.Handle]{
		Package: "fft",
		Create:  cufftCreate,
		Setup: func(ctx driver.Context, h *cufft.Handle, hs driver.Stream) error {
			return setup(ctx, *h, hs, &l, st)
		},
		SetStream: cufftSetStream,
		Destroy:   cufftDestroy,
	}, fn, s)
	if err != nil {
		return nil, err
	}
	if _, _, err := st.Begin(); err != nil {
		// err stays the library's own unless cleaning up fails too.
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	st.End()
	p := &Plan{l: l, st: st, cached: cached}
	libhandle.CloseWith(p, st)
	return p, nil
}

// setup makes the cuFFT plan of l with a work area of ours and binds it to
// the stream. The work area is st's workspace: device memory of the
// stream's device, allocated on the plan's stream (stream-ordered, from
// the pool, as CuPy takes it from its pool), rather than cuFFT's own
// cudaMalloc: its memory is the program's to account and reuse, and it is
// freed in stream order when the plan closes.
func setup(ctx driver.Context, h cufft.Handle, hs driver.Stream, l *layout, st *libhandle.State[cufft.Handle]) error {
	// Off before the plan is made, so that cuFFT allocates nothing itself.
	if err := cufftSetAutoAllocation(ctx, h, 0); err != nil {
		return err
	}
	a := l.planArgs()
	ws, err := cufftMakePlanMany64(ctx, h, int32(len(a.n)), &a.n[0], first(a.inembed), 1, a.idist,
		first(a.onembed), 1, a.odist, l.cufftType(), int64(l.batch))
	if err != nil {
		return err
	}
	if ws > 0 {
		if ws > maxBytes {
			return fmt.Errorf("fft: cuFFT asks for a work area of %d bytes", ws)
		}
		work, err := st.Workspace(int(ws))
		if err != nil {
			return fmt.Errorf("fft: the plan's work area: %w", err)
		}
		if err := cufftSetWorkArea(ctx, h, libhandle.Ptr(work.Ptr())); err != nil {
			return err
		}
	}
	return cufftSetStream(ctx, h, hs)
}

func first(s []int64) *int64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// Close destroys a plan made by NewPlan and frees its work area, after the
// transforms already queued on its stream. Later transforms return
// core.ErrClosed; closing twice is not an error. On a plan from a Cache it
// does nothing: the Cache's Close closes it.
func (p *Plan) Close() error {
	if p == nil || p.cached {
		return nil
	}
	return p.st.Close()
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

// WorkSize returns the size in bytes of the plan's work area (0 where
// cuFFT needs none).
func (p *Plan) WorkSize() int { return p.st.WorkspaceSize() }

// Stream returns the stream the plan runs on.
func (p *Plan) Stream() *core.Stream { return p.st.Stream() }

// Forward queues the forward transform (exponent sign -1) of in into out
// on the plan's stream: C2C or R2C. For an out-of-place plan, in and out
// must not overlap; for an in-place R2C plan (Desc.InPlace) they are the
// same memory; a C2C plan accepts both. Sizes, alignment and placement
// are checked before anything is queued. Like cuFFT, the transform is
// unnormalized.
func (p *Plan) Forward(in, out *core.Buffer) error {
	return p.exec("Plan.Forward", cufft.Forward, in, out, nil)
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
	return p.exec("Plan.Inverse", cufft.Inverse, in, out, nil)
}

// InverseNormalized is Inverse followed by a division of out by N, the
// product of Shape, so that it undoes Forward (numpy's and CuPy's default
// "backward" normalization). The division is one more pass over out, by a
// small kernel that NVRTC compiles on first use (once per GPU
// architecture in the process, cached on disk by core); it is queued on
// the plan's stream after the transform.
func (p *Plan) InverseNormalized(in, out *core.Buffer) error {
	const fn = "Plan.InverseNormalized"
	if p == nil {
		return argErr(fn, "p", "nil *Plan")
	}
	if err := p.checkDirection(fn, cufft.Inverse); err != nil {
		return err
	}
	k, err := scaleKernel(p.st.Device(), p.l.Precision)
	if err != nil {
		return err
	}
	return p.exec(fn, cufft.Inverse, in, out, k)
}

func (p *Plan) checkDirection(fn string, dir int32) error {
	switch {
	case dir == cufft.Forward && p.l.Type == C2R:
		return argErr(fn, "p", "a C2R plan only runs the inverse transform")
	case dir == cufft.Inverse && p.l.Type == R2C:
		return argErr(fn, "p", "an R2C plan only runs the forward transform")
	}
	return nil
}

// exec checks the Buffers against the plan and queues the transform, then
// the normalization when scale is not nil.
func (p *Plan) exec(fn string, dir int32, in, out *core.Buffer, scale *core.Kernel) error {
	if p == nil {
		return argErr(fn, "p", "nil *Plan")
	}
	if in == nil || out == nil {
		return argErr(fn, "in", "nil input or output *core.Buffer")
	}
	if err := p.checkDirection(fn, dir); err != nil {
		return err
	}
	ops := libhandle.Operands{Package: "fft", Func: fn, Device: p.st.Device()}
	defer ops.Release()
	ip, err := ops.Add("input", in, 1, "") // aligned as checkBuffers says
	if err != nil {
		return err
	}
	opp, err := ops.Add("output", out, 1, "")
	if err != nil {
		return err
	}
	if err := p.checkBuffers(fn, in, libhandle.Addr(ip), out, libhandle.Addr(opp)); err != nil {
		return err
	}
	ctx, _, err := p.st.Begin()
	if err != nil {
		return err
	}
	defer p.st.End()
	if err := p.run(ctx, dir, ip, opp); err != nil {
		return err
	}
	if scale != nil {
		return launchScale(p.st.Stream(), scale, out, p.l)
	}
	return nil
}

// run calls the cuFFT exec function of the plan's type.
func (p *Plan) run(ctx driver.Context, dir int32, in, out unsafe.Pointer) error {
	h := p.st.Handle()
	switch p.l.cufftType() {
	case cufft.C2C:
		return cufftExecC2C(ctx, h, (*cufft.Complex)(in), (*cufft.Complex)(out), dir)
	case cufft.Z2Z:
		return cufftExecZ2Z(ctx, h, (*cufft.DoubleComplex)(in), (*cufft.DoubleComplex)(out), dir)
	case cufft.R2C:
		return cufftExecR2C(ctx, h, (*cufft.Real)(in), (*cufft.Complex)(out))
	case cufft.D2Z:
		return cufftExecD2Z(ctx, h, (*cufft.DoubleReal)(in), (*cufft.DoubleComplex)(out))
	case cufft.C2R:
		return cufftExecC2R(ctx, h, (*cufft.Complex)(in), (*cufft.Real)(out))
	default: // Z2D
		return cufftExecZ2D(ctx, h, (*cufft.DoubleComplex)(in), (*cufft.DoubleReal)(out))
	}
}

// checkBuffers checks the Buffers of a transform against the plan, before
// anything is queued: their sizes against the shape and precision (cuFFT
// would read and write past a short Buffer), the alignment cuFFT requires
// and how they overlap against the plan's placement. (Operands checked
// their memory and device.)
func (p *Plan) checkBuffers(fn string, in *core.Buffer, ip driver.Deviceptr, out *core.Buffer, opp driver.Deviceptr) error {
	l := &p.l
	inElem, outElem := l.elemNames()
	if n := in.Size(); n < l.inBytes {
		return argErr(fn, "in", "input Buffer has %d bytes; %s needs %d (%d %s)",
			n, l, l.inBytes, l.inBytes/elemSize(inElem), inElem)
	}
	if n := out.Size(); n < l.outBytes {
		return argErr(fn, "out", "output Buffer has %d bytes; %s needs %d (%d %s)",
			n, l, l.outBytes, l.outBytes/elemSize(outElem), outElem)
	}
	// cuFFT requires both pointers aligned to the complex type, even
	// the real side's.
	align := driver.Deviceptr(l.Precision.complexSize())
	if ip%align != 0 {
		return argErr(fn, "in", "input Buffer address %#x is not aligned to %d bytes, as cuFFT requires for %s data", uint64(ip), align, l.Precision)
	}
	if opp%align != 0 {
		return argErr(fn, "out", "output Buffer address %#x is not aligned to %d bytes, as cuFFT requires for %s data", uint64(opp), align, l.Precision)
	}
	same := ip == opp
	overlap := ip < opp+driver.Deviceptr(l.outBytes) && opp < ip+driver.Deviceptr(l.inBytes)
	switch {
	case l.InPlace && !same:
		return argErr(fn, "out", "the plan is in place (Desc.InPlace): pass one Buffer as input and output")
	case !l.InPlace && same && l.Type != C2C:
		return argErr(fn, "out", "input and output are the same memory, but the %v plan is out of place: make it with Desc.InPlace, for the padded in-place layout", l.Type)
	case !same && overlap:
		return argErr(fn, "out", "input and output overlap without being the same memory")
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

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("fft", fn, arg, format, args...)
}
