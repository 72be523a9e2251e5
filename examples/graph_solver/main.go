// Command graph_solver solves a linear system by Jacobi iteration in a loop
// that runs on the GPU: a graph built node by node holds a while node whose
// body does one Jacobi sweep and then a convergence check, a kernel that
// sets the loop's condition to 0 (cudaGraphSetConditional, through a
// core.ConditionalHandle passed as an argument) once no unknown moved by
// more than the tolerance, or after the iteration limit. One launch of the
// graph runs the whole solve, with no round trip to the host per
// iteration; the graph is launched again for a second right-hand side.
//
// The system is dense and diagonally dominant (so Jacobi converges):
// A[i][j] = 1/(1+|i-j|) off the diagonal, 16 + i%5 on it. The same
// iteration runs on the CPU with the same stopping rule; the kernels round
// every product and sum separately (__dmul_rn, __dadd_rn: never fused into
// an FMA) as the Go code does, so the iteration counts must match and the
// solutions agree to the last bit. The residual |Ax - b| is checked too.
// The program prints what it found and exits 0 when all is right, 1 on
// any error. Without a GPU it compiles the kernels for sm_90, says that
// the solver was not run, and exits 0. It needs a CUDA 12.4 driver (while
// nodes).
//
//	go run ./examples/graph_solver
package main

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

const source = `
// NVRTC has no header declaring it; the driver resolves it at load time.
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

// One Jacobi sweep: xn[i] = (b[i] - sum over j != i of A[i][j] x[j]) / A[i][i].
extern "C" __global__ void jacobi(const double* A, const double* b, const double* x, double* xn, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const double* row = A + (size_t)i * n;
	double s = 0;
	for (int j = 0; j < n; j++) {
		if (j != i) s = __dadd_rn(s, __dmul_rn(row[j], x[j]));
	}
	xn[i] = __ddiv_rn(__dsub_rn(b[i], s), row[i]);
}

// The end of an iteration, in one block of 256 threads: the largest change
// of an unknown, then x = xn, then the loop's condition.
extern "C" __global__ void converged(cudaGraphConditionalHandle loop, double* x, const double* xn, int n,
		double tol, int max_iter, int* iter, double* last_change) {
	__shared__ double m[256];
	double d = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		double e = fabs(xn[i] - x[i]);
		d = e > d ? e : d;
	}
	m[threadIdx.x] = d;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s && m[threadIdx.x + s] > m[threadIdx.x]) m[threadIdx.x] = m[threadIdx.x + s];
		__syncthreads();
	}
	// Every read of x above is done (the __syncthreads): now overwrite it.
	for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = xn[i];
	if (threadIdx.x == 0) {
		int it = ++iter[0];
		last_change[0] = m[0];
		cudaGraphSetConditional(loop, (m[0] > tol && it < max_iter) ? 1u : 0u);
	}
}
`

const (
	n       = 512
	tol     = 1e-12
	maxIter = 1000
	rows    = 128 // threads per block of jacobi
	block   = 256 // threads of converged (its shared array's size)
)

func main() { demo.Main("graph_solver", run) }

// system returns A (row-major) and two right-hand sides.
func system() (a, b1, b2 []float64) {
	a = make([]float64, n*n)
	b1, b2 = make([]float64, n), make([]float64, n)
	for i := range n {
		for j := range n {
			if i == j {
				a[i*n+j] = 16 + float64(i%5)
			} else {
				a[i*n+j] = 1 / (1 + math.Abs(float64(i-j)))
			}
		}
		b1[i] = 1 + math.Sin(float64(i))
		b2[i] = float64(i%7) - 3
	}
	return a, b1, b2
}

// jacobiCPU runs the kernels' iteration: the same operations in the same
// order, each rounded (the float64 conversions forbid fused
// multiply-adds), and the same stopping rule.
func jacobiCPU(a, b []float64) (x []float64, iters int) {
	x, xn := make([]float64, n), make([]float64, n)
	for {
		for i := range n {
			s := 0.0
			for j := range n {
				if j != i {
					s = s + float64(a[i*n+j]*x[j])
				}
			}
			xn[i] = (b[i] - s) / a[i*n+i]
		}
		change := 0.0
		for i := range n {
			change = math.Max(change, math.Abs(xn[i]-x[i]))
		}
		copy(x, xn)
		iters++
		if !(change > tol && iters < maxIter) {
			return x, iters
		}
	}
}

// residual returns max |Ax - b|.
func residual(a, x, b []float64) float64 {
	r := 0.0
	for i := range n {
		s := 0.0
		for j := range n {
			s += a[i*n+j] * x[j]
		}
		r = math.Max(r, math.Abs(s-b[i]))
	}
	return r
}

func run() error {
	// The GPU is needed only to run: without one, compile anyway.
	dev, code, err := demo.CompileForGPU(source, "graph_solver.cu", "the solver was not run")
	if err != nil || code == nil {
		return err
	}
	defer code.Close()
	jacobi, err := code.Kernel("jacobi")
	if err != nil {
		return err
	}
	check, err := code.Kernel("converged")
	if err != nil {
		return err
	}

	s, err := dev.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		return err
	}
	defer s.Close()
	var bufs [6]*core.Buffer
	for i, count := range []int{n * n, n, n, n, 1} { // A, b, x, x's next value, the last change
		if bufs[i], err = core.Alloc[float64](dev, count, s); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	if bufs[5], err = core.Alloc[int32](dev, 1, s); err != nil { // the iteration count
		return err
	}
	defer bufs[5].Close()
	dA, dB, dX, dXn, dChange, dIter := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5]
	a, b1, b2 := system()
	if err := core.CopyToDevice(dA, a); err != nil {
		return err
	}

	// The graph: reset x and the count, then loop { sweep; check }.
	g, err := dev.NewGraph()
	if err != nil {
		return err
	}
	defer g.Close()
	loop, err := g.NewCondition(1) // at every launch: run the body at least once
	if err != nil {
		return err
	}
	zx, err := g.Memset32(dX, 0) // 0.0 in every double
	if err != nil {
		return err
	}
	zi, err := g.Memset32(dIter, 0)
	if err != nil {
		return err
	}
	_, body, err := g.While(loop, zx, zi)
	if err != nil {
		return err
	}
	sweep, err := body.Kernel(core.LaunchConfig{Grid: core.Dim((n + rows - 1) / rows), Block: core.Dim(rows)},
		jacobi, []any{dA, dB, dX, dXn, int32(n)})
	if err != nil {
		return err
	}
	if _, err := body.Kernel(core.LaunchConfig{Grid: core.Dim(1), Block: core.Dim(block)},
		check, []any{loop, dX, dXn, int32(n), float64(tol), int32(maxIter), dIter, dChange}, sweep); err != nil {
		return err
	}
	exec, err := g.Instantiate()
	if err != nil {
		return err
	}
	defer exec.Close()

	for k, b := range [][]float64{b1, b2} {
		// Copies on the stream the graph runs on: ordered before it.
		if err := core.CopyToDeviceAsync(s, dB, b); err != nil {
			return err
		}
		if err := exec.Launch(s); err != nil {
			return err
		}
		x := make([]float64, n)
		iters, change := make([]int32, 1), make([]float64, 1)
		if err := core.CopyFromDeviceAsync(s, x, dX); err != nil {
			return err
		}
		if err := core.CopyFromDeviceAsync(s, iters, dIter); err != nil {
			return err
		}
		if err := core.CopyFromDeviceAsync(s, change, dChange); err != nil {
			return err
		}
		if err := s.Sync(); err != nil {
			return err
		}
		want, wantIters := jacobiCPU(a, b)
		worst := 0.0
		for i := range x {
			worst = math.Max(worst, math.Abs(x[i]-want[i]))
		}
		res := residual(a, x, b)
		fmt.Printf("graph_solver: system %d: %d iterations on the GPU (CPU: %d), last change %.2g, max |x_gpu - x_cpu| = %.2g, residual %.2g\n",
			k+1, iters[0], wantIters, change[0], worst, res)
		switch {
		case int(iters[0]) != wantIters:
			return fmt.Errorf("system %d: the GPU loop ran %d iterations, the CPU %d", k+1, iters[0], wantIters)
		case iters[0] >= maxIter:
			return fmt.Errorf("system %d: no convergence in %d iterations", k+1, maxIter)
		case worst != 0:
			return fmt.Errorf("system %d: the GPU's solution differs from the CPU's by up to %g", k+1, worst)
		case res > 1e-9:
			return fmt.Errorf("system %d: residual %g is too large", k+1, res)
		}
	}
	fmt.Println("graph_solver: all results correct")
	return nil
}
