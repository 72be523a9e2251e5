package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fp8Values returns the finite non-negative values of a format with their
// codes, in increasing order (code order is value order for them).
func fp8Values(decode func(uint8) float32) (vals []float64, codes []uint8) {
	for c := range 0x80 {
		v := float64(decode(uint8(c)))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		vals, codes = append(vals, v), append(codes, uint8(c))
	}
	return vals, codes
}

// nearestFP8 is the reference conversion: the nearest of the format's
// values by search, ties to the even code, saturating at the largest.
func nearestFP8(f float32, vals []float64, codes []uint8) uint8 {
	var sign uint8
	if math.Signbit(float64(f)) {
		sign = 0x80
	}
	x := math.Abs(float64(f))
	best := 0
	for i, v := range vals {
		d, bd := math.Abs(x-v), math.Abs(x-vals[best])
		if d < bd || d == bd && codes[i]&1 == 0 {
			best = i
		}
	}
	return sign | codes[best]
}

func TestFP8(t *testing.T) {
	type format struct {
		name     string
		from     func(float32) uint8
		to       func(uint8) float32
		max      float32
		maxCode  uint8
		one      uint8
		smallest float64 // the smallest subnormal
		infs     bool
	}
	formats := []format{
		{"E4M3", func(f float32) uint8 { return uint8(E4M3FromFloat32(f)) }, func(b uint8) float32 { return E4M3(b).Float32() }, 448, 0x7e, 0x38, 0x1p-9, false},
		{"E5M2", func(f float32) uint8 { return uint8(E5M2FromFloat32(f)) }, func(b uint8) float32 { return E5M2(b).Float32() }, 57344, 0x7b, 0x3c, 0x1p-16, true},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, ft := range formats {
		t.Run(ft.name, func(t *testing.T) {
			vals, codes := fp8Values(ft.to)
			if ft.to(ft.one) != 1 || ft.from(1) != ft.one || ft.to(ft.maxCode) != ft.max || float64(ft.to(1)) != ft.smallest {
				t.Fatalf("1 is %#x (%v), the largest %#x is %v, the smallest %v", ft.from(1), ft.to(ft.one), ft.maxCode, ft.to(ft.maxCode), ft.to(1))
			}
			if vals[len(vals)-1] != float64(ft.max) {
				t.Errorf("largest finite value %v, want %v", vals[len(vals)-1], ft.max)
			}
			// Every code converts back to itself (NaNs to a NaN).
			for c := range 256 {
				v := ft.to(uint8(c))
				got := ft.from(v)
				switch {
				case v != v:
					if g := ft.to(got); g == g {
						t.Errorf("NaN code %#x: back to %#x = %v, want a NaN", c, got, g)
					}
					if got&0x80 != uint8(c)&0x80 {
						t.Errorf("NaN code %#x: sign lost (%#x)", c, got)
					}
				case math.IsInf(float64(v), 0):
					if got != ft.maxCode|uint8(c)&0x80 {
						t.Errorf("%v: %#x, want the largest finite value (saturation)", v, got)
					}
				case got != uint8(c):
					t.Errorf("code %#x (%v) converts back to %#x", c, v, got)
				}
			}
			// Midpoints round to the even code; just off them, to the
			// nearer value.
			for i := 0; i+1 < len(vals); i++ {
				mid := (vals[i] + vals[i+1]) / 2
				want := codes[i]
				if codes[i]&1 != 0 {
					want = codes[i+1]
				}
				if got := ft.from(float32(mid)); got != want {
					t.Errorf("midpoint %v of %v and %v: %#x, want %#x", mid, vals[i], vals[i+1], got, want)
				}
				if got := ft.from(-float32(mid)); got != want|0x80 {
					t.Errorf("midpoint -%v: %#x, want %#x", mid, got, want|0x80)
				}
				below, above := math.Nextafter32(float32(mid), 0), math.Nextafter32(float32(mid), 1e9)
				if got := ft.from(below); got != codes[i] {
					t.Errorf("%v, just below a midpoint: %#x, want %#x", below, got, codes[i])
				}
				if got := ft.from(above); got != codes[i+1] {
					t.Errorf("%v, just above a midpoint: %#x, want %#x", above, got, codes[i+1])
				}
			}
			// Saturation, signed zeros, NaN.
			for _, f := range []float32{ft.max * 1.01, ft.max * 1000, math.MaxFloat32, float32(math.Inf(1))} {
				if got := ft.from(f); got != ft.maxCode {
					t.Errorf("%v: %#x, want %#x (saturated)", f, got, ft.maxCode)
				}
				if got := ft.from(-f); got != ft.maxCode|0x80 {
					t.Errorf("%v: %#x, want %#x (saturated)", -f, got, ft.maxCode|0x80)
				}
			}
			if ft.from(float32(math.Copysign(0, -1))) != 0x80 || ft.from(0) != 0 {
				t.Error("zeros lose their sign")
			}
			if v := ft.to(ft.from(float32(math.NaN()))); v == v {
				t.Errorf("NaN converts to %v", v)
			}
			if got := ft.from(float32(ft.smallest / 2)); got != 0 {
				t.Errorf("half the smallest subnormal: %#x, want 0 (a tie, to even)", got)
			}
			// Random values, over the whole range and around 1, against
			// the search.
			for range 20000 {
				f := float32(math.Ldexp(2*r.Float64()-1, r.IntN(40)-24))
				if got, want := ft.from(f), nearestFP8(f, vals, codes); got != want {
					t.Fatalf("%v: %#x, want %#x", f, got, want)
				}
			}
		})
	}
	// E5M2 is the upper byte of a Half: rounding a Half's bits to that
	// byte (ties to even) is an independent reference for every Half.
	for h := range 1 << 16 {
		f := Half(h).Float32()
		if f != f || math.Abs(float64(f)) > 57344 {
			continue
		}
		b := uint32(h)
		want := uint8((b&0x7fff + 0x7f + (b>>8)&1) >> 8)
		if want > 0x7b {
			want = 0x7b // rounding up from the largest finite value: saturate
		}
		want |= uint8(b>>8) & 0x80
		if got := uint8(E5M2FromFloat32(f)); got != want {
			t.Fatalf("Half %#04x (%v): E5M2 %#x, want %#x", h, f, got, want)
		}
	}
}
