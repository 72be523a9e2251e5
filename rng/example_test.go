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
	const n = 1 << 20
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	buf, err := dev.Allocate(n*4, nil) // on the legacy default stream
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	g, err := rng.New(dev.DefaultStream(), &rng.Options{Type: rng.Philox4_32_10, Seed: 42})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	if err := rng.Normal(g, buf, n, 10, float32(2)); err != nil { // float32 values
		log.Fatal(err)
	}
	x := make([]float32, n)
	if err := core.CopyFromDevice(x, buf); err != nil { // waits for the stream
		log.Fatal(err)
	}
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	fmt.Printf("mean %.2f\n", sum/n) // mean 10.00

	// The same Buffer as float64 values in (0, 1], then as raw uint32.
	if err := rng.Uniform[float64](g, buf, n/2); err != nil {
		log.Fatal(err)
	}
	if err := rng.Bits[uint32](g, buf, n); err != nil {
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
