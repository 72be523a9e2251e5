package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refRound rounds x to the nearest number with frac fraction bits and
// smallest normal exponent emin (subnormals below it), ties to even, and
// gives ±Inf above maxFinite: IEEE rounding derived from float64
// arithmetic, independently of the bit manipulation under test.
func refRound(x float64, frac, emin int, maxFinite float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	_, e := math.Frexp(math.Abs(x)) // |x| in [2^(e-1), 2^e)
	q := math.Ldexp(1, max(e-1, emin)-frac)
	r := math.RoundToEven(x/q) * q // x/q is exact: x has 24 bits, q is a power of two
	if math.Abs(r) > maxFinite {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

var (
	halfMax = 65504.0
	bf16Max = math.Ldexp(2-1.0/128, 127)
)

func refHalf(f float32) float64 { return refRound(float64(f), 10, -14, halfMax) }
func refBF16(f float32) float64 { return refRound(float64(f), 7, -126, bf16Max) }

// checkRound checks one conversion of f against the reference; got is
// the conversion's value back in float32. (No t.Helper: it is called a
// million times.)
func checkRound(t *testing.T, kind string, f, got float32, want float64) {
	if math.IsNaN(float64(f)) {
		if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != math.Signbit(float64(f)) {
			t.Fatalf("%s(%#08x NaN) = %v, want a NaN of the same sign", kind, math.Float32bits(f), got)
		}
		return
	}
	if math.Float32bits(got) != math.Float32bits(float32(want)) {
		t.Fatalf("%s(%g = %#08x) = %g (%#08x), want %g", kind, f, math.Float32bits(f), got, math.Float32bits(got), want)
	}
}

// TestHalfValues: every Half converts to the value its fields say, and
// back to itself.
func TestHalfValues(t *testing.T) {
	for i := range 1 << 16 {
		h := Half(i)
		s, e, m := i>>15, (i>>10)&0x1f, i&0x3ff
		var want float64
		switch {
		case e == 0x1f && m == 0:
			want = math.Inf(1)
		case e == 0x1f:
			want = math.NaN()
		case e == 0:
			want = math.Ldexp(float64(m), -24)
		default:
			want = math.Ldexp(1+float64(m)/1024, e-15)
		}
		if s == 1 {
			want = -want
		}
		got := h.Float32()
		if math.IsNaN(want) {
			back := HalfFromFloat32(got)
			if !math.IsNaN(float64(got)) || back&0x7c00 != 0x7c00 || back&0x3ff == 0 || back&0x200 == 0 || back&0x8000 != h&0x8000 {
				t.Fatalf("NaN %#04x: Float32 %v, back %#04x: want a quiet NaN of the same sign", i, got, uint16(back))
			}
			if h&0x200 != 0 && back != h {
				t.Fatalf("quiet NaN %#04x came back as %#04x: its payload is kept", i, uint16(back))
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (s == 1) {
			t.Fatalf("Half(%#04x).Float32() = %g, want %g", i, got, want)
		}
		if back := HalfFromFloat32(got); back != h {
			t.Fatalf("HalfFromFloat32(%g) = %#04x, want %#04x", got, uint16(back), i)
		}
	}
}

// TestHalfRounding: the midpoint between every two neighbouring Halves,
// and the float32s just beside it, round as IEEE says (ties to even);
// so do random float32s across the whole range.
func TestHalfRounding(t *testing.T) {
	for i := range 0x7c00 { // the finite non-negative Halves and their upper neighbours
		lo, hi := float64(Half(i).Float32()), float64(Half(i+1).Float32())
		if i == 0x7bff {
			hi = 65536 // the midpoint to +Inf: 65520
		}
		mid := float32((lo + hi) / 2) // 12 significant bits: exact
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32)} {
			for _, g := range []float32{f, -f} {
				checkRound(t, "HalfFromFloat32", g, HalfFromFloat32(g).Float32(), refHalf(g))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		f := math.Float32frombits(r.Uint32())
		checkRound(t, "HalfFromFloat32", f, HalfFromFloat32(f).Float32(), refHalf(f))
		// Values in and near Half's range, where its rounding happens.
		g := float32(math.Ldexp(r.Float64()+0.5, r.IntN(50)-30))
		if r.IntN(2) == 0 {
			g = -g
		}
		checkRound(t, "HalfFromFloat32", g, HalfFromFloat32(g).Float32(), refHalf(g))
	}
}

func TestHalfCases(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		want Half
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
		{1.0 / 3, 0x3555},
		{65504, 0x7bff},
		{65519.996, 0x7bff}, // below the midpoint to +Inf
		{65520, 0x7c00},     // the midpoint: ties to even, which is +Inf
		{1e10, 0x7c00},      // overflow
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-14, 0x0400},           // the smallest normal
		{0x1p-14 - 0x1p-25, 0x0400}, // halfway from the largest subnormal: to even
		{0x1.ff8p-15, 0x03ff},       // the largest subnormal
		{0x1p-24, 0x0001},           // the smallest subnormal
		{0x1p-25, 0x0000},           // halfway to zero: to even, zero
		{0x1.000002p-25, 0x0001},    // just above
		{0x3p-26, 0x0001},           // 0.75 units: 1
		{0x3p-25, 0x0002},           // 1.5 units: to even, 2 units
		{0x1p-30, 0x0000},           // underflow
		{float32(math.Copysign(0, -1)), 0x8000},
		{-0x1p-30, 0x8000},    // underflow keeps the sign
		{1 + 0x1p-11, 0x3c00}, // halfway: to even
		{1 + 0x3p-11, 0x3c02}, // halfway: to even, up
		{2048 + 1, 0x6800},    // spacing 2 from 2048: 2049 ties to 2048
		{2048 + 3, 0x6802},    // 2051 ties to 2052
	} {
		if got := HalfFromFloat32(tc.f); got != tc.want {
			t.Errorf("HalfFromFloat32(%g) = %#04x, want %#04x", tc.f, uint16(got), uint16(tc.want))
		}
	}
	if s := HalfFromFloat32(-1.5).String(); s != "-1.5" {
		t.Errorf("String: %q", s)
	}
	nan := HalfFromFloat32(float32(math.NaN()))
	if nan&0x7e00 != 0x7e00 || !math.IsNaN(float64(nan.Float32())) {
		t.Errorf("NaN: %#04x", uint16(nan))
	}
	// A signalling float32 NaN whose payload is all in the bits Half
	// drops must not become Inf.
	if h := HalfFromFloat32(math.Float32frombits(0xff800001)); h != 0xfe00 {
		t.Errorf("signalling NaN 0xff800001: %#04x, want 0xfe00", uint16(h))
	}
}

// TestBFloat16Values: every BFloat16 is the upper half of its float32,
// and converts back to itself.
func TestBFloat16Values(t *testing.T) {
	for i := range 1 << 16 {
		v := BFloat16(i)
		got := v.Float32()
		if math.Float32bits(got) != uint32(i)<<16 {
			t.Fatalf("BFloat16(%#04x).Float32() = %#08x", i, math.Float32bits(got))
		}
		back := BFloat16FromFloat32(got)
		if math.IsNaN(float64(got)) {
			if back&0x7f80 != 0x7f80 || back&0x40 == 0 || back&0x8000 != v&0x8000 || v&0x40 != 0 && back != v {
				t.Fatalf("NaN %#04x came back as %#04x", i, uint16(back))
			}
			continue
		}
		if back != v {
			t.Fatalf("BFloat16FromFloat32(%g) = %#04x, want %#04x", got, uint16(back), i)
		}
	}
}

func TestBFloat16Rounding(t *testing.T) {
	for i := range 0x7f80 {
		lo := float64(BFloat16(i).Float32())
		hi := float64(BFloat16(i + 1).Float32())
		if i == 0x7f7f {
			hi = math.Ldexp(1, 128) // the midpoint to +Inf
		}
		mid := (lo + hi) / 2 // 9 significant bits: exact in float32, except the one to +Inf
		cands := []float32{float32(mid)}
		if i == 0x7f7f {
			cands = []float32{math.MaxFloat32} // above the midpoint's float32 neighbour: rounds to +Inf
		} else {
			cands = append(cands, math.Nextafter32(float32(mid), 0), math.Nextafter32(float32(mid), math.MaxFloat32))
		}
		for _, f := range cands {
			for _, g := range []float32{f, -f} {
				checkRound(t, "BFloat16FromFloat32", g, BFloat16FromFloat32(g).Float32(), refBF16(g))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		f := math.Float32frombits(r.Uint32())
		checkRound(t, "BFloat16FromFloat32", f, BFloat16FromFloat32(f).Float32(), refBF16(f))
	}
	for _, tc := range []struct {
		f    float32
		want BFloat16
	}{
		{1, 0x3f80},
		{0.1, 0x3dcd},
		{math.Pi, 0x4049},
		{math.MaxFloat32, 0x7f80}, // rounds up to +Inf
		{-math.MaxFloat32, 0xff80},
		{1 + 0x1p-8, 0x3f80}, // halfway: to even
		{1 + 0x3p-8, 0x3f82}, // halfway: to even, up
		{0x1p-149, 0x0000},   // the smallest float32 subnormal: far below half of BFloat16's
		{0x1p-133, 0x0001},   // the smallest BFloat16 subnormal
		{float32(math.Copysign(0, -1)), 0x8000},
	} {
		if got := BFloat16FromFloat32(tc.f); got != tc.want {
			t.Errorf("BFloat16FromFloat32(%g) = %#04x, want %#04x", tc.f, uint16(got), uint16(tc.want))
		}
	}
	// A NaN whose payload is all in the low bits must stay a NaN.
	if v := BFloat16FromFloat32(math.Float32frombits(0x7f800001)); v != 0x7fc0 {
		t.Errorf("NaN 0x7f800001: %#04x, want 0x7fc0", uint16(v))
	}
	if v := BFloat16FromFloat32(math.Float32frombits(0xffffffff)); v != 0xffff {
		t.Errorf("NaN 0xffffffff: %#04x, want 0xffff (rounding must not carry)", uint16(v))
	}
	if s := BFloat16(0x3fc0).String(); s != "1.5" {
		t.Errorf("String: %q", s)
	}
}
