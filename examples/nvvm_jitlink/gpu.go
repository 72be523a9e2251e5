package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// gpu is device 0's primary context, current on the locked OS thread of
// main, with the buffers it allocated. (core's own launch API can replace
// this file.)
type gpu struct {
	dev  driver.Device
	name string
	arch string // "90" for sm_90
	bufs []driver.Deviceptr
}

func openGPU() (*gpu, error) {
	runtime.LockOSThread() // the current context belongs to this thread
	if err := driver.Init(0); err != nil {
		return nil, fmt.Errorf("cuInit: %w", err)
	}
	dev, err := driver.DeviceGet(0)
	if err != nil {
		return nil, err
	}
	major, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, dev)
	if err != nil {
		return nil, err
	}
	minor, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, dev)
	if err != nil {
		return nil, err
	}
	name := make([]byte, 256)
	if err := driver.DeviceGetName(&name[0], int32(len(name)), dev); err != nil {
		return nil, err
	}
	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	if err != nil {
		return nil, err
	}
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return nil, err
	}
	g := &gpu{dev: dev, arch: fmt.Sprintf("%d%d", major, minor)}
	for i, c := range name {
		if c == 0 {
			g.name = string(name[:i])
			break
		}
	}
	return g, nil
}

func (g *gpu) close() {
	for _, b := range g.bufs {
		driver.MemFree(b)
	}
	driver.DevicePrimaryCtxRelease(g.dev)
}

func (g *gpu) alloc(n int) (driver.Deviceptr, error) {
	p, err := driver.MemAlloc(uint64(n * 4))
	if err == nil {
		g.bufs = append(g.bufs, p)
	}
	return p, err
}

func (g *gpu) upload(v []float32) (driver.Deviceptr, error) {
	p, err := g.alloc(len(v))
	if err != nil {
		return 0, err
	}
	return p, driver.MemcpyHtoD(p, unsafe.Pointer(&v[0]), uint64(len(v)*4))
}

func (g *gpu) download(p driver.Deviceptr, n int) ([]float32, error) {
	v := make([]float32, n)
	return v, driver.MemcpyDtoH(unsafe.Pointer(&v[0]), p, uint64(n*4))
}

// launch runs k on a 1D grid and waits. Each argument is copied to its own
// variable, pinned, and passed by address, as cuLaunchKernel wants.
func (g *gpu) launch(k *core.Kernel, blocks, threads uint32, args ...any) error {
	f, err := driver.KernelGetFunction(k.Handle())
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		var p unsafe.Pointer
		switch v := a.(type) {
		case float32:
			p = unsafe.Pointer(&v)
		case int32:
			p = unsafe.Pointer(&v)
		case uint64:
			p = unsafe.Pointer(&v)
		case driver.Deviceptr:
			p = unsafe.Pointer(&v)
		default:
			return fmt.Errorf("launch: unsupported argument type %T", a)
		}
		pin.Pin(p)
		params[i] = p
	}
	if err := driver.LaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, 0, &params[0], nil); err != nil {
		return fmt.Errorf("launching %s: %w", k.Name(), err)
	}
	return driver.CtxSynchronize()
}
