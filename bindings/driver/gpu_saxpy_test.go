package driver_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// process is the blog's process(): NVRTC compiles saxpy with arch
// ("-arch=sm_XX" for a CUBIN, "-arch=compute_XX" for PTX). --fmad=false
// keeps a*x+y two roundings, as Go computes it.
func process(t *testing.T, arch string) (code []byte, lowered string) {
	t.Helper()
	p, err := nvrtc.CreateProgram(testenv.SeedSaxpy, "fatbin_saxpy.cu", 0, nil, nil)
	if err != nil {
		t.Fatalf("nvrtc.CreateProgram: %v", err)
	}
	defer nvrtc.DestroyProgram(&p)
	if err := nvrtc.AddNameExpression(p, "saxpy"); err != nil {
		t.Fatal(err)
	}
	opts := []string{arch, "--fmad=false"}
	if err := nvrtc.CompileProgram(p, int32(len(opts)), opts); err != nil {
		t.Fatalf("nvrtc.CompileProgram(%s): %v", arch, err)
	}
	if lowered, err = nvrtc.GetLoweredName(p, "saxpy"); err != nil {
		t.Fatal(err)
	}
	if arch[len("-arch="):][:3] == "sm_" {
		code, err = nvrtc.CUBIN(p)
	} else {
		code, err = nvrtc.PTX(p)
	}
	if err != nil || len(code) == 0 {
		t.Fatalf("nvrtc output for %s: %d bytes, %v", arch, len(code), err)
	}
	return code, lowered
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestGPUBlogSaxpy runs the program of "Runtime Fatbin Creation Using the
// NVIDIA CUDA Toolkit 12.4 Compiler" end to end through the bindings:
// NVRTC CUBINs for the device's own arch and sm_80 plus compute_80 PTX,
// packed by nvFatbin, loaded and launched through the driver API.
func TestGPUBlogSaxpy(t *testing.T) {
	requireGPU(t)
	// The current context belongs to the OS thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	dev, err := driver.DeviceGet(0)
	check(t, "DeviceGet(0)", err)
	major, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, dev)
	check(t, "compute capability major", err)
	minor, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, dev)
	check(t, "compute capability minor", err)
	arch := int(major*10 + minor)
	nameBuf := make([]byte, 256)
	check(t, "DeviceGetName", driver.DeviceGetName(&nameBuf[0], int32(len(nameBuf)), dev))
	name, _, _ := strings.Cut(string(nameBuf), "\x00")
	t.Logf("device 0: %s, sm_%d", name, arch)

	n, err := nvrtc.GetNumSupportedArchs()
	check(t, "nvrtc.GetNumSupportedArchs", err)
	supported := make([]int32, n)
	check(t, "nvrtc.GetSupportedArchs", nvrtc.GetSupportedArchs(&supported[0]))

	// Build the fatbin: dynamic (device arch) and known (sm_80) CUBINs,
	// and PTX the driver can JIT for any newer device.
	h, err := nvfatbin.Create([]string{"-cuda"}, 1)
	check(t, "nvfatbin.Create", err)
	defer nvfatbin.Destroy(&h)
	cubinArchs := []int{80}
	if arch != 80 {
		if slices.Contains(supported, int32(arch)) {
			cubinArchs = append(cubinArchs, arch)
		} else {
			t.Logf("NVRTC %v cannot build sm_%d: the driver will JIT the PTX", supported, arch)
		}
	}
	kernelName := ""
	for _, a := range cubinArchs {
		cubin, lowered := process(t, fmt.Sprintf("-arch=sm_%d", a))
		kernelName = lowered
		check(t, fmt.Sprintf("nvfatbin.AddCubin(%d)", a),
			nvfatbin.AddCubin(h, unsafe.Pointer(&cubin[0]), uint64(len(cubin)), fmt.Sprint(a), fmt.Sprintf("saxpy_sm%d", a)))
	}
	ptx, _ := process(t, "-arch=compute_80")
	check(t, "nvfatbin.AddPTX", nvfatbin.AddPTX(h, string(ptx), uint64(len(ptx)), "80", "saxpy_compute80", ""))
	fatbin, err := nvfatbin.Bytes(h)
	check(t, "nvfatbin.Bytes", err)
	if kernelName != "saxpy" {
		t.Errorf("lowered name of extern \"C\" saxpy = %q", kernelName)
	}

	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	check(t, "DevicePrimaryCtxRetain", err)
	defer func() {
		if err := driver.DevicePrimaryCtxRelease(dev); err != nil {
			t.Errorf("DevicePrimaryCtxRelease: %v", err)
		}
	}()
	check(t, "CtxSetCurrent", driver.CtxSetCurrent(ctx))

	// cuModuleLoadData reads the image during the call only.
	mod, err := driver.ModuleLoadData(unsafe.Pointer(&fatbin[0]))
	check(t, "ModuleLoadData(fatbin)", err)
	defer func() {
		if err := driver.ModuleUnload(mod); err != nil {
			t.Errorf("ModuleUnload: %v", err)
		}
	}()
	kernel, err := driver.ModuleGetFunction(mod, kernelName)
	check(t, "ModuleGetFunction(saxpy)", err)

	const numThreads, numBlocks = 128, 32
	count := uint64(numThreads * numBlocks)
	size := count * 4
	a := float32(5.1)
	hX, hY, hOut := make([]float32, count), make([]float32, count), make([]float32, count)
	for i := range hX {
		hX[i] = float32(i)
		hY[i] = float32(i * 2)
	}
	// Freed by defers, which run before the primary context's release.
	var dX, dY, dOut driver.Deviceptr
	for _, d := range []struct {
		p    *driver.Deviceptr
		what string
	}{{&dX, "x"}, {&dY, "y"}, {&dOut, "out"}} {
		p, err := driver.MemAlloc(size)
		check(t, "MemAlloc "+d.what, err)
		*d.p = p
		defer func() {
			if err := driver.MemFree(p); err != nil {
				t.Errorf("MemFree %s: %v", d.what, err)
			}
		}()
	}
	check(t, "MemcpyHtoD x", driver.MemcpyHtoD(dX, unsafe.Pointer(&hX[0]), size))
	check(t, "MemcpyHtoD y", driver.MemcpyHtoD(dY, unsafe.Pointer(&hY[0]), size))
	// Poison the output so that a kernel that does not run is caught.
	check(t, "MemsetD32 out", driver.MemsetD32(dOut, 0x7fc00001, count))

	// void *args[] = { &a, &dX, &dY, &dOut, &n }: pointers to Go values,
	// pinned so that cgo lets C hold them through the pointer array.
	var pin runtime.Pinner
	defer pin.Unpin()
	args := []unsafe.Pointer{unsafe.Pointer(&a), unsafe.Pointer(&dX), unsafe.Pointer(&dY), unsafe.Pointer(&dOut), unsafe.Pointer(&count)}
	for _, p := range args {
		pin.Pin(p)
	}
	check(t, "LaunchKernel", driver.LaunchKernel(kernel, numBlocks, 1, 1, numThreads, 1, 1, 0, 0, &args[0], nil))
	check(t, "CtxSynchronize", driver.CtxSynchronize())
	check(t, "MemcpyDtoH", driver.MemcpyDtoH(unsafe.Pointer(&hOut[0]), dOut, size))

	bad := 0
	for i := range hOut {
		// Two roundings, as the kernel built with --fmad=false does; the
		// conversion stops Go from fusing them.
		want := float32(a*hX[i]) + hY[i]
		if hOut[i] != want {
			if bad++; bad <= 10 {
				t.Errorf("out[%d] = %v, want %v * %v + %v = %v", i, hOut[i], a, hX[i], hY[i], want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d results differ", bad, count)
	}
	t.Logf("%d results exact; out[%d] = %v", count, count-1, hOut[count-1])
}
