package rng

import (
	"errors"
	"fmt"
	"math"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// MaxLambda is the largest Poisson mean cuRAND takes (curand.h).
const MaxLambda = 400000

// Uint32 fills the first n uint32 of out with raw 32-bit values
// (curandGenerate). The 64-bit Sobol types have Uint64 instead.
func (g *Generator) Uint32(out *core.Buffer, n int) error {
	return g.generate(opUint32, out, n, params{})
}

// Uint64 fills the first n uint64 of out with raw 64-bit values of a
// Sobol64 or ScrambledSobol64 generator (curandGenerateLongLong).
func (g *Generator) Uint64(out *core.Buffer, n int) error {
	return g.generate(opUint64, out, n, params{})
}

// Uniform fills the first n float32 of out with values uniform in (0, 1]
// (curandGenerateUniform).
func (g *Generator) Uniform(out *core.Buffer, n int) error {
	return g.generate(opUniform, out, n, params{})
}

// UniformFloat64 fills the first n float64 of out with values uniform in
// (0, 1] (curandGenerateUniformDouble).
func (g *Generator) UniformFloat64(out *core.Buffer, n int) error {
	return g.generate(opUniform64, out, n, params{})
}

// Normal fills the first n float32 of out with normal values of the given
// mean and standard deviation (curandGenerateNormal); any n, see the
// package doc for odd counts.
func (g *Generator) Normal(out *core.Buffer, n int, mean, stddev float32) error {
	return g.generate(opNormal, out, n, params{mean: float64(mean), stddev: float64(stddev)})
}

// NormalFloat64 is Normal for float64 (curandGenerateNormalDouble).
func (g *Generator) NormalFloat64(out *core.Buffer, n int, mean, stddev float64) error {
	return g.generate(opNormal64, out, n, params{mean: mean, stddev: stddev})
}

// LogNormal fills the first n float32 of out with exp(x) for x normal of
// the given mean and standard deviation (curandGenerateLogNormal).
func (g *Generator) LogNormal(out *core.Buffer, n int, mean, stddev float32) error {
	return g.generate(opLogNormal, out, n, params{mean: float64(mean), stddev: float64(stddev)})
}

// LogNormalFloat64 is LogNormal for float64
// (curandGenerateLogNormalDouble).
func (g *Generator) LogNormalFloat64(out *core.Buffer, n int, mean, stddev float64) error {
	return g.generate(opLogNormal64, out, n, params{mean: mean, stddev: stddev})
}

// Poisson fills the first n uint32 of out with Poisson values of mean
// lambda, 0 < lambda <= MaxLambda (curandGeneratePoisson).
func (g *Generator) Poisson(out *core.Buffer, n int, lambda float64) error {
	return g.generate(opPoisson, out, n, params{lambda: lambda})
}

type op int

const (
	opUint32 op = iota
	opUint64
	opUniform
	opUniform64
	opNormal
	opNormal64
	opLogNormal
	opLogNormal64
	opPoisson
)

var ops = [...]struct {
	name  string
	elem  string
	size  int
	pairs bool // pseudo-random generation works in Box-Muller pairs
}{
	opUint32:      {"Uint32", "uint32", 4, false},
	opUint64:      {"Uint64", "uint64", 8, false},
	opUniform:     {"Uniform", "float32", 4, false},
	opUniform64:   {"UniformFloat64", "float64", 8, false},
	opNormal:      {"Normal", "float32", 4, true},
	opNormal64:    {"NormalFloat64", "float64", 8, true},
	opLogNormal:   {"LogNormal", "float32", 4, true},
	opLogNormal64: {"LogNormalFloat64", "float64", 8, true},
	opPoisson:     {"Poisson", "uint32", 4, false},
}

type params struct{ mean, stddev, lambda float64 }

// check validates a call before any library call: everything but what
// needs the Buffer held (its address) or the stream (its device).
func (g *Generator) check(o op, out *core.Buffer, n int, p params) error {
	d := ops[o]
	if g == nil {
		return fmt.Errorf("rng: %s: nil *Generator", d.name)
	}
	if g.dims == 0 { // New sets at least 1
		return fmt.Errorf("rng: %s: the Generator was not made by New", d.name)
	}
	ti := typeInfo[g.typ]
	if o == opUint32 && ti.bits64 {
		return fmt.Errorf("rng: Uint32: %v gives 64-bit values: use Uint64", g.typ)
	}
	if o == opUint64 && !ti.bits64 {
		return fmt.Errorf("rng: Uint64: %v gives 32-bit values: use Uint32 (only Sobol64 and ScrambledSobol64 give 64-bit ones)", g.typ)
	}
	if out == nil {
		return fmt.Errorf("rng: %s: nil out Buffer", d.name)
	}
	if n < 0 {
		return fmt.Errorf("rng: %s: negative count n=%d", d.name, n)
	}
	if n > out.Size()/d.size {
		return fmt.Errorf("rng: %s: n=%d %s values need %d bytes, out holds %d", d.name, n, d.elem, uint64(n)*uint64(d.size), out.Size())
	}
	if mr := out.MemoryResource(); mr != nil && !mr.DeviceAccessible() {
		return fmt.Errorf("rng: %s: out is %T memory, which the GPU cannot write", d.name, mr)
	}
	if n%g.dims != 0 {
		return fmt.Errorf("rng: %s: n=%d is not a multiple of the generator's %d dimensions", d.name, n, g.dims)
	}
	switch o {
	case opNormal, opNormal64, opLogNormal, opLogNormal64:
		if math.IsNaN(p.mean) || math.IsInf(p.mean, 0) {
			return fmt.Errorf("rng: %s: mean %v is not finite", d.name, p.mean)
		}
		if !(p.stddev >= 0) || math.IsInf(p.stddev, 0) {
			return fmt.Errorf("rng: %s: stddev %v is not finite and >= 0", d.name, p.stddev)
		}
	case opPoisson:
		if !(p.lambda > 0 && p.lambda <= MaxLambda) {
			return fmt.Errorf("rng: Poisson: lambda %v is not in (0, %d]", p.lambda, MaxLambda)
		}
	}
	return nil
}

// generate checks a call, then, holding the Generator, its stream and out,
// queues the generation of n values of kind o into out.
func (g *Generator) generate(o op, out *core.Buffer, n int, p params) error {
	if err := g.check(o, out, n, p); err != nil {
		return err
	}
	d := ops[o]
	if g.stream == nil {
		return fmt.Errorf("rng: %s: the Generator was not made by New", d.name)
	}
	if od, sd := out.Device(), g.stream.Device(); od != nil && od.Ordinal() != sd.Ordinal() {
		return fmt.Errorf("rng: %s: out is memory of %v, the generator's stream is on %v", d.name, od, sd)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return core.ErrClosed
	}
	ctx, hs, err := g.stream.Acquire()
	if err != nil {
		return err
	}
	defer g.stream.Release()
	ptr, err := out.Acquire()
	if err != nil {
		return err
	}
	defer out.Release()
	if ptr%driver.Deviceptr(d.size) != 0 {
		return fmt.Errorf("rng: %s: out's address %#x is not aligned to its %d-byte %s elements", d.name, uint64(ptr), d.size, d.elem)
	}
	if n == 0 {
		return nil
	}
	if err := g.prepare(ctx, hs); err != nil {
		return err
	}
	if !d.pairs || typeInfo[g.typ].quasi {
		return g.call(ctx, o, ptr, uint64(n), p)
	}
	return g.inPairs(ctx, o, out, ptr, n, p)
}

// split divides n elements at ptr into what cuRAND's pair generators can
// write directly, mid elements from element head on (an even count at an
// address aligned to a pair), and the head and tail elements (0 or 1
// each) that come from one extra pair instead.
func split(ptr driver.Deviceptr, n, size int) (head, mid, tail int) {
	if n > 0 && ptr%driver.Deviceptr(2*size) != 0 {
		head = 1
	}
	mid = (n - head) &^ 1
	return head, mid, n - head - mid
}

// inPairs generates normal or log-normal values with a pseudo-random
// generator, which cuRAND makes in pairs: see the package doc.
func (g *Generator) inPairs(ctx driver.Context, o op, out *core.Buffer, ptr driver.Deviceptr, n int, p params) error {
	size := ops[o].size
	head, mid, tail := split(ptr, n, size)
	if mid > 0 {
		if err := g.call(ctx, o, ptr+driver.Deviceptr(head*size), uint64(mid), p); err != nil {
			return err
		}
	}
	if head+tail == 0 {
		return nil
	}
	if g.st.scratch == nil {
		b, err := core.NewDeviceMemoryResource(g.stream.Device()).Allocate(16, g.stream)
		if err != nil {
			return err
		}
		g.st.scratch = b
	}
	sc := g.st.scratch
	sp, err := sc.Acquire()
	if err != nil {
		return err
	}
	defer sc.Release()
	if err := g.call(ctx, o, sp, 2, p); err != nil {
		return err
	}
	var errs []error
	next := 0 // the scratch element to use next
	if head == 1 {
		errs = append(errs, g.copyElem(out, 0, sc, next, size))
		next++
	}
	if tail == 1 {
		errs = append(errs, g.copyElem(out, n-1, sc, next, size))
	}
	return errors.Join(errs...)
}

// copyElem queues a copy of element j of src into element i of dst.
func (g *Generator) copyElem(dst *core.Buffer, i int, src *core.Buffer, j, size int) error {
	dv, err := dst.View(i*size, size)
	if err != nil {
		return err
	}
	defer dv.Close()
	sv, err := src.View(j*size, size)
	if err != nil {
		return err
	}
	defer sv.Close()
	return dv.CopyFromAsync(g.stream, sv)
}

// call is the one cuRAND generation call of kind o.
func (g *Generator) call(ctx driver.Context, o op, ptr driver.Deviceptr, n uint64, p params) error {
	h := g.st.gen
	switch o {
	case opUint32:
		return curandGenerate(ctx, h, devPtr[uint32](ptr), n)
	case opUint64:
		return curandGenerateLongLong(ctx, h, devPtr[uint64](ptr), n)
	case opUniform:
		return curandGenerateUniform(ctx, h, devPtr[float32](ptr), n)
	case opUniform64:
		return curandGenerateUniformDouble(ctx, h, devPtr[float64](ptr), n)
	case opNormal:
		return curandGenerateNormal(ctx, h, devPtr[float32](ptr), n, float32(p.mean), float32(p.stddev))
	case opNormal64:
		return curandGenerateNormalDouble(ctx, h, devPtr[float64](ptr), n, p.mean, p.stddev)
	case opLogNormal:
		return curandGenerateLogNormal(ctx, h, devPtr[float32](ptr), n, float32(p.mean), float32(p.stddev))
	case opLogNormal64:
		return curandGenerateLogNormalDouble(ctx, h, devPtr[float64](ptr), n, p.mean, p.stddev)
	case opPoisson:
		return curandGeneratePoisson(ctx, h, devPtr[uint32](ptr), n, p.lambda)
	}
	return fmt.Errorf("rng: internal error: unknown operation %d", o)
}
