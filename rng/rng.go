package rng

import (
	"fmt"

	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
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

// Options configure New. The zero value (or nil) is XORWOW with seed 0
// at offset 0, cuRAND's defaults.
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
// It is safe for concurrent use: its calls take turns. A zero Generator
// acts as a closed one.
type Generator struct {
	settings
	st *libhandle.State[curand.Generator]
}

// settings are what New fixes and where the sequence stands. The cuRAND
// calls that make and configure the generator are methods of a copy of
// them, apart from the Generator so that a cleanup can free it.
type settings struct {
	typ   Type
	order Ordering
	dims  int
	seq   *sequence
}

// sequence is where the next generation starts; it is read and changed
// in the state's turn.
type sequence struct {
	seed, offset uint64
	reseed       bool // seed and offset to set before the next generation
}

// New returns a Generator that queues its work on stream; opts may be nil.
// The cuRAND generator is created at the first generation, in stream's
// context.
func New(stream *core.Stream, opts *Options) (*Generator, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	l := libhandle.Lib[curand.Generator]{
		Package: "rng", Create: s.create, Setup: s.setup, SetStream: curandSetStream, Destroy: curandDestroyGenerator,
	}
	return libhandle.Open(l, "New", stream, func(st *libhandle.State[curand.Generator]) *Generator {
		return &Generator{settings: s, st: st}
	})
}

// newSettings checks opts.
func newSettings(opts *Options) (settings, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if !o.Type.valid() {
		return settings{}, argErr("New", "opts.Type", "unknown Type %d", int(o.Type))
	}
	ti := typeInfo[o.Type]
	if o.Ordering < 0 || int(o.Ordering) >= len(orderingC) {
		return settings{}, argErr("New", "opts.Ordering", "unknown Ordering %d", int(o.Ordering))
	}
	if ti.quasi {
		if o.Seed != 0 {
			return settings{}, argErr("New", "opts.Seed", "%v is quasi-random and takes no seed (Seed %d)", o.Type, o.Seed)
		}
		if o.Ordering != OrderingDefault {
			return settings{}, argErr("New", "opts.Ordering", "%v is quasi-random and has only the default ordering", o.Type)
		}
		if o.Dimensions < 0 || o.Dimensions > MaxDimensions {
			return settings{}, argErr("New", "opts.Dimensions", "%d dimensions, want 1 to %d", o.Dimensions, MaxDimensions)
		}
	} else if o.Dimensions != 0 && o.Dimensions != 1 {
		return settings{}, argErr("New", "opts.Dimensions", "%v is pseudo-random and has no dimensions (Dimensions %d)", o.Type, o.Dimensions)
	}
	if ti.noOff && o.Offset != 0 {
		return settings{}, argErr("New", "opts.Offset", "%v has no offset (Offset %d)", o.Type, o.Offset)
	}
	return settings{typ: o.Type, order: o.Ordering, dims: max(o.Dimensions, 1), seq: &sequence{seed: o.Seed, offset: o.Offset}}, nil
}

// Type returns the generator's type.
func (g *Generator) Type() Type { return g.typ }

// Stream returns the stream the generator queues its work on.
func (g *Generator) Stream() *core.Stream { return g.st.Stream() }

// Dimensions returns the number of dimensions (1 for pseudo-random types).
func (g *Generator) Dimensions() int { return g.dims }

// SetSeed sets the seed of a pseudo-random generator; the next generation
// starts at the current offset of the new seed's sequence.
func (g *Generator) SetSeed(seed uint64) error {
	if g == nil {
		return argErr("SetSeed", "g", "nil *Generator")
	}
	if typeInfo[g.typ].quasi {
		return argErr("SetSeed", "seed", "%v is quasi-random and takes no seed", g.typ)
	}
	return g.st.Do(func() error {
		g.seq.seed, g.seq.reseed = seed, true
		return nil
	})
}

// SetOffset sets the position in the sequence of the next value.
func (g *Generator) SetOffset(offset uint64) error {
	if g == nil {
		return argErr("SetOffset", "g", "nil *Generator")
	}
	if typeInfo[g.typ].noOff {
		return argErr("SetOffset", "offset", "%v has no offset", g.typ)
	}
	return g.st.Do(func() error {
		g.seq.offset, g.seq.reseed = offset, true
		return nil
	})
}

// Close destroys the cuRAND generator (waiting for calls in progress) and
// frees its scratch memory, after the work queued on the stream. When the
// stream is closed first, the generator is moved to the legacy default
// stream before it is destroyed; when the context is gone, cuRAND's memory
// went with it. Later calls return core.ErrClosed; closing twice is not an
// error.
func (g *Generator) Close() error {
	if g == nil {
		return nil
	}
	return g.st.Close()
}

// create makes a cuRAND generator of s's type.
func (s settings) create(ctx driver.Context, gen *curand.Generator) error {
	return curandCreateGenerator(ctx, gen, typeInfo[s.typ].c)
}

// setup binds a new cuRAND generator to the stream and configures it,
// seed and offset included.
func (s settings) setup(ctx driver.Context, gen *curand.Generator, hs driver.Stream) error {
	err := curandSetStream(ctx, *gen, hs)
	if err == nil && s.order != OrderingDefault {
		err = curandSetGeneratorOrdering(ctx, *gen, orderingC[s.order])
	}
	if err == nil && typeInfo[s.typ].quasi && s.dims != 1 {
		err = curandSetQuasiRandomGeneratorDimensions(ctx, *gen, uint32(s.dims))
	}
	if err != nil {
		return err
	}
	return s.apply(ctx, *gen)
}

// apply sets the seed and the offset where the type has them.
func (s settings) apply(ctx driver.Context, gen curand.Generator) error {
	ti := typeInfo[s.typ]
	if !ti.quasi {
		if err := curandSetPseudoRandomGeneratorSeed(ctx, gen, s.seq.seed); err != nil {
			return err
		}
	}
	if !ti.noOff {
		if err := curandSetGeneratorOffset(ctx, gen, s.seq.offset); err != nil {
			return err
		}
	}
	s.seq.reseed = false
	return nil
}

// prepare applies a seed or offset set since the cuRAND generator was
// made; call it between the state's Begin and End.
func (g *Generator) prepare(ctx driver.Context, hs driver.Stream) error {
	if !g.seq.reseed {
		return nil
	}
	if typeInfo[g.typ].noOff {
		// No offset to go back to: a new cuRAND generator restarts it.
		return g.st.Renew(ctx, hs)
	}
	return g.apply(ctx, g.st.Handle())
}

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("rng", fn, arg, format, args...)
}
