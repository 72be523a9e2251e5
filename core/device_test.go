package core

import (
	"errors"
	"os"
	"regexp"
	"runtime"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

func TestDevicesWithoutGPU(t *testing.T) {
	devs, err := Devices()
	if err == nil {
		t.Skipf("a GPU is present (%v)", devs[0])
	}
	var de *driver.Error
	if !errors.As(err, &de) {
		t.Skipf("no CUDA driver could be loaded: %v", err)
	}
	if !errors.Is(err, driver.ErrorNoDevice) {
		t.Fatalf("Devices() without a GPU: %v, want an error matching driver.ErrorNoDevice", err)
	}
	if _, err := GetDevice(0); !errors.Is(err, driver.ErrorNoDevice) {
		t.Errorf("GetDevice(0): %v", err)
	}
	if _, err := DeviceCount(); !errors.Is(err, driver.ErrorNoDevice) {
		t.Errorf("DeviceCount: %v", err)
	}
}

func TestRequireGPUEnv(t *testing.T) {
	if os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
		gpuDevice(t) // fails the test without a GPU
	}
}

func TestGPUDeviceProperties(t *testing.T) {
	dev := gpuDevice(t)
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if devs[0] != dev {
		t.Error("Devices()[0] is not the device requireGPU returned")
	}
	if d, err := GetDevice(0); err != nil || d != dev {
		t.Errorf("GetDevice(0) = %p, %v; want the same *Device", d, err)
	}
	if _, err := GetDevice(len(devs)); err == nil {
		t.Error("GetDevice(count): no error")
	}
	major, minor := dev.ComputeCapability()
	t.Logf("%v: uuid %s, pci %s, %d SMs, %.1f GiB, cc %d.%d", dev, dev.UUID(), dev.PCIBusID(),
		dev.MultiprocessorCount(), float64(dev.TotalMemory())/(1<<30), major, minor)
	if dev.Name() == "" {
		t.Error("empty name")
	}
	if major < 7 {
		t.Errorf("compute capability %d.%d, want 7.0 or newer", major, minor)
	}
	if dev.Arch() != string(rune('0'+major))+string(rune('0'+minor)) && major < 10 {
		t.Errorf("Arch() = %q", dev.Arch())
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(dev.UUID()) {
		t.Errorf("UUID() = %q", dev.UUID())
	}
	if dev.PCIBusID() == "" {
		t.Error("empty PCI bus id")
	}
	if dev.TotalMemory() < 1<<30 {
		t.Errorf("TotalMemory() = %d", dev.TotalMemory())
	}
	if dev.MultiprocessorCount() <= 0 || dev.WarpSize() != 32 || dev.MaxThreadsPerBlock() != 1024 {
		t.Errorf("SMs %d, warp %d, max threads %d", dev.MultiprocessorCount(), dev.WarpSize(), dev.MaxThreadsPerBlock())
	}
	if dev.MaxSharedMemoryPerBlock() < 48<<10 || dev.MaxSharedMemoryPerBlockOptin() < dev.MaxSharedMemoryPerBlock() {
		t.Errorf("shared memory %d, opt-in %d", dev.MaxSharedMemoryPerBlock(), dev.MaxSharedMemoryPerBlockOptin())
	}
	if g, b := dev.MaxGridDim(), dev.MaxBlockDim(); g[0] < 1<<30 || g[1] != 65535 || b[0] != 1024 || b[2] != 64 {
		t.Errorf("max grid %v, max block %v", g, b)
	}
	if v, err := dev.Attribute(driver.DeviceAttributeMultiprocessorCount); err != nil || v != dev.MultiprocessorCount() {
		t.Errorf("Attribute(MultiprocessorCount) = %d, %v", v, err)
	}
	if v, err := dev.ClockRate(); err != nil {
		t.Logf("ClockRate: %v (deprecated attribute)", err)
	} else {
		t.Logf("clock rate %d kHz", v)
	}
	least, greatest, err := dev.StreamPriorityRange()
	if err != nil || greatest > least {
		t.Errorf("StreamPriorityRange() = %d, %d, %v", least, greatest, err)
	}
	free, total, err := dev.MemoryInfo()
	if err != nil || free == 0 || free > total {
		t.Errorf("MemoryInfo() = %d, %d, %v", free, total, err)
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if !dev.PrimaryContext().IsPrimary() || dev.PrimaryContext().Device() != dev {
		t.Error("PrimaryContext is not the device's primary context")
	}
	if err := dev.PrimaryContext().Close(); err != nil {
		t.Errorf("closing the primary context: %v", err)
	}

	// SetCurrent acts on the calling thread: hold it to look.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := dev.SetCurrent(); err != nil {
		t.Fatal(err)
	}
	cur, err := driver.CtxGetCurrent()
	h, _ := dev.PrimaryContext().Handle()
	if err != nil || cur != h {
		t.Errorf("after SetCurrent the current context is %#x (%v), want %#x", cur, err, h)
	}
}

func TestGPUCreateContext(t *testing.T) {
	dev := gpuDevice(t)
	c, err := dev.CreateContext(0)
	if err != nil {
		t.Fatal(err)
	}
	if c.IsPrimary() {
		t.Error("a created context says it is primary")
	}
	s, err := c.NewStream(&StreamOptions{NonBlocking: true})
	if err != nil {
		t.Fatal(err)
	}
	buf, err := dev.Allocate(1024, s)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int64, 128)
	for i := range in {
		in[i] = int64(i) * -3
	}
	if err := CopyToDevice(buf, in); err != nil {
		t.Fatal(err)
	}
	out := make([]int64, 128)
	if err := CopyFromDevice(out, buf); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i] != in[i] {
			t.Fatalf("out[%d] = %d, want %d", i, out[i], in[i])
		}
	}
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	closeTwice(t, c)
	if err := s.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync on a stream of a closed context: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing a stream of a closed context: %v", err)
	}
}
