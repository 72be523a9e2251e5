// TEMPORARY: replaced by internal/bindgen's generated in-context calls (same names and signatures).

package rng

import (
	"runtime"

	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/driver"
)

func curandCreateGenerator(ctx driver.Context, generator *curand.Generator, rngType curand.RngType) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.CreateGenerator(generator, rngType)
}

func curandDestroyGenerator(ctx driver.Context, generator curand.Generator) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.DestroyGenerator(generator)
}

func curandSetStream(ctx driver.Context, generator curand.Generator, stream curand.Stream) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.SetStream(generator, stream)
}

func curandSetPseudoRandomGeneratorSeed(ctx driver.Context, generator curand.Generator, seed uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.SetPseudoRandomGeneratorSeed(generator, seed)
}

func curandSetGeneratorOffset(ctx driver.Context, generator curand.Generator, offset uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.SetGeneratorOffset(generator, offset)
}

func curandSetGeneratorOrdering(ctx driver.Context, generator curand.Generator, order curand.Ordering) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.SetGeneratorOrdering(generator, order)
}

func curandSetQuasiRandomGeneratorDimensions(ctx driver.Context, generator curand.Generator, numDimensions uint32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.SetQuasiRandomGeneratorDimensions(generator, numDimensions)
}

func curandGenerate(ctx driver.Context, generator curand.Generator, outputPtr *uint32, num uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.Generate(generator, outputPtr, num)
}

func curandGenerateLongLong(ctx driver.Context, generator curand.Generator, outputPtr *uint64, num uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateLongLong(generator, outputPtr, num)
}

func curandGenerateUniform(ctx driver.Context, generator curand.Generator, outputPtr *float32, num uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateUniform(generator, outputPtr, num)
}

func curandGenerateUniformDouble(ctx driver.Context, generator curand.Generator, outputPtr *float64, num uint64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateUniformDouble(generator, outputPtr, num)
}

func curandGenerateNormal(ctx driver.Context, generator curand.Generator, outputPtr *float32, n uint64, mean float32, stddev float32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateNormal(generator, outputPtr, n, mean, stddev)
}

func curandGenerateNormalDouble(ctx driver.Context, generator curand.Generator, outputPtr *float64, n uint64, mean float64, stddev float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateNormalDouble(generator, outputPtr, n, mean, stddev)
}

func curandGenerateLogNormal(ctx driver.Context, generator curand.Generator, outputPtr *float32, n uint64, mean float32, stddev float32) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateLogNormal(generator, outputPtr, n, mean, stddev)
}

func curandGenerateLogNormalDouble(ctx driver.Context, generator curand.Generator, outputPtr *float64, n uint64, mean float64, stddev float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GenerateLogNormalDouble(generator, outputPtr, n, mean, stddev)
}

func curandGeneratePoisson(ctx driver.Context, generator curand.Generator, outputPtr *uint32, n uint64, lambda float64) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return err
	}
	return curand.GeneratePoisson(generator, outputPtr, n, lambda)
}
