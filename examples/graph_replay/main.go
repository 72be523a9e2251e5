// Command graph_replay records GPU work once and replays it: ten launches of
// a kernel that computes x[i] = x[i]*a + b, each with its own a and b, are
// captured from a stream into a core.Graph, which is instantiated into a
// core.GraphExec and launched five times. Then a graph of the same shape
// with other a and b is captured, GraphExec.Update puts its parameters into
// the executable graph, and that is launched twice more.
//
// After each stage every element is checked against the same arithmetic on
// the CPU. The kernel rounds the product and the sum separately (__fmul_rn,
// __fadd_rn: never fused into an FMA), as the Go code does (float32(x*a)+b:
// the conversion forbids fusion), so the results must be equal bit for bit.
// The program prints one line and exits 0 when all are right; on a mismatch
// or any other error (no NVRTC, say) it prints the error and exits 1.
// Without a GPU it compiles the kernel for sm_90, says that it cannot run
// it, and exits 0.
//
// Run it on a machine with a GPU:
//
//	go run ./examples/graph_replay
package main

import (
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const source = `
extern "C" __global__ void affine(float* x, float a, float b, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = __fadd_rn(__fmul_rn(x[i], a), b);
}
`

const (
	n        = 1 << 20
	threads  = 256
	launches = 10 // kernel launches in the graph
	replays  = 5  // launches of the graph before the update
	after    = 2  // launches of the updated graph
)

// step is the parameters of one launch of affine.
type step struct{ a, b float32 }

func main() { demo.Main("graph_replay", run) }

// cpu applies steps to x as the kernel does.
func cpu(x []float32, steps []step) {
	for _, s := range steps {
		for i := range x {
			x[i] = float32(x[i]*s.a) + s.b
		}
	}
}

// check compares every element of buf with want.
func check(stage string, buf *core.Buffer, want []float32) error {
	got, err := demo.Download[float32](buf)
	if err != nil {
		return err
	}
	return demo.Equal("x "+stage, got, want)
}

// capture records one launch of k per step on s into a graph.
func capture(s *core.Stream, k *core.Kernel, x *core.Buffer, steps []step) (*core.Graph, error) {
	if err := s.BeginCapture(core.CaptureRelaxed); err != nil {
		return nil, err
	}
	cfg := core.LaunchConfig{Grid: core.Dim((n + threads - 1) / threads), Block: core.Dim(threads)}
	for _, st := range steps {
		if err := core.Launch(s, cfg, k, x, st.a, st.b, int32(n)); err != nil {
			// End the capture, so that the stream is usable again.
			if g, err2 := s.EndCapture(); err2 == nil {
				g.Close()
			}
			return nil, err
		}
	}
	return s.EndCapture()
}

func run() error {
	// The GPU is needed only to run the kernel: without one, compile anyway.
	dev, obj, err := demo.CompileForGPU(source, "graph_replay.cu", "nothing was captured or run")
	if err != nil || obj == nil {
		return err
	}
	defer obj.Close()
	k, err := obj.Kernel("affine")
	if err != nil {
		return err
	}

	// The default streams cannot capture: use a stream of our own.
	s, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		return err
	}
	defer s.Close()
	want := make([]float32, n)
	for i := range want {
		want[i] = float32(i%4096)/64 - 32
	}
	x, err := demo.Upload(s, want) // allocated and copied on s
	if err != nil {
		return err
	}
	defer x.Close()

	steps := make([]step, launches)
	for i := range steps {
		steps[i] = step{a: 0.75 + 0.05*float32(i), b: 0.5*float32(i) - 2}
	}
	g, err := capture(s, k, x, steps)
	if err != nil {
		return err
	}
	defer g.Close()
	// Captured, not run: x is unchanged.
	if err := check("after capture", x, want); err != nil {
		return err
	}

	exec, err := g.Instantiate()
	if err != nil {
		return err
	}
	defer exec.Close()
	if err := exec.Upload(s); err != nil {
		return err
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
	if err := start.Record(s); err != nil {
		return err
	}
	for range replays {
		if err := exec.Launch(s); err != nil {
			return err
		}
	}
	if err := end.Record(s); err != nil {
		return err
	}
	if err := s.Sync(); err != nil {
		return err
	}
	elapsed, err := core.Elapsed(start, end)
	if err != nil {
		return err
	}
	for range replays {
		cpu(want, steps)
	}
	if err := check(fmt.Sprintf("after %d replays", replays), x, want); err != nil {
		return err
	}

	// Update: a graph of the same topology (same kernel, same number of
	// launches) with other parameters replaces the executable graph's.
	steps2 := make([]step, launches)
	for i := range steps2 {
		steps2[i] = step{a: 1.25 - 0.05*float32(i), b: 1 - 0.25*float32(i)}
	}
	g2, err := capture(s, k, x, steps2)
	if err != nil {
		return err
	}
	err = exec.Update(g2)
	g2.Close() // exec keeps what it needs
	if err != nil {
		return fmt.Errorf("GraphExec.Update: %w", err)
	}
	for range after {
		if err := exec.Launch(s); err != nil {
			return err
		}
	}
	if err := s.Sync(); err != nil {
		return err
	}
	for range after {
		cpu(want, steps2)
	}
	if err := check(fmt.Sprintf("after the update and %d more launches", after), x, want); err != nil {
		return err
	}

	fmt.Printf("graph_replay: %d launches captured on %s, replayed %d times (%v), updated and replayed %d more: all %d elements match the CPU\n",
		launches, dev, replays, elapsed, after, n)
	return nil
}
