package demo

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/testenv"
)

func TestEqual(t *testing.T) {
	want := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	if err := Equal("x", append([]float32(nil), want...), want); err != nil {
		t.Errorf("Equal of equal slices: %v", err)
	}
	got := append([]float32(nil), want...)
	for i := 1; i < len(got); i++ { // seven wrong: more than it prints
		if i != 4 && i != 5 {
			got[i]++
		}
	}
	err := Equal("x", got, want)
	if err == nil || err.Error() != "x: 7 of 10 elements wrong" {
		t.Errorf("Equal with 7 wrong: %v, want x: 7 of 10 elements wrong", err)
	}
	err = Equal("x", want[:3], want)
	if err == nil || err.Error() != "x: 3 elements, want 10" {
		t.Errorf("Equal of a short slice: %v, want x: 3 elements, want 10", err)
	}
}

func TestNear(t *testing.T) {
	want := []float64{100, -100, 0}
	for _, c := range []struct {
		got []float64
		bad int
	}{
		{[]float64{100.09, -100.09, 0}, 0},
		{[]float64{99.91, -99.91, 0}, 0},
		{[]float64{100.11, -99.89, 0}, 2},   // past 1e-3 of |want|, both signs
		{[]float64{100, -100, 1e-300}, 1},   // 0 must be exactly 0
		{[]float64{math.NaN(), -100, 0}, 1}, // NaN is wrong, never near
	} {
		err := Near("y", c.got, want, 1e-3)
		switch {
		case c.bad == 0 && err != nil:
			t.Errorf("Near(%v): %v", c.got, err)
		case c.bad > 0 && (err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("y: %d of 3 ", c.bad))):
			t.Errorf("Near(%v): %v, want %d of 3 wrong", c.got, err, c.bad)
		}
	}
}

func TestCheckMixedTypes(t *testing.T) {
	got, want := []float32{1, 2, 3}, []float64{1, 2, 3.5}
	err := Check("c", got, want, func(i int) bool { return math.Abs(float64(got[i])-want[i]) <= 0.25 })
	if err == nil || err.Error() != "c: 1 of 3 elements wrong" {
		t.Errorf("Check: %v, want c: 1 of 3 elements wrong", err)
	}
}

// TestTarget: GPU 0 and its architecture, or no device, NoGPUArch and why.
func TestTarget(t *testing.T) {
	dev, arch, noGPU := Target()
	if _, err := core.GetDevice(0); err != nil {
		if dev != nil || arch != NoGPUArch || noGPU == nil {
			t.Errorf("Target without a GPU = %v, %q, %v; want nil, %q and the error", dev, arch, noGPU, NoGPUArch)
		}
		if Device("nothing ran") != nil {
			t.Error("Device without a GPU is not nil")
		}
		return
	}
	if dev == nil || arch != dev.Arch() || noGPU != nil {
		t.Errorf("Target = %v, %q, %v; want GPU 0, its arch and no error", dev, arch, noGPU)
	}
	if d := Device("nothing ran"); d != dev {
		t.Errorf("Device = %v, want %v", d, dev)
	}
}

const kernel = `extern "C" __global__ void twice(float *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= 2;
}`

// TestCompile compiles for sm_80 (no GPU needed) and checks that the
// CUBIN is one for that architecture, defining the kernel.
func TestCompile(t *testing.T) {
	code, err := Compile(kernel, "twice.cu", "80")
	if err != nil {
		t.Fatal(err)
	}
	defer code.Close()
	f, sm := testenv.CubinELF(t, code.Code())
	if sm != 80 {
		t.Errorf("CUBIN for sm_%d, want sm_80", sm)
	}
	if !testenv.HasFunc(t, f, "twice") {
		t.Error("the CUBIN does not define twice")
	}
	if _, err := Compile("not C++", "bad.cu", "80"); err == nil || !strings.Contains(err.Error(), "bad.cu") {
		t.Errorf("Compile of a bad source: %v, want NVRTC's error naming bad.cu", err)
	}
	if testenv.GPUError() != nil {
		// Compiled for NoGPUArch, said so, and nothing to run.
		if dev, code, err := CompileForGPU(kernel, "twice.cu", "nothing ran"); dev != nil || code != nil || err != nil {
			t.Errorf("CompileForGPU without a GPU = %v, %v, %v; want nil, nil, nil", dev, code, err)
		}
	}
}

// TestUploadDownload runs twice over a vector uploaded with Upload and
// checks what Download brings back.
func TestUploadDownload(t *testing.T) {
	testenv.RequireGPU(t)
	dev, code, err := CompileForGPU(kernel, "twice.cu", "nothing ran")
	if err != nil {
		t.Fatal(err)
	}
	defer code.Close()
	k, err := code.Kernel("twice")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	x, want := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], want[i] = float32(i)-500, 2*(float32(i)-500)
	}
	s := dev.DefaultStream()
	buf, err := Upload(s, x)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if err := core.Launch(s, core.LaunchConfig{Grid: core.Dim((n + 127) / 128), Block: core.Dim(128)}, k, buf, int32(n)); err != nil {
		t.Fatal(err)
	}
	got, err := Download[float32](buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := Equal("x", got, want); err != nil {
		t.Error(err)
	}
	if _, err := Download[[3]float32](buf); err == nil {
		t.Error("Download of 4000 bytes as 12-byte elements: no error")
	}
}
