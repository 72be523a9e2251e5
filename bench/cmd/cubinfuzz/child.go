package main

// #include <stdlib.h>
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// childLoop loads mutations from, from+step, ... below n with load and
// reports each on w in the campaign's protocol.
func childLoop(w io.Writer, from, step, n int, load func(i int) (outcome, detail string)) {
	fmt.Fprintf(w, "%sready\n", protoPrefix)
	for i := from; i < n; i += step {
		fmt.Fprintf(w, "%sB %d\n", protoPrefix, i)
		out, detail := load(i)
		fmt.Fprintf(w, "%sR %d %s %s\n", protoPrefix, i, out, oneLine(detail))
	}
	fmt.Fprintf(w, "%sdone\n", protoPrefix)
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// noCoreDumps keeps a crashing child from writing a core file per crash.
func noCoreDumps() {
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
}

// loader loads one image the way its mode does, returning the outcome.
type loader interface {
	load(img []byte) (outcome, detail string)
}

// coreLoader is mode "after": through core, as a program would load
// untrusted code: FromCubin (which runs the image check), then per kernel
// Kernel (cuLibraryLoadData, cuLibraryGetKernel), NumRegisters
// (cuKernelGetAttribute on the device: with lazy loading, what loads the
// module into the context) and Arguments (cuKernelGetParamInfo), then
// Close (cuLibraryUnload).
type coreLoader struct {
	dev     *core.Device
	kernels []string
}

func newCoreLoader(kernels []string) (*coreLoader, error) {
	dev, err := core.GetDevice(0)
	if err != nil {
		return nil, err
	}
	return &coreLoader{dev: dev, kernels: kernels}, nil
}

func (l *coreLoader) load(img []byte) (string, string) {
	o, err := core.FromCubin(img)
	if err != nil {
		return classify(err)
	}
	defer o.Close()
	for _, name := range l.kernels {
		k, err := o.Kernel(name)
		if err != nil {
			return classify(err)
		}
		if _, err := k.NumRegisters(l.dev); err != nil {
			return classify(err)
		}
		if _, err := k.Arguments(); err != nil {
			return classify(err)
		}
	}
	if err := o.Close(); err != nil {
		return outError, err.Error()
	}
	return outOK, ""
}

// classify tells the check's refusals from the driver's errors.
func classify(err error) (string, string) {
	if errors.Is(err, core.ErrInvalidCode) {
		return outRejected, err.Error()
	}
	var r driver.Result
	if errors.As(err, &r) {
		return outError, r.Error()
	}
	return outError, err.Error()
}

// driverLoader is mode "before": the same driver calls through the
// bindings, with no check of the image: cuLibraryLoadData of a C copy,
// then per kernel cuLibraryGetKernel, cuKernelGetAttribute(NUM_REGS) and
// cuKernelGetParamInfo until it fails (how core counts parameters), then
// cuLibraryUnload. Device 0's primary context is current on the locked
// thread, as core makes it for these calls.
type driverLoader struct {
	dev     driver.Device
	kernels []string
}

func newDriverLoader(kernels []string) (*driverLoader, error) {
	runtime.LockOSThread() // for good: the context stays current on this thread
	if err := driver.Init(0); err != nil {
		return nil, err
	}
	dev, err := driver.DeviceGet(0)
	if err != nil {
		return nil, err
	}
	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	if err != nil {
		return nil, err
	}
	if err := driver.CtxSetCurrent(ctx); err != nil {
		return nil, err
	}
	return &driverLoader{dev: dev, kernels: kernels}, nil
}

func (l *driverLoader) load(img []byte) (string, string) {
	// A C copy with a NUL after it, as core hands the driver (which may
	// keep reading it until the library is unloaded).
	p := C.malloc(C.size_t(len(img) + 1))
	if p == nil {
		return outError, "out of C memory"
	}
	defer C.free(p)
	buf := unsafe.Slice((*byte)(p), len(img)+1)
	copy(buf, img)
	buf[len(img)] = 0
	lib, err := driver.LibraryLoadData(p, nil, nil, 0, nil, nil, 0)
	if err != nil {
		return classify(err)
	}
	defer func() {
		if lib != 0 {
			driver.LibraryUnload(lib)
		}
	}()
	for _, name := range l.kernels {
		k, err := driver.LibraryGetKernel(lib, name)
		if err != nil {
			return classify(err)
		}
		if _, err := driver.KernelGetAttribute(driver.FuncAttributeNumRegs, k, l.dev); err != nil {
			return classify(err)
		}
		for i := uint64(0); i < 1024; i++ {
			var size uint64
			if _, err := driver.KernelGetParamInfo(k, i, &size); err != nil {
				break
			}
		}
	}
	if err := driver.LibraryUnload(lib); err != nil {
		return classify(err)
	}
	lib = 0
	return outOK, ""
}
