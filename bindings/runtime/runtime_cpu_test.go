package runtime

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/version"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cuda_runtime_api.h is bound: 320
// entry points for the 333 symbols the 13.0 and 12.4 headers declare
// together (counted with gcc -E from both): 11 CUDA 12 revisions with the
// 13.0 ABI are symbols of the 13.0 functions (cudaMemAdvise_v2 of
// cudaMemAdvise), and the 2 that take CUDA 12's struct layouts
// (cudaGetDeviceProperties_v2, cudaGraphAddNode_v2) are left out (see the
// package doc); 23 functions have a symbol whose older ABI the resolver
// skips.
func TestCount(t *testing.T) {
	gated := 0
	for i := range procs.Len() {
		if procs.Proc(i).Version != 0 {
			gated++
		}
	}
	if procs.Len() != 320 || len(Functions) != 320 || gated != 23 {
		t.Errorf("%d entry points (%d gated) and %d names, want 320 (23)", procs.Len(), gated, len(Functions))
	}
	bindtest.Names(t, "Types", Types, map[string]string{
		"cudaStream_t": "Stream", "cudaDeviceProp": "DeviceProp", "cudaMemcpyKind": "MemcpyKind",
		"cudaError_t": "Result", "cudaMemPool_t": "MemPool", "float2": "Float2", "dim3": "Dim3",
	})
	// The runtime's driver handles are the driver's types.
	var s Stream = driver.Stream(0)
	var e Event = driver.Event(0)
	_, _ = s, e
	if n := len(bindtest.Named[Result]("cudaError", 1000)); n < 100 {
		t.Errorf("Result has %d codes", n)
	}
	if !ErrorIllegalAddress.Sticky() || ErrorInvalidValue.Sticky() || ErrorNoDevice.Sticky() {
		t.Error("Sticky: cudaErrorIllegalAddress must be, cudaErrorInvalidValue and cudaErrorNoDevice not")
	}
}

// TestEntryPoints resolves every function in the local runtime: a wrong
// symbol name fails here.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CUDART, procs); n < 280 {
		t.Errorf("only %d of %d functions found", n, procs.Len())
	}
}

// TestRevisions checks the resolver: before CUDA 13.0, MemAdvise (13.0's
// signature) calls cudaMemAdvise_v2 and GetDeviceProperties (13.0's
// struct layout) is missing; from 13.0 on, both call their plain symbols.
func TestRevisions(t *testing.T) {
	lib, have := bindtest.Load(t, pathfinder.CUDART)
	old := version.Less(have, "13.0")
	sym := func(name string) unsafe.Pointer {
		p, err := lib.Symbol(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	got, err := procs.Get(procs.Index("cudaMemAdvise"))
	if err != nil {
		t.Fatal(err)
	}
	want := "cudaMemAdvise"
	if old {
		want = "cudaMemAdvise_v2"
	}
	if got != sym(want) {
		t.Errorf("MemAdvise with runtime %s is not %s", have, want)
	}
	var p DeviceProp
	err = GetDeviceProperties(&p, 0)
	var missing *MissingFunctionError
	if old != errors.As(err, &missing) {
		t.Fatalf("GetDeviceProperties with runtime %s: %v", have, err)
	}
	if old && (missing.Need != "13.0" || missing.Have != have) {
		t.Fatalf("GetDeviceProperties: %+v", *missing)
	}
	t.Logf("runtime %s: MemAdvise calls %s; GetDeviceProperties: %v", have, want, err)
}

// TestVersion checks that the runtime reports its version through the
// bindings, the same as pathfinder reads it, and the driver's: 0 where it
// finds no driver, as documented.
func TestVersion(t *testing.T) {
	_, want := bindtest.Load(t, pathfinder.CUDART)
	v, err := RuntimeGetVersion()
	if err != nil || dlVersion(v) != want || v < 12000 {
		t.Fatalf("RuntimeGetVersion = %d, %v; pathfinder says %s", v, err, want)
	}
	d, err := DriverGetVersion()
	if err != nil || d != 0 && d < 12000 {
		t.Fatalf("DriverGetVersion = %d, %v", d, err)
	}
	t.Logf("runtime %d, driver %d", v, d)
	if s, err := GetErrorName(ErrorNoDevice); err != nil || s != "cudaErrorNoDevice" {
		t.Errorf("GetErrorName = %q, %v", s, err)
	}
	// A struct returned by value.
	c, err := CreateChannelDesc(8, 16, 0, 0, ChannelFormatKindUnsigned)
	if err != nil || c != (ChannelFormatDesc{X: 8, Y: 16, F: ChannelFormatKindUnsigned}) {
		t.Fatalf("CreateChannelDesc = %+v, %v", c, err)
	}
}

func dlVersion(v int32) string {
	ver, _ := version.FromCUDA(int(v))
	return ver.String()
}

// TestStreamWithoutGPU: without a GPU, creating a stream fails with the
// runtime's documented error for no usable driver or device
// (cudaErrorInsufficientDriver where it finds no driver, cudaErrorNoDevice
// where the driver finds no device), not a crash.
func TestStreamWithoutGPU(t *testing.T) {
	s, err := bindtest.Create(t, pathfinder.CUDART, StreamCreate, nil, StreamDestroy)
	if err == nil {
		return // with a GPU
	}
	e := bindtest.Failed(t, err, "cudaStreamCreate", ErrorInsufficientDriver, ErrorNoDevice)
	if e.Message == "" || s != 0 {
		t.Fatalf("StreamCreate without a GPU = %v, stream %#x; want a message and no stream", err, s)
	}
	if n, err := GetDeviceCount(); !errors.Is(err, e.Code) || n != 0 {
		t.Fatalf("GetDeviceCount = %d, %v; want 0 and %v", n, err, e.Code)
	}
}
