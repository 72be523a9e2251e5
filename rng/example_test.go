package rng_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/lib"
	"github.com/cudago/cudago/rng"
)

// A Generator is bound to one stream; the generating functions take the
// element type as a type parameter, and the type of the mean and standard
// deviation follows it. (It needs a GPU, so it has no Output.)
func ExampleNormal() {
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	s, err := dev.NewStream(core.StreamOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	g, err := rng.New(s, &rng.Options{Type: rng.Philox4_32_10, Seed: 42})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	const n = 1 << 20
	buf, err := dev.Allocate(n*4, s)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := rng.Normal(g, buf, n, 10, float32(2)); err != nil { // float32 values
		log.Fatal(err)
	}
	x := make([]float32, n)
	if err := core.CopyFromDevice(x, buf); err != nil { // waits for s
		log.Fatal(err)
	}
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	fmt.Printf("mean %.2f\n", sum/n) // mean 10.00
}

// Uniform fills a Buffer with float32 or float64 values in (0, 1]; Bits
// with raw uint32 (or, for the 64-bit Sobol types, uint64) values.
// (It needs a GPU, so it has no Output.)
func ExampleUniform() {
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	g, err := rng.New(dev.DefaultStream(), nil) // XORWOW, seed 0: cuRAND's defaults
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	buf, err := dev.Allocate(1024*8, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := rng.Uniform[float64](g, buf, 1024); err != nil {
		log.Fatal(err)
	}
	if err := rng.Bits[uint32](g, buf, 2048); err != nil { // the same bytes, as uint32
		log.Fatal(err)
	}
}

// Options are checked before anything else: a bad one is a *lib.ArgError
// naming the field, found without a GPU (and before the stream, which is
// nil here).
func ExampleNew_options() {
	for _, o := range []rng.Options{
		{Type: rng.Sobol32, Seed: 7},
		{Type: rng.MTGP32, Offset: 100},
		{Type: rng.Philox4_32_10, Dimensions: 3},
		{Type: rng.Philox4_32_10},
	} {
		_, err := rng.New(nil, &o)
		var ae *lib.ArgError
		if errors.As(err, &ae) {
			fmt.Printf("%s: %v\n", ae.Arg, err)
		}
	}
	// Output:
	// opts.Seed: rng: New: Sobol32 is quasi-random and takes no seed (Seed 7)
	// opts.Offset: rng: New: MTGP32 has no offset (Offset 100)
	// opts.Dimensions: rng: New: Philox4_32_10 is pseudo-random and has no dimensions (Dimensions 3)
	// stream: rng: New: nil *core.Stream (Context.DefaultStream is the legacy default stream)
}
