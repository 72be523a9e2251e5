package blas

import (
	"math"
	"strconv"
)

// Half is an IEEE 754 binary16 number (CUDA's __half): 1 sign bit, 5
// exponent bits, 10 fraction bits. It holds the bits; convert with
// HalfFromFloat32 and Float32.
type Half uint16

// BFloat16 is a bfloat16 number (CUDA's __nv_bfloat16): the upper 16 bits
// of a float32, so 8 exponent bits and 7 fraction bits. It holds the bits;
// convert with BFloat16FromFloat32 and Float32.
type BFloat16 uint16

// HalfFromFloat32 rounds f to the nearest Half, ties to even, as CUDA's
// __float2half_rn does: values from 65520 up become +Inf, values up to
// 2^-25 become zero (keeping the sign), subnormals are kept, and a NaN
// stays a NaN of the same sign (made quiet).
func HalfFromFloat32(f float32) Half {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac == 0 {
			return Half(sign | 0x7c00)
		}
		// Keep the top of the payload; the quiet bit keeps it a NaN.
		return Half(sign | 0x7e00 | uint16(frac>>13))
	}
	e := exp - 127 + 15 // the Half exponent field, if f is normal there
	if e >= 0x1f {
		return Half(sign | 0x7c00)
	}
	if e <= 0 {
		// A Half subnormal (or zero): count units of 2^-24.
		if e < -10 {
			return Half(sign) // below 2^-25: rounds to zero
		}
		m := frac | 0x800000
		shift := uint(14 - e)
		r := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && r&1 == 1 {
			r++ // 0x3ff+1 becomes the smallest normal, which is right
		}
		return Half(sign | uint16(r))
	}
	r := uint32(e)<<10 | frac>>13
	rem := frac & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // a carry into the exponent is right, up to +Inf
	}
	return Half(sign | uint16(r))
}

// Float32 returns h as a float32, exactly (every Half is a float32).
func (h Half) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// frac · 2^-24, exact in float32.
		return math.Float32frombits(sign | math.Float32bits(float32(frac)*0x1p-24))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// String formats h as its float32 value.
func (h Half) String() string { return strconv.FormatFloat(float64(h.Float32()), 'g', -1, 32) }

// BFloat16FromFloat32 rounds f to the nearest BFloat16, ties to even, as
// CUDA's __float2bfloat16_rn does: overflow gives ±Inf, subnormals are
// kept, and a NaN stays a NaN of the same sign (made quiet).
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: truncating could make it Inf
		return BFloat16(b>>16 | 0x40)
	}
	b += 0x7fff + (b>>16)&1
	return BFloat16(b >> 16)
}

// Float32 returns v as a float32, exactly.
func (v BFloat16) Float32() float32 { return math.Float32frombits(uint32(v) << 16) }

// String formats v as its float32 value.
func (v BFloat16) String() string { return strconv.FormatFloat(float64(v.Float32()), 'g', -1, 32) }
