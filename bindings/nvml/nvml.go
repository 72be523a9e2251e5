// Package nvml binds the NVIDIA Management Library (nvml.h), the driver's
// API for monitoring and managing GPUs: what nvidia-smi shows. It needs no
// CUDA context and never calls cuInit; package system is the idiomatic
// layer over it.
//
// Every function, enum and struct of nvml.h is here, generated from CUDA
// 12.4's header (the 550 drivers', from the local install of
// scripts/setup-cuda.sh) plus internal/bindgen/extra/nvml_560.h for
// nvmlSystemGetDriverBranch (drivers 560 and newer): nvmlDeviceGetCount is
// DeviceGetCount, NVML_TEMPERATURE_GPU is TemperatureGpu, and every
// function returns an error last. Parameters the header documents as
// "Reference in which to return" a single value are results:
// DeviceGetCount() (uint32, error); buffers (a name, a UUID), arrays sized
// by a count parameter, and versioned structs whose version field the
// caller sets (MemoryV2) stay pointers, as in C.
//
// The header's macros select ABI revisions, and the plain names bind them:
// Init calls nvmlInit_v2, DeviceGetCount nvmlDeviceGetCount_v2,
// DeviceGetHandleByIndex nvmlDeviceGetHandleByIndex_v2, DeviceGetPciInfo
// nvmlDeviceGetPciInfo_v3 (InitV2 and so on are aliases). Revisions no
// macro selects keep their names (DeviceGetMemoryInfoV2 is
// nvmlDeviceGetMemoryInfo_v2, beside DeviceGetMemoryInfo).
//
// A failed call is an *Error whose message is nvmlErrorString's;
// errors.Is(err, ErrorDriverNotLoaded) matches by code. A function the
// loaded library lacks returns a *MissingFunctionError naming the driver
// version that has it (NVML numbers itself by the driver's version:
// "needs version 560 or newer").
//
// Call Init before anything else but ErrorString and SystemGetNVMLVersion,
// and Shutdown as often as Init: NVML counts them. Without a driver, Init
// fails with ErrorDriverNotLoaded (Debian's libnvidia-ml1, which CI
// installs, loads anywhere and says so).
//
// The library (libnvidia-ml.so.1) is found and loaded by package pathfinder
// on first use, the system's first since it must match the kernel module;
// it is opened with dlopen, never linked.
package nvml

//go:generate go run ../../internal/bindgen -lib nvml

import "github.com/cudago/cudago/internal/dl"

// Error is a failed NVML call; errors.Is(err, ErrorNotSupported) matches
// by code.
type Error = dl.Error[Return]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Return) error {
	// nvmlErrorString needs no nvmlInit.
	return dl.Check("nvml", procs.Proc(i).Name, r, Success, ErrorString)
}
