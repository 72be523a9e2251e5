// Command fft finds the frequencies of a sum of two sines with cuFFT: one
// second of 50 Hz (amplitude 1) plus 120 Hz (amplitude 0.5), sampled 4096
// times, goes through a real-to-complex FFT on the GPU; the two largest
// peaks of the spectrum are printed, with their amplitudes, and checked.
// The normalized inverse then brings the signal back.
//
// Without a GPU it prepares the signal and the plan's description, says
// that it cannot run the FFT, and exits 0; it exits 1 on any other error
// or a wrong peak.
package main

import (
	"cmp"
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/fft"
)

const (
	n    = 4096   // samples
	rate = 4096.0 // samples per second: the spectrum's bins are 1 Hz apart
)

var sines = []struct{ freq, amp float64 }{{50, 1}, {120, 0.5}}

func main() { demo.Main("fft", run) }

func run() error {
	signal := make([]float32, n)
	for i := range signal {
		t := float64(i) / rate
		for _, s := range sines {
			signal[i] += float32(s.amp * math.Sin(2*math.Pi*s.freq*t))
		}
	}
	desc := fft.Desc{Shape: []int{n}, Type: fft.R2C}
	inBytes, outBytes, err := desc.Bytes()
	if err != nil {
		return err
	}
	fmt.Printf("signal: %d samples at %g Hz, sines of %g Hz and %g Hz; R2C: %d bytes in, %d out (%d frequencies)\n",
		n, rate, sines[0].freq, sines[1].freq, inBytes, outBytes, n/2+1)

	dev := demo.Device("the FFT was not run")
	if dev == nil {
		return nil
	}
	s := dev.DefaultStream()
	plans, err := fft.New(s, nil) // the Cache of s's plans
	if err != nil {
		return err
	}
	defer plans.Close()
	r2c, err := plans.Plan(desc)
	if err != nil {
		return err
	}
	in, err := dev.Allocate(inBytes, s)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := dev.Allocate(outBytes, s)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := core.CopyToDevice(in, signal); err != nil {
		return err
	}
	if err := r2c.Forward(in, out); err != nil {
		return err
	}
	spectrum, err := demo.Download[complex64](out) // n/2+1 of them; waits for the FFT
	if err != nil {
		return err
	}

	// A sine of amplitude a puts a·n/2 into its bin of the unnormalized
	// spectrum. The two largest bins are the peaks (the sines fall on
	// exact bins, so nothing leaks into their neighbours).
	bins := make([]int, n/2+1)
	for k := range bins {
		bins[k] = k
	}
	mag := func(k int) float64 { return cmplx.Abs(complex128(spectrum[k])) }
	slices.SortFunc(bins, func(a, b int) int { return cmp.Compare(mag(b), mag(a)) }) // largest first
	peaks := bins[:2]
	slices.Sort(peaks)
	for i, k := range peaks {
		f, a := float64(k)*rate/n, 2*mag(k)/n
		fmt.Printf("peak %d: %6.1f Hz, amplitude %.3f\n", i+1, f, a)
		if want := sines[i]; f != want.freq || math.Abs(a-want.amp) > 1e-3 {
			return fmt.Errorf("peak %d is %g Hz with amplitude %g, want %g Hz with %g", i+1, f, a, want.freq, want.amp)
		}
	}
	third := bins[2]
	fmt.Printf("largest other bin: %.1f Hz, amplitude %.2g\n", float64(third)*rate/n, 2*mag(third)/n)

	// Back: C2R divided by n gives the samples again.
	c2r, err := plans.Plan(fft.Desc{Shape: []int{n}, Type: fft.C2R})
	if err != nil {
		return err
	}
	if err := c2r.InverseNormalized(out, in); err != nil {
		return err
	}
	back, err := demo.Download[float32](in)
	if err != nil {
		return err
	}
	var worst float64
	for i := range back {
		worst = max(worst, math.Abs(float64(back[i]-signal[i])))
	}
	fmt.Printf("inverse FFT / n: largest difference from the signal %.2g, on %s\n", worst, dev.Name())
	if worst > 1e-5 {
		return fmt.Errorf("the inverse differs from the signal by %g", worst)
	}
	return nil
}
