// Command ttfr measures cudago's time to first result: a fresh process that
// compiles saxpy with NVRTC for two architectures (and PTX), builds a
// fatbin, loads it, runs it and checks the result, as
// examples/fatbin_saxpy does. It prints one JSON line: each phase's
// duration and the total since main started. bench/ttfr/run.sh runs it
// cold and warm beside its C and cuda.core twins.
//
//	ttfr [-write saxpy.fatbin]
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/cudago/cudago/core"
)

// saxpy is the kernel of NVIDIA's runtime fatbin post (examples/fatbin_saxpy's):
// saxpy.cu, which the cuda.core twin compiles too.
//
//go:embed saxpy.cu
var saxpy string

type phase struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

func main() {
	start := time.Now()
	write := flag.String("write", "", "also write the fatbin to this file (for the C twin)")
	flag.Parse()
	var phases []phase
	last := start
	mark := func(name string) {
		now := time.Now()
		phases = append(phases, phase{name, float64(now.Sub(last).Microseconds()) / 1000})
		last = now
	}
	if err := run(mark, *write); err != nil {
		fmt.Fprintln(os.Stderr, "ttfr:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(struct {
		Stack   string  `json:"stack"`
		TotalMS float64 `json:"total_ms"`
		Phases  []phase `json:"phases"`
	}{"cudago", float64(time.Since(start).Microseconds()) / 1000, phases})
	fmt.Println(string(out))
}

func run(mark func(string), write string) error {
	dev, err := core.GetDevice(0)
	if err != nil {
		return err
	}
	arch := dev.Arch()
	mark("device")
	b, err := core.NewFatbinBuilder(&core.FatbinOptions{Name: "ttfr"})
	if err != nil {
		return err
	}
	defer b.Close()
	for _, t := range []struct{ target, arch string }{
		{"cubin", "sm_" + arch}, {"cubin", "sm_75"}, {"ptx", "compute_" + arch},
	} {
		p, err := core.NewProgram(saxpy, "c++", &core.ProgramOptions{Name: "saxpy_" + t.arch, Arch: t.arch})
		if err != nil {
			return err
		}
		code, err := p.Compile(t.target)
		p.Close()
		if err != nil {
			return err
		}
		if err := b.Add(code, t.arch); err != nil {
			return err
		}
		mark("compile " + t.target + " " + t.arch)
	}
	fatbin, err := b.Build()
	if err != nil {
		return err
	}
	defer fatbin.Close()
	mark("fatbin")
	if write != "" {
		if err := os.WriteFile(write, fatbin.Code(), 0o644); err != nil {
			return err
		}
	}
	k, err := fatbin.Kernel("saxpy")
	if err != nil {
		return err
	}
	mark("load")
	const n = 128 * 32
	const a = float32(5.1)
	x, y := make([]float32, n), make([]float32, n)
	for i := range n {
		x[i], y[i] = float32(i), float32(2*i)
	}
	s, err := dev.NewStream(nil)
	if err != nil {
		return err
	}
	defer s.Close()
	var bufs [3]*core.Buffer
	for i := range bufs {
		if bufs[i], err = dev.Allocate(n*4, s); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	if err := core.CopyToDevice(bufs[0], x); err != nil {
		return err
	}
	if err := core.CopyToDevice(bufs[1], y); err != nil {
		return err
	}
	mark("alloc+copy in")
	cfg := core.LaunchConfig{Grid: core.Dim(32), Block: core.Dim(128)}
	if err := core.Launch(s, cfg, k, a, bufs[0], bufs[1], bufs[2], uint64(n)); err != nil {
		return err
	}
	if err := s.Sync(); err != nil {
		return err
	}
	mark("launch+sync")
	out := make([]float32, n)
	if err := core.CopyFromDevice(out, bufs[2]); err != nil {
		return err
	}
	for i := range out {
		want := a*x[i] + y[i]
		if d := out[i] - want; d > 1e-3*want || d < -1e-3*want {
			return fmt.Errorf("out[%d] = %g, want %g", i, out[i], want)
		}
	}
	mark("copy out+check")
	return nil
}
