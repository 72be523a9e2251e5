package rng

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// MaxLambda is the largest Poisson mean cuRAND takes (curand.h).
const MaxLambda = 400000

// Float is the element type of the continuous distributions: float32 or
// float64 (cuRAND's curandGenerate<Dist> and curandGenerate<Dist>Double).
type Float interface{ float32 | float64 }

// Uint is the element type of raw values: uint32 (curandGenerate) or
// uint64 (curandGenerateLongLong, Sobol64 and ScrambledSobol64 only).
type Uint interface{ uint32 | uint64 }

// Bits fills the first n elements of out with raw values of g's sequence:
// 32-bit ones for uint32 (curandGenerate), 64-bit ones for uint64, which
// only the 64-bit Sobol types give (curandGenerateLongLong).
func Bits[T Uint](g *Generator, out *core.Buffer, n int) error {
	return g.generate(pick[T](opUint32, opUint64), out, n, params{})
}

// Uniform fills the first n elements of out with values uniform in (0, 1]
// (curandGenerateUniform, curandGenerateUniformDouble).
func Uniform[T Float](g *Generator, out *core.Buffer, n int) error {
	return g.generate(pick[T](opUniform, opUniform64), out, n, params{})
}

// Normal fills the first n elements of out with normal values of the
// given mean and standard deviation (curandGenerateNormal,
// curandGenerateNormalDouble); any n, see the package doc for odd counts.
func Normal[T Float](g *Generator, out *core.Buffer, n int, mean, stddev T) error {
	return g.generate(pick[T](opNormal, opNormal64), out, n, params{mean: float64(mean), stddev: float64(stddev)})
}

// LogNormal fills the first n elements of out with exp(x) for x normal of
// the given mean and standard deviation (curandGenerateLogNormal,
// curandGenerateLogNormalDouble).
func LogNormal[T Float](g *Generator, out *core.Buffer, n int, mean, stddev T) error {
	return g.generate(pick[T](opLogNormal, opLogNormal64), out, n, params{mean: float64(mean), stddev: float64(stddev)})
}

// Poisson fills the first n uint32 of out with Poisson values of mean
// lambda, 0 < lambda <= MaxLambda (curandGeneratePoisson).
func Poisson(g *Generator, out *core.Buffer, n int, lambda float64) error {
	return g.generate(opPoisson, out, n, params{lambda: lambda})
}

// pick is the operation of T's size: o32 for 4-byte elements, o64 for
// 8-byte ones.
func pick[T Float | Uint](o32, o64 op) op {
	if libhandle.SizeOf[T]() == 8 {
		return o64
	}
	return o32
}

// The methods before the generic functions, for one release.

// Uint32 is Bits[uint32].
//
// Deprecated: use Bits[uint32](g, out, n).
func (g *Generator) Uint32(out *core.Buffer, n int) error { return Bits[uint32](g, out, n) }

// Uint64 is Bits[uint64].
//
// Deprecated: use Bits[uint64](g, out, n).
func (g *Generator) Uint64(out *core.Buffer, n int) error { return Bits[uint64](g, out, n) }

// Uniform is Uniform[float32].
//
// Deprecated: use Uniform[float32](g, out, n).
func (g *Generator) Uniform(out *core.Buffer, n int) error { return Uniform[float32](g, out, n) }

// UniformFloat64 is Uniform[float64].
//
// Deprecated: use Uniform[float64](g, out, n).
func (g *Generator) UniformFloat64(out *core.Buffer, n int) error { return Uniform[float64](g, out, n) }

// Normal is Normal[float32].
//
// Deprecated: use Normal(g, out, n, mean, stddev).
func (g *Generator) Normal(out *core.Buffer, n int, mean, stddev float32) error {
	return Normal(g, out, n, mean, stddev)
}

// NormalFloat64 is Normal[float64].
//
// Deprecated: use Normal(g, out, n, mean, stddev).
func (g *Generator) NormalFloat64(out *core.Buffer, n int, mean, stddev float64) error {
	return Normal(g, out, n, mean, stddev)
}

// LogNormal is LogNormal[float32].
//
// Deprecated: use LogNormal(g, out, n, mean, stddev).
func (g *Generator) LogNormal(out *core.Buffer, n int, mean, stddev float32) error {
	return LogNormal(g, out, n, mean, stddev)
}

// LogNormalFloat64 is LogNormal[float64].
//
// Deprecated: use LogNormal(g, out, n, mean, stddev).
func (g *Generator) LogNormalFloat64(out *core.Buffer, n int, mean, stddev float64) error {
	return LogNormal(g, out, n, mean, stddev)
}

// Poisson is the function Poisson.
//
// Deprecated: use Poisson(g, out, n, lambda).
func (g *Generator) Poisson(out *core.Buffer, n int, lambda float64) error {
	return Poisson(g, out, n, lambda)
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
	opUint32:      {"Bits", "uint32", 4, false},
	opUint64:      {"Bits", "uint64", 8, false},
	opUniform:     {"Uniform", "float32", 4, false},
	opUniform64:   {"Uniform", "float64", 8, false},
	opNormal:      {"Normal", "float32", 4, true},
	opNormal64:    {"Normal", "float64", 8, true},
	opLogNormal:   {"LogNormal", "float32", 4, true},
	opLogNormal64: {"LogNormal", "float64", 8, true},
	opPoisson:     {"Poisson", "uint32", 4, false},
}

type params struct{ mean, stddev, lambda float64 }

// check validates a call before any library call: everything but what
// needs the Buffer held (its address, its memory) or the stream.
func (g *Generator) check(o op, out *core.Buffer, n int, p params) error {
	d := ops[o]
	fn := d.name
	if g == nil {
		return argErr(fn, "g", "nil *Generator")
	}
	if g.dims == 0 { // New sets at least 1
		return fmt.Errorf("rng: %s: the Generator was not made by New: %w", fn, core.ErrClosed)
	}
	ti := typeInfo[g.typ]
	if o == opUint32 && ti.bits64 {
		return argErr(fn, "T", "%v gives 64-bit values: use Bits[uint64]", g.typ)
	}
	if o == opUint64 && !ti.bits64 {
		return argErr(fn, "T", "%v gives 32-bit values: use Bits[uint32] (only Sobol64 and ScrambledSobol64 give 64-bit ones)", g.typ)
	}
	if out == nil {
		return argErr(fn, "out", "nil out Buffer")
	}
	if n < 0 {
		return argErr(fn, "n", "negative count n=%d", n)
	}
	if n > out.Size()/d.size {
		return argErr(fn, "n", "n=%d %s values need %d bytes, out holds %d", n, d.elem, uint64(n)*uint64(d.size), out.Size())
	}
	if n%g.dims != 0 {
		return argErr(fn, "n", "n=%d is not a multiple of the generator's %d dimensions", n, g.dims)
	}
	switch o {
	case opNormal, opNormal64, opLogNormal, opLogNormal64:
		if math.IsNaN(p.mean) || math.IsInf(p.mean, 0) {
			return argErr(fn, "mean", "mean %v is not finite", p.mean)
		}
		if !(p.stddev >= 0) || math.IsInf(p.stddev, 0) {
			return argErr(fn, "stddev", "stddev %v is not finite and >= 0", p.stddev)
		}
	case opPoisson:
		if !(p.lambda > 0 && p.lambda <= MaxLambda) {
			return argErr(fn, "lambda", "lambda %v is not in (0, %d]", p.lambda, MaxLambda)
		}
	}
	return nil
}

// generate checks a call, then, holding out, the generator and its
// stream, queues the generation of n values of kind o into out. A call of
// 0 values does nothing, not even create the cuRAND generator.
func (g *Generator) generate(o op, out *core.Buffer, n int, p params) error {
	if err := g.check(o, out, n, p); err != nil {
		return err
	}
	d := ops[o]
	held := libhandle.Operands{Package: "rng", Func: d.name, Device: g.st.Device()}
	defer held.Release()
	ptr, err := held.Add("out", out, d.size, d.elem)
	if err != nil {
		return err
	}
	if n == 0 {
		return g.st.Err()
	}
	ctx, hs, err := g.st.Begin()
	if err != nil {
		return err
	}
	defer g.st.End()
	if err := g.prepare(ctx, hs); err != nil {
		return err
	}
	if !d.pairs || typeInfo[g.typ].quasi {
		return call(ctx, g.st.Handle(), o, ptr, uint64(n), p)
	}
	return g.inPairs(ctx, &held, o, out, ptr, n, p)
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
// generator, which cuRAND makes in pairs: see the package doc. The extra
// pair goes to the state's workspace.
func (g *Generator) inPairs(ctx driver.Context, held *libhandle.Operands, o op, out *core.Buffer, ptr unsafe.Pointer, n int, p params) error {
	gen, size := g.st.Handle(), ops[o].size
	head, mid, tail := split(libhandle.Addr(ptr), n, size)
	if mid > 0 {
		if err := call(ctx, gen, o, libhandle.Ptr(libhandle.Addr(ptr)+driver.Deviceptr(head*size)), uint64(mid), p); err != nil {
			return err
		}
	}
	if head+tail == 0 {
		return nil
	}
	sc, err := g.st.Workspace(2 * size)
	if err != nil {
		return err
	}
	sp, err := held.Add("scratch", sc, size, ops[o].elem)
	if err != nil {
		return err
	}
	if err := call(ctx, gen, o, sp, 2, p); err != nil {
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
	return dv.CopyFromAsync(g.st.Stream(), sv)
}

// call is the one cuRAND generation call of kind o.
func call(ctx driver.Context, h curand.Generator, o op, ptr unsafe.Pointer, n uint64, p params) error {
	switch o {
	case opUint32:
		return curandGenerate(ctx, h, (*uint32)(ptr), n)
	case opUint64:
		return curandGenerateLongLong(ctx, h, (*uint64)(ptr), n)
	case opUniform:
		return curandGenerateUniform(ctx, h, (*float32)(ptr), n)
	case opUniform64:
		return curandGenerateUniformDouble(ctx, h, (*float64)(ptr), n)
	case opNormal:
		return curandGenerateNormal(ctx, h, (*float32)(ptr), n, float32(p.mean), float32(p.stddev))
	case opNormal64:
		return curandGenerateNormalDouble(ctx, h, (*float64)(ptr), n, p.mean, p.stddev)
	case opLogNormal:
		return curandGenerateLogNormal(ctx, h, (*float32)(ptr), n, float32(p.mean), float32(p.stddev))
	case opLogNormal64:
		return curandGenerateLogNormalDouble(ctx, h, (*float64)(ptr), n, p.mean, p.stddev)
	case opPoisson:
		return curandGeneratePoisson(ctx, h, (*uint32)(ptr), n, p.lambda)
	}
	return fmt.Errorf("rng: internal error: unknown operation %d", o)
}
