// Package demo is the scaffolding the example programs share, so that each
// example's main.go shows the API it is about rather than the setup around
// it: exiting on an error, finding GPU 0 (or going on without one), moving
// slices to and from the GPU, and checking results against the CPU.
//
// It is internal to examples/ and uses nothing but package core's public
// API: a program of your own does the same in a few lines of core, as
// each function here shows.
package demo

import (
	"fmt"
	"math"
	"os"

	"github.com/cudago/cudago/core"
)

// Main runs run and, if it fails, prints the error after name on stderr
// and exits 1: every example is a run function that returns its error.
func Main(name string, run func() error) {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// NoGPUArch is the architecture the examples compile for when there is no
// GPU to ask: sm_90, the H100's.
const NoGPUArch = "90"

// Target returns GPU 0 and its architecture ("90" for sm_90). Without a
// GPU, dev is nil, arch is NoGPUArch and noGPU says why: the examples
// that compile kernels compile them anyway and say what they did not run.
func Target() (dev *core.Device, arch string, noGPU error) {
	dev, noGPU = core.GetDevice(0)
	if noGPU != nil {
		return nil, NoGPUArch, noGPU
	}
	return dev, dev.Arch(), nil
}

// Device returns GPU 0 or, without one, prints "no GPU, so <what>: <why>"
// and returns nil: the caller then returns with nothing more to do, as the
// examples exit 0 where they cannot run.
func Device(what string) *core.Device {
	dev, err := core.GetDevice(0)
	if err != nil {
		fmt.Printf("no GPU, so %s: %v\n", what, err)
		return nil
	}
	return dev
}

// Compile compiles CUDA C++ source (name is its file name in NVRTC's
// messages) to a CUBIN for sm_<arch> with NVRTC, for the examples whose
// subject is what the kernel does rather than how it is compiled.
func Compile(source, name, arch string) (*core.ObjectCode, error) {
	p, err := core.NewProgram(source, "c++", &core.ProgramOptions{Name: name, Arch: "sm_" + arch})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Compile(core.CodeCubin)
}

// CompileForGPU compiles CUDA C++ source (name is its file name in
// NVRTC's messages) with NVRTC into a CUBIN for GPU 0, and returns both.
// Without a GPU it compiles for NoGPUArch anyway, prints the CUBIN's size
// and "no GPU, so <notRun>", and returns nil, nil, nil: the caller then
// returns nil, as the examples exit 0 where they cannot run.
func CompileForGPU(source, name, notRun string) (*core.Device, *core.ObjectCode, error) {
	dev, arch, noGPU := Target()
	code, err := Compile(source, name, arch)
	if err != nil {
		return nil, nil, err
	}
	if noGPU != nil {
		fmt.Printf("compiled %s for sm_%s (%d bytes of CUBIN); no GPU, so %s: %v\n", name, arch, len(code.Code()), notRun, noGPU)
		return nil, nil, code.Close()
	}
	return dev, code, nil
}

// Upload copies host into a new Buffer allocated on s, on s's device, in
// s's order. The caller closes the Buffer.
func Upload[T any](s *core.Stream, host []T) (*core.Buffer, error) {
	b, err := core.Alloc[T](s.Device(), len(host), s)
	if err != nil {
		return nil, err
	}
	if err := core.CopyToDevice(b, host); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Download copies all of b, a whole number of T, into a new slice, after
// the work queued before it on b's stream.
func Download[T any](b *core.Buffer) ([]T, error) {
	n, err := core.Len[T](b)
	if err != nil {
		return nil, err
	}
	host := make([]T, n)
	if err := core.CopyFromDevice(host, b); err != nil {
		return nil, err
	}
	return host, nil
}

// shown is how many wrong elements Check prints before it only counts.
const shown = 5

// Check compares the GPU's results got with the CPU's want, element by
// element: ok(i) says whether element i is right. It prints the first
// few wrong elements of what (a name such as "c") on stderr and returns
// an error that counts them all, or nil when every element is right.
func Check[G, W any](what string, got []G, want []W, ok func(i int) bool) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if !ok(i) {
			if bad < shown {
				fmt.Fprintf(os.Stderr, "%s: element %d is %v, want %v\n", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d elements wrong", what, bad, len(got))
	}
	return nil
}

// Equal is Check for results that must equal the CPU's bit for bit.
func Equal[T comparable](what string, got, want []T) error {
	return Check(what, got, want, func(i int) bool { return got[i] == want[i] })
}

// Near is Check for results within rel·|want| of the CPU's: for kernels
// whose a*x+b the GPU may fuse into one FMA, which rounds once, not twice.
func Near[T float32 | float64](what string, got, want []T, rel float64) error {
	return Check(what, got, want, func(i int) bool {
		return math.Abs(float64(got[i])-float64(want[i])) <= rel*math.Abs(float64(want[i]))
	})
}
