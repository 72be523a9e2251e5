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
	"os"

	"github.com/cudago/cudago/core"
)

//go:embed kernels.fatbin
var kernels []byte

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

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
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) * 0.5
		y[i] = float32(i%97) - 40
	}
	stream := dev.DefaultStream()
	var bufs [3]*core.Buffer
	for i := range bufs {
		if bufs[i], err = core.Alloc[float32](dev, n, stream); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	bx, by, bout := bufs[0], bufs[1], bufs[2]
	if err := core.CopyToDevice(bx, x); err != nil {
		return err
	}
	if err := core.CopyToDevice(by, y); err != nil {
		return err
	}
	const threads = 256
	cfg := core.LaunchConfig{Grid: core.Dim((n + threads - 1) / threads), Block: core.Dim(threads)}
	if err := core.Launch(stream, cfg, saxpy, a, bx, by, bout, uint64(n)); err != nil {
		return err
	}
	if err := stream.Sync(); err != nil {
		return err
	}
	out := make([]float32, n)
	if err := core.CopyFromDevice(out, bout); err != nil {
		return err
	}
	bad := 0
	for i := range out {
		if want := a*x[i] + y[i]; out[i] != want {
			if bad < 5 {
				fmt.Fprintf(os.Stderr, "out[%d] = %v, want %v\n", i, out[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("saxpy: %d of %d results wrong", bad, n)
	}
	fmt.Printf("saxpy on %s (sm_%s): %d results correct\n", dev.Name(), dev.Arch(), n)
	return nil
}
