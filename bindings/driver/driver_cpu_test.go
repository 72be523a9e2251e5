package driver_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// driverVersion returns cuDriverGetVersion, failing the test when the
// driver cannot be loaded (CI has libcuda.so.1 without a GPU).
func driverVersion(t *testing.T) int32 {
	t.Helper()
	v, err := driver.DriverGetVersion()
	if err != nil {
		t.Fatalf("DriverGetVersion: %v", err)
	}
	return v
}

func TestDriverGetVersion(t *testing.T) {
	v := driverVersion(t)
	t.Logf("driver supports CUDA %d.%d (%d)", v/1000, v%1000/10, v)
	if v < 12000 {
		t.Errorf("DriverGetVersion = %d, want >= 12000", v)
	}
}

func TestInit(t *testing.T) {
	driverVersion(t)
	err := driver.Init(0)
	if err == nil {
		n, err := driver.DeviceGetCount()
		if err != nil || n < 1 {
			t.Errorf("Init succeeded, then DeviceGetCount = %d, %v", n, err)
		}
		return
	}
	if !errors.Is(err, driver.ErrorNoDevice) {
		t.Fatalf("Init(0): %v, want success or CUDA_ERROR_NO_DEVICE", err)
	}
	var e *driver.Error
	if !errors.As(err, &e) {
		t.Fatalf("Init error %T is not *driver.Error", err)
	}
	if e.Code != driver.ErrorNoDevice || int(e.Code) != 100 || e.Func != "cuInit" || e.Message == "" {
		t.Errorf("Init error = %#v, want code 100 from cuInit with a message", e)
	}
	if name, err := driver.GetErrorName(e.Code); err != nil || name != "CUDA_ERROR_NO_DEVICE" {
		t.Errorf("GetErrorName(100) = %q, %v", name, err)
	}
	if e.Code.String() != "CUDA_ERROR_NO_DEVICE" {
		t.Errorf("Result(100).String() = %q", e.Code.String())
	}
}

// cuCtxCreate_v4 (CUctxCreateParams) came with CUDA 12.5: an older driver
// must answer with a *MissingFunctionError naming both versions.
func TestCtxCreateNeeds125(t *testing.T) {
	v := driverVersion(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = driver.Init(0)
	ctx, err := driver.CtxCreate(nil, 0, 0)
	var m *driver.MissingFunctionError
	if v < 12050 {
		if !errors.As(err, &m) {
			t.Fatalf("CtxCreate on a CUDA %d driver: %v (%T), want *MissingFunctionError", v, err, err)
		}
		have := fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		if m.Need != "12.5" || m.Have != have {
			t.Errorf("MissingFunctionError Need %q Have %q, want 12.5 and %s", m.Need, m.Have, have)
		}
		if m.Func != "cuCtxCreate_v4" && m.Func != "cuCtxCreate" {
			t.Errorf("MissingFunctionError Func %q, want cuCtxCreate_v4", m.Func)
		}
		t.Logf("%v", err)
		return
	}
	if errors.As(err, &m) {
		t.Fatalf("CtxCreate on a CUDA %d driver: %v", v, err)
	}
	if err == nil {
		if err := driver.CtxDestroy(ctx); err != nil {
			t.Errorf("CtxDestroy: %v", err)
		}
	}
}

// requireGPU skips the test when no GPU can be used: the driver does not
// load, or cuInit reports CUDA_ERROR_NO_DEVICE. With CUDAGO_REQUIRE_GPU=1
// that is a failure instead.
func requireGPU(t *testing.T) {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
		fail = t.Fatalf
	}
	if _, err := driver.DriverGetVersion(); err != nil {
		var e *driver.Error
		if !errors.As(err, &e) {
			fail("no GPU: the CUDA driver cannot be loaded: %v", err)
			return
		}
		t.Fatalf("DriverGetVersion: %v", err)
	}
	if err := driver.Init(0); err != nil {
		if errors.Is(err, driver.ErrorNoDevice) {
			fail("no GPU: cuInit: %v (set CUDAGO_REQUIRE_GPU=1 to fail instead)", err)
			return
		}
		t.Fatalf("Init(0): %v", err)
	}
	if n, err := driver.DeviceGetCount(); err != nil || n < 1 {
		fail("no GPU: DeviceGetCount = %d, %v", n, err)
	}
}
