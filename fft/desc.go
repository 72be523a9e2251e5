package fft

import (
	"math/bits"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/internal/enum"
)

// Type is the kind of transform: complex to complex, real to complex
// (forward only) or complex to real (inverse only).
type Type int

const (
	// C2C transforms complex data to complex data, forward or inverse.
	C2C Type = iota
	// R2C transforms real data to the non-redundant half of its spectrum
	// (Shape[last]/2+1 complex values along the last dimension); it is
	// always a forward transform.
	R2C
	// C2R transforms such a half spectrum back to real data; it is always
	// an inverse transform.
	C2R
)

func (t Type) String() string { return enum.Name(t, "Type", "C2C", "R2C", "C2R") }

// Precision is the floating-point precision of a transform, which fixes
// its element types.
type Precision int

const (
	// Single: complex64 and float32 elements.
	Single Precision = iota
	// Double: complex128 and float64 elements.
	Double
)

func (p Precision) String() string { return enum.Name(p, "Precision", "Single", "Double") }

// realSize and complexSize are the element sizes in bytes.
func (p Precision) realSize() int    { return 4 << p }
func (p Precision) complexSize() int { return 8 << p }

// Desc describes a transform: what a Plan is made for and what a Cache
// looks plans up by.
type Desc struct {
	// Shape is the logical size of one transform, slowest-varying
	// dimension first (row-major, as Go and C lay out arrays: the last
	// dimension is contiguous): 1, 2 or 3 dimensions, each at least 1.
	// For R2C and C2R it is the shape of the real data; the complex data
	// has Shape[last]/2+1 elements along the last dimension.
	Shape []int
	// Type is C2C (the zero value), R2C or C2R.
	Type Type
	// Precision is Single (the zero value: complex64, float32) or Double
	// (complex128, float64).
	Precision Precision
	// Batch is the number of transforms, stored one after another; 0
	// means 1.
	Batch int
	// InPlace makes an R2C or C2R plan for one Buffer that holds both
	// input and output, in the padded layout in-place real transforms
	// need (FFTW's): along the last dimension, every row of real data
	// takes the room of its Shape[last]/2+1 complex values, that is
	// 2*(Shape[last]/2+1) reals, of which the first Shape[last] are the
	// data. A C2C plan runs in place or out of place alike, so InPlace is
	// ignored (and cleared) for C2C.
	InPlace bool
}

// key identifies a plan in a Cache: everything cuFFT's plan depends on
// (the stream and so the device are the Cache's own).
type key struct {
	rank    int
	dims    [3]int
	typ     Type
	prec    Precision
	batch   int
	inPlace bool
}

// layout is a validated Desc with its sizes worked out.
type layout struct {
	Desc
	batch     int // Batch, with 0 made 1
	n         int // elements of one real or complex transform (prod(Shape))
	half      int // complex elements of one half spectrum (Shape[last]/2+1 along the last dimension)
	inBytes   int // bytes the input needs
	outBytes  int // bytes the output needs
	realPitch int // reals per row of the last dimension in the real data (Shape[last], or padded in place)
}

// maxBytes keeps every size, and every sum of a pointer and a size, in
// range (1 PiB is far beyond any GPU's memory).
const maxBytes = 1 << 50

// mul multiplies non-negative sizes, reporting whether the product stays
// within maxBytes.
func mul(xs ...int) (int, bool) {
	p := uint64(1)
	for _, x := range xs {
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > maxBytes {
			return 0, false
		}
		p = lo
	}
	return int(p), true
}

// check validates d and works out its sizes.
func (d Desc) check(fn string) (layout, error) {
	var l layout
	if len(d.Shape) < 1 || len(d.Shape) > 3 {
		return l, argErr(fn, "d.Shape", "Desc.Shape has %d dimensions; cuFFT plans have 1, 2 or 3", len(d.Shape))
	}
	for i, n := range d.Shape {
		if n < 1 {
			return l, argErr(fn, "d.Shape", "Desc.Shape[%d] is %d; every dimension must be at least 1", i, n)
		}
	}
	if d.Type < C2C || d.Type > C2R {
		return l, argErr(fn, "d.Type", "Desc.Type is %v; want C2C, R2C or C2R", d.Type)
	}
	if d.Precision != Single && d.Precision != Double {
		return l, argErr(fn, "d.Precision", "Desc.Precision is %v; want Single or Double", d.Precision)
	}
	if d.Batch < 0 {
		return l, argErr(fn, "d.Batch", "Desc.Batch is %d; want at least 1 (or 0, which means 1)", d.Batch)
	}
	if d.Type == C2C {
		d.InPlace = false
	}
	d.Shape = append([]int(nil), d.Shape...) // the caller may reuse its slice
	l.Desc = d
	l.batch = max(d.Batch, 1)
	last := d.Shape[len(d.Shape)-1]
	outer, ok := mul(d.Shape[:len(d.Shape)-1]...)
	if !ok {
		return l, argErr(fn, "d.Shape", "Desc.Shape %v is too large", d.Shape)
	}
	cs, rs := d.Precision.complexSize(), d.Precision.realSize()
	// The complex data of all transforms is the largest size below.
	if _, ok := mul(outer, last, l.batch, cs); !ok {
		return l, argErr(fn, "d.Shape", "Desc.Shape %v with batch %d is too large", d.Shape, l.batch)
	}
	l.n = outer * last
	l.half = outer * (last/2 + 1)
	full, halfBytes, realBytes := l.batch*l.n*cs, l.batch*l.half*cs, l.batch*l.n*rs
	l.realPitch = last
	switch {
	case d.Type == C2C:
		l.inBytes, l.outBytes = full, full
	case d.InPlace:
		l.inBytes, l.outBytes = halfBytes, halfBytes
		l.realPitch = 2 * (last/2 + 1)
	case d.Type == R2C:
		l.inBytes, l.outBytes = realBytes, halfBytes
	default: // C2R
		l.inBytes, l.outBytes = halfBytes, realBytes
	}
	return l, nil
}

// Bytes returns the sizes, in bytes, of the input and output Buffers of a
// transform of d (in place, both are the one Buffer's size), or why d is
// not a valid description.
func (d Desc) Bytes() (in, out int, err error) {
	l, err := d.check("Desc.Bytes")
	if err != nil {
		return 0, 0, err
	}
	return l.inBytes, l.outBytes, nil
}

func (l *layout) key() key {
	k := key{rank: len(l.Shape), typ: l.Type, prec: l.Precision, batch: l.batch, inPlace: l.InPlace}
	copy(k.dims[:], l.Shape)
	return k
}

// cufftType is cuFFT's name for the transform.
func (l *layout) cufftType() cufft.Type {
	double := l.Precision == Double
	switch l.Type {
	case R2C:
		if double {
			return cufft.D2Z
		}
		return cufft.R2C
	case C2R:
		if double {
			return cufft.Z2D
		}
		return cufft.C2R
	}
	if double {
		return cufft.Z2Z
	}
	return cufft.C2C
}

// planArgs are cufftMakePlanMany64's layout arguments. Out of place the
// basic layout (nil embeds) is cuFFT's contiguous one; in place the
// padded real layout is spelled out, so that the plan does not depend on
// how cuFFT reads a basic layout given one pointer.
type planArgs struct {
	n, inembed, onembed []int64
	idist, odist        int64
}

func (l *layout) planArgs() planArgs {
	var a planArgs
	for _, s := range l.Shape {
		a.n = append(a.n, int64(s))
	}
	a.idist, a.odist = int64(l.n), int64(l.n)
	if l.Type == C2C {
		return a
	}
	half := int64(l.half)
	if l.Type == R2C {
		a.odist = half
	} else {
		a.idist = half
	}
	if !l.InPlace {
		return a
	}
	last := len(a.n) - 1
	realEmbed := append([]int64(nil), a.n...)
	realEmbed[last] = int64(l.realPitch)
	cplxEmbed := append([]int64(nil), a.n...)
	cplxEmbed[last] = a.n[last]/2 + 1
	realDist := 2 * half // the padded real rows take the room of the complex ones
	if l.Type == R2C {
		a.inembed, a.onembed, a.idist, a.odist = realEmbed, cplxEmbed, realDist, half
	} else {
		a.inembed, a.onembed, a.idist, a.odist = cplxEmbed, realEmbed, half, realDist
	}
	return a
}
