package blas

import (
	"math"
	"strconv"
)

// E4M3 is an 8-bit floating-point number of the OCP FP8 specification
// (CUDA's __nv_fp8_e4m3): 1 sign bit, 4 exponent bits (bias 7), 3
// fraction bits. It has no infinities: its largest magnitude is 448, and
// S.1111.111 is NaN. It holds the bits; convert with E4M3FromFloat32 and
// Float32. FP8 Matmul takes it for A and B, and for the result.
type E4M3 uint8

// E5M2 is an 8-bit floating-point number of the OCP FP8 specification
// (CUDA's __nv_fp8_e5m2): 1 sign bit, 5 exponent bits (bias 15), 2
// fraction bits, with infinities and NaNs as IEEE 754 has them (it is
// the upper byte of a Half). Its largest finite magnitude is 57344.
type E5M2 uint8

// fp8Format describes one of the two formats.
type fp8Format struct {
	mant   int     // fraction bits
	bias   int     // exponent bias
	maxExp int     // largest exponent field of a finite number
	max    float64 // largest finite magnitude
	nan    uint8   // the NaN of positive sign
}

var (
	e4m3Format = fp8Format{mant: 3, bias: 7, maxExp: 15, max: 448, nan: 0x7f}
	e5m2Format = fp8Format{mant: 2, bias: 15, maxExp: 30, max: 57344, nan: 0x7e}
)

// fromFloat32 rounds f to the format, to nearest with ties to even, and
// saturates: magnitudes beyond the largest finite one, infinities
// included, become it (the OCP specification's saturating conversion,
// CUDA's __NV_SATFINITE); a NaN stays a NaN of the same sign.
func (ff fp8Format) fromFloat32(f float32) uint8 {
	var sign uint8
	if math.Signbit(float64(f)) {
		sign = 0x80
	}
	x := math.Abs(float64(f))
	switch {
	case x != x:
		return sign | ff.nan
	case x >= ff.max: // Inf too
		return sign | ff.encode(ff.max)
	case x == 0:
		return sign
	}
	// The spacing of the format at x: 2^(e-mant) for x in [2^e, 2^(e+1)),
	// and the subnormals' spacing below the smallest normal 2^(1-bias).
	_, e := math.Frexp(x) // x = frac·2^e, frac in [0.5, 1)
	e = max(e-1, 1-ff.bias)
	q := math.Ldexp(1, e-ff.mant)
	// x/q is exact (a float32 scaled by a power of two), and so is the
	// rounded multiple of q.
	r := math.RoundToEven(x/q) * q
	return sign | ff.encode(min(r, ff.max))
}

// encode returns the bits of r, a non-negative number of the format.
func (ff fp8Format) encode(r float64) uint8 {
	if r == 0 {
		return 0
	}
	minNormal := math.Ldexp(1, 1-ff.bias)
	if r < minNormal {
		return uint8(r / math.Ldexp(1, 1-ff.bias-ff.mant)) // a subnormal's fraction
	}
	frac, e := math.Frexp(r)
	e--
	m := int(math.Ldexp(frac*2-1, ff.mant))
	return uint8((e+ff.bias)<<ff.mant | m)
}

// toFloat32 returns the number that b encodes, exactly.
func (ff fp8Format) toFloat32(b uint8, infs bool) float32 {
	neg := b&0x80 != 0
	exp := int(b&0x7f) >> ff.mant
	frac := int(b) & (1<<ff.mant - 1)
	var v float64
	switch {
	case infs && exp == ff.maxExp+1 && frac == 0:
		v = math.Inf(1)
	case infs && exp == ff.maxExp+1, !infs && b&0x7f == ff.nan:
		v = math.NaN()
	case exp == 0:
		v = math.Ldexp(float64(frac), 1-ff.bias-ff.mant)
	default:
		v = math.Ldexp(float64(1<<ff.mant|frac), exp-ff.bias-ff.mant)
	}
	if neg {
		v = -v
	}
	return float32(v)
}

// E4M3FromFloat32 rounds f to the nearest E4M3, ties to even, saturating
// as the OCP FP8 specification's saturating conversion (and CUDA's
// __nv_cvt_float_to_fp8 with __NV_SATFINITE) does: magnitudes beyond 448,
// and infinities, become ±448; values up to 2⁻¹⁰ become zero (keeping the
// sign), subnormals (multiples of 2⁻⁹ below 2⁻⁶) are kept, and a NaN
// becomes the NaN of its sign.
func E4M3FromFloat32(f float32) E4M3 { return E4M3(e4m3Format.fromFloat32(f)) }

// Float32 returns v as a float32, exactly.
func (v E4M3) Float32() float32 { return e4m3Format.toFloat32(uint8(v), false) }

// String formats v as its float32 value.
func (v E4M3) String() string { return strconv.FormatFloat(float64(v.Float32()), 'g', -1, 32) }

// E5M2FromFloat32 rounds f to the nearest E5M2, ties to even, saturating
// as E4M3FromFloat32 does: magnitudes beyond 57344, and infinities,
// become ±57344; subnormals (multiples of 2⁻¹⁶ below 2⁻¹⁴) are kept, and
// a NaN stays a NaN of the same sign.
func E5M2FromFloat32(f float32) E5M2 { return E5M2(e5m2Format.fromFloat32(f)) }

// Float32 returns v as a float32, exactly: ±Inf and NaN for the bit
// patterns that encode them.
func (v E5M2) Float32() float32 { return e5m2Format.toFloat32(uint8(v), true) }

// String formats v as its float32 value.
func (v E5M2) String() string { return strconv.FormatFloat(float64(v.Float32()), 'g', -1, 32) }
