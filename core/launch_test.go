package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

func TestDim(t *testing.T) {
	if d := Dim(256); d != (Dim3{256, 1, 1}) {
		t.Errorf("Dim(256) = %v", d)
	}
	if d := Dim(16, 8); d != (Dim3{16, 8, 1}) {
		t.Errorf("Dim(16, 8) = %v", d)
	}
	if d := Dim(4, 3, 2); d != (Dim3{4, 3, 2}) {
		t.Errorf("Dim(4, 3, 2) = %v", d)
	}
}

func TestLaunchConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  LaunchConfig
		want string // "" means valid
	}{
		{LaunchConfig{Grid: Dim(1), Block: Dim(1)}, ""},
		{LaunchConfig{Grid: Dim(4096), Block: Dim(1024)}, ""},
		{LaunchConfig{Grid: Dim(2, 2, 2), Block: Dim(8, 8, 16)}, ""},
		{LaunchConfig{Grid: Dim(8), Block: Dim(128), Cluster: Dim(2)}, ""},
		{LaunchConfig{Block: Dim(1)}, "grid 0x0x0 has a zero dimension"},
		{LaunchConfig{Grid: Dim3{1, 0, 1}, Block: Dim(1)}, "grid 1x0x1 has a zero dimension"},
		{LaunchConfig{Grid: Dim(1)}, "block 0x0x0 has a zero dimension"},
		{LaunchConfig{Grid: Dim(1), Block: Dim3{32, 1, 0}}, "block 32x1x0 has a zero dimension"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(1025)}, "block 1025x1x1 has 1025 threads, more than 1024"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(64, 32)}, "block 64x32x1 has 2048 threads, more than 1024"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(1, 1, 128)}, "z may be at most 64"},
		{LaunchConfig{Grid: Dim(1, 70000), Block: Dim(1)}, "larger than"},
		{LaunchConfig{Grid: Dim(1 << 31), Block: Dim(1)}, "larger than"},
		{LaunchConfig{Grid: Dim(9), Block: Dim(1), Cluster: Dim(2)}, "grid 9x1x1 is not a multiple of cluster 2x1x1"},
		{LaunchConfig{Grid: Dim(8), Block: Dim(1), Cluster: Dim3{2, 0, 1}}, "cluster 2x0x1 has a zero dimension"},
	} {
		err := c.cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", c.cfg, err)
		case c.want != "" && err == nil:
			t.Errorf("%+v: no error, want %q", c.cfg, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%+v: error %q, want it to contain %q", c.cfg, err, c.want)
		}
	}
}

// A layout as cuKernelGetParamInfo gives it for
// mixed(float* out, int a, float b, double c, long long d, unsigned char e, short f, float* g).
var mixedLayout = []ArgumentInfo{
	{0, 8}, {8, 4}, {12, 4}, {16, 8}, {24, 8}, {32, 1}, {34, 2}, {40, 8},
}

const mixedSize = 48

func TestPackArgs(t *testing.T) {
	out := &Buffer{ptr: 0x7f0000001000, size: 64}
	g := &Buffer{ptr: 0x7f0000002000, size: 64}
	buf := make([]byte, mixedSize)
	err := packArgs(buf, "mixed", mixedLayout, []any{out, int32(-7), float32(2.5), 0.125, int64(5<<32 + 9), uint8(200), int16(-300), g})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	check := func(name string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %#x, want %#x", name, got, want)
		}
	}
	check("out", le.Uint64(buf[0:]), 0x7f0000001000)
	check("a", uint64(le.Uint32(buf[8:])), uint64(uint32(0xfffffff9)))
	check("b", uint64(le.Uint32(buf[12:])), uint64(math.Float32bits(2.5)))
	check("c", le.Uint64(buf[16:]), math.Float64bits(0.125))
	check("d", le.Uint64(buf[24:]), 5<<32+9)
	check("e", uint64(buf[32]), 200)
	check("padding", uint64(buf[33]), 0)
	check("f", uint64(le.Uint16(buf[34:])), uint64(uint16(0xfed4)))
	check("g", le.Uint64(buf[40:]), 0x7f0000002000)

	// Every other accepted type.
	lay := []ArgumentInfo{{0, 1}, {1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 8}, {48, 16}, {64, 8}, {72, 3}}
	buf = make([]byte, 75)
	err = packArgs(buf, "k", lay, []any{int8(-1), true, uint16(0xbeef), uint32(0xdeadbeef), uint64(1 << 63), 42, uint(43), uintptr(44),
		driver.Deviceptr(0x1234), complex(1.5, -2), complex64(complex(3, 4)), Bytes{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	check("int8", uint64(buf[0]), 0xff)
	check("bool", uint64(buf[1]), 1)
	check("uint16", uint64(le.Uint16(buf[2:])), 0xbeef)
	check("uint32", uint64(le.Uint32(buf[4:])), 0xdeadbeef)
	check("uint64", le.Uint64(buf[8:]), 1<<63)
	check("int", le.Uint64(buf[16:]), 42)
	check("uint", le.Uint64(buf[24:]), 43)
	check("uintptr", le.Uint64(buf[32:]), 44)
	check("Deviceptr", le.Uint64(buf[40:]), 0x1234)
	check("complex128 re", le.Uint64(buf[48:]), math.Float64bits(1.5))
	check("complex128 im", le.Uint64(buf[56:]), math.Float64bits(-2))
	check("complex64 re", uint64(le.Uint32(buf[64:])), uint64(math.Float32bits(3)))
	check("complex64 im", uint64(le.Uint32(buf[68:])), uint64(math.Float32bits(4)))
	check("Bytes", uint64(buf[72])<<16|uint64(buf[73])<<8|uint64(buf[74]), 0x010203)
}

func TestPackArgsErrors(t *testing.T) {
	saxpy := []ArgumentInfo{{0, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 4}}
	x := &Buffer{ptr: 0x1000, size: 4}
	closed := &Buffer{ptr: 0x2000, size: 4}
	closed.life.close()
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{float32(2), x, x, x}, "core: Launch saxpy: kernel takes 5 arguments, got 4"},
		{[]any{float32(2), x, x, x, int32(1), int32(2)}, "kernel takes 5 arguments, got 6"},
		{[]any{2.0, x, x, x, int32(1)}, "core: Launch saxpy: argument 0 is float64 (8 bytes) but parameter 0 takes 4 bytes"},
		{[]any{float32(2), x, x, x, 1}, "argument 4 is int (8 bytes) but parameter 4 takes 4 bytes"},
		{[]any{float32(2), x, x, x, "n"}, "argument 4 has unsupported type string"},
		{[]any{float32(2), x, x, x, []int32{1}}, "argument 4 has unsupported type []int32"},
		{[]any{float32(2), (*Buffer)(nil), x, x, int32(1)}, "argument 1 is a nil *Buffer"},
		{[]any{float32(2), x, x, x, nil}, "argument 4 has unsupported type nil"},
		{[]any{float32(2), x, x, x, Bytes{1, 2}}, "argument 4 is core.Bytes (2 bytes) but parameter 4 takes 4 bytes"},
	} {
		buf := make([]byte, 36)
		err := packArgs(buf, "saxpy", saxpy, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("packArgs(%v): error %v, want %q", c.args, err, c.want)
		}
	}
	// A float64 where a float (4 bytes) is expected, in the words of the issue.
	err := packArgs(make([]byte, 36), "saxpy", []ArgumentInfo{{0, 8}, {8, 8}, {16, 4}}, []any{x, x, 1.0})
	if want := "core: Launch saxpy: argument 2 is float64 (8 bytes) but parameter 2 takes 4 bytes"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	err = packArgs(make([]byte, 36), "saxpy", saxpy, []any{float32(2), closed, x, x, int32(1)})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("closed buffer argument: %v, want ErrClosed", err)
	}
}

func TestPackArgsNoAllocs(t *testing.T) {
	out := &Buffer{ptr: 0x1000, size: 64}
	g := &Buffer{ptr: 0x2000, size: 64}
	a, b, c, d, e, f := int32(-7), float32(2.5), 0.125, int64(5<<32+9), uint8(200), int16(-300)
	pack := func(args ...any) error {
		var buf [mixedSize]byte
		return packArgs(buf[:], "mixed", mixedLayout, args)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := pack(out, a, b, c, d, e, f, g); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("packArgs allocates %v times per call", allocs)
	}
}

func TestLaunchRejectsBadConfigFirst(t *testing.T) {
	// No GPU needed: the shape is checked before the stream is touched.
	k := newKernel(0, "saxpy", nil)
	err := Launch(nil, LaunchConfig{Grid: Dim(1), Block: Dim(2048)}, k)
	if err == nil || !strings.Contains(err.Error(), "core: Launch saxpy: core: LaunchConfig: block 2048x1x1 has 2048 threads") {
		t.Errorf("Launch with a 2048-thread block: %v", err)
	}
	s := closedStream()
	err = Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(32)}, k)
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Launch on a closed stream: %v, want ErrClosed", err)
	}
}

func TestGPUSaxpy(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["saxpy"]
	s := testStream(t, dev)

	// Parameters and attributes.
	if n, err := k.NumArguments(); err != nil || n != 5 {
		t.Fatalf("NumArguments() = %d, %v; want 5", n, err)
	}
	args, _ := k.Arguments()
	want := []ArgumentInfo{{0, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 4}}
	for i := range want {
		if args[i] != want[i] {
			t.Errorf("Arguments() = %v, want %v", args, want)
			break
		}
	}
	regs, err := k.NumRegisters(dev)
	if err != nil || regs <= 0 {
		t.Errorf("NumRegisters = %d, %v", regs, err)
	}
	if v, err := k.MaxThreadsPerBlock(dev); err != nil || v <= 0 || v > 1024 {
		t.Errorf("MaxThreadsPerBlock = %d, %v", v, err)
	}
	if v, err := k.BinaryVersion(dev); err != nil || v != dev.major*10+dev.minor {
		t.Errorf("BinaryVersion = %d, %v", v, err)
	}
	for name, f := range map[string]func(*Device) (int, error){
		"SharedMemoryBytes": k.SharedMemoryBytes, "LocalMemoryBytes": k.LocalMemoryBytes,
		"ConstMemoryBytes": k.ConstMemoryBytes, "PTXVersion": k.PTXVersion, "MaxDynamicSharedMemory": k.MaxDynamicSharedMemory,
	} {
		if v, err := f(dev); err != nil || v < 0 {
			t.Errorf("%s = %d, %v", name, v, err)
		}
	}
	if err := k.SetMaxDynamicSharedMemory(dev, 64<<10); err != nil {
		t.Errorf("SetMaxDynamicSharedMemory: %v", err)
	} else if v, _ := k.MaxDynamicSharedMemory(dev); v != 64<<10 {
		t.Errorf("MaxDynamicSharedMemory after setting 64 KiB = %d", v)
	}
	blocks, err := k.MaxActiveBlocksPerMultiprocessor(dev, 256, 0)
	if err != nil || blocks <= 0 {
		t.Errorf("MaxActiveBlocksPerMultiprocessor(256, 0) = %d, %v", blocks, err)
	}
	minGrid, block, err := k.SuggestedBlockSize(dev, 0)
	if err != nil || block <= 0 || block > 1024 || minGrid <= 0 {
		t.Errorf("SuggestedBlockSize = %d, %d, %v", minGrid, block, err)
	}
	t.Logf("saxpy: %d registers, %d blocks of 256 per SM, suggested block %d (grid >= %d)", regs, blocks, block, minGrid)

	const n = 1 << 20
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) * 0.25
		y[i] = float32(i%77) - 30
	}
	bx, err := dev.Allocate(n*4, s)
	if err != nil {
		t.Fatal(err)
	}
	defer bx.Close()
	by, _ := dev.Allocate(n*4, s)
	defer by.Close()
	bo, _ := dev.Allocate(n*4, s)
	defer bo.Close()
	if err := CopyToDeviceAsync(s, bx, x); err != nil {
		t.Fatal(err)
	}
	if err := CopyToDeviceAsync(s, by, y); err != nil {
		t.Fatal(err)
	}
	cfg := LaunchConfig{Grid: Dim(n / 256), Block: Dim(256)}
	if err := Launch(s, cfg, k, float32(3), bx, by, bo, int32(n)); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, n)
	if err := CopyFromDevice(out, bo); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if w := 3*x[i] + y[i]; out[i] != w {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], w)
		}
	}

	// Views as arguments: saxpy on the second half only, into the first
	// half of a zeroed output.
	const h = n / 2
	if err := bo.Memset8Async(s, 0); err != nil {
		t.Fatal(err)
	}
	vx, _ := bx.View(h*4, h*4)
	vy, _ := by.View(h*4, h*4)
	vo, _ := bo.View(0, h*4)
	if err := Launch(s, LaunchConfig{Grid: Dim(h / 256), Block: Dim(256)}, k, float32(-2), vx, vy, vo, int32(h)); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDeviceAsync(s, out, bo); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		w := float32(0)
		if i < h {
			w = -2*x[h+i] + y[h+i]
		}
		if out[i] != w {
			t.Fatalf("through views: out[%d] = %v, want %v", i, out[i], w)
		}
	}

	// Argument errors come before the launch.
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{float32(3), bx, by, bo}, "core: Launch saxpy: kernel takes 5 arguments, got 4"},
		{[]any{3.0, bx, by, bo, int32(n)}, "core: Launch saxpy: argument 0 is float64 (8 bytes) but parameter 0 takes 4 bytes"},
		{[]any{float32(3), bx, by, bo, n}, "core: Launch saxpy: argument 4 is int (8 bytes) but parameter 4 takes 4 bytes"},
	} {
		if err := Launch(s, cfg, k, c.args...); err == nil || err.Error() != c.want {
			t.Errorf("Launch: %v, want %q", err, c.want)
		}
	}
	if err := Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(2048)}, k, float32(3), bx, by, bo, int32(n)); err == nil {
		t.Error("Launch with 2048 threads per block: no error")
	}
	if err := Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(1)}, kernelsFor(t, dev)["noargs"]); err != nil {
		t.Errorf("Launch of a kernel without parameters: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}

	// Clusters (sm_90) and cooperative launches go through cuLaunchKernelEx.
	exCfgs := []LaunchConfig{{Grid: Dim(n / 256), Block: Dim(256), Cooperative: false, Cluster: Dim(2)},
		{Grid: Dim(uint32(dev.MultiprocessorCount())), Block: Dim(256), Cooperative: true}}
	if dev.major < 9 {
		exCfgs = exCfgs[1:]
	}
	for _, c := range exCfgs {
		if err := bo.Memset8(0); err != nil {
			t.Fatal(err)
		}
		nn := int(c.Grid.X * c.Block.X)
		if err := Launch(s, c, k, float32(-1), bx, by, bo, int32(nn)); err != nil {
			t.Fatalf("Launch(%+v): %v", c, err)
		}
		if err := CopyFromDevice(out[:nn], bo); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < nn; i++ {
			if w := -x[i] + y[i]; out[i] != w {
				t.Fatalf("%+v: out[%d] = %v, want %v", c, i, out[i], w)
			}
		}
	}
}

func TestGPULaunchMixedArgsNoAllocs(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["mixed"]
	s := testStream(t, dev)
	out, err := dev.Allocate(8*4, s)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	g, _ := dev.Allocate(4, s)
	defer g.Close()
	if err := CopyToDevice(g, []float32{42}); err != nil {
		t.Fatal(err)
	}
	if args, err := k.Arguments(); err != nil || len(args) != len(mixedLayout) {
		t.Fatalf("mixed parameters: %v, %v", args, err)
	} else {
		for i := range args {
			if args[i] != mixedLayout[i] {
				t.Errorf("mixed parameter %d is %v, the CPU test assumes %v", i, args[i], mixedLayout[i])
			}
		}
	}
	a, b, c, d, e, f := int32(-7), float32(2.5), 0.125, int64(5<<32+9), uint8(200), int16(-300)
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(32)}
	if err := Launch(s, cfg, k, out, a, b, c, d, e, f, g); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 8)
	if err := CopyFromDevice(got, out); err != nil {
		t.Fatal(err)
	}
	if want := []float32{-7, 2.5, 0.125, 5, 9, 200, -300, 42}; !slices.Equal(got, want) {
		t.Fatalf("mixed wrote %v, want %v", got, want)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := Launch(s, cfg, k, out, a, b, c, d, e, f, g); err != nil {
			panic(err)
		}
	})
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Launch with 8 mixed arguments: %v allocations", allocs)
	if allocs != 0 && !raceEnabled {
		t.Errorf("Launch allocates %v times per call, want 0", allocs)
	}
	// A launch's speed, for the record.
	start := time.Now()
	for range 10000 {
		Launch(s, cfg, k, out, a, b, c, d, e, f, g)
	}
	t.Logf("10000 launches enqueued in %v", time.Since(start))
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestGPUConcurrentLaunches(t *testing.T) {
	dev := gpuDevice(t)
	k := kernelsFor(t, dev)["saxpy"]
	const n = 1 << 16
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i % 100)
		y[i] = float32(i % 7)
	}
	inParallel(t, 8, func(gi int) error {
		s, err := dev.NewStream(&StreamOptions{NonBlocking: true})
		if err != nil {
			return err
		}
		defer s.Close()
		bx, err := dev.Allocate(n*4, s)
		if err != nil {
			return err
		}
		defer bx.Close()
		by, _ := dev.Allocate(n*4, s)
		defer by.Close()
		if err := CopyToDevice(bx, x); err != nil {
			return err
		}
		a := float32(gi + 1)
		for range 50 {
			if err := CopyToDevice(by, y); err != nil {
				return err
			}
			if err := Launch(s, LaunchConfig{Grid: Dim(n / 128), Block: Dim(128)}, k, a, bx, by, by, int32(n)); err != nil {
				return err
			}
			out := make([]float32, n)
			if err := CopyFromDevice(out, by); err != nil {
				return err
			}
			for i := range out {
				if w := a*x[i] + y[i]; out[i] != w {
					return fmt.Errorf("goroutine %d: out[%d] = %v, want %v", gi, i, out[i], w)
				}
			}
		}
		return nil
	})
}

// TestGPULaunchParameterBuffers launches kernels whose parameters pass
// Launch's 64-byte stack buffer (108 bytes) and its 512-byte one (1008
// bytes: a pooled buffer, used twice so that the reused one is cleared
// and refilled), and checks what the kernels read.
func TestGPULaunchParameterBuffers(t *testing.T) {
	dev := gpuDevice(t)
	ks := kernelsFor(t, dev)
	s := testStream(t, dev)
	out, err := dev.Allocate(8, s)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for _, c := range []struct {
		name  string
		words int
	}{{"words25", 25}, {"words250", 250}, {"words250", 250}, {"words25", 25}} {
		for round := range 2 {
			w := make(Bytes, 4*c.words)
			var sum int32
			for i := range c.words {
				v := int32(i*3 + 1 + round*7)
				binary.LittleEndian.PutUint32(w[4*i:], uint32(v))
				sum += v * int32(i+1)
			}
			if err := Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(1)}, ks[c.name], out, w); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := make([]int32, 2)
			if err := CopyFromDeviceAsync(s, got, out); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			last := int32((c.words-1)*3 + 1 + round*7)
			if got[0] != sum || got[1] != last {
				t.Errorf("%s round %d: kernel read sum %d, last %d; want %d, %d", c.name, round, got[0], got[1], sum, last)
			}
		}
	}
}
