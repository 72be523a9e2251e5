package core

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// texSource holds the kernels of the array, texture and surface tests.
// NVRTC declares cudaTextureObject_t, cudaSurfaceObject_t and the
// tex*/surf* templates itself.
const texSource = `
// tex_sample2d samples t at n points (xs[i], ys[i]).
extern "C" __global__ void tex_sample2d(cudaTextureObject_t t, const float *xs, const float *ys, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}

// tex_layered2d reads every texel of every layer at its centre.
extern "C" __global__ void tex_layered2d(cudaTextureObject_t t, float *out, int w, int h, int layers) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= w * h * layers) return;
	int x = i % w, y = (i / w) % h, l = i / (w * h);
	out[i] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}

// tex_layered1d reads every texel of every layer of a 1-D layered array.
extern "C" __global__ void tex_layered1d(cudaTextureObject_t t, float *out, int w, int layers) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= w * layers) return;
	out[i] = tex1DLayered<float>(t, i % w + 0.5f, i / w);
}

// tex_fetch3d reads every texel of a 3-D array at its centre.
extern "C" __global__ void tex_fetch3d(cudaTextureObject_t t, float *out, int w, int h, int d) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= w * h * d) return;
	int x = i % w, y = (i / w) % h, z = i / (w * h);
	out[i] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

// tex_lod reads the centre of each level of a mipmapped 2-D array
// (normalized coordinates).
extern "C" __global__ void tex_lod(cudaTextureObject_t t, float *out, int levels) {
	int l = threadIdx.x;
	if (l < levels) out[l] = tex2DLod<float>(t, 0.5f, 0.5f, (float)l);
}

// tex_unorm4 reads a 4-channel texture as normalized floats.
extern "C" __global__ void tex_unorm4(cudaTextureObject_t t, float4 *out, int w, int h) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= w * h) return;
	out[i] = tex2D<float4>(t, i % w + 0.5f, i / w + 0.5f);
}

// tex_int2d reads an int32 texture as integers.
extern "C" __global__ void tex_int2d(cudaTextureObject_t t, int *out, int w, int h) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= w * h) return;
	out[i] = tex2D<int>(t, i % w + 0.5f, i / w + 0.5f);
}

// surf_update rewrites every element v of a float surface as 2v + 1
// (surface x coordinates are in bytes).
extern "C" __global__ void surf_update(cudaSurfaceObject_t s, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= w || y >= h) return;
	float v = surf2Dread<float>(s, x * 4, y);
	surf2Dwrite(2.0f * v + 1.0f, s, x * 4, y);
}

// surf_write writes 1000y + x to every element of an int surface it
// never reads.
extern "C" __global__ void surf_write(cudaSurfaceObject_t s, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x < w && y < h) surf2Dwrite(1000 * y + x, s, x * 4, y);
}
`

var texKernelNames = []string{"tex_sample2d", "tex_layered2d", "tex_layered1d", "tex_fetch3d", "tex_lod", "tex_unorm4", "tex_int2d", "surf_update", "surf_write"}

// TestTextureKernelsCompile compiles the kernels of the texture tests
// with NVRTC; it needs no GPU.
func TestTextureKernelsCompile(t *testing.T) {
	p := mustProgram(t, texSource, "c++", &ProgramOptions{Name: "texture_test.cu", Arch: "sm_90", NoCache: true})
	code := mustCompile(t, p, "cubin")
	got := elfKernels(code.Code())
	for _, k := range texKernelNames {
		if !slices.Contains(got, k) {
			t.Errorf("the cubin lacks kernel %s (has %q)", k, got)
		}
	}
}

var texKernels testKernelSet

func texKernelsFor(t *testing.T) map[string]*Kernel {
	t.Helper()
	return texKernels.get(t, "the texture kernels", texSource, &ProgramOptions{Name: "texture_test.cu"}, texKernelNames...)
}

// texHarness is what the GPU tests share: the device, a stream and the
// kernels.
type texHarness struct {
	t   *testing.T
	dev *Device
	s   *Stream
	k   map[string]*Kernel
}

func newTexHarness(t *testing.T) *texHarness {
	dev := gpuDevice(t)
	s, err := dev.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &texHarness{t: t, dev: dev, s: s, k: texKernelsFor(t)}
}

func (h *texHarness) array(ext Extent, opts *ArrayOptions) *Array {
	h.t.Helper()
	a, err := NewArray(h.dev, ext, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { a.Close() })
	return a
}

func (h *texHarness) texture(res TextureResource, opts *TextureOptions) *TextureObject {
	h.t.Helper()
	tex, err := NewTextureObject(res, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { tex.Close() })
	return tex
}

// buffer allocates n elements of T, filled from src when not nil.
func texBuffer[T any](h *texHarness, n int, src []T) *Buffer {
	h.t.Helper()
	b, err := Alloc[T](h.dev, n, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { b.Close() })
	if src != nil {
		if err := CopyToDevice(b, src); err != nil {
			h.t.Fatal(err)
		}
	}
	return b
}

// run launches kernel name over n threads (blocks of 128) and waits.
func (h *texHarness) run(name string, n int, args ...any) {
	h.t.Helper()
	cfg := LaunchConfig{Grid: Dim(uint32((n + 127) / 128)), Block: Dim(128)}
	if err := Launch(h.s, cfg, h.k[name], args...); err != nil {
		h.t.Fatalf("Launch %s: %v", name, err)
	}
	if err := h.s.Sync(); err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
}

// texFetch runs kernel, which reads every texel of tex into a buffer
// (dims are its last arguments), and checks that it read want.
func texFetch[T comparable](t *testing.T, h *texHarness, what, kernel string, tex *TextureObject, want []T, dims ...any) {
	t.Helper()
	bo := texBuffer[T](h, len(want), nil)
	h.run(kernel, len(want), append([]any{tex, bo}, dims...)...)
	if got := readBack[T](h.t, bo, len(want)); !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// ---- the CPU reference of linear filtering ----

// weightQuant is how the reference turns an exact interpolation weight
// into the texture unit's: 9-bit fixed point with 8 fractional bits, the
// fraction rounded to nearest or truncated (CUDA's programming guide
// gives the format, not the rounding; the test finds which fits), or
// not at all (exact).
type weightQuant int

const (
	quantRound weightQuant = iota
	quantTrunc
	quantExact
)

func (q weightQuant) String() string {
	return [...]string{"rounded to 1/256", "truncated to 1/256", "exact"}[q]
}

func (q weightQuant) apply(a float64) float64 {
	switch q {
	case quantRound:
		return math.Round(a*256) / 256
	case quantTrunc:
		return math.Floor(a*256) / 256
	}
	return a
}

// bilinearRef is tex2D<float> of the w x h row-major texels at
// unnormalized (x, y) with FilterLinear and AddressClamp, as the
// programming guide's "Linear Filtering" defines it: xB = x - 0.5, i =
// floor(xB), alpha = frac(xB) (and the same in y), the four texels
// around weighted by (1-alpha)(1-beta), alpha(1-beta), (1-alpha)beta and
// alpha beta, alpha and beta quantized by q.
func bilinearRef(texels []float32, w, h int, x, y float64, q weightQuant) float64 {
	xb, yb := x-0.5, y-0.5
	i, j := math.Floor(xb), math.Floor(yb)
	a, b := q.apply(xb-i), q.apply(yb-j)
	at := func(i, j int) float64 {
		i, j = min(max(i, 0), w-1), min(max(j, 0), h-1)
		return float64(texels[j*w+i])
	}
	ii, jj := int(i), int(j)
	return (1-a)*(1-b)*at(ii, jj) + a*(1-b)*at(ii+1, jj) + (1-a)*b*at(ii, jj+1) + a*b*at(ii+1, jj+1)
}

func TestBilinearRefCPU(t *testing.T) {
	// 2x2 texels 0, 1 / 2, 3: the centre of the square is their mean;
	// a texel's centre is that texel; weights of exact multiples of 1/256
	// are the same quantized or not.
	tex := []float32{0, 1, 2, 3}
	for _, q := range []weightQuant{quantRound, quantTrunc, quantExact} {
		if got := bilinearRef(tex, 2, 2, 1, 1, q); got != 1.5 {
			t.Errorf("%v: centre = %v, want 1.5", q, got)
		}
		if got := bilinearRef(tex, 2, 2, 1.5, 0.5, q); got != 1 {
			t.Errorf("%v: texel (1, 0) = %v, want 1", q, got)
		}
		if got := bilinearRef(tex, 2, 2, 0.5+3.0/256, 0.5, q); got != 3.0/256 {
			t.Errorf("%v: alpha 3/256 = %v, want %v", q, got, 3.0/256)
		}
		if got := bilinearRef(tex, 2, 2, -5, 9, q); got != 2 {
			t.Errorf("%v: clamped corner = %v, want 2", q, got)
		}
	}
	// alpha 0.3: 76.8/256 rounds to 77/256, truncates to 76/256.
	x := 0.5 + 0.3
	if got := bilinearRef(tex, 2, 2, x, 0.5, quantRound); math.Abs(got-77.0/256) > 1e-12 {
		t.Errorf("rounded alpha 0.3 = %v, want 77/256", got)
	}
	if got := bilinearRef(tex, 2, 2, x, 0.5, quantTrunc); math.Abs(got-76.0/256) > 1e-12 {
		t.Errorf("truncated alpha 0.3 = %v, want 76/256", got)
	}
}

// TestGPUTextureBilinear samples a 2-D float texture with FilterLinear at
// random points and at points whose weights are multiples of 1/256, and
// compares with bilinearRef: the texture unit's 8-bit fractional weights
// must explain every sample to float32 accuracy, and must be visible
// (the exact weights must not).
func TestGPUTextureBilinear(t *testing.T) {
	h := newTexHarness(t)
	const w, hh = 37, 23
	r := rand.New(rand.NewPCG(1, 2))
	texels := make([]float32, w*hh)
	for i := range texels {
		texels[i] = r.Float32()
	}
	a := h.array(Extent{Width: w, Height: hh}, nil)
	if err := CopyToArray(a, texels); err != nil {
		t.Fatal(err)
	}
	tex := h.texture(a, &TextureOptions{Filter: FilterLinear})
	var xs, ys []float32
	for range 4000 {
		xs = append(xs, float32(-1+r.Float64()*(w+2)))
		ys = append(ys, float32(-1+r.Float64()*(hh+2)))
	}
	nRandom := len(xs)
	for range 500 { // weights k/256: no rounding question
		xs = append(xs, 0.5+float32(r.IntN(w*256))/256)
		ys = append(ys, 0.5+float32(r.IntN(hh*256))/256)
	}
	n := len(xs)
	bx, by, bo := texBuffer(h, n, xs), texBuffer(h, n, ys), texBuffer[float32](h, n, nil)
	h.run("tex_sample2d", n, tex, bx, by, bo, int32(n))
	got := readBack[float32](h.t, bo, n)

	// The texture unit keeps each weight in 9-bit fixed point with 8
	// fractional bits, and its coordinates pass through reduced precision
	// too: seen on the H100 with this 37×23 texture, samples at weights
	// k/256 differ from the exact value by up to 1e-3, and random points
	// by up to 0.0042. So each sample is held to weights off by up to
	// 4/256 per axis: 4/256 of the spread of its four texels, plus 2e-4.
	// A texel-centre convention off by half a texel, or a wrong address
	// mode, misses that by orders of magnitude.
	const slack = 2e-4
	maxErr := map[weightQuant]float64{}
	for _, q := range []weightQuant{quantRound, quantTrunc, quantExact} {
		for i := range nRandom {
			maxErr[q] = max(maxErr[q], math.Abs(float64(got[i])-bilinearRef(texels, w, hh, float64(xs[i]), float64(ys[i]), q)))
		}
	}
	t.Logf("largest difference from the reference over %d random points: weights rounded %.3g, truncated %.3g, exact %.3g",
		nRandom, maxErr[quantRound], maxErr[quantTrunc], maxErr[quantExact])
	bad := 0
	for i := range n {
		x, y := float64(xs[i]), float64(ys[i])
		want := bilinearRef(texels, w, hh, x, y, quantExact)
		bound := slack + texelSpread(texels, w, hh, x, y)*4/256
		if d := math.Abs(float64(got[i]) - want); d > bound {
			if bad++; bad <= 5 {
				t.Errorf("sample at (%v, %v): %v, want %v within %.3g", xs[i], ys[i], got[i], want, bound)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d samples of %d out of bounds", bad, n)
	}
}

// texelSpread is the largest minus the smallest of the four texels that
// bilinear filtering at texel coordinates (x, y) blends (clamped).
func texelSpread(tex []float32, w, h int, x, y float64) float64 {
	x0, y0 := int(math.Floor(x-0.5)), int(math.Floor(y-0.5))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, dy := range []int{0, 1} {
		for _, dx := range []int{0, 1} {
			i := min(max(x0+dx, 0), w-1)
			j := min(max(y0+dy, 0), h-1)
			v := float64(tex[j*w+i])
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return hi - lo
}

// addressRef is the texel index point sampling reads in a dimension of
// n texels at texel index k (a normalized coordinate (k+0.5)/n), or -1
// for the border.
func addressRef(m AddressMode, k, n int) int {
	switch m {
	case AddressWrap:
		return ((k % n) + n) % n
	case AddressMirror:
		r := ((k % (2 * n)) + 2*n) % (2 * n)
		if r < n {
			return r
		}
		return 2*n - 1 - r
	case AddressBorder:
		if k < 0 || k >= n {
			return -1
		}
		return k
	}
	return min(max(k, 0), n-1)
}

func TestAddressRefCPU(t *testing.T) {
	// n = 3, k from -4 to 6.
	want := map[AddressMode][]int{
		AddressClamp:  {0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2},
		AddressWrap:   {2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
		AddressMirror: {2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0},
		AddressBorder: {-1, -1, -1, -1, 0, 1, 2, -1, -1, -1, -1},
	}
	for m, w := range want {
		var got []int
		for k := -4; k <= 6; k++ {
			got = append(got, addressRef(m, k, 3))
		}
		if !slices.Equal(got, w) {
			t.Errorf("%v: %v, want %v", m, got, w)
		}
	}
}

// TestGPUTexturePointAddressModes point-samples an 8x4 float texture at
// the centres of texels from two widths before to three widths after it,
// in normalized coordinates, with each address mode.
func TestGPUTexturePointAddressModes(t *testing.T) {
	h := newTexHarness(t)
	const w, hh = 8, 4
	texels := make([]float32, w*hh)
	for y := range hh {
		for x := range w {
			texels[y*w+x] = float32(100*y + x)
		}
	}
	a := h.array(Extent{Width: w, Height: hh}, nil)
	if err := CopyToArray(a, texels); err != nil {
		t.Fatal(err)
	}
	var xs, ys []float32
	var ks [][2]int
	for ky := -2 * hh; ky < 3*hh; ky++ {
		for kx := -2 * w; kx < 3*w; kx++ {
			xs = append(xs, (float32(kx)+0.5)/w)
			ys = append(ys, (float32(ky)+0.5)/hh)
			ks = append(ks, [2]int{kx, ky})
		}
	}
	n := len(xs)
	bx, by, bo := texBuffer(h, n, xs), texBuffer(h, n, ys), texBuffer[float32](h, n, nil)
	const border = -7.5
	for _, m := range []AddressMode{AddressClamp, AddressWrap, AddressMirror, AddressBorder} {
		t.Run(m.String(), func(t *testing.T) {
			tex := h.texture(a, &TextureOptions{AddressMode: [3]AddressMode{m, m}, NormalizedCoords: true,
				BorderColor: [4]float32{border, border, border, border}})
			h.run("tex_sample2d", n, tex, bx, by, bo, int32(n))
			got := readBack[float32](h.t, bo, n)
			bad := 0
			for i, k := range ks {
				want := float32(border)
				if x, y := addressRef(m, k[0], w), addressRef(m, k[1], hh); x >= 0 && y >= 0 {
					want = texels[y*w+x]
				}
				if got[i] != want {
					if bad++; bad <= 5 {
						t.Errorf("texel (%d, %d): %v, want %v", k[0], k[1], got[i], want)
					}
				}
			}
			if bad > 5 {
				t.Errorf("%d of %d samples wrong", bad, n)
			}
		})
	}
}

// seq returns n float32s start, start+1, ...
func seq(n int, start float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = start + float32(i)
	}
	return s
}

// TestGPUArrayLayered fills a 2-D and a 1-D layered array, reads every
// texel of every layer through a texture, and copies the arrays back.
func TestGPUArrayLayered(t *testing.T) {
	h := newTexHarness(t)
	t.Run("2D", func(t *testing.T) {
		const w, hh, layers = 5, 3, 4
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{Layers: layers})
		if a.Layers() != layers || a.Size() != w*hh*layers*4 {
			t.Fatalf("Layers %d, Size %d; want %d, %d", a.Layers(), a.Size(), layers, w*hh*layers*4)
		}
		data := seq(w*hh*layers, 0.5)
		arrayRoundTrip(t, a, data)
		texFetch(t, h, "tex2DLayered", "tex_layered2d", h.texture(a, nil), data, int32(w), int32(hh), int32(layers))
	})
	t.Run("1D", func(t *testing.T) {
		const w, layers = 7, 3
		a := h.array(Extent{Width: w}, &ArrayOptions{Layers: layers})
		data := seq(w*layers, 10)
		arrayRoundTrip(t, a, data)
		texFetch(t, h, "tex1DLayered", "tex_layered1d", h.texture(a, nil), data, int32(w), int32(layers))
	})
}

// TestGPUArray3D round-trips a 3-D array of two uint16 channels through
// Go slices and Buffers, and reads a 3-D float array through a texture.
func TestGPUArray3D(t *testing.T) {
	h := newTexHarness(t)
	const w, hh, d = 6, 5, 4
	ext := Extent{Width: w, Height: hh, Depth: d}
	t.Run("copies", func(t *testing.T) {
		a := h.array(ext, &ArrayOptions{Format: driver.AdFormatUnsignedInt16, Channels: 2})
		data := make([][2]uint16, w*hh*d)
		for i := range data {
			data[i] = [2]uint16{uint16(i), uint16(60000 - 7*i)}
		}
		if err := CopyToArray(a, data); err != nil {
			t.Fatal(err)
		}
		back := make([][2]uint16, len(data))
		if err := CopyFromArray(back, a); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back, data) {
			t.Fatalf("slice round trip differs: %v", back[:8])
		}
		// Array -> Buffer -> a second Array -> Go, one channel at a time.
		b := texBuffer[[2]uint16](h, len(data)+3, nil) // larger than the array: copies use its start
		if err := a.CopyToBuffer(b); err != nil {
			t.Fatal(err)
		}
		inBuf := readBack[[2]uint16](h.t, b, len(data))
		if !slices.Equal(inBuf, data) {
			t.Fatalf("CopyToBuffer gave %v", inBuf[:8])
		}
		a2 := h.array(ext, &ArrayOptions{Format: driver.AdFormatUnsignedInt16, Channels: 2})
		if err := a2.CopyFromBuffer(b); err != nil {
			t.Fatal(err)
		}
		chans := make([]uint16, 2*len(data))
		if err := CopyFromArray(chans, a2); err != nil {
			t.Fatal(err)
		}
		for i, e := range data {
			if chans[2*i] != e[0] || chans[2*i+1] != e[1] {
				t.Fatalf("element %d through a Buffer: %d %d, want %v", i, chans[2*i], chans[2*i+1], e)
			}
		}
	})
	t.Run("texture", func(t *testing.T) {
		a := h.array(ext, nil)
		data := seq(w*hh*d, -3)
		if err := CopyToArray(a, data); err != nil {
			t.Fatal(err)
		}
		texFetch(t, h, "tex3D", "tex_fetch3d", h.texture(a, nil), data, int32(w), int32(hh), int32(d))
	})
}

// TestGPUArrayFormats round-trips a 2-D array of every format and
// channel count through Go slices of the channel type.
func TestGPUArrayFormats(t *testing.T) {
	h := newTexHarness(t)
	for _, ch := range []int{1, 2, 4} {
		roundTripFormat[uint8](t, h, driver.AdFormatUnsignedInt8, ch)
		roundTripFormat[uint16](t, h, driver.AdFormatUnsignedInt16, ch)
		roundTripFormat[uint32](t, h, driver.AdFormatUnsignedInt32, ch)
		roundTripFormat[int8](t, h, driver.AdFormatSignedInt8, ch)
		roundTripFormat[int16](t, h, driver.AdFormatSignedInt16, ch)
		roundTripFormat[int32](t, h, driver.AdFormatSignedInt32, ch)
		roundTripFormat[uint16](t, h, driver.AdFormatHalf, ch)
		roundTripFormat[float32](t, h, driver.AdFormatFloat, ch)
	}
}

// arrayRoundTrip copies data into a and back, and checks it came back.
func arrayRoundTrip[T comparable](t *testing.T, a *Array, data []T) {
	t.Helper()
	if err := CopyToArray(a, data); err != nil {
		t.Fatal(err)
	}
	back := make([]T, len(data))
	if err := CopyFromArray(back, a); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, data) {
		t.Errorf("round trip: %v, want %v", back, data)
	}
}

func roundTripFormat[T int8 | int16 | int32 | uint8 | uint16 | uint32 | float32](t *testing.T, h *texHarness, f driver.ArrayFormat, ch int) {
	t.Run(fmt.Sprintf("%sx%d", formatName(f), ch), func(t *testing.T) {
		const w, hh = 5, 3
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{Format: f, Channels: ch})
		if a.ElementSize() != formatBytes(f)*ch || a.Size() != w*hh*a.ElementSize() {
			t.Fatalf("ElementSize %d, Size %d", a.ElementSize(), a.Size())
		}
		data := make([]T, w*hh*ch)
		for i := range data {
			data[i] = T(3*i + 1)
		}
		arrayRoundTrip(t, a, data)
	})
}

// TestGPUTextureReadModes reads a uint8x4 texture as normalized floats
// and an int32 texture as integers.
func TestGPUTextureReadModes(t *testing.T) {
	h := newTexHarness(t)
	const w, hh = 4, 3
	t.Run("unorm8x4", func(t *testing.T) {
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{Format: driver.AdFormatUnsignedInt8, Channels: 4})
		data := make([][4]uint8, w*hh)
		for i := range data {
			data[i] = [4]uint8{uint8(i), uint8(20 * i), 255, uint8(255 - i)}
		}
		if err := CopyToArray(a, data); err != nil {
			t.Fatal(err)
		}
		bo := texBuffer[[4]float32](h, len(data), nil)
		h.run("tex_unorm4", len(data), h.texture(a, &TextureOptions{ReadMode: ReadNormalizedFloat}), bo, int32(w), int32(hh))
		got := readBack[[4]float32](h.t, bo, len(data))
		for i, e := range data {
			for c := range 4 {
				if want := float32(e[c]) / 255; math.Abs(float64(got[i][c]-want)) > 1e-6 {
					t.Errorf("texel %d channel %d: %v, want %v", i, c, got[i][c], want)
				}
			}
		}
	})
	t.Run("int32", func(t *testing.T) {
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{Format: driver.AdFormatSignedInt32})
		data := make([]int32, w*hh)
		for i := range data {
			data[i] = int32(-1000000 * (i + 1))
		}
		if err := CopyToArray(a, data); err != nil {
			t.Fatal(err)
		}
		texFetch(t, h, "tex2D<int>", "tex_int2d", h.texture(a, nil), data, int32(w), int32(hh))
	})
}

// TestGPUMipmappedArray fills each level of a 16x8 mipmapped array with
// its own value and reads each level through one texture.
func TestGPUMipmappedArray(t *testing.T) {
	h := newTexHarness(t)
	const w, hh = 16, 8
	levels := maxLevels(Extent{Width: w, Height: hh})
	m, err := NewMipmappedArray(h.dev, Extent{Width: w, Height: hh}, levels, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if levels != 5 || m.Levels() != 5 {
		t.Fatalf("levels %d, Levels() %d; want 5", levels, m.Levels())
	}
	for l := range levels {
		a, err := m.Level(l)
		if err != nil {
			t.Fatal(err)
		}
		want := Extent{Width: max(w>>l, 1), Height: max(hh>>l, 1)}
		if a.Extent() != want || a.Level() != l {
			t.Errorf("level %d: extent %v, Level() %d; want %v", l, a.Extent(), a.Level(), want)
		}
		v := make([]float32, want.Width*want.Height)
		for i := range v {
			v[i] = float32(10*l + 1)
		}
		if err := CopyToArray(a, v); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil { // a level's Close leaves the mipmapped array as it is
			t.Fatal(err)
		}
	}
	tex := h.texture(m, &TextureOptions{NormalizedCoords: true})
	bo := texBuffer[float32](h, levels, nil)
	h.run("tex_lod", levels, tex, bo, int32(levels))
	got := readBack[float32](h.t, bo, levels)
	for l := range levels {
		if got[l] != float32(10*l+1) {
			t.Errorf("tex2DLod level %d: %v, want %d", l, got[l], 10*l+1)
		}
	}
	// A level's surface works, and closing m ends its levels.
	_, err = m.Level(levels)
	if err == nil {
		t.Error("Level(levels) succeeded")
	}
	last, err := m.Level(levels - 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromArray(make([]float32, 1), last); !errors.Is(err, ErrClosed) {
		t.Errorf("copy from a level of a closed MipmappedArray: %v, want ErrClosed", err)
	}
	if _, err := NewTextureObject(m, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewTextureObject of a closed MipmappedArray: %v, want ErrClosed", err)
	}
}

// TestGPUSurface writes a float and an int array through surfaces from
// kernels and reads them back, and checks that a closed array's surface
// is refused by Launch.
func TestGPUSurface(t *testing.T) {
	h := newTexHarness(t)
	const w, hh = 19, 11
	grid := LaunchConfig{Grid: Dim(1, hh), Block: Dim(32)}
	t.Run("read-modify-write", func(t *testing.T) {
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{SurfaceLoadStore: true})
		data := seq(w*hh, -20)
		if err := CopyToArray(a, data); err != nil {
			t.Fatal(err)
		}
		s, err := NewSurfaceObject(a)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Array() != a || s.Handle() == 0 {
			t.Errorf("Array %p (want %p), Handle %d", s.Array(), a, s.Handle())
		}
		if err := Launch(h.s, grid, h.k["surf_update"], s, int32(w), int32(hh)); err != nil {
			t.Fatal(err)
		}
		if err := h.s.Sync(); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(data))
		if err := CopyFromArray(got, a); err != nil {
			t.Fatal(err)
		}
		for i, v := range data {
			if got[i] != 2*v+1 {
				t.Fatalf("element %d: %v, want %v", i, got[i], 2*v+1)
			}
		}
	})
	t.Run("write", func(t *testing.T) {
		a := h.array(Extent{Width: w, Height: hh}, &ArrayOptions{Format: driver.AdFormatSignedInt32, SurfaceLoadStore: true})
		s, err := NewSurfaceObject(a)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := Launch(h.s, grid, h.k["surf_write"], s, int32(w), int32(hh)); err != nil {
			t.Fatal(err)
		}
		if err := h.s.Sync(); err != nil {
			t.Fatal(err)
		}
		got := make([]int32, w*hh)
		if err := CopyFromArray(got, a); err != nil {
			t.Fatal(err)
		}
		for y := range hh {
			for x := range w {
				if v := got[y*w+x]; v != int32(1000*y+x) {
					t.Fatalf("element (%d, %d): %d, want %d", x, y, v, 1000*y+x)
				}
			}
		}
		// Closed: the array, then the surface.
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := Launch(h.s, grid, h.k["surf_write"], s, int32(w), int32(hh)); !errors.Is(err, ErrClosed) {
			t.Errorf("Launch with the surface of a closed array: %v, want ErrClosed", err)
		}
	})
	t.Run("needs SurfaceLoadStore", func(t *testing.T) {
		a := h.array(Extent{Width: w, Height: hh}, nil)
		if _, err := NewSurfaceObject(a); err == nil {
			t.Error("NewSurfaceObject of an array without SurfaceLoadStore succeeded")
		}
	})
}

// TestGPUArrayLimits asks for an array one past the device's 2-D texture
// width: it is refused before the driver is called, naming the limit.
func TestGPUArrayLimits(t *testing.T) {
	dev := gpuDevice(t)
	maxW, err := dev.Attribute(driver.DeviceAttributeMaximumTexture2DWidth)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewArray(dev, Extent{Width: maxW + 1, Height: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("Width %d is more than the device's %d (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH)", maxW+1, maxW)) {
		t.Errorf("a 2-D array of width %d: %v, want an error naming the limit %d", maxW+1, err, maxW)
	}
}
