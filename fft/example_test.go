package fft_test

import (
	"errors"
	"fmt"
	"log"
	"math"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/fft"
	"github.com/cudago/cudago/lib"
)

// A Desc says what to transform; it fixes the sizes of the Buffers, which
// can be worked out before any GPU is involved. An R2C transform of n
// reals gives n/2+1 complex values.
func ExampleDesc_Bytes() {
	for _, d := range []fft.Desc{
		{Shape: []int{1024}},                                         // C2C, complex64
		{Shape: []int{1024}, Type: fft.R2C},                          // float32 in, complex64 out
		{Shape: []int{64, 64}, Type: fft.C2R, Precision: fft.Double}, // complex128 in, float64 out
		{Shape: []int{1000}, Type: fft.R2C, InPlace: true, Batch: 4}, // one padded Buffer
	} {
		in, out, err := d.Bytes()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%v %v %v batch %d: in %d bytes, out %d bytes\n", d.Precision, d.Type, d.Shape, max(d.Batch, 1), in, out)
	}
	_, _, err := fft.Desc{Shape: []int{8, 0}}.Bytes()
	var ae *lib.ArgError
	fmt.Println(errors.As(err, &ae), ae.Arg, err)
	// Output:
	// Single C2C [1024] batch 1: in 8192 bytes, out 8192 bytes
	// Single R2C [1024] batch 1: in 4096 bytes, out 4104 bytes
	// Double C2R [64 64] batch 1: in 33792 bytes, out 32768 bytes
	// Single R2C [1000] batch 4: in 16032 bytes, out 16032 bytes
	// true d.Shape fft: Desc.Bytes: Desc.Shape[1] is 0; every dimension must be at least 1
}

// A Cache made by New hands out one Plan per Desc for its stream, made on
// first use. The transforms are queued on the stream, unnormalized as
// cuFFT's are: InverseNormalized divides by n. (It needs a GPU, so it has
// no Output.)
func ExampleNew() {
	const n = 8
	x := make([]complex64, n)
	for i := range x {
		x[i] = complex64(complex(math.Cos(2*math.Pi*float64(i)/n), 0)) // one cycle
	}
	dev, err := core.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	s := dev.DefaultStream() // the legacy default stream; any Stream will do
	plans, err := fft.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer plans.Close() // closes its plans
	buf, err := dev.Allocate(n*8, s)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := core.CopyToDevice(buf, x); err != nil {
		log.Fatal(err)
	}
	p, err := plans.Plan(fft.Desc{Shape: []int{n}})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Forward(buf, buf); err != nil { // C2C runs in place too
		log.Fatal(err)
	}
	if err := core.CopyFromDevice(x, buf); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.1f %.1f %.1f\n", real(x[1]), real(x[n-1]), real(x[2])) // 4.0 4.0 0.0
	if err := p.InverseNormalized(buf, buf); err != nil {                // back to the cosine
		log.Fatal(err)
	}
}
