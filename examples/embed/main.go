// Command embed runs a kernel compiled ahead of time: kernels.cu is compiled
// by 'go generate' (cudago build, see gen.go) into kernels.fatbin, which is
// committed and embedded in the binary with //go:embed, so the program
// needs no compiler at run time, only the driver.
//
// It loads the fat binary with core.FromFatbin (the driver picks the cubin
// for the GPU, or JITs the PTX for a newer one), runs saxpy on 1M floats on
// GPU 0 and checks every result; it exits 1 on a mismatch or an error.
// Without a GPU it checks that the embedded fatbin is one, says that it
// cannot run it, and exits 0.
package main

import (
	_ "embed"
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

//go:embed kernels.fatbin
var kernels []byte

func main() { demo.Main("embed", run) }

func run() error {
	obj, err := core.FromFatbin(kernels, core.WithCodeName("kernels"))
	if err != nil {
		return err
	}
	defer obj.Close()
	dev, err := core.GetDevice(0)
	if err != nil {
		fmt.Printf("embed: %d bytes of fatbin embedded; no GPU, so saxpy was not run: %v\n", len(kernels), err)
		return nil
	}
	saxpy, err := obj.Kernel("saxpy")
	if err != nil {
		return err
	}

	const n = 1 << 20
	const a = float32(2.5)
	x, y, want := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) * 0.5
		y[i] = float32(i%97) - 40
		want[i] = a*x[i] + y[i]
	}
	stream := dev.DefaultStream()
	var bufs [3]*core.Buffer
	for i, host := range [][]float32{x, y, make([]float32, n)} {
		if bufs[i], err = demo.Upload(stream, host); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	bx, by, bout := bufs[0], bufs[1], bufs[2]
	const threads = 256
	cfg := core.LaunchConfig{Grid: core.Dim((n + threads - 1) / threads), Block: core.Dim(threads)}
	if err := core.Launch(stream, cfg, saxpy, a, bx, by, bout, uint64(n)); err != nil {
		return err
	}
	out, err := demo.Download[float32](bout) // after the kernel, on stream
	if err != nil {
		return err
	}
	if err := demo.Equal("saxpy", out, want); err != nil {
		return err
	}
	fmt.Printf("saxpy on %s (sm_%s): %d results correct\n", dev.Name(), dev.Arch(), n)
	return nil
}
