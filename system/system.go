// Package system reports the machine's NVIDIA driver and GPUs without a
// CUDA context: driver version and branch, the CUDA version the driver
// supports, and per GPU its name, UUID, PCI bus id, memory, temperature,
// power, clocks, utilization, peer-to-peer status and PCIe topology. It is
// what nvidia-smi shows, read through NVML (the NVIDIA Management Library,
// libnvidia-ml.so.1, bindings/nvml), and what cuda.core's cuda.core.system
// module is in Python.
//
// # No context
//
// Nothing here calls cuInit or creates a CUDA context, so monitoring a GPU
// takes none of its memory (a context takes hundreds of MiB), is not one
// of its compute processes, and may run beside (or before) the program
// that computes. NVML talks to the kernel driver itself. The package's test
// checks it in a fresh process: after every query but CUDADriverVersion,
// libcuda is not even mapped; CUDADriverVersion, for which NVML may load
// libcuda to ask cuDriverGetVersion, leaves it uninitialized (cuInit never
// called).
//
// # Initialization
//
// The first query initializes NVML (nvmlInit_v2) for the process and the
// package keeps it initialized; queries from any number of goroutines may
// run at once. Init and Shutdown are for a program that wants NVML's
// resources back: Init takes a reference (initializing NVML if needed),
// Shutdown gives one back, and when none is left it calls nvmlShutdown
// (a Shutdown without any Init releases what queries initialized). The next
// query initializes NVML again; a *Device got before stays valid (it finds
// its GPU again by UUID). Shutdown waits for queries in flight. A failed
// initialization is not remembered: each query tries again, so a driver
// loaded later is seen.
//
// Without an NVIDIA driver every query fails with an error that matches
// ErrDriverNotLoaded (errors.Is): NVML loads (CI installs Debian's
// libnvidia-ml1) but nvmlInit says the driver is not loaded. Without NVML
// itself the error is pathfinder's, naming every place searched.
//
// # Errors
//
// Every error names the query and carries NVML's own message
// (nvmlErrorString) through a *nvml.Error, which errors.As finds. A value
// the GPU does not report (power on some boards, clocks of a GPU in a VM)
// fails with an error that matches ErrNotSupported; Device.Status collects
// every value and records such errors per value, so one unsupported value
// does not fail the whole query. DriverBranch, which needs a 560 or newer
// driver, also fails with ErrNotSupported on an older one.
//
// # Devices and package core
//
// Devices are numbered as NVML numbers them, by PCI bus id, which is not
// always CUDA's order (CUDA puts the fastest first unless
// CUDA_DEVICE_ORDER=PCI_BUS_ID, and CUDA_VISIBLE_DEVICES hides devices from
// CUDA but not from NVML). Map a core.Device to its Device by UUID or PCI
// bus id, which name the same GPU in both:
//
//	d, err := system.DeviceByUUID(coreDev.UUID())         // core's UUID lacks NVML's "GPU-": added
//	d, err := system.DeviceByPCIBusID(coreDev.PCIBusID()) // "0000:18:00.0" and "00000000:18:00.0" both work
//
// and the other way, compare core's UUID with Device.UUID without its
// "GPU-" prefix. Neither direction needs package core here, so this package
// does not import it.
package system

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvml"
	"github.com/cudago/cudago/internal/version"
)

// ErrNotSupported matches (errors.Is) the error of a value the GPU or
// driver does not report: NVML's NVML_ERROR_NOT_SUPPORTED, and
// DriverBranch on a driver older than 560.
const ErrNotSupported = nvml.ErrorNotSupported

// ErrDriverNotLoaded matches (errors.Is) the error of every query on a
// machine without a loaded NVIDIA driver: NVML_ERROR_DRIVER_NOT_LOADED.
const ErrDriverNotLoaded = nvml.ErrorDriverNotLoaded

// state is NVML's initialization by this package. Queries hold mu for
// reading while they call NVML, so Shutdown (which holds it for writing)
// never runs under one.
var state struct {
	mu   sync.RWMutex
	up   bool   // nvmlInit succeeded and no nvmlShutdown followed
	refs int    // Init calls not yet given back by Shutdown
	gen  uint64 // counts nvmlShutdown calls: a Device of an older one looks its GPU up again
}

// start initializes NVML if it is not; called without mu.
func start() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	return startLocked()
}

func startLocked() error {
	if state.up {
		return nil
	}
	if err := nvml.Init(); err != nil {
		return fmt.Errorf("initializing NVML: %w", err)
	}
	state.up = true
	return nil
}

// query runs f with NVML initialized and no Shutdown possible meanwhile;
// gen is the current initialization's.
func query(f func(gen uint64) error) error {
	for {
		state.mu.RLock()
		if state.up {
			err := f(state.gen)
			state.mu.RUnlock()
			return err
		}
		state.mu.RUnlock()
		if err := start(); err != nil {
			return err
		}
		// A Shutdown may come between start and RLock: check again.
	}
}

// Init initializes NVML for the process and takes a reference to it, which
// Shutdown gives back. Queries do not need it: they initialize NVML
// themselves. It fails as nvmlInit does (ErrDriverNotLoaded without a
// driver), and then takes no reference.
func Init() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if err := startLocked(); err != nil {
		return fmt.Errorf("system: Init: %w", err)
	}
	state.refs++
	return nil
}

// Shutdown gives back one reference that Init took; when none is left, it
// shuts NVML down (nvmlShutdown), also when only queries initialized it.
// Without NVML initialized it does nothing. It waits for the queries in
// flight; later ones initialize NVML again.
func Shutdown() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.refs > 0 {
		state.refs--
	}
	if state.refs > 0 || !state.up {
		return nil
	}
	state.up = false
	state.gen++
	if err := nvml.Shutdown(); err != nil {
		return fmt.Errorf("system: shutting NVML down: %w", err)
	}
	return nil
}

// cString is the text of a NUL-terminated C string in b.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// value runs f, an NVML query of the system, with NVML initialized, and
// returns its result; what names the query in the error.
func value[T any](what string, f func() (T, error)) (T, error) {
	var v T
	err := query(func(uint64) error {
		var err error
		v, err = f()
		return err
	})
	if err != nil {
		var zero T
		return zero, wrap(what, err)
	}
	return v, nil
}

// text calls an NVML function that writes a string into a buffer.
func text(what string, size int, get func(*byte, uint32) error) (string, error) {
	return value(what, func() (string, error) {
		buf := make([]byte, size)
		if err := get(&buf[0], uint32(len(buf))); err != nil {
			return "", err
		}
		return cString(buf), nil
	})
}

// wrap names the query in err.
func wrap(what string, err error) error {
	return fmt.Errorf("system: %s: %w", what, err)
}

// DriverVersion returns the version of the installed NVIDIA driver, such
// as "550.163.01" (nvmlSystemGetDriverVersion).
func DriverVersion() (string, error) {
	return text("DriverVersion", nvml.SystemDriverVersionBufferSize, nvml.SystemGetDriverVersion)
}

// NVMLVersion returns the version of the NVML library: its API major and
// the driver version, "12.550.163.01" (nvmlSystemGetNVMLVersion).
func NVMLVersion() (string, error) {
	return text("NVMLVersion", nvml.SystemNvmlVersionBufferSize, nvml.SystemGetNVMLVersion)
}

// CUDADriverVersion returns the newest CUDA version the driver supports,
// "12.4", as nvidia-smi's "CUDA Version" (nvmlSystemGetCudaDriverVersion).
// NVML may load libcuda to ask it, without initializing it.
func CUDADriverVersion() (string, error) {
	v, err := value("CUDADriverVersion", nvml.SystemGetCudaDriverVersion)
	if err != nil {
		return "", err
	}
	ver, err := version.FromCUDA(int(v))
	if err != nil {
		return "", fmt.Errorf("system: CUDADriverVersion: %w", err)
	}
	return ver.String(), nil
}

// DriverBranch returns the driver's branch (nvmlSystemGetDriverBranch).
// The NVML of drivers before 560 has no such query: the error then matches
// ErrNotSupported, with or without a loaded driver, and errors.As finds the
// *nvml.MissingFunctionError.
func DriverBranch() (string, error) {
	// Asked first: an older NVML lacks the query whether or not a driver is loaded.
	if _, err := nvml.Proc("nvmlSystemGetDriverBranch"); err != nil {
		var missing *nvml.MissingFunctionError
		if errors.As(err, &missing) {
			return "", fmt.Errorf("system: DriverBranch: %w (%w)", ErrNotSupported, err)
		}
		return "", wrap("DriverBranch", err)
	}
	return value("DriverBranch", func() (string, error) {
		var info nvml.SystemDriverBranchInfo
		info.Version = branchInfoVersion
		if err := nvml.SystemGetDriverBranch(&info, uint32(len(info.Branch))); err != nil {
			return "", err
		}
		return cString(info.Branch[:]), nil
	})
}

// branchInfoVersion is nvmlSystemDriverBranchInfo_v1,
// NVML_STRUCT_VERSION(SystemDriverBranchInfo, 1): the struct's size, and
// its revision in the top byte.
const branchInfoVersion = uint32(unsafe.Sizeof(nvml.SystemDriverBranchInfo{})) | 1<<24

// DeviceCount returns the number of GPUs NVML sees
// (nvmlDeviceGetCount_v2), CUDA_VISIBLE_DEVICES notwithstanding.
func DeviceCount() (int, error) {
	n, err := value("DeviceCount", nvml.DeviceGetCount)
	return int(n), err
}
