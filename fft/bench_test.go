package fft

import (
	"math"
	"testing"

	"github.com/cudago/cudago/core"
)

// BenchmarkFFTC2C2e24 is the target: one forward complex64 C2C
// transform of 2^24 points, out of place, as cupy.fft.fft(x) runs it for a
// complex64 x (overwrite_x=False: cuFFT writes a new array; CuPy's plan
// comes from its plan cache, its output and work area from its memory
// pool). bench/bench_cupy_math.py times the CuPy side the same way
// (FFT_C2C_2^24_complex64: CUDA events around a loop of cupy.fft.fft(x)).
//
// The plan is made, and one transform run, before the timer starts; the
// loop only queues transforms on one stream, and the time per transform is
// the GPU time between two events around the loop, divided by b.N
// ("ms/transform"). GB/s counts one read and one write of the data, the
// least a transform moves.
func BenchmarkFFTC2C2e24(b *testing.B) { benchC2C(b, 1<<24, false) }

// BenchmarkFFTC2C2e24InPlace is the same transform in place
// (cupy.fft.fft(x, overwrite_x=True)).
func BenchmarkFFTC2C2e24InPlace(b *testing.B) { benchC2C(b, 1<<24, true) }

func benchC2C(b *testing.B, n int, inPlace bool) {
	dev, s := gpuStream(b)
	c, err := New(s, nil)
	must(b, err)
	defer c.Close()
	p, err := c.Plan(Desc{Shape: []int{n}})
	must(b, err)
	in, err := dev.Allocate(n*8, s)
	must(b, err)
	defer in.Close()
	out := in
	if !inPlace {
		out, err = dev.Allocate(n*8, s)
		must(b, err)
		defer out.Close()
	}
	// The GPU's arithmetic takes the same time whatever the values (zero
	// is no denormal); zeros stay finite through any number of in-place
	// transforms, where other data would overflow after a few.
	must(b, in.Memset32(0))
	start, err := dev.NewEvent(core.EventOptions{Timing: true})
	must(b, err)
	defer start.Close()
	end, err := dev.NewEvent(core.EventOptions{Timing: true})
	must(b, err)
	defer end.Close()
	must(b, p.Forward(in, out)) // warm up: kernels loaded, pool grown
	must(b, s.Sync())

	b.ResetTimer()
	must(b, start.Record(s))
	for range b.N {
		if err := p.Forward(in, out); err != nil {
			b.Fatal(err)
		}
	}
	must(b, end.Record(s))
	must(b, end.Sync())
	b.StopTimer()

	gpu, err := core.Elapsed(start, end)
	must(b, err)
	per := gpu.Seconds() / float64(b.N)
	b.ReportMetric(per*1e3, "ms/transform")
	b.ReportMetric(2*float64(n*8)/per/1e9, "GB/s")
	b.ReportMetric(5*float64(n)*math.Log2(float64(n))/per/1e12, "TFLOP/s")
}
