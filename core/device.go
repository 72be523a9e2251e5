package core

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/pathfinder"
)

// initDriver resolves the C layer's entry points and runs cuInit, once.
// Its error (no driver, no device) is remembered.
func initDriver() error {
	initState.once.Do(func() {
		loadProcs()
		initState.err = cuInit(0)
		noteLibrary(pathfinder.Driver)
	})
	return initState.err
}

var initState struct {
	once sync.Once
	err  error
}

// Device is one CUDA device. GetDevice and Devices return one *Device per
// ordinal for the life of the process. A Device needs no Close: its
// primary context is retained on first use and lives until the process
// ends.
//
// The name, UUID, compute capability, memory size, PCI bus id and the
// limits behind the convenience methods are read once, when the Device is
// first obtained; Attribute queries the driver every time.
//
// With several devices, each Device's methods act in that device's
// primary context whatever context is current on the calling thread
// (another device's, one made current through bindings/driver): core makes
// its context current within the cgo call of each driver call, and does
// not put the previous one back, so code that calls the bindings itself
// sets its own context first (SetCurrent, on a locked thread).
type Device struct {
	ordinal  int
	handle   driver.Device
	name     string
	uuid     driver.Uuid
	pciBusID string
	major    int
	minor    int
	totalMem uint64

	smCount, maxThreadsPerBlock, maxSmem, maxSmemOptin, warpSize int
	maxGrid, maxBlock                                            [3]int

	primary *Context

	mrMu sync.Mutex
	mr   MemoryResource
}

var devices struct {
	mu   sync.Mutex
	list []*Device
}

// DeviceCount returns the number of CUDA devices. Without a GPU it returns
// an error that matches driver.ErrorNoDevice.
func DeviceCount() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	n, err := cuDeviceGetCount()
	return int(n), err
}

// Devices returns every CUDA device, in ordinal order. Without a GPU it
// returns an error that matches driver.ErrorNoDevice (errors.Is).
func Devices() ([]*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &driver.Error{Lib: "driver", Func: "cuDeviceGetCount", Code: driver.ErrorNoDevice, Message: "no CUDA-capable device is detected"}
	}
	out := make([]*Device, n)
	for i := range out {
		if out[i], err = GetDevice(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetDevice returns the device with ordinal i (the name Device is the
// type's). It returns the same *Device for the same ordinal every time.
func GetDevice(i int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= n {
		return nil, fmt.Errorf("core: GetDevice(%d): there are %d devices", i, n)
	}
	devices.mu.Lock()
	defer devices.mu.Unlock()
	if devices.list == nil {
		devices.list = make([]*Device, n)
	}
	if d := devices.list[i]; d != nil {
		return d, nil
	}
	d, err := newDevice(i)
	if err != nil {
		return nil, err
	}
	devices.list[i] = d
	return d, nil
}

func newDevice(i int) (*Device, error) {
	h, err := cuDeviceGet(int32(i))
	if err != nil {
		return nil, err
	}
	d := &Device{ordinal: i, handle: h}
	var buf [256]byte
	if err := cuDeviceGetName(&buf[0], int32(len(buf)), h); err != nil {
		return nil, err
	}
	d.name = cstr(buf[:])
	if d.uuid, err = cuDeviceGetUuid(h); err != nil {
		return nil, err
	}
	buf = [256]byte{}
	if err := cuDeviceGetPCIBusId(&buf[0], 64, h); err != nil {
		return nil, err
	}
	d.pciBusID = cstr(buf[:])
	if d.totalMem, err = cuDeviceTotalMem(h); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		attr driver.DeviceAttribute
		dst  *int
	}{
		{driver.DeviceAttributeComputeCapabilityMajor, &d.major},
		{driver.DeviceAttributeComputeCapabilityMinor, &d.minor},
		{driver.DeviceAttributeMultiprocessorCount, &d.smCount},
		{driver.DeviceAttributeMaxThreadsPerBlock, &d.maxThreadsPerBlock},
		{driver.DeviceAttributeMaxSharedMemoryPerBlock, &d.maxSmem},
		{driver.DeviceAttributeMaxSharedMemoryPerBlockOptin, &d.maxSmemOptin},
		{driver.DeviceAttributeWarpSize, &d.warpSize},
		{driver.DeviceAttributeMaxGridDimX, &d.maxGrid[0]},
		{driver.DeviceAttributeMaxGridDimY, &d.maxGrid[1]},
		{driver.DeviceAttributeMaxGridDimZ, &d.maxGrid[2]},
		{driver.DeviceAttributeMaxBlockDimX, &d.maxBlock[0]},
		{driver.DeviceAttributeMaxBlockDimY, &d.maxBlock[1]},
		{driver.DeviceAttributeMaxBlockDimZ, &d.maxBlock[2]},
	} {
		v, err := cuDeviceGetAttribute(a.attr, h)
		if err != nil {
			return nil, err
		}
		*a.dst = int(v)
	}
	d.primary = newPrimaryContext(d)
	d.mr = NewDeviceMemoryResource(d)
	return d, nil
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Ordinal returns the device's index, as GetDevice takes it.
func (d *Device) Ordinal() int { return d.ordinal }

// Handle returns the driver's CUdevice.
func (d *Device) Handle() driver.Device { return d.handle }

// Name returns the device's name, such as "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.name }

// UUID returns the device's UUID as text: 8-4-4-4-12 lower-case hex
// digits, as cuda.core gives it (nvidia-smi prints it after "GPU-").
func (d *Device) UUID() string {
	b := d.uuid.Bytes
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ComputeCapability returns the device's compute capability: 9, 0 on H100.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// Arch returns the compute capability as NVRTC and nvJitLink name it
// ("90" for 9.0), to build "-arch=sm_"+Arch().
func (d *Device) Arch() string { return fmt.Sprintf("%d%d", d.major, d.minor) }

// TotalMemory returns the device's memory size in bytes.
func (d *Device) TotalMemory() uint64 { return d.totalMem }

// PCIBusID returns the device's PCI address, such as "0000:18:00.0".
func (d *Device) PCIBusID() string { return d.pciBusID }

// Attribute queries any device attribute.
func (d *Device) Attribute(attr driver.DeviceAttribute) (int, error) {
	v, err := cuDeviceGetAttribute(attr, d.handle)
	return int(v), err
}

// MultiprocessorCount returns the number of streaming multiprocessors.
func (d *Device) MultiprocessorCount() int { return d.smCount }

// MaxThreadsPerBlock returns the most threads a block may have.
func (d *Device) MaxThreadsPerBlock() int { return d.maxThreadsPerBlock }

// MaxSharedMemoryPerBlock returns the shared memory a block may use
// without opting in, in bytes.
func (d *Device) MaxSharedMemoryPerBlock() int { return d.maxSmem }

// MaxSharedMemoryPerBlockOptin returns the shared memory a block may use
// when its kernel opts in (Kernel.SetMaxDynamicSharedMemory), in bytes.
func (d *Device) MaxSharedMemoryPerBlockOptin() int { return d.maxSmemOptin }

// WarpSize returns the warp size in threads.
func (d *Device) WarpSize() int { return d.warpSize }

// MaxGridDim returns the largest grid, per dimension.
func (d *Device) MaxGridDim() [3]int { return d.maxGrid }

// MaxBlockDim returns the largest block, per dimension.
func (d *Device) MaxBlockDim() [3]int { return d.maxBlock }

// ClockRate returns the peak SM clock in kHz. The attribute is deprecated
// in CUDA 13, hence the error.
func (d *Device) ClockRate() (int, error) { return d.Attribute(driver.DeviceAttributeClockRate) }

// String returns "device 0 (NVIDIA H100 80GB HBM3, sm_90)".
func (d *Device) String() string {
	return fmt.Sprintf("device %d (%s, sm_%d%d)", d.ordinal, d.name, d.major, d.minor)
}

// PrimaryContext returns the device's primary context, which every
// Device method uses. It is retained on first use.
func (d *Device) PrimaryContext() *Context { return d.primary }

// CreateContext creates a new (non-primary) context on the device with
// cuCtxCreate flags (driver.CtxFlags values). It does not become current
// anywhere; Close destroys it.
func (d *Device) CreateContext(flags uint32) (*Context, error) {
	if err := initDriver(); err != nil {
		return nil, err
	}
	h, err := cCtxCreate(d.handle, flags)
	if err != nil {
		return nil, err
	}
	return newCreatedContext(d, h), nil
}

// SetCurrent makes the device's primary context current on the calling OS
// thread, for code that calls the driver bindings itself; that code must
// hold the thread (runtime.LockOSThread) for it to mean anything. Package
// core never needs it: every core operation sets its context itself.
func (d *Device) SetCurrent() error { return d.primary.SetCurrent() }

// Sync waits until all work on the device's primary context is done, and
// returns the errors recorded on it meanwhile (see Context.Sync).
func (d *Device) Sync() error { return d.primary.Sync() }

// MemoryInfo returns the free and total device memory in bytes.
func (d *Device) MemoryInfo() (free, total uint64, err error) { return d.primary.MemoryInfo() }

// NewStream creates a stream in the device's primary context.
func (d *Device) NewStream(opts *StreamOptions) (*Stream, error) { return d.primary.NewStream(opts) }

// DefaultStream returns the legacy default (NULL) stream of the primary
// context, which synchronizes with every blocking stream.
func (d *Device) DefaultStream() *Stream { return d.primary.DefaultStream() }

// PerThreadStream returns the per-thread default stream of the primary
// context. Note that "thread" is the OS thread the driver call runs on,
// which a goroutine does not keep: prefer NewStream in Go.
func (d *Device) PerThreadStream() *Stream { return d.primary.PerThreadStream() }

// NewEvent creates an event in the device's primary context.
func (d *Device) NewEvent(opts *EventOptions) (*Event, error) { return d.primary.NewEvent(opts) }

// StreamPriorityRange returns the least and greatest stream priorities
// (greatest is the numerically lowest, such as 0 and -5).
func (d *Device) StreamPriorityRange() (least, greatest int, err error) {
	h, err := d.primary.acquire()
	if err != nil {
		return 0, 0, err
	}
	defer d.primary.release()
	l, g, err := cuCtxGetStreamPriorityRange(h)
	return int(l), int(g), err
}

// CanAccessPeer reports whether d can access peer's memory directly (over
// NVLink or PCIe). A device is not its own peer: CanAccessPeer(d) is
// false, as the driver says.
func (d *Device) CanAccessPeer(peer *Device) (bool, error) {
	if d == nil {
		return false, errors.New("core: Device.CanAccessPeer: nil *Device")
	}
	if peer == nil {
		return false, errors.New("core: Device.CanAccessPeer: nil peer *Device")
	}
	v, err := cuDeviceCanAccessPeer(d.handle, peer.handle)
	return v != 0, err
}

// EnablePeerAccess lets d access peer's memory: kernels and copies on d
// may then use the addresses of peer's Buffers, over NVLink or PCIe. It
// enables access to the memory of peer's primary context
// (cuCtxEnablePeerAccess: cuMemAlloc, LegacyMemoryResource) and to the
// Buffers of peer's default pool (cuMemPoolSetAccess), the one
// Device.Allocate and DeviceMemoryResource use, whose memory the context
// setting does not cover. Other pools grant access with their own
// SetPeerAccessibleBy; VirtualMemoryResource with its Peers option. It is
// not an error if access is already enabled.
//
// Access is one-way: enable it on peer too for the other direction, and
// both ways for peer copies in both directions at full speed (without it,
// Buffer.CopyFrom between devices is staged through the host).
func (d *Device) EnablePeerAccess(peer *Device) error {
	if d == nil {
		return errors.New("core: Device.EnablePeerAccess: nil *Device")
	}
	if peer == nil {
		return errors.New("core: Device.EnablePeerAccess: nil peer *Device")
	}
	if peer == d {
		return fmt.Errorf("core: Device.EnablePeerAccess: %v is not its own peer", d)
	}
	if ok, err := d.CanAccessPeer(peer); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("core: Device.EnablePeerAccess: %v cannot access %v's memory (Device.CanAccessPeer is false)", d, peer)
	}
	err := d.primary.callWith(peer.primary, func(h, ph driver.Context) error {
		err := cuCtxEnablePeerAccess(h, ph, 0)
		if errors.Is(err, driver.ErrorPeerAccessAlreadyEnabled) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	pool, err := cuDeviceGetMemPool(peer.handle)
	if err != nil {
		return err
	}
	return setPoolPeers("Device.EnablePeerAccess", peer, pool, []*Device{d}, false)
}

// MemoryResource returns the device's default memory resource, used by
// Allocate: a DeviceMemoryResource unless SetMemoryResource changed it.
func (d *Device) MemoryResource() MemoryResource {
	d.mrMu.Lock()
	defer d.mrMu.Unlock()
	return d.mr
}

// SetMemoryResource sets the device's default memory resource.
func (d *Device) SetMemoryResource(mr MemoryResource) {
	d.mrMu.Lock()
	defer d.mrMu.Unlock()
	d.mr = mr
}

// Allocate allocates n bytes from the device's default memory resource,
// ordered on stream (nil: the legacy default stream).
func (d *Device) Allocate(n int, stream *Stream) (*Buffer, error) {
	return d.MemoryResource().Allocate(n, stream)
}
