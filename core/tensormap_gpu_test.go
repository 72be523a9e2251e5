package core

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// tmaSource holds the kernels of the tensor map tests: TMA loads of 2-D
// boxes (cp.async.bulk.tensor) into shared memory, completed on an
// mbarrier, then written out by all threads. The CUtensorMap is declared
// here (no cuda.h under NVRTC) with its size and alignment.
const tmaSource = `
struct __align__(64) TmaDesc { unsigned long long v[16]; };

__device__ __forceinline__ unsigned smem_addr(const void *p) {
	return (unsigned)__cvta_generic_to_shared(p);
}

// One thread sets the barrier up for one arrival (its own, with the
// transaction bytes); the fence makes that visible to the TMA unit (the
// async proxy), the block barrier to the other threads.
__device__ __forceinline__ void bar_init(unsigned long long *bar) {
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(bar)) : "memory");
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	}
	__syncthreads();
}

// load_2d has thread 0 arrive on bar expecting bytes, and copy the box of
// map at (x, y) (innermost coordinate first) into dst.
__device__ __forceinline__ void load_2d(void *dst, const TmaDesc *map, unsigned long long *bar,
		unsigned bytes, int x, int y) {
	if (threadIdx.x == 0) {
		unsigned long long state;
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
			: "=l"(state) : "r"(smem_addr(bar)), "r"(bytes) : "memory");
		asm volatile(
			"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
			:: "r"(smem_addr(dst)), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(smem_addr(bar))
			: "memory");
	}
}

// wait_phase waits until the barrier's phase of the given parity is
// complete: the arrival and all the bytes.
__device__ __forceinline__ void wait_phase(unsigned long long *bar, unsigned parity) {
	unsigned done = 0;
	while (!done) {
		asm volatile(
			"{\n.reg .pred p;\n"
			"mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			"selp.u32 %0, 1, 0, p;\n}"
			: "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
	}
}

// tma_tiles loads the 32x64 box (32 columns, 64 rows) of block (x, y) of
// a rows x cols float matrix, writes the whole box to tiles (box after
// box, in block order: the elements outside the matrix as the TMA unit
// filled them), and the elements inside the matrix transposed to t (a
// cols x rows matrix).
extern "C" __global__ void tma_tiles(const __grid_constant__ TmaDesc map, float *tiles, float *t, int rows, int cols) {
	__shared__ __align__(128) float box[64][32];
	__shared__ __align__(8) unsigned long long bar;
	bar_init(&bar);
	int x0 = blockIdx.x * 32, y0 = blockIdx.y * 64;
	load_2d(box, &map, &bar, sizeof(box), x0, y0);
	wait_phase(&bar, 0);
	float *mine = tiles + (blockIdx.y * gridDim.x + blockIdx.x) * (64 * 32);
	for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
		int by = i / 32, bx = i % 32;
		mine[i] = box[by][bx];
		int y = y0 + by, x = x0 + bx;
		if (y < rows && x < cols) t[(long)x * rows + y] = box[by][bx];
	}
}

// tma_swizzle loads the 32x8 float box (128-byte rows: a 128B swizzle
// permutes the 16-byte chunks of each) of rows 8*blockIdx.x.. into 1024
// bytes of shared memory aligned to 1024, and copies those bytes out as
// they lie, to raw[256*blockIdx.x..]; base gets the shared address modulo
// 1024, which the swizzle pattern assumes is 0.
extern "C" __global__ void tma_swizzle(const __grid_constant__ TmaDesc map, float *raw, unsigned *base) {
	__shared__ __align__(1024) float box[256];
	__shared__ __align__(8) unsigned long long bar;
	bar_init(&bar);
	load_2d(box, &map, &bar, sizeof(box), 0, blockIdx.x * 8);
	wait_phase(&bar, 0);
	for (int i = threadIdx.x; i < 256; i += blockDim.x) raw[blockIdx.x * 256 + i] = box[i];
	if (threadIdx.x == 0) base[blockIdx.x] = smem_addr(box) % 1024;
}
`

var tmaKernels testKernelSet

// tmaKernelsFor compiles tmaSource for sm_90a (TMA and mbarrier
// transactions are sm_90 features; sm_90a is what CUTLASS builds them
// for), once per test binary.
func tmaKernelsFor(t *testing.T) map[string]*Kernel {
	t.Helper()
	return tmaKernels.get(t, "the TMA kernels", tmaSource, &ProgramOptions{Name: "tma_test.cu", Arch: "sm_90a"}, "tma_tiles", "tma_swizzle")
}

// TestTMAKernelsCompile checks the PTX of the TMA tests with NVRTC and
// ptxas for sm_90a; it needs no GPU.
func TestTMAKernelsCompile(t *testing.T) {
	code := mustCompile(t, mustProgram(t, tmaSource, "c++", &ProgramOptions{Name: "tma_test.cu", Arch: "sm_90a", NoCache: true}), "cubin")
	// CUDA 13's cubins (ELF ABI v8) mark sm_90 and sm_90a alike.
	abi8 := len(code.Code()) > elf.EI_ABIVERSION && code.Code()[elf.EI_ABIVERSION] >= 8
	if arch, err := cubinArch(code.Code()); err != nil || arch != "sm_90a" && !(abi8 && arch == "sm_90") {
		t.Errorf("cubinArch = %q, %v; want sm_90a", arch, err)
	}
	if got := elfKernels(code.Code()); !slices.Contains(got, "tma_tiles") || !slices.Contains(got, "tma_swizzle") {
		t.Errorf("cubin kernels %q, want tma_tiles and tma_swizzle", got)
	}
}

// hopper returns device 0 when it has compute capability 9.0 or newer,
// and skips the test otherwise.
func hopper(t *testing.T) *Device {
	dev := gpuDevice(t)
	if major, _ := dev.ComputeCapability(); major < 9 {
		t.Skipf("%v has no TMA (compute capability 9.0)", dev)
	}
	if dev.Arch() != "90" {
		// The kernels are sm_90a code, which runs on 9.0 only.
		t.Skipf("the TMA test kernels are sm_90a code; %v is sm_%s", dev, dev.Arch())
	}
	return dev
}

// tmaMatrix returns a rows x cols float matrix (row-major) of distinct
// values, and a Buffer of it.
func tmaMatrix(t *testing.T, dev *Device, rows, cols int) ([]float32, *Buffer) {
	t.Helper()
	m := make([]float32, rows*cols)
	for i := range m {
		m[i] = float32(i) + 0.25
	}
	b := try(dev.Allocate(len(m)*4, nil)).must(t)
	t.Cleanup(func() { b.Close() })
	if err := CopyToDevice(b, m); err != nil {
		t.Fatal(err)
	}
	return m, b
}

func TestGPUTensorMapTiledCopy(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	dev := hopper(t)
	k := tmaKernelsFor(t)["tma_tiles"]
	// A matrix the boxes tile exactly, and one whose last boxes reach out
	// of it on both sides (the TMA unit fills those elements with zeros).
	for _, shape := range []struct{ rows, cols int }{{256, 192}, {200, 100}} {
		t.Run(fmt.Sprintf("%dx%d", shape.rows, shape.cols), func(t *testing.T) {
			rows, cols := shape.rows, shape.cols
			m, b := tmaMatrix(t, dev, rows, cols)
			tm, err := NewTensorMapTiled(b, &TensorMapTiledOptions{
				DataType: driver.TensorMapDataTypeFloat32,
				Dims:     []uint64{uint64(cols), uint64(rows)},
				Strides:  []uint64{uint64(cols) * 4},
				Box:      []uint32{32, 64},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tm.Buffer() != b || tm.Rank() != 2 || tm.IsIm2col() || tm.DataType() != driver.TensorMapDataTypeFloat32 {
				t.Errorf("TensorMap: buffer %p (want %p), rank %d, im2col %v, type %d", tm.Buffer(), b, tm.Rank(), tm.IsIm2col(), tm.DataType())
			}
			if tm.Descriptor() == (driver.TensorMap{}) {
				t.Error("the encoded descriptor is all zeros")
			}
			gx, gy := (cols+31)/32, (rows+63)/64
			tiles := try(dev.Allocate(gx*gy*64*32*4, nil)).must(t)
			defer tiles.Close()
			tr := try(dev.Allocate(rows*cols*4, nil)).must(t)
			defer tr.Close()
			if err := tiles.Memset32(0x7fc00001); err != nil { // a NaN the kernel must overwrite
				t.Fatal(err)
			}
			s := try(dev.NewStream(nil)).must(t)
			defer s.Close()
			cfg := LaunchConfig{Grid: Dim(uint32(gx), uint32(gy)), Block: Dim(128)}
			if err := Launch(s, cfg, k, tm, tiles, tr, int32(rows), int32(cols)); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			gotT := readBack[float32](t, tr, rows*cols)
			bad := 0
			for y := range rows {
				for x := range cols {
					if got, want := gotT[x*rows+y], m[y*cols+x]; got != want {
						if bad < 5 {
							t.Errorf("transposed[%d][%d] = %v, want %v", x, y, got, want)
						}
						bad++
					}
				}
			}
			gotTiles := readBack[float32](t, tiles, gx*gy*64*32)
			for by := range gy {
				for bx := range gx {
					box := gotTiles[(by*gx+bx)*64*32:]
					for i := range 64 * 32 {
						y, x := by*64+i/32, bx*32+i%32
						want := float32(0) // out of the matrix: zero fill
						if y < rows && x < cols {
							want = m[y*cols+x]
						}
						if box[i] != want {
							if bad < 10 {
								t.Errorf("box (%d, %d) element %d (row %d, column %d) = %v, want %v", bx, by, i, y, x, box[i], want)
							}
							bad++
						}
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d elements wrong", bad)
			}
		})
	}
}

// TestGPUTensorMapSwizzle128B loads 32x8 float boxes with the 128-byte
// swizzle and reads shared memory as it lies: the 16-byte chunk c of box
// row r must be at chunk c XOR (r mod 8) of that row (CUTLASS's
// Swizzle<3,4,3>: byte address bits 4-6 XORed with bits 7-9).
func TestGPUTensorMapSwizzle128B(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	dev := hopper(t)
	k := tmaKernelsFor(t)["tma_swizzle"]
	const rows, cols, boxes = 64, 32, 8
	m, b := tmaMatrix(t, dev, rows, cols)
	tm, err := NewTensorMapTiled(b, &TensorMapTiledOptions{
		DataType: driver.TensorMapDataTypeFloat32,
		Dims:     []uint64{cols, rows},
		Strides:  []uint64{cols * 4},
		Box:      []uint32{32, 8},
		Swizzle:  driver.TensorMapSwizzle128B,
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := try(dev.Allocate(boxes*256*4, nil)).must(t)
	defer raw.Close()
	base := try(dev.Allocate(boxes*4, nil)).must(t)
	defer base.Close()
	s := dev.DefaultStream()
	if err := Launch(s, LaunchConfig{Grid: Dim(boxes), Block: Dim(64)}, k, tm, raw, base); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if bases := readBack[uint32](t, base, boxes); bases[0] != 0 {
		t.Fatalf("the shared box is at %d modulo 1024, not 0: the pattern below assumes 0", bases[0])
	}
	got := readBack[float32](t, raw, boxes*256)
	bad, same := 0, 0
	for bx := range boxes {
		for r := range 8 {
			for c := range 32 {
				want := m[(bx*8+r)*cols+c]
				off := r*128 + c*4 // the byte offset without swizzle
				sw := off ^ (((off >> 7) & 7) << 4)
				if got[bx*256+sw/4] != want {
					if bad < 5 {
						t.Errorf("box %d row %d column %d: at swizzled byte %d found %v, want %v", bx, r, c, sw, got[bx*256+sw/4], want)
					}
					bad++
				}
				if got[bx*256+off/4] == want {
					same++
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements are not where the 128B swizzle puts them", bad, boxes*256)
	}
	// Rows r > 0 are permuted, so most elements moved.
	if same > boxes*256/8+8 {
		t.Errorf("%d of %d elements are where they would be without swizzle", same, boxes*256)
	}
}

// TestGPUTensorMapWithBuffer: a map moved to another buffer reads that
// buffer, and the first one keeps reading its own.
func TestGPUTensorMapWithBuffer(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	dev := hopper(t)
	k := tmaKernelsFor(t)["tma_tiles"]
	const rows, cols = 64, 32
	m, a := tmaMatrix(t, dev, rows, cols)
	b := try(dev.Allocate(rows*cols*4, nil)).must(t)
	defer b.Close()
	other := make([]float32, rows*cols)
	for i := range other {
		other[i] = -m[i]
	}
	if err := CopyToDevice(b, other); err != nil {
		t.Fatal(err)
	}
	ta, err := NewTensorMapTiled(a, &TensorMapTiledOptions{
		DataType: driver.TensorMapDataTypeFloat32,
		Dims:     []uint64{cols, rows},
		Strides:  []uint64{cols * 4},
		Box:      []uint32{32, 64},
	})
	if err != nil {
		t.Fatal(err)
	}
	tb := try(ta.WithBuffer(b)).must(t)
	if tb.Buffer() != b || ta.Buffer() != a || tb.Descriptor() == ta.Descriptor() {
		t.Fatalf("WithBuffer: buffers %p, %p; descriptors equal: %v", ta.Buffer(), tb.Buffer(), tb.Descriptor() == ta.Descriptor())
	}
	small := try(dev.Allocate(rows*cols*4-4, nil)).must(t)
	defer small.Close()
	if _, err := ta.WithBuffer(small); err == nil || !strings.Contains(err.Error(), "the tensor spans 8192 bytes, the buffer has 8188") {
		t.Errorf("WithBuffer of a buffer too small: %v", err)
	}
	if v, err := b.View(8, 4096); err != nil {
		t.Fatal(err)
	} else if _, err := ta.WithBuffer(v); err == nil || !strings.Contains(err.Error(), "is not a multiple of 16 bytes") {
		t.Errorf("WithBuffer of a misaligned view: %v", err)
	}
	for _, c := range []struct {
		tm   *TensorMap
		want []float32
	}{{ta, m}, {tb, other}} {
		tiles := try(dev.Allocate(rows*cols*4, nil)).must(t)
		tr := try(dev.Allocate(rows*cols*4, nil)).must(t)
		if err := Launch(dev.DefaultStream(), LaunchConfig{Grid: Dim(1), Block: Dim(128)}, k, c.tm, tiles, tr, int32(rows), int32(cols)); err != nil {
			t.Fatal(err)
		}
		wantSlice(t, fmt.Sprintf("the map of buffer %p", c.tm.Buffer()), readBack[float32](t, tiles, rows*cols), c.want)
		tiles.Close()
		tr.Close()
	}
}

// TestGPUTensorMapClosedBuffer: once its Buffer is closed a map is
// refused by Launch before the driver sees it, and cannot be made.
func TestGPUTensorMapClosedBuffer(t *testing.T) {
	dev := hopper(t)
	k := tmaKernelsFor(t)["tma_tiles"]
	b := try(dev.Allocate(64*32*4, nil)).must(t)
	opts := TensorMapTiledOptions{
		DataType: driver.TensorMapDataTypeFloat32,
		Dims:     []uint64{32, 64},
		Strides:  []uint64{32 * 4},
		Box:      []uint32{32, 64},
	}
	tm := try(NewTensorMapTiled(b, &opts)).must(t)
	out := try(dev.Allocate(64*32*4, nil)).must(t)
	defer out.Close()
	b.Close()
	err := Launch(dev.DefaultStream(), LaunchConfig{Grid: Dim(1), Block: Dim(128)}, k, tm, out, out, int32(64), int32(32))
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Launch with the map of a closed buffer: %v, want ErrClosed", err)
	}
	if _, err := NewTensorMapTiled(b, &opts); !errors.Is(err, ErrClosed) {
		t.Errorf("NewTensorMapTiled of a closed buffer: %v, want ErrClosed", err)
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("the device after the refused launches: %v", err)
	}
}

// TestGPUTensorMapDriverAgrees encodes maps that the Go checks accept
// (tiled and im2col) and expects the driver to accept them too; for maps
// the Go checks refuse on a rule of the driver's documentation, it logs
// those the driver would have taken (the Go rules may be stricter than
// the driver, never looser: those are failures).
func TestGPUTensorMapDriverAgrees(t *testing.T) {
	dev := hopper(t)
	b, err := dev.Allocate(1<<22, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tiled := []TensorMapTiledOptions{tiledBase()}
	for _, sw := range []driver.TensorMapSwizzle{driver.TensorMapSwizzle32B, driver.TensorMapSwizzle64B, driver.TensorMapSwizzle128B} {
		o := tiledBase()
		o.Swizzle, o.Box[0] = sw, uint32(swizzleSpan(sw)/4)
		tiled = append(tiled, o)
	}
	o := tiledBase()
	o.ElementStrides, o.OOBFill, o.L2Promotion = []uint32{1, 2}, driver.TensorMapFloatOobFillNanRequestZeroFma, driver.TensorMapL2PromotionL2128B
	tiled = append(tiled, o)
	for i, o := range tiled {
		if _, err := NewTensorMapTiled(b, &o); err != nil {
			t.Errorf("tiled map %d (%+v): %v", i, o, err)
		}
	}
	ims := []TensorMapIm2colOptions{im2colBase()}
	o2 := im2colBase()
	o2.Swizzle, o2.ChannelsPerPixel = driver.TensorMapSwizzle128B, 32
	ims = append(ims, o2)
	for i, o := range ims {
		tm, err := NewTensorMapIm2col(b, &o)
		if err != nil {
			t.Errorf("im2col map %d (%+v): %v", i, o, err)
			continue
		}
		if !tm.IsIm2col() || tm.Rank() != 4 {
			t.Errorf("im2col map %d: IsIm2col %v, rank %d", i, tm.IsIm2col(), tm.Rank())
		}
	}
	// Rules of the driver's documentation, broken one at a time past the
	// Go checks: the driver is expected to refuse them too.
	h, err := dev.primary.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer dev.primary.release()
	for _, c := range []struct {
		name string
		mod  func(o *TensorMapTiledOptions)
	}{
		{"box 257", func(o *TensorMapTiledOptions) { o.Box[1] = 257 }},
		{"inner box of 8 bytes", func(o *TensorMapTiledOptions) { o.Box[0] = 2 }},
		{"stride not a multiple of 16", func(o *TensorMapTiledOptions) { o.Strides[0] = 776 }},
		{"element stride 9", func(o *TensorMapTiledOptions) { o.ElementStrides = []uint32{1, 9} }},
		{"swizzle 32B with a 128-byte inner box", func(o *TensorMapTiledOptions) { o.Swizzle = driver.TensorMapSwizzle32B }},
		{"NaN fill of int32", func(o *TensorMapTiledOptions) {
			o.DataType, o.OOBFill = driver.TensorMapDataTypeInt32, driver.TensorMapFloatOobFillNanRequestZeroFma
		}},
	} {
		o := tiledBase()
		c.mod(&o)
		if o.Validate(b.ptr, b.size) == nil {
			t.Errorf("%s: the Go checks accept it", c.name)
			continue
		}
		es := o.ElementStrides
		if es == nil {
			es = []uint32{1, 1}
		}
		s := newScratch()
		err := cuTensorMapEncodeTiled(h, s.ptr(), o.DataType, uint32(len(o.Dims)), hostPtr(b.ptr), &o.Dims[0], &o.Strides[0], &o.Box[0], &es[0],
			o.Interleave, o.Swizzle, o.L2Promotion, o.OOBFill)
		if err == nil {
			t.Logf("%s: refused by the Go checks, accepted by the driver", c.name)
		}
	}
}
