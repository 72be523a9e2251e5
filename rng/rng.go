package rng

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Type is a cuRAND generator type.
type Type int

const (
	// Default is cuRAND's default pseudo-random generator, XORWOW; CuPy's
	// cupy.random uses it too.
	Default Type = iota
	// XORWOW is Marsaglia's xorwow.
	XORWOW
	// MRG32k3a is L'Ecuyer's combined multiple recursive generator.
	MRG32k3a
	// Philox4_32_10 is the counter-based Philox-4x32 of 10 rounds.
	Philox4_32_10
	// MTGP32 is the Mersenne Twister for GPUs; it has no offset.
	MTGP32
	// MT19937 is the Mersenne Twister; it has no offset.
	MT19937
	// Sobol32 is the 32-bit Sobol' quasi-random sequence (cuRAND's
	// default quasi-random type), Joe and Kuo's direction numbers.
	Sobol32
	// ScrambledSobol32 is Sobol32 with scrambling.
	ScrambledSobol32
	// Sobol64 is the 64-bit Sobol' quasi-random sequence.
	Sobol64
	// ScrambledSobol64 is Sobol64 with scrambling.
	ScrambledSobol64
)

var typeInfo = [...]struct {
	name   string
	c      curand.RngType
	quasi  bool
	bits64 bool // raw values are 64-bit (Uint64, not Uint32)
	noOff  bool // cuRAND has no offset for it
}{
	Default:          {"Default (XORWOW)", curand.RngPseudoDefault, false, false, false},
	XORWOW:           {"XORWOW", curand.RngPseudoXorwow, false, false, false},
	MRG32k3a:         {"MRG32k3a", curand.RngPseudoMrg32K3A, false, false, false},
	Philox4_32_10:    {"Philox4_32_10", curand.RngPseudoPhilox43210, false, false, false},
	MTGP32:           {"MTGP32", curand.RngPseudoMtgp32, false, false, true},
	MT19937:          {"MT19937", curand.RngPseudoMt19937, false, false, true},
	Sobol32:          {"Sobol32", curand.RngQuasiSobol32, true, false, false},
	ScrambledSobol32: {"ScrambledSobol32", curand.RngQuasiScrambledSobol32, true, false, false},
	Sobol64:          {"Sobol64", curand.RngQuasiSobol64, true, true, false},
	ScrambledSobol64: {"ScrambledSobol64", curand.RngQuasiScrambledSobol64, true, true, false},
}

func (t Type) valid() bool { return t >= 0 && int(t) < len(typeInfo) }

// String returns the type's name.
func (t Type) String() string {
	if !t.valid() {
		return fmt.Sprintf("rng.Type(%d)", int(t))
	}
	return typeInfo[t].name
}

// Quasi reports whether t is a quasi-random (Sobol') type.
func (t Type) Quasi() bool { return t.valid() && typeInfo[t].quasi }

// Ordering is the order in which cuRAND lays a sequence out in memory.
type Ordering int

const (
	// OrderingDefault leaves cuRAND's default ordering of the type.
	OrderingDefault Ordering = iota
	// OrderingBest is CURAND_ORDERING_PSEUDO_BEST.
	OrderingBest
	// OrderingLegacy is CURAND_ORDERING_PSEUDO_LEGACY: the same results in
	// every cuRAND release.
	OrderingLegacy
	// OrderingSeeded is CURAND_ORDERING_PSEUDO_SEEDED: faster seeding, of
	// lower quality (XORWOW).
	OrderingSeeded
	// OrderingDynamic is CURAND_ORDERING_PSEUDO_DYNAMIC: adjusted to the
	// device, so results may differ between GPUs.
	OrderingDynamic
)

var orderingC = [...]curand.Ordering{
	OrderingBest:    curand.OrderingPseudoBest,
	OrderingLegacy:  curand.OrderingPseudoLegacy,
	OrderingSeeded:  curand.OrderingPseudoSeeded,
	OrderingDynamic: curand.OrderingPseudoDynamic,
}

// MaxDimensions is the most dimensions cuRAND's Sobol' types have.
const MaxDimensions = 20000

// Options configure New. The zero value is XORWOW with seed 0 at offset
// 0, cuRAND's defaults.
type Options struct {
	Type Type
	// Seed of a pseudo-random type; must be 0 for the quasi-random ones.
	Seed uint64
	// Offset is the position in the sequence of the first value.
	Offset uint64
	// Ordering of a pseudo-random type; the quasi-random types have only
	// the default. An ordering that cuRAND does not offer for the type
	// fails at the first generation with CURAND_STATUS_OUT_OF_RANGE.
	Ordering Ordering
	// Dimensions of a quasi-random type, 1 to MaxDimensions (0 means 1);
	// must be 0 or 1 for the pseudo-random ones.
	Dimensions int
}

// Generator draws numbers from one cuRAND generator bound to one stream.
// Its methods are safe for concurrent use.
type Generator struct {
	mu      sync.Mutex
	stream  *core.Stream
	typ     Type
	order   Ordering
	dims    int
	seed    uint64
	offset  uint64
	reseed  bool // seed and offset to set before the next generation
	closed  bool
	st      *handle // what the cleanup of a forgotten Generator frees
	cleanup runtime.Cleanup
}

// handle is the cuRAND generator and scratch of a Generator, apart from it
// so that a cleanup can free them.
type handle struct {
	stream  *core.Stream
	gen     curand.Generator // 0 until first use
	scratch *core.Buffer     // 2 float64 for the pair remainder; nil until needed
}

// New returns a Generator that queues its work on stream. The cuRAND
// generator is created at the first generation, in stream's context.
func New(stream *core.Stream, opts *Options) (*Generator, error) {
	if stream == nil {
		return nil, errors.New("rng: New: nil stream (use Device.DefaultStream for the legacy default stream)")
	}
	g, err := newGenerator(opts)
	if err != nil {
		return nil, err
	}
	g.stream = stream
	g.st = &handle{stream: stream}
	g.cleanup = runtime.AddCleanup(g, destroyForgotten, g.st)
	return g, nil
}

// newGenerator checks opts and returns a Generator without a stream.
func newGenerator(opts *Options) (*Generator, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if !o.Type.valid() {
		return nil, fmt.Errorf("rng: New: unknown Type %d", int(o.Type))
	}
	ti := typeInfo[o.Type]
	if o.Ordering < 0 || int(o.Ordering) >= len(orderingC) {
		return nil, fmt.Errorf("rng: New: unknown Ordering %d", int(o.Ordering))
	}
	if ti.quasi {
		if o.Seed != 0 {
			return nil, fmt.Errorf("rng: New: %v is quasi-random and takes no seed (Seed %d)", o.Type, o.Seed)
		}
		if o.Ordering != OrderingDefault {
			return nil, fmt.Errorf("rng: New: %v is quasi-random and has only the default ordering", o.Type)
		}
		if o.Dimensions < 0 || o.Dimensions > MaxDimensions {
			return nil, fmt.Errorf("rng: New: %d dimensions, want 1 to %d", o.Dimensions, MaxDimensions)
		}
	} else if o.Dimensions != 0 && o.Dimensions != 1 {
		return nil, fmt.Errorf("rng: New: %v is pseudo-random and has no dimensions (Dimensions %d)", o.Type, o.Dimensions)
	}
	if ti.noOff && o.Offset != 0 {
		return nil, fmt.Errorf("rng: New: %v has no offset (Offset %d)", o.Type, o.Offset)
	}
	g := &Generator{typ: o.Type, order: o.Ordering, dims: max(o.Dimensions, 1), seed: o.Seed, offset: o.Offset}
	return g, nil
}

// Type returns the generator's type.
func (g *Generator) Type() Type { return g.typ }

// Stream returns the stream the generator queues its work on.
func (g *Generator) Stream() *core.Stream { return g.stream }

// Dimensions returns the number of dimensions (1 for pseudo-random types).
func (g *Generator) Dimensions() int { return g.dims }

// SetSeed sets the seed of a pseudo-random generator; the next generation
// starts at the current offset of the new seed's sequence.
func (g *Generator) SetSeed(seed uint64) error {
	if g == nil {
		return errors.New("rng: SetSeed: nil *Generator")
	}
	if typeInfo[g.typ].quasi {
		return fmt.Errorf("rng: SetSeed: %v is quasi-random and takes no seed", g.typ)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return core.ErrClosed
	}
	g.seed, g.reseed = seed, true
	return nil
}

// SetOffset sets the position in the sequence of the next value.
func (g *Generator) SetOffset(offset uint64) error {
	if g == nil {
		return errors.New("rng: SetOffset: nil *Generator")
	}
	if typeInfo[g.typ].noOff {
		return fmt.Errorf("rng: SetOffset: %v has no offset", g.typ)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return core.ErrClosed
	}
	g.offset, g.reseed = offset, true
	return nil
}

// Close destroys the cuRAND generator (waiting for calls in progress) and
// frees the scratch Buffer. Later calls return core.ErrClosed; closing
// twice is not an error.
func (g *Generator) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if g.st == nil { // not made by New
		return nil
	}
	g.cleanup.Stop()
	return g.st.destroy()
}

// destroyForgotten is the cleanup of a Generator that was not closed.
func destroyForgotten(h *handle) { _ = h.destroy() }

// destroy destroys the cuRAND generator and frees the scratch, in the
// stream's context. When the stream is closed already it acts on the
// context's legacy default stream, and first moves the generator there
// (cuRAND would otherwise hold a destroyed stream). When the context is
// gone, cuRAND's memory and the scratch went with it.
func (h *handle) destroy() error {
	if h.gen == 0 && h.scratch == nil {
		return nil
	}
	gen, scratch := h.gen, h.scratch
	h.gen, h.scratch = 0, nil
	s := h.stream
	ctx, hs, err := s.Acquire()
	moved := false
	if errors.Is(err, core.ErrClosed) {
		s = h.stream.Context().DefaultStream()
		ctx, hs, err = s.Acquire()
		if errors.Is(err, core.ErrClosed) {
			return nil
		}
		moved = true
	}
	if err != nil {
		return err
	}
	defer s.Release()
	var errs []error
	if gen != 0 {
		if moved {
			errs = append(errs, curandSetStream(ctx, gen, hs))
		}
		errs = append(errs, curandDestroyGenerator(ctx, gen))
	}
	if scratch != nil {
		errs = append(errs, scratch.Close())
	}
	return errors.Join(errs...)
}

// prepare creates the cuRAND generator on first use and applies a new seed
// or offset. g.mu is held and the stream acquired (ctx, s).
func (g *Generator) prepare(ctx driver.Context, s driver.Stream) error {
	ti := typeInfo[g.typ]
	if g.reseed && ti.noOff && g.st.gen != 0 {
		// No offset to go back to: a new cuRAND generator restarts it.
		if err := curandDestroyGenerator(ctx, g.st.gen); err != nil {
			return err
		}
		g.st.gen = 0
	}
	if g.st.gen == 0 {
		var gen curand.Generator
		if err := curandCreateGenerator(ctx, &gen, ti.c); err != nil {
			return err
		}
		err := curandSetStream(ctx, gen, s)
		if err == nil && g.order != OrderingDefault {
			err = curandSetGeneratorOrdering(ctx, gen, orderingC[g.order])
		}
		if err == nil && ti.quasi && g.dims != 1 {
			err = curandSetQuasiRandomGeneratorDimensions(ctx, gen, uint32(g.dims))
		}
		if err != nil {
			_ = curandDestroyGenerator(ctx, gen)
			return err
		}
		g.st.gen = gen
		g.reseed = true
	}
	if !g.reseed {
		return nil
	}
	if !ti.quasi {
		if err := curandSetPseudoRandomGeneratorSeed(ctx, g.st.gen, g.seed); err != nil {
			return err
		}
	}
	if !ti.noOff {
		if err := curandSetGeneratorOffset(ctx, g.st.gen, g.offset); err != nil {
			return err
		}
	}
	g.reseed = false
	return nil
}

// devPtr is a device address as the typed pointer the bindings take
// (through unsafe.Pointer's own representation, which go vet accepts).
func devPtr[T any](p driver.Deviceptr) *T {
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
}
