package rng

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/lib"
)

// fakeMemory is a MemoryResource that is never called: it gives the CPU
// tests Buffers of any size to check arguments against.
type fakeMemory struct{ device bool }

func (fakeMemory) Allocate(int, *core.Stream) (*core.Buffer, error)     { panic("not called") }
func (fakeMemory) Deallocate(driver.Deviceptr, int, *core.Stream) error { return nil }
func (fakeMemory) Device() *core.Device                                 { return nil }
func (m fakeMemory) DeviceAccessible() bool                             { return m.device }
func (fakeMemory) HostAccessible() bool                                 { return true }

func fakeBuffer(size int) *core.Buffer {
	return core.NewBuffer(0, size, fakeMemory{device: true}, nil)
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

func TestNewOptions(t *testing.T) {
	_, err := New(nil, nil)
	wantErr(t, err, "rng: New: nil *core.Stream")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Type: -1}, "unknown Type -1"},
		{Options{Type: ScrambledSobol64 + 1}, "unknown Type 10"},
		{Options{Ordering: -1}, "unknown Ordering -1"},
		{Options{Ordering: OrderingDynamic + 1}, "unknown Ordering 5"},
		{Options{Type: Sobol32, Seed: 3}, "Sobol32 is quasi-random and takes no seed"},
		{Options{Type: Sobol64, Ordering: OrderingLegacy}, "only the default ordering"},
		{Options{Type: Sobol32, Dimensions: -1}, "-1 dimensions, want 1 to 20000"},
		{Options{Type: ScrambledSobol32, Dimensions: MaxDimensions + 1}, "20001 dimensions"},
		{Options{Type: Philox4_32_10, Dimensions: 2}, "Philox4_32_10 is pseudo-random and has no dimensions"},
		{Options{Type: MTGP32, Offset: 5}, "MTGP32 has no offset"},
		{Options{Type: MT19937, Offset: 1}, "MT19937 has no offset"},
	} {
		_, err := newSettings(&c.opts)
		wantErr(t, err, "rng: New: ", c.want)
	}
	for _, o := range []Options{
		{}, {Type: Philox4_32_10, Seed: 1, Offset: 1 << 40, Ordering: OrderingLegacy, Dimensions: 1},
		{Type: Sobol32, Offset: 9, Dimensions: MaxDimensions}, {Type: MTGP32, Seed: 7},
	} {
		g, err := testGen(&o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if g.Type() != o.Type || g.Dimensions() != max(o.Dimensions, 1) || g.seq.seed != o.Seed || g.seq.offset != o.Offset {
			t.Fatalf("%+v gave %v, %d dimensions, seed %d, offset %d", o, g.Type(), g.Dimensions(), g.seq.seed, g.seq.offset)
		}
	}
	if g, err := testGen(nil); err != nil || g.Type() != Default || g.Dimensions() != 1 {
		t.Fatalf("nil options: %v, %v", g, err)
	}
}

// testGen is a Generator of opts with no stream behind it: its State is
// open but cannot Begin, so every check runs.
func testGen(opts *Options) (*Generator, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &Generator{settings: s, st: new(libhandle.State[curand.Generator])}, nil
}

func TestTypeNames(t *testing.T) {
	want := []string{"Default (XORWOW)", "XORWOW", "MRG32k3a", "Philox4_32_10", "MTGP32", "MT19937",
		"Sobol32", "ScrambledSobol32", "Sobol64", "ScrambledSobol64"}
	for i, w := range want {
		typ := Type(i)
		if typ.String() != w || typ.Quasi() != (i >= int(Sobol32)) {
			t.Errorf("Type(%d) = %q (quasi %v), want %q", i, typ, typ.Quasi(), w)
		}
	}
	if s := Type(42).String(); s != "rng.Type(42)" || Type(42).Quasi() {
		t.Errorf("Type(42) = %q", s)
	}
}

func TestSetSeedOffset(t *testing.T) {
	var nilGen *Generator
	wantErr(t, nilGen.SetSeed(1), "rng: SetSeed: nil *Generator")
	wantErr(t, nilGen.SetOffset(1), "rng: SetOffset: nil *Generator")
	if err := nilGen.Close(); err != nil {
		t.Fatalf("Close of a nil *Generator: %v", err)
	}
	wantErr(t, nilGen.Uniform(fakeBuffer(4), 1), "rng: Uniform: nil *Generator")

	var zero Generator
	wantErr(t, zero.Uniform(fakeBuffer(4), 1), "rng: Uniform: the Generator was not made by New")
	if err := zero.Close(); err != nil {
		t.Fatalf("Close of a zero Generator: %v", err)
	}

	g, _ := testGen(&Options{Type: Sobol32})
	wantErr(t, g.SetSeed(1), "rng: SetSeed: Sobol32 is quasi-random")
	if err := g.SetOffset(12); err != nil || g.seq.offset != 12 || !g.seq.reseed {
		t.Fatalf("SetOffset(12) on Sobol32: %v, offset %d, reseed %v", err, g.seq.offset, g.seq.reseed)
	}
	g, _ = testGen(&Options{Type: MTGP32})
	wantErr(t, g.SetOffset(1), "rng: SetOffset: MTGP32 has no offset")
	if err := g.SetSeed(77); err != nil || g.seq.seed != 77 || !g.seq.reseed {
		t.Fatalf("SetSeed(77) on MTGP32: %v, seed %d, reseed %v", err, g.seq.seed, g.seq.reseed)
	}
	g.Close()
	if err := g.SetSeed(1); err != core.ErrClosed {
		t.Fatalf("SetSeed after Close = %v, want core.ErrClosed", err)
	}
}

// TestCheck covers every argument error a generation reports before any
// library call.
func TestCheck(t *testing.T) {
	philox, _ := testGen(&Options{Type: Philox4_32_10})
	sobol3, _ := testGen(&Options{Type: Sobol32, Dimensions: 3})
	sobol64, _ := testGen(&Options{Type: Sobol64})
	b16 := fakeBuffer(16)
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		g    *Generator
		o    op
		out  *core.Buffer
		n    int
		p    params
		want string // "" for no error
	}{
		{philox, opUniform, b16, 4, params{}, ""},
		{philox, opUniform, b16, 0, params{}, ""},
		{philox, opUniform64, b16, 2, params{}, ""},
		{philox, opUniform, b16, 5, params{}, "rng: Uniform: n=5 float32 values need 20 bytes, out holds 16"},
		{philox, opUniform64, b16, 3, params{}, "rng: Uniform: n=3 float64 values need 24 bytes, out holds 16"},
		{philox, opNormal64, b16, math.MaxInt, params{}, "out holds 16"}, // n·8 overflows
		{philox, opUniform, nil, 1, params{}, "rng: Uniform: nil out Buffer"},
		{philox, opUint32, b16, -1, params{}, "rng: Bits: negative count n=-1"},
		{philox, opUint64, b16, 2, params{}, "rng: Bits: Philox4_32_10 gives 32-bit values: use Bits[uint32]"},
		{sobol64, opUint32, b16, 2, params{}, "rng: Bits: Sobol64 gives 64-bit values: use Bits[uint64]"},
		{sobol64, opUint64, b16, 2, params{}, ""},
		{sobol3, opUniform, b16, 3, params{}, ""},
		{sobol3, opUniform, b16, 4, params{}, "rng: Uniform: n=4 is not a multiple of the generator's 3 dimensions"},
		{sobol3, opNormal, b16, 2, params{stddev: 1}, "n=2 is not a multiple"},
		{philox, opNormal, b16, 3, params{mean: 1, stddev: 0}, ""},
		{philox, opNormal, b16, 3, params{mean: nan, stddev: 1}, "rng: Normal: mean NaN is not finite"},
		{philox, opLogNormal, b16, 3, params{mean: -inf, stddev: 1}, "rng: LogNormal: mean -Inf is not finite"},
		{philox, opNormal64, b16, 1, params{stddev: -1}, "rng: Normal: stddev -1 is not finite and >= 0"},
		{philox, opLogNormal64, b16, 1, params{stddev: nan}, "stddev NaN"},
		{philox, opNormal, b16, 1, params{stddev: inf}, "stddev +Inf"},
		{philox, opPoisson, b16, 4, params{lambda: 0.001}, ""},
		{philox, opPoisson, b16, 4, params{lambda: MaxLambda}, ""},
		{philox, opPoisson, b16, 4, params{lambda: 0}, "rng: Poisson: lambda 0 is not in (0, 400000]"},
		{philox, opPoisson, b16, 4, params{lambda: -3}, "lambda -3 is not"},
		{philox, opPoisson, b16, 4, params{lambda: nan}, "lambda NaN is not"},
		{philox, opPoisson, b16, 4, params{lambda: inf}, "lambda +Inf is not"},
		{philox, opPoisson, b16, 4, params{lambda: MaxLambda + 1}, "lambda 400001 is not"},
	} {
		err := c.g.check(c.o, c.out, c.n, c.p)
		var ae *lib.ArgError
		if err != nil && !errors.As(err, &ae) {
			t.Errorf("%v %s: %v is not a *lib.ArgError", c.g.typ, ops[c.o].name, err)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%v %s(n=%d, %+v): %v", c.g.typ, ops[c.o].name, c.n, c.p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %s(n=%d, %+v) = %v, want %q", c.g.typ, ops[c.o].name, c.n, c.p, err, c.want)
		}
	}
}

// TestSplit: what cuRAND's pair generators write directly and what comes
// from the extra pair, for aligned and odd-element addresses.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		ptr             driver.Deviceptr
		n, size         int
		head, mid, tail int
	}{
		{0x1000, 0, 4, 0, 0, 0},
		{0x1000, 1, 4, 0, 0, 1},
		{0x1000, 2, 4, 0, 2, 0},
		{0x1000, 7, 4, 0, 6, 1},
		{0x1004, 1, 4, 1, 0, 0},
		{0x1004, 2, 4, 1, 0, 1},
		{0x1004, 7, 4, 1, 6, 0},
		{0x1004, 8, 4, 1, 6, 1},
		{0x1008, 8, 4, 0, 8, 0},
		{0x1008, 3, 8, 1, 2, 0},
		{0x1010, 3, 8, 0, 2, 1},
		{0x1018, 6, 8, 1, 4, 1},
	} {
		h, m, tl := split(c.ptr, c.n, c.size)
		if h != c.head || m != c.mid || tl != c.tail {
			t.Errorf("split(%#x, %d, %d) = %d, %d, %d; want %d, %d, %d", c.ptr, c.n, c.size, h, m, tl, c.head, c.mid, c.tail)
		}
		if h+m+tl != c.n || m%2 != 0 || (c.ptr+driver.Deviceptr(h*c.size))%driver.Deviceptr(2*c.size) != 0 && m > 0 || h+tl > 2 {
			t.Errorf("split(%#x, %d, %d) breaks its invariants", c.ptr, c.n, c.size)
		}
	}
}

// TestHeldChecks: what needs the Buffer held is checked before the
// generator is: memory the GPU cannot access, a misaligned address, a
// closed Buffer.
func TestHeldChecks(t *testing.T) {
	g, _ := testGen(&Options{Type: Philox4_32_10})
	hostOnly := core.NewBuffer(0x1000, 64, fakeMemory{device: false}, nil)
	wantErr(t, Bits[uint32](g, hostOnly, 1), "rng: Bits: out is rng.fakeMemory memory, which the GPU cannot access")
	odd := core.NewBuffer(0x1004, 64, fakeMemory{device: true}, nil)
	wantErr(t, Normal[float64](g, odd, 2, 0, 1), "rng: Normal: out's address 0x1004 is not aligned to its 8-byte float64 elements")
	closed := fakeBuffer(16)
	closed.Close()
	if err := Uniform[float32](g, closed, 4); !errors.Is(err, core.ErrClosed) {
		t.Errorf("a closed out: %v, want core.ErrClosed", err)
	}
	// Valid arguments reach the generator, which has no stream: closed.
	if err := Uniform[float32](g, fakeBuffer(16), 4); !errors.Is(err, core.ErrClosed) {
		t.Errorf("no stream: %v, want core.ErrClosed", err)
	}
	if err := Poisson(g, fakeBuffer(16), 0, 1); !errors.Is(err, core.ErrClosed) {
		t.Errorf("0 values, no stream: %v, want core.ErrClosed", err)
	}
}
