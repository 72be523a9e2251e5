// Command tma transposes a matrix through Hopper's Tensor Memory
// Accelerator: a core.TensorMap describes a 256x192 float matrix in a
// Buffer and its 64x32 tiles; a kernel, compiled for sm_90a with NVRTC,
// takes the map as a `const __grid_constant__` parameter, has one thread
// per block copy its tile into shared memory with one instruction
// (cp.async.bulk.tensor, completed on an mbarrier), and all threads write
// the tile out transposed. Every element is checked against the CPU.
//
// The program prints one line and exits 0 when all are right; on a
// mismatch or any other error it prints the error and exits 1. Without a
// GPU, or on a GPU without TMA (compute capability below 9.0), it checks
// the tensor map's options and compiles the kernel, says what it could
// not run, and exits 0.
//
// Run it on a machine with an H100:
//
//	go run ./examples/tma
package main

import (
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const source = `
struct __align__(64) TmaDesc { unsigned long long v[16]; }; // a CUtensorMap

__device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void transpose(const __grid_constant__ TmaDesc map, float *out, int rows, int cols) {
	__shared__ __align__(128) float tile[64][32];
	__shared__ __align__(8) unsigned long long bar;
	int x0 = blockIdx.x * 32, y0 = blockIdx.y * 64;
	if (threadIdx.x == 0) {
		// One arrival (this thread's, with the tile's bytes); the fence
		// shows the barrier to the TMA unit.
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)) : "memory");
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long state;
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
			: "=l"(state) : "r"(smem(&bar)), "r"((unsigned)sizeof(tile)) : "memory");
		asm volatile(
			"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
			:: "r"(smem(tile)), "l"((unsigned long long)&map), "r"(x0), "r"(y0), "r"(smem(&bar)) : "memory");
	}
	unsigned done = 0;
	while (!done) {
		asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}"
			: "=r"(done) : "r"(smem(&bar)) : "memory");
	}
	for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
		int y = y0 + i / 32, x = x0 + i % 32;
		if (y < rows && x < cols) out[(long)x * rows + y] = tile[i / 32][i % 32];
	}
}
`

const (
	rows, cols  = 256, 192
	boxW, boxH  = 32, 64
	threads     = 128
	bufferBytes = rows * cols * 4
)

func main() { demo.Main("tma", run) }

// options describe the row-major matrix (innermost dimension first) and
// its tiles.
var options = core.TensorMapTiledOptions{
	DataType: driver.TensorMapDataTypeFloat32,
	Dims:     []uint64{cols, rows},
	Strides:  []uint64{cols * 4},
	Box:      []uint32{boxW, boxH},
}

func run() error {
	// The options are checked in Go, before any driver call: against a
	// buffer at an address as the allocator gives them, and one too small.
	if err := options.Validate(1<<40, bufferBytes); err != nil {
		return err
	}
	if err := options.Validate(1<<40, bufferBytes-4); err == nil {
		return fmt.Errorf("a buffer 4 bytes too small passed the checks")
	}
	obj, err := demo.Compile(source, "tma.cu", "90a")
	if err != nil {
		return err
	}
	defer obj.Close()
	dev, err := core.GetDevice(0)
	if err != nil {
		fmt.Printf("tma: tensor map options checked, kernel compiled for sm_90a (%d bytes of CUBIN); no GPU, so nothing ran: %v\n", len(obj.Code()), err)
		return nil
	}
	if dev.Arch() != "90" {
		fmt.Printf("tma: tensor map options checked, kernel compiled for sm_90a; %v cannot run sm_90a code, so nothing ran\n", dev)
		return nil
	}
	k, err := obj.Kernel("transpose")
	if err != nil {
		return err
	}

	// m is row-major rows×cols; want, its transpose, is cols×rows.
	m, want := make([]float32, rows*cols), make([]float32, rows*cols)
	for y := range rows {
		for x := range cols {
			m[y*cols+x] = float32(y*cols+x) / 8
			want[x*rows+y] = m[y*cols+x]
		}
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	in, err := demo.Upload(s, m)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := core.Alloc[float32](dev, rows*cols, s)
	if err != nil {
		return err
	}
	defer out.Close()
	tm, err := core.NewTensorMapTiled(in, &options)
	if err != nil {
		return err
	}
	cfg := core.LaunchConfig{Grid: core.Dim(cols/boxW, rows/boxH), Block: core.Dim(threads)}
	if err := core.Launch(s, cfg, k, tm, out, int32(rows), int32(cols)); err != nil {
		return err
	}
	got, err := demo.Download[float32](out) // waits for the kernel
	if err != nil {
		return err
	}
	if err := demo.Equal("out", got, want); err != nil {
		return err
	}
	fmt.Printf("tma: a %dx%d matrix transposed through %d TMA tiles of %dx%d on %v: all %d elements right\n",
		rows, cols, cfg.Grid.X*cfg.Grid.Y, boxH, boxW, dev, rows*cols)
	return nil
}
