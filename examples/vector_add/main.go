// Command vector_add adds two vectors of 1<<20 float32s on GPU 0 with
// package core alone: NVRTC (core.NewProgram) compiles the kernel at run time
// for the device's own architecture, typed buffers hold the data, and the
// vector is split into two halves, each copied in, added and copied back
// with the asynchronous copies and core.Launch on a stream of its own.
// Events join the streams and time the whole: the second stream waits for a
// start event recorded on the first, and the first waits for the second's
// last work before it records the end event.
//
// Every element is checked against the sum computed on the CPU. The program
// prints one line and exits 0 when all are right; on a mismatch or any other
// error (no NVRTC, say) it prints the error and exits 1. Without a GPU it
// compiles the kernel for sm_90, says that it cannot run it, and exits 0.
//
// Run it from anywhere in the repository (the compiler libraries are found
// as package pathfinder describes) on a machine with a GPU:
//
//	go run ./examples/vector_add
package main

import (
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const source = `
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned long long n) {
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
`

const (
	n       = 1 << 20
	threads = 256
)

func main() { demo.Main("vector_add", run) }

// compile compiles source to a CUBIN for arch ("90").
func compile(arch string) (*core.ObjectCode, error) {
	p, err := core.NewProgram(source, "c++", &core.ProgramOptions{
		Name: "vector_add.cu",
		Arch: "sm_" + arch,
	})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Compile("cubin")
}

func run() error {
	// The GPU is needed only to run the kernel: without one, compile anyway.
	dev, arch, noGPU := demo.Target()
	obj, err := compile(arch)
	if err != nil {
		return err
	}
	defer obj.Close()
	if noGPU != nil {
		fmt.Printf("vector_add: compiled for sm_%s (%d bytes of CUBIN); no GPU, so it was not run: %v\n", arch, len(obj.Code()), noGPU)
		return nil
	}
	kernel, err := obj.Kernel("vector_add")
	if err != nil {
		return err
	}

	a, b, out := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32(i) * 0.25
		b[i] = float32(i%1000) - 500
	}

	var streams [2]*core.Stream
	for i := range streams {
		if streams[i], err = dev.NewStream(&core.StreamOptions{NonBlocking: true}); err != nil {
			return err
		}
		defer streams[i].Close()
	}
	start, err := dev.NewEvent(&core.EventOptions{Timing: true})
	if err != nil {
		return err
	}
	defer start.Close()
	end, err := dev.NewEvent(&core.EventOptions{Timing: true})
	if err != nil {
		return err
	}
	defer end.Close()

	// The second stream starts after the start event of the first.
	if err := start.Record(streams[0]); err != nil {
		return err
	}
	if err := streams[1].Wait(start); err != nil {
		return err
	}

	// Half h of the vector, [h*n/2, (h+1)*n/2), goes through streams[h],
	// in buffers allocated (stream-ordered) and later freed on it.
	const half = n / 2
	for h, s := range streams {
		lo, hi := h*half, (h+1)*half
		var bufs [3]*core.Buffer
		for i := range bufs {
			if bufs[i], err = core.Alloc[float32](dev, half, s); err != nil {
				return err
			}
			defer bufs[i].Close()
		}
		da, db, dc := bufs[0], bufs[1], bufs[2]
		if err := core.CopyToDeviceAsync(s, da, a[lo:hi]); err != nil {
			return err
		}
		if err := core.CopyToDeviceAsync(s, db, b[lo:hi]); err != nil {
			return err
		}
		cfg := core.LaunchConfig{Grid: core.Dim((half + threads - 1) / threads), Block: core.Dim(threads)}
		if err := core.Launch(s, cfg, kernel, da, db, dc, uint64(half)); err != nil {
			return err
		}
		if err := core.CopyFromDeviceAsync(s, out[lo:hi], dc); err != nil {
			return err
		}
	}

	// The first stream waits for the second's work, then records the end:
	// once end completes, both halves are back in out.
	joined, err := streams[1].Record()
	if err != nil {
		return err
	}
	defer joined.Close()
	if err := streams[0].Wait(joined); err != nil {
		return err
	}
	if err := end.Record(streams[0]); err != nil {
		return err
	}
	if err := end.Sync(); err != nil {
		return err
	}
	// end.Sync covers both streams; Sync each anyway, to report a failure
	// of either stream's work as that stream's error.
	for _, s := range streams {
		if err := s.Sync(); err != nil {
			return err
		}
	}
	elapsed, err := core.Elapsed(start, end)
	if err != nil {
		return err
	}

	want := make([]float32, n)
	for i := range want {
		want[i] = a[i] + b[i]
	}
	if err := demo.Equal("c", out, want); err != nil {
		return err
	}
	fmt.Printf("vector_add: %d float32s on %s over 2 streams: all %d results correct (%v from start to end event, first-use costs included)\n",
		n, dev, n, elapsed)
	return nil
}
