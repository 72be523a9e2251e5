package fft

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
)

// The GPU tests compare every transform with a naive O(n²) DFT computed
// here in float64, at small sizes that cover the cases cuFFT treats
// differently: 1, odd (7), composite (30), prime (97, Bluestein's
// algorithm), a power of two (128), 2-D and 3-D shapes, batches, in place
// and out of place, single and double precision.

// gpuStream returns device 0 and a new stream, closed when the test ends.
func gpuStream(t testing.TB) (*core.Device, *core.Stream) {
	s := libtest.Stream(t, core.StreamOptions{})
	return s.Device(), s
}

// gpuCache is gpuStream with a Cache on the stream, closed when t ends.
func gpuCache(t testing.TB) (*core.Device, *core.Stream, *Cache) {
	dev, s := gpuStream(t)
	c, err := New(s, nil)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return dev, s, c
}

// tol bounds the relative L2 error of a transform against the float64
// reference (whose input is the same rounded data). An FFT's rounding
// error relative to the data's norm grows like eps·O(log n): about 1e-7
// in single and 1e-16 in double at these sizes, a few times more for the
// prime size, which cuFFT computes with Bluestein's algorithm through a
// larger FFT. The bounds leave a margin of about 100 (single) and 1000
// (double); a wrong layout, sign, scale or stride gives errors of order 1.
func tol(p Precision) float64 {
	if p == Single {
		return 1e-5
	}
	return 1e-12
}

var precisions = []Precision{Single, Double}

// testShapes are the shapes and batches every transform type is run at.
var testShapes = []struct {
	shape []int
	batch int
}{
	{[]int{1}, 1}, {[]int{1}, 3}, {[]int{7}, 1}, {[]int{30}, 3}, {[]int{97}, 2},
	{[]int{128}, 1}, {[]int{128}, 4}, {[]int{5, 7}, 1}, {[]int{5, 7}, 2},
	{[]int{7, 1}, 2}, {[]int{4, 6, 3}, 1}, {[]int{4, 6, 3}, 2}, {[]int{3, 5, 8}, 1},
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// dft is the unnormalized DFT, with exponent sign sign (-1 forward, +1
// inverse), of batch row-major arrays of the given shape: a naive sum
// along each axis in turn (the multidimensional DFT is separable).
func dft(x []complex128, shape []int, batch int, sign float64) []complex128 {
	y := slices.Clone(x)
	n := prod(shape)
	for b := range batch {
		t := y[b*n : (b+1)*n]
		stride := n
		for _, m := range shape {
			stride /= m
			line := make([]complex128, m)
			for outer := range n / (m * stride) {
				for inner := range stride {
					base := outer*m*stride + inner
					for k := range m {
						var s complex128
						for j := range m {
							// j*k mod m keeps the angle small, and the twiddle exact.
							a := sign * 2 * math.Pi * float64(j*k%m) / float64(m)
							s += t[base+j*stride] * complex(math.Cos(a), math.Sin(a))
						}
						line[k] = s
					}
					for k := range m {
						t[base+k*stride] = line[k]
					}
				}
			}
		}
	}
	return y
}

// halfSpectrum keeps the first last/2+1 values along the last dimension:
// the layout of an R2C output and a C2R input.
func halfSpectrum(x []complex128, shape []int, batch int) []complex128 {
	last := shape[len(shape)-1]
	var h []complex128
	for r := range batch * prod(shape) / last {
		h = append(h, x[r*last:r*last+last/2+1]...)
	}
	return h
}

// pad lays rows of last reals out at pitch, as the in-place real layout
// has them; unpad takes them back.
func pad(x []float64, last, pitch int) []float64 {
	var p []float64
	for r := range len(x) / last {
		p = append(p, x[r*last:(r+1)*last]...)
		p = append(p, make([]float64, pitch-last)...)
	}
	return p
}

func unpad(p []float64, last, pitch int) []float64 {
	var x []float64
	for r := range len(p) / pitch {
		x = append(x, p[r*pitch:r*pitch+last]...)
	}
	return x
}

func randComplex(r *rand.Rand, n int, p Precision) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(round(p, 2*r.Float64()-1), round(p, 2*r.Float64()-1))
	}
	return x
}

func randReal(r *rand.Rand, n int, p Precision) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = round(p, 2*r.Float64()-1)
	}
	return x
}

// round rounds v to the precision, so that the reference starts from
// exactly the data the GPU gets.
func round(p Precision, v float64) float64 {
	if p == Single {
		return float64(float32(v))
	}
	return v
}

func roundAll(p Precision, x []complex128) []complex128 {
	y := make([]complex128, len(x))
	for i, v := range x {
		y[i] = complex(round(p, real(v)), round(p, imag(v)))
	}
	return y
}

func toComplex(x []float64) []complex128 {
	y := make([]complex128, len(x))
	for i, v := range x {
		y[i] = complex(v, 0)
	}
	return y
}

func scaled(x []complex128, a float64) []complex128 {
	y := make([]complex128, len(x))
	for i, v := range x {
		y[i] = v * complex(a, 0)
	}
	return y
}

// relErr is ||got-want|| / ||want|| (the plain norm when want is zero).
func relErr(got, want []complex128) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		d := got[i] - want[i]
		num += real(d)*real(d) + imag(d)*imag(d)
		den += real(want[i])*real(want[i]) + imag(want[i])*imag(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// nanFill is a 32-bit NaN; repeated (0x7fffffff7fffffff), it is also a
// 64-bit NaN, since its top 12 bits are 0x7ff. (0x7fc00000 is not: twice it
// reads as 2.2e307.) Outputs are filled with it, so that a value the
// transform does not write fails.
const nanFill = 0x7fffffff

// alloc allocates n bytes on s, filled with NaN, freed when the test ends.
func alloc(t testing.TB, dev *core.Device, s *core.Stream, n int) *core.Buffer {
	t.Helper()
	b, err := dev.Allocate(n, s)
	must(t, err)
	t.Cleanup(func() { b.Close() })
	must(t, b.Memset32(nanFill))
	return b
}

// putReal copies x to b: float64 in Double precision, rounded to
// float32 in Single.
func putReal(t testing.TB, b *core.Buffer, p Precision, x []float64) {
	t.Helper()
	if p == Double {
		must(t, core.CopyToDevice(b, x))
		return
	}
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	must(t, core.CopyToDevice(b, y))
}

// getReal reads n real values; the copy runs on the buffer's stream and
// waits for it, after the transforms queued there.
func getReal(t testing.TB, b *core.Buffer, p Precision, n int) []float64 {
	t.Helper()
	x := make([]float64, n)
	if p == Double {
		must(t, core.CopyFromDevice(x, b))
		return x
	}
	y := make([]float32, n)
	must(t, core.CopyFromDevice(y, b))
	for i, v := range y {
		x[i] = float64(v)
	}
	return x
}

// putComplex and getComplex are putReal and getReal of the real and
// imaginary parts, which is how complex values lie in memory.
func putComplex(t testing.TB, b *core.Buffer, p Precision, x []complex128) {
	t.Helper()
	putReal(t, b, p, unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), 2*len(x)))
}

func getComplex(t testing.TB, b *core.Buffer, p Precision, n int) []complex128 {
	t.Helper()
	x := getReal(t, b, p, 2*n)
	return unsafe.Slice((*complex128)(unsafe.Pointer(unsafe.SliceData(x))), n)
}

func check(t testing.TB, what string, p Precision, got, want []complex128) {
	t.Helper()
	if e := relErr(got, want); !(e <= tol(p)) { // !(<=) catches NaN
		t.Errorf("%s: relative error %.3g, want <= %g", what, e, tol(p))
	}
}

func TestGPUC2C(t *testing.T) {
	dev, s, c := gpuCache(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, prec := range precisions {
		for _, tc := range testShapes {
			name := fmt.Sprintf("%v %v batch %d", prec, tc.shape, tc.batch)
			n := prod(tc.shape)
			p, err := c.Plan(Desc{Shape: tc.shape, Precision: prec, Batch: tc.batch})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			bytes := tc.batch * n * prec.complexSize()
			if in, out := p.Bytes(); in != bytes || out != bytes {
				t.Fatalf("%s: Bytes %d, %d, want %d", name, in, out, bytes)
			}
			x := randComplex(r, tc.batch*n, prec)
			fwd := dft(x, tc.shape, tc.batch, -1)
			in, out, back := alloc(t, dev, s, bytes), alloc(t, dev, s, bytes), alloc(t, dev, s, bytes)
			putComplex(t, in, prec, x)

			// Out of place, forward; then inverse of that: N·x.
			must(t, p.Forward(in, out))
			check(t, name+" forward", prec, getComplex(t, out, prec, len(x)), fwd)
			must(t, p.Inverse(out, back))
			check(t, name+" forward+inverse = N·x", prec, getComplex(t, back, prec, len(x)), scaled(x, float64(n)))

			// The inverse on its own, against the reference.
			putComplex(t, in, prec, x)
			must(t, p.Inverse(in, out))
			check(t, name+" inverse", prec, getComplex(t, out, prec, len(x)), dft(x, tc.shape, tc.batch, +1))

			// In place, and the normalized inverse back to x.
			putComplex(t, in, prec, x)
			must(t, p.Forward(in, in))
			check(t, name+" forward in place", prec, getComplex(t, in, prec, len(x)), fwd)
			must(t, p.InverseNormalized(in, in))
			check(t, name+" forward+normalized inverse in place = x", prec, getComplex(t, in, prec, len(x)), x)
		}
	}
	if c.Len() != len(precisions)*len(testShapes) {
		t.Errorf("Cache holds %d plans, want %d", c.Len(), len(precisions)*len(testShapes))
	}
}

// TestGPURealTransforms checks R2C against the first last/2+1 values of
// the full complex DFT of real data (the Hermitian layout), that nothing
// past them is written, C2R of a Hermitian half spectrum computed here,
// round trips, and the padded in-place layout.
func TestGPURealTransforms(t *testing.T) {
	dev, s, c := gpuCache(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, prec := range precisions {
		cs, rs := prec.complexSize(), prec.realSize()
		for _, tc := range testShapes {
			name := fmt.Sprintf("%v %v batch %d", prec, tc.shape, tc.batch)
			n, last := prod(tc.shape), tc.shape[len(tc.shape)-1]
			nh := tc.batch * n / last * (last/2 + 1) // complex values of the half spectra
			x := randReal(r, tc.batch*n, prec)
			xc := toComplex(x)
			want := halfSpectrum(dft(xc, tc.shape, tc.batch, -1), tc.shape, tc.batch)
			if len(want) != nh {
				t.Fatalf("%s: reference has %d values, want %d", name, len(want), nh)
			}
			r2c, err := c.Plan(Desc{Shape: tc.shape, Type: R2C, Precision: prec, Batch: tc.batch})
			if err != nil {
				t.Fatalf("%s: R2C: %v", name, err)
			}
			c2r, err := c.Plan(Desc{Shape: tc.shape, Type: C2R, Precision: prec, Batch: tc.batch})
			if err != nil {
				t.Fatalf("%s: C2R: %v", name, err)
			}

			// R2C out of place, into a Buffer with 64 bytes to spare that
			// must keep their NaNs.
			in := alloc(t, dev, s, len(x)*rs)
			out := alloc(t, dev, s, nh*cs+64)
			putReal(t, in, prec, x)
			must(t, r2c.Forward(in, out))
			all := getComplex(t, out, prec, nh+64/cs)
			check(t, name+" R2C", prec, all[:nh], want)
			for i, v := range all[nh:] {
				if !math.IsNaN(real(v)) || !math.IsNaN(imag(v)) {
					t.Errorf("%s: R2C wrote %v past its output, at %d", name, v, nh+i)
					break
				}
			}

			// C2R of R2C's output: N·x.
			back := alloc(t, dev, s, len(x)*rs)
			must(t, c2r.Inverse(out, back))
			check(t, name+" R2C+C2R = N·x", prec, toComplex(getReal(t, back, prec, len(x))), scaled(xc, float64(n)))

			// C2R of the reference half spectrum (Hermitian up to
			// rounding, which keeps conjugate pairs conjugate): N·x.
			half := alloc(t, dev, s, nh*cs)
			putComplex(t, half, prec, roundAll(prec, want))
			must(t, c2r.Inverse(half, back))
			check(t, name+" C2R", prec, toComplex(getReal(t, back, prec, len(x))), scaled(xc, float64(n)))
			putComplex(t, half, prec, roundAll(prec, want)) // C2R may have overwritten it
			must(t, c2r.InverseNormalized(half, back))
			check(t, name+" C2R normalized = x", prec, toComplex(getReal(t, back, prec, len(x))), xc)

			// In place: the real rows padded to 2*(last/2+1).
			r2cIn, err := c.Plan(Desc{Shape: tc.shape, Type: R2C, Precision: prec, Batch: tc.batch, InPlace: true})
			if err != nil {
				t.Fatalf("%s: R2C in place: %v", name, err)
			}
			c2rIn, err := c.Plan(Desc{Shape: tc.shape, Type: C2R, Precision: prec, Batch: tc.batch, InPlace: true})
			if err != nil {
				t.Fatalf("%s: C2R in place: %v", name, err)
			}
			if r2cIn == r2c || c2rIn == c2r {
				t.Fatalf("%s: the in-place plans are the out-of-place ones", name)
			}
			pitch := 2 * (last/2 + 1)
			io := alloc(t, dev, s, nh*cs)
			putReal(t, io, prec, pad(x, last, pitch))
			must(t, r2cIn.Forward(io, io))
			check(t, name+" R2C in place", prec, getComplex(t, io, prec, nh), want)
			must(t, c2rIn.Inverse(io, io))
			check(t, name+" R2C+C2R in place = N·x", prec,
				toComplex(unpad(getReal(t, io, prec, nh*2), last, pitch)), scaled(xc, float64(n)))
			putReal(t, io, prec, pad(x, last, pitch))
			must(t, r2cIn.Forward(io, io))
			must(t, c2rIn.InverseNormalized(io, io))
			check(t, name+" R2C+normalized C2R in place = x", prec,
				toComplex(unpad(getReal(t, io, prec, nh*2), last, pitch)), xc)
		}
	}
}

// TestGPUHermitian checks the symmetry of an R2C output itself, for a
// 1-D even size: X[0] and X[n/2] are real, and the full DFT's upper half,
// which R2C leaves out, is the conjugate of its lower half.
func TestGPUHermitian(t *testing.T) {
	dev, s := gpuStream(t)
	const n = 16
	p, err := NewPlan(s, Desc{Shape: []int{n}, Type: R2C, Precision: Double})
	must(t, err)
	defer p.Close()
	x := randReal(rand.New(rand.NewPCG(5, 6)), n, Double)
	in, out := alloc(t, dev, s, n*8), alloc(t, dev, s, (n/2+1)*16)
	putReal(t, in, Double, x)
	must(t, p.Forward(in, out))
	h := getComplex(t, out, Double, n/2+1)
	full := dft(toComplex(x), []int{n}, 1, -1)
	if math.Abs(imag(h[0])) > 1e-12 || math.Abs(imag(h[n/2])) > 1e-12 {
		t.Errorf("X[0] = %v and X[n/2] = %v should be real", h[0], h[n/2])
	}
	for k := 1; k < n/2; k++ {
		if d := h[k] - complex(real(full[n-k]), -imag(full[n-k])); math.Hypot(real(d), imag(d)) > 1e-12 {
			t.Errorf("X[%d] = %v is not conj(X[%d]) = conj(%v)", k, h[k], n-k, full[n-k])
		}
	}
}

func TestGPUCache(t *testing.T) {
	dev, s, c := gpuCache(t)
	get := func(d Desc) *Plan {
		t.Helper()
		p, err := c.Plan(d)
		must(t, err)
		return p
	}
	p := get(Desc{Shape: []int{64}})
	if q := get(Desc{Shape: []int{64}, Batch: 1, InPlace: true}); q != p {
		t.Error("the same C2C shape gave a second plan")
	}
	distinct := []*Plan{p,
		get(Desc{Shape: []int{64}, Batch: 2}),
		get(Desc{Shape: []int{64}, Precision: Double}),
		get(Desc{Shape: []int{8, 8}}),
		get(Desc{Shape: []int{64}, Type: R2C}),
		get(Desc{Shape: []int{64}, Type: R2C, InPlace: true}),
	}
	for i := range distinct {
		for j := range i {
			if distinct[i] == distinct[j] {
				t.Errorf("plans %d and %d are one", i, j)
			}
		}
	}
	if c.Len() != len(distinct) {
		t.Errorf("Len %d, want %d", c.Len(), len(distinct))
	}

	// Goroutines asking for one new shape at once get one plan.
	var wg sync.WaitGroup
	got := make([]*Plan, 8)
	for i := range got {
		wg.Go(func() {
			p, err := c.Plan(Desc{Shape: []int{100}})
			if err != nil {
				t.Error(err)
			}
			got[i] = p
		})
	}
	wg.Wait()
	for _, q := range got {
		if q != got[0] || q == nil {
			t.Fatalf("concurrent Plan calls gave %p and %p", q, got[0])
		}
	}
	if c.Len() != len(distinct)+1 {
		t.Errorf("Len %d, want %d", c.Len(), len(distinct)+1)
	}

	// A plan of another stream's Cache is another plan, on that stream.
	s2, err := dev.NewStream(nil)
	must(t, err)
	defer s2.Close()
	c2, err := New(s2, nil)
	must(t, err)
	q, err := c2.Plan(Desc{Shape: []int{64}})
	must(t, err)
	if q == p || q.Stream() != s2 || p.Stream() != s {
		t.Error("Caches of two streams share a plan")
	}
	must(t, c2.Close())

	// A cached plan's Close does nothing; the Cache's closes it.
	in, out := alloc(t, dev, s, 64*8), alloc(t, dev, s, 64*8)
	must(t, p.Close())
	must(t, p.Forward(in, out))
	must(t, s.Sync())
	must(t, c.Close())
	if err := p.Forward(in, out); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Forward after the Cache's Close: %v, want core.ErrClosed", err)
	}
	if _, err := c.Plan(Desc{Shape: []int{64}}); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Plan after Close: %v, want core.ErrClosed", err)
	}
	if c.Len() != 0 {
		t.Errorf("Len %d after Close", c.Len())
	}
}

// TestGPUConcurrent runs one cached plan from many goroutines at once,
// each with its own Buffers, on one stream, and a second plan of the same
// shape on another stream, and checks every result.
func TestGPUConcurrent(t *testing.T) {
	dev, s := gpuStream(t)
	s2, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	must(t, err)
	defer s2.Close()
	shape := []int{6, 35}
	n := prod(shape)
	var caches []*Cache
	for _, st := range []*core.Stream{s, s2} {
		c, err := New(st, nil)
		must(t, err)
		defer c.Close()
		caches = append(caches, c)
	}
	// Buffers are made here: a goroutine other than the test's may not
	// call t.Fatal.
	type bufs struct{ in, out *core.Buffer }
	var bs []bufs
	for g := range 8 {
		st := caches[g%2].Stream()
		bs = append(bs, bufs{alloc(t, dev, st, n*8), alloc(t, dev, st, n*8)})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c, b := caches[g%2], bs[g]
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 10 {
				p, err := c.Plan(Desc{Shape: shape})
				if err != nil {
					t.Error(err)
					return
				}
				x := randComplex(r, n, Single)
				x64 := make([]complex64, n)
				for j, v := range x {
					x64[j] = complex64(v)
				}
				got := make([]complex64, n)
				if err := errors.Join(core.CopyToDevice(b.in, x64), p.Forward(b.in, b.out), core.CopyFromDevice(got, b.out)); err != nil {
					t.Error(err)
					return
				}
				g128 := make([]complex128, n)
				for j, v := range got {
					g128[j] = complex128(v)
				}
				check(t, fmt.Sprintf("goroutine %d, round %d", g, i), Single, g128, dft(x, shape, 1, -1))
			}
		})
	}
	wg.Wait()
	for i, c := range caches {
		if c.Len() != 1 {
			t.Errorf("Cache %d holds %d plans, want 1", i, c.Len())
		}
	}
}

// TestGPUPlanLifecycle: Close, closed Buffers and streams give
// core.ErrClosed, never a crash, and nothing is queued by a failed check.
func TestGPUPlanLifecycle(t *testing.T) {
	dev, s := gpuStream(t)
	d := Desc{Shape: []int{256}, Batch: 2}
	p, err := NewPlan(s, d)
	must(t, err)
	t.Logf("%v: work area %d bytes", p.l.String(), p.WorkSize())
	in, out := alloc(t, dev, s, 2*256*8), alloc(t, dev, s, 2*256*8)
	must(t, p.Forward(in, out))

	// A short Buffer is refused, and the output keeps what it had.
	short, err := in.View(0, 256*8)
	must(t, err)
	must(t, out.Memset32(nanFill))
	if err := p.Forward(short, out); err == nil {
		t.Error("Forward accepted a Buffer half the size")
	}
	if v := getComplex(t, out, Single, 1)[0]; !math.IsNaN(real(v)) {
		t.Errorf("a refused transform wrote %v", v)
	}
	// A misaligned view is refused.
	odd, err := in.View(4, 256*8)
	must(t, err)
	if err := p.Forward(odd, out); err == nil {
		t.Error("Forward accepted an address 4 bytes off")
	}

	must(t, p.Close())
	must(t, p.Close())
	if err := p.Forward(in, out); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Forward after Close: %v, want core.ErrClosed", err)
	}

	// A closed Buffer.
	p, err = NewPlan(s, d)
	must(t, err)
	defer p.Close()
	gone := alloc(t, dev, s, 2*256*8)
	must(t, gone.Close())
	if err := p.Forward(gone, out); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Forward of a closed Buffer: %v, want core.ErrClosed", err)
	}

	// A closed stream: the transform fails cleanly, and the plan still
	// closes (in the stream's context, which lives on).
	s2, err := dev.NewStream(nil)
	must(t, err)
	q, err := NewPlan(s2, d)
	must(t, err)
	must(t, q.Forward(in, out))
	must(t, s2.Close())
	if err := q.Forward(in, out); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Forward on a closed stream: %v, want core.ErrClosed", err)
	}
	must(t, q.Close())
}

// TestGPUPlanDevice: a Buffer of another device is refused (with one
// GPU, there is nothing to check).
func TestGPUPlanDevice(t *testing.T) {
	_, s := gpuStream(t)
	devs, err := core.Devices()
	must(t, err)
	if len(devs) < 2 {
		t.Skip("one GPU")
	}
	p, err := NewPlan(s, Desc{Shape: []int{16}})
	must(t, err)
	defer p.Close()
	other, err := devs[1].Allocate(16*8, nil)
	must(t, err)
	defer other.Close()
	if err := p.Forward(other, other); err == nil {
		t.Error("Forward accepted a Buffer of another device")
	}
}
