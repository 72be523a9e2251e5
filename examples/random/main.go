// Command random fills a device Buffer with normal random numbers through
// package rng (cuRAND's Philox4_32_10), copies them back and checks their
// mean and standard deviation against the distribution's.
//
// Without a GPU it says so and exits 0; it exits 1 on any other error or
// when the sample is off.
package main

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/rng"
)

func main() { demo.Main("random", run) }

func run() error {
	const n = 1_000_001 // odd: rng takes any count, though cuRAND makes normals in pairs
	const mean, stddev = 3.0, 2.0

	dev := demo.Device("the normal generation was not run")
	if dev == nil {
		return nil
	}
	s := dev.DefaultStream() // the legacy default stream, which needs no Close
	buf, err := core.Alloc[float32](dev, n, s)
	if err != nil {
		return err
	}
	defer buf.Close()
	g, err := rng.New(s, &rng.Options{Type: rng.Philox4_32_10, Seed: 2024})
	if err != nil {
		return err
	}
	defer g.Close()

	if err := rng.Normal[float32](g, buf, n, mean, stddev); err != nil { // queued on s
		return err
	}
	x, err := demo.Download[float32](buf) // waits for s
	if err != nil {
		return err
	}

	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	m := sum / n
	var ss float64
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	sd := math.Sqrt(ss / (n - 1))
	fmt.Printf("%d normals of mean %g and stddev %g on %s: mean %.5f, stddev %.5f\n", n, mean, stddev, dev.Name(), m, sd)

	// Six standard errors: stddev/√n for the mean, stddev/√(2n) for the
	// standard deviation of a normal sample.
	if tol := 6 * stddev / math.Sqrt(n); math.Abs(m-mean) > tol {
		return fmt.Errorf("mean %.5f, want %g ± %.5f", m, mean, tol)
	}
	if tol := 6 * stddev / math.Sqrt(2*n); math.Abs(sd-stddev) > tol {
		return fmt.Errorf("stddev %.5f, want %g ± %.5f", sd, stddev, tol)
	}
	fmt.Println("mean and stddev as expected")
	return nil
}
