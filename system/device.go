package system

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/cudago/cudago/bindings/nvml"
)

// Device is one GPU as NVML sees it. Its methods query NVML each time (the
// values change), from any goroutine.
type Device struct {
	index int
	uuid  string // NVML's, "GPU-...": immutable, and how a new initialization finds the GPU again

	mu  sync.Mutex
	h   nvml.Device
	gen uint64 // state.gen when h was got
}

// GetDevice returns GPU index in NVML's order, 0 to DeviceCount()-1 (by
// PCI bus id; see the package doc for CUDA's order).
func GetDevice(index int) (*Device, error) {
	var d *Device
	err := query(func(gen uint64) error {
		n, err := nvml.DeviceGetCount()
		if err != nil {
			return err
		}
		if index < 0 || index >= int(n) {
			return fmt.Errorf("no GPU %d: NVML sees %d (0 to %d)", index, n, int(n)-1)
		}
		h, err := nvml.DeviceGetHandleByIndex(uint32(index))
		if err != nil {
			return err
		}
		d, err = newDevice(h, gen)
		return err
	})
	if err != nil {
		return nil, wrap("GetDevice("+strconv.Itoa(index)+")", err)
	}
	return d, nil
}

// Devices returns every GPU NVML sees, in its order.
func Devices() ([]*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	devs := make([]*Device, n)
	for i := range devs {
		if devs[i], err = GetDevice(i); err != nil {
			return nil, err
		}
	}
	return devs, nil
}

// DeviceByUUID returns the GPU with that UUID: NVML's form
// ("GPU-5d8c1b2e-..."; MIG devices' "MIG-..."), or core.Device.UUID's,
// which lacks the "GPU-" prefix (nvmlDeviceGetHandleByUUID).
func DeviceByUUID(uuid string) (*Device, error) {
	if uuid == "" {
		return nil, errors.New("system: DeviceByUUID: empty UUID")
	}
	id := uuid
	if !strings.HasPrefix(id, "GPU-") && !strings.HasPrefix(id, "MIG-") {
		id = "GPU-" + id
	}
	return byHandle("DeviceByUUID("+uuid+")", func() (nvml.Device, error) { return nvml.DeviceGetHandleByUUID(id) })
}

// DeviceByPCIBusID returns the GPU at a PCI address, domain:bus:device.function
// in hexadecimal, with a 4- or 8-digit domain: core.Device.PCIBusID's
// "0000:18:00.0" or NVML's "00000000:18:00.0" (nvmlDeviceGetHandleByPciBusId_v2).
func DeviceByPCIBusID(busID string) (*Device, error) {
	if busID == "" {
		return nil, errors.New("system: DeviceByPCIBusID: empty bus id")
	}
	return byHandle("DeviceByPCIBusID("+busID+")", func() (nvml.Device, error) { return nvml.DeviceGetHandleByPciBusId(busID) })
}

func byHandle(what string, get func() (nvml.Device, error)) (*Device, error) {
	var d *Device
	err := query(func(gen uint64) error {
		h, err := get()
		if err != nil {
			return err
		}
		d, err = newDevice(h, gen)
		return err
	})
	if err != nil {
		return nil, wrap(what, err)
	}
	return d, nil
}

func newDevice(h nvml.Device, gen uint64) (*Device, error) {
	index, err := nvml.DeviceGetIndex(h)
	if err != nil {
		return nil, err
	}
	var buf [nvml.DeviceUuidV2BufferSize]byte
	if err := nvml.DeviceGetUUID(h, &buf[0], uint32(len(buf))); err != nil {
		return nil, err
	}
	return &Device{index: int(index), uuid: cString(buf[:]), h: h, gen: gen}, nil
}

// handle returns d's NVML handle in the initialization gen, finding the
// GPU again by UUID after a Shutdown.
func (d *Device) handle(gen uint64) (nvml.Device, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen == gen {
		return d.h, nil
	}
	h, err := nvml.DeviceGetHandleByUUID(d.uuid)
	if err != nil {
		return 0, err
	}
	d.h, d.gen = h, gen
	return h, nil
}

// get runs one NVML query of d and returns its result, also with its
// error (what names the query there).
func get[T any](d *Device, what string, f func(h nvml.Device) (T, error)) (T, error) {
	var v T
	err := d.do(what, func(h nvml.Device) error {
		var err error
		v, err = f(h)
		return err
	})
	return v, err
}

// do runs f with d's handle; what names the query in the error.
func (d *Device) do(what string, f func(h nvml.Device) error) error {
	err := query(func(gen uint64) error {
		h, err := d.handle(gen)
		if err != nil {
			return err
		}
		return f(h)
	})
	if err != nil {
		return fmt.Errorf("system: GPU %d: %s: %w", d.index, what, err)
	}
	return nil
}

// Index returns the device's index in NVML's order.
func (d *Device) Index() int { return d.index }

// UUID returns the device's UUID as NVML and nvidia-smi write it,
// "GPU-5d8c1b2e-..." (core.Device.UUID is the same without "GPU-").
func (d *Device) UUID() string { return d.uuid }

// String describes the device: "GPU 0 (GPU-5d8c1b2e-...)".
func (d *Device) String() string { return fmt.Sprintf("GPU %d (%s)", d.index, d.uuid) }

func (d *Device) text(what string, size int, read func(nvml.Device, *byte, uint32) error) (string, error) {
	return get(d, what, func(h nvml.Device) (string, error) { return nvmlText(h, size, read) })
}

// Name returns the product name, "NVIDIA H100 80GB HBM3".
func (d *Device) Name() (string, error) {
	return d.text("Name", nvml.DeviceNameV2BufferSize, nvml.DeviceGetName)
}

// PCIBusID returns the device's PCI address as NVML writes it,
// "00000000:18:00.0" (an 8-digit domain; CUDA's has 4).
func (d *Device) PCIBusID() (string, error) {
	return get(d, "PCIBusID", func(h nvml.Device) (string, error) {
		pci, err := nvml.DeviceGetPciInfo(h)
		return cString(pci.BusId[:]), err
	})
}

// MemoryInfo is a device's memory in bytes. Total is the memory on the
// board, more than CUDA reports (cuDeviceTotalMem, core.Device.TotalMemory)
// by what the driver and firmware reserve; Reserved is that (0 where NVML
// lacks nvmlDeviceGetMemoryInfo_v2, and then Used includes it); Used is
// what contexts have allocated.
type MemoryInfo struct {
	Total, Reserved, Free, Used uint64
}

// MemoryInfo returns the device's memory (nvmlDeviceGetMemoryInfo_v2, or
// nvmlDeviceGetMemoryInfo where that is missing or not supported).
func (d *Device) MemoryInfo() (MemoryInfo, error) {
	return get(d, "MemoryInfo", memoryInfo)
}

func memoryInfo(h nvml.Device) (MemoryInfo, error) {
	v2 := nvml.MemoryV2{Version: nvml.NvmlMemoryV2}
	err := nvml.DeviceGetMemoryInfoV2(h, &v2)
	if err == nil {
		return MemoryInfo{Total: v2.Total, Reserved: v2.Reserved, Free: v2.Free, Used: v2.Used}, nil
	}
	var missing *nvml.MissingFunctionError
	if !errors.As(err, &missing) && !errors.Is(err, nvml.ErrorNotSupported) && !errors.Is(err, nvml.ErrorArgumentVersionMismatch) {
		return MemoryInfo{}, err
	}
	v1, err := nvml.DeviceGetMemoryInfo(h)
	return MemoryInfo{Total: v1.Total, Free: v1.Free, Used: v1.Used}, err
}

// Temperature returns the GPU die's temperature in degrees Celsius.
func (d *Device) Temperature() (int, error) {
	t, err := get(d, "Temperature", func(h nvml.Device) (uint32, error) {
		return nvml.DeviceGetTemperature(h, nvml.TemperatureGpu)
	})
	return int(t), err
}

// Milliwatts is a power in mW, as NVML reports it.
type Milliwatts uint32

// Watts returns the power in watts.
func (p Milliwatts) Watts() float64 { return float64(p) / 1000 }

// PowerUsage returns the board's power draw (nvmlDeviceGetPowerUsage):
// ErrNotSupported on boards without a power sensor.
func (d *Device) PowerUsage() (Milliwatts, error) {
	return d.power("PowerUsage", nvml.DeviceGetPowerUsage)
}

// PowerLimit returns the power limit the driver enforces, nvidia-smi's
// "Cap" (nvmlDeviceGetEnforcedPowerLimit).
func (d *Device) PowerLimit() (Milliwatts, error) {
	return d.power("PowerLimit", nvml.DeviceGetEnforcedPowerLimit)
}

func (d *Device) power(what string, read func(nvml.Device) (uint32, error)) (Milliwatts, error) {
	mw, err := get(d, what, read)
	return Milliwatts(mw), err
}

// ClockDomain names one of a GPU's clocks.
type ClockDomain int

// The clocks. ClockSM is what runs kernels; ClockMemory the memory's.
const (
	ClockGraphics ClockDomain = ClockDomain(nvml.ClockGraphics)
	ClockSM       ClockDomain = ClockDomain(nvml.ClockSm)
	ClockMemory   ClockDomain = ClockDomain(nvml.ClockMem)
	ClockVideo    ClockDomain = ClockDomain(nvml.ClockVideo)
)

func (c ClockDomain) String() string {
	switch c {
	case ClockGraphics:
		return "graphics"
	case ClockSM:
		return "SM"
	case ClockMemory:
		return "memory"
	case ClockVideo:
		return "video"
	}
	return "ClockDomain(" + strconv.Itoa(int(c)) + ")"
}

// Clock returns a clock's current frequency in MHz (nvmlDeviceGetClockInfo).
func (d *Device) Clock(c ClockDomain) (int, error) {
	return d.clock(c.String()+" clock", c, nvml.DeviceGetClockInfo)
}

// MaxClock returns a clock's highest frequency in MHz
// (nvmlDeviceGetMaxClockInfo).
func (d *Device) MaxClock(c ClockDomain) (int, error) {
	return d.clock("max "+c.String()+" clock", c, nvml.DeviceGetMaxClockInfo)
}

func (d *Device) clock(what string, c ClockDomain, read func(nvml.Device, nvml.ClockType) (uint32, error)) (int, error) {
	if c < ClockGraphics || c > ClockVideo {
		return 0, fmt.Errorf("system: GPU %d: %s: no such clock", d.index, what)
	}
	mhz, err := get(d, what, func(h nvml.Device) (uint32, error) { return read(h, nvml.ClockType(c)) })
	return int(mhz), err
}

// Utilization is the percentage of the last sample period (1/6 s to 1 s,
// by product) during which a kernel ran (GPU) and device memory was read or
// written (Memory).
type Utilization struct {
	GPU, Memory int
}

// Utilization returns the device's recent utilization
// (nvmlDeviceGetUtilizationRates).
func (d *Device) Utilization() (Utilization, error) {
	u, err := get(d, "Utilization", nvml.DeviceGetUtilizationRates)
	return Utilization{GPU: int(u.Gpu), Memory: int(u.Memory)}, err
}

// Status is a device's state at one moment, the line nvidia-smi shows for
// it. A value that could not be read is zero, and Errs says why under its
// field's name ("PowerUsage", "MaxSMClock", ...): an error matching
// ErrNotSupported where the GPU does not report it.
type Status struct {
	Index                       int
	Name, UUID, PCIBusID        string
	Memory                      MemoryInfo
	Temperature                 int // degrees Celsius
	PowerUsage, PowerLimit      Milliwatts
	SMClock, MaxSMClock         int // MHz
	MemoryClock, MaxMemoryClock int // MHz
	Utilization                 Utilization
	Errs                        map[string]error
}

// Status reads every value of Status in one NVML session. Its error is
// set only when none could be read (NVML could not be initialized, or
// the GPU is gone); one value's failure is in Status.Errs.
func (d *Device) Status() (Status, error) {
	s := Status{Index: d.index, UUID: d.uuid, Errs: map[string]error{}}
	err := d.do("Status", func(h nvml.Device) error {
		name, err := nvmlText(h, nvml.DeviceNameV2BufferSize, nvml.DeviceGetName)
		if err != nil {
			return err // the device is unusable: no value will come
		}
		s.Name = name
		note := func(field string, err error) {
			if err != nil {
				s.Errs[field] = fmt.Errorf("system: GPU %d: %s: %w", d.index, field, err)
			}
		}
		pci, err := nvml.DeviceGetPciInfo(h)
		s.PCIBusID = cString(pci.BusId[:])
		note("PCIBusID", err)
		s.Memory, err = memoryInfo(h)
		note("Memory", err)
		t, err := nvml.DeviceGetTemperature(h, nvml.TemperatureGpu)
		s.Temperature = int(t)
		note("Temperature", err)
		p, err := nvml.DeviceGetPowerUsage(h)
		s.PowerUsage = Milliwatts(p)
		note("PowerUsage", err)
		p, err = nvml.DeviceGetEnforcedPowerLimit(h)
		s.PowerLimit = Milliwatts(p)
		note("PowerLimit", err)
		for _, c := range []struct {
			field string
			dst   *int
			get   func(nvml.Device, nvml.ClockType) (uint32, error)
			clock nvml.ClockType
		}{
			{"SMClock", &s.SMClock, nvml.DeviceGetClockInfo, nvml.ClockSm},
			{"MaxSMClock", &s.MaxSMClock, nvml.DeviceGetMaxClockInfo, nvml.ClockSm},
			{"MemoryClock", &s.MemoryClock, nvml.DeviceGetClockInfo, nvml.ClockMem},
			{"MaxMemoryClock", &s.MaxMemoryClock, nvml.DeviceGetMaxClockInfo, nvml.ClockMem},
		} {
			mhz, err := c.get(h, c.clock)
			*c.dst = int(mhz)
			note(c.field, err)
		}
		u, err := nvml.DeviceGetUtilizationRates(h)
		s.Utilization = Utilization{GPU: int(u.Gpu), Memory: int(u.Memory)}
		note("Utilization", err)
		return nil
	})
	if err != nil {
		return Status{Index: d.index, UUID: d.uuid}, err
	}
	return s, nil
}

func nvmlText(h nvml.Device, size int, get func(nvml.Device, *byte, uint32) error) (string, error) {
	buf := make([]byte, size)
	if err := get(h, &buf[0], uint32(len(buf))); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// pair runs f, a query of two GPUs, with the handles of a and b in one
// initialization, and returns its result, also with its error.
func pair[T any](what string, a, b *Device, f func(ha, hb nvml.Device) (T, error)) (T, error) {
	var v T
	if a == nil || b == nil {
		return v, fmt.Errorf("system: %s: nil *Device", what)
	}
	err := query(func(gen uint64) error {
		ha, err := a.handle(gen)
		if err != nil {
			return err
		}
		hb, err := b.handle(gen)
		if err != nil {
			return err
		}
		v, err = f(ha, hb)
		return err
	})
	if err != nil {
		return v, fmt.Errorf("system: %s(GPU %d, GPU %d): %w", what, a.index, b.index, err)
	}
	return v, nil
}

// P2PCapability is a kind of peer-to-peer access between two GPUs.
type P2PCapability int

// The capabilities nvmlDeviceGetP2PStatus reports.
const (
	P2PRead    P2PCapability = P2PCapability(nvml.P2PCapsIndexRead)
	P2PWrite   P2PCapability = P2PCapability(nvml.P2PCapsIndexWrite)
	P2PNVLink  P2PCapability = P2PCapability(nvml.P2PCapsIndexNvlink)
	P2PAtomics P2PCapability = P2PCapability(nvml.P2PCapsIndexAtomics)
)

func (c P2PCapability) String() string {
	switch c {
	case P2PRead:
		return "read"
	case P2PWrite:
		return "write"
	case P2PNVLink:
		return "NVLink"
	case P2PAtomics:
		return "atomics"
	}
	return "P2PCapability(" + strconv.Itoa(int(c)) + ")"
}

// P2PStatus says whether a peer-to-peer capability works between two GPUs,
// and why not.
type P2PStatus int

// The statuses, NVML's nvmlGpuP2PStatus_t.
const (
	P2POK                   P2PStatus = P2PStatus(nvml.P2PStatusOk)
	P2PChipsetNotSupported  P2PStatus = P2PStatus(nvml.P2PStatusChipsetNotSupported)
	P2PGPUNotSupported      P2PStatus = P2PStatus(nvml.P2PStatusGpuNotSupported)
	P2PTopologyNotSupported P2PStatus = P2PStatus(nvml.P2PStatusIohTopologyNotSupported)
	P2PDisabledByRegkey     P2PStatus = P2PStatus(nvml.P2PStatusDisabledByRegkey)
	P2PNotSupported         P2PStatus = P2PStatus(nvml.P2PStatusNotSupported)
	P2PUnknown              P2PStatus = P2PStatus(nvml.P2PStatusUnknown)
)

// OK reports whether the capability works.
func (s P2PStatus) OK() bool { return s == P2POK }

func (s P2PStatus) String() string {
	switch s {
	case P2POK:
		return "OK"
	case P2PChipsetNotSupported:
		return "chipset not supported"
	case P2PGPUNotSupported:
		return "GPU not supported"
	case P2PTopologyNotSupported:
		return "I/O hub topology not supported"
	case P2PDisabledByRegkey:
		return "disabled by registry key"
	case P2PNotSupported:
		return "not supported"
	case P2PUnknown:
		return "unknown"
	}
	return "P2PStatus(" + strconv.Itoa(int(s)) + ")"
}

// P2P returns whether capability c works from a to b
// (nvmlDeviceGetP2PStatus).
func P2P(a, b *Device, c P2PCapability) (P2PStatus, error) {
	if c < P2PRead || c > P2PAtomics {
		return 0, fmt.Errorf("system: P2P: no such capability %d", int(c))
	}
	st, err := pair("P2P "+c.String(), a, b, func(ha, hb nvml.Device) (nvml.GpuP2PStatus, error) {
		return nvml.DeviceGetP2PStatus(ha, hb, nvml.GpuP2PCapsIndex(c))
	})
	return P2PStatus(st), err
}

// TopologyLevel is how close two GPUs are on the machine's buses: the
// nearest common ancestor of their PCIe paths, nvidia-smi topo -m's legend.
type TopologyLevel int

// The levels, nearest first (NVML's nvmlGpuTopologyLevel_t).
const (
	TopologyInternal   TopologyLevel = TopologyLevel(nvml.TopologyInternal)   // the same board (a multi-GPU board)
	TopologySingle     TopologyLevel = TopologyLevel(nvml.TopologySingle)     // one PCIe switch: PIX
	TopologyMultiple   TopologyLevel = TopologyLevel(nvml.TopologyMultiple)   // several PCIe switches, no host bridge: PXB
	TopologyHostBridge TopologyLevel = TopologyLevel(nvml.TopologyHostbridge) // a PCIe host bridge: PHB
	TopologyNode       TopologyLevel = TopologyLevel(nvml.TopologyNode)       // host bridges within one NUMA node: NODE
	TopologySystem     TopologyLevel = TopologyLevel(nvml.TopologySystem)     // across NUMA nodes (the SMP interconnect): SYS
)

// String returns nvidia-smi topo -m's abbreviation ("PIX", "SYS"), or
// "BOARD" for TopologyInternal.
func (l TopologyLevel) String() string {
	switch l {
	case TopologyInternal:
		return "BOARD"
	case TopologySingle:
		return "PIX"
	case TopologyMultiple:
		return "PXB"
	case TopologyHostBridge:
		return "PHB"
	case TopologyNode:
		return "NODE"
	case TopologySystem:
		return "SYS"
	}
	return "TopologyLevel(" + strconv.Itoa(int(l)) + ")"
}

// TopologyCommonAncestor returns the nearest common ancestor of two GPUs
// on the PCIe tree (nvmlDeviceGetTopologyCommonAncestor; Linux only).
func TopologyCommonAncestor(a, b *Device) (TopologyLevel, error) {
	l, err := pair("TopologyCommonAncestor", a, b, nvml.DeviceGetTopologyCommonAncestor)
	return TopologyLevel(l), err
}
