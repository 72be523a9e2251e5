package nvml

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/internal/version"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of nvml.h is bound: 325 in CUDA
// 12.4's header (counted with gcc -E, which leaves out the unversioned
// declarations under NVML_NO_UNVERSIONED_FUNC_DEFS) and
// nvmlSystemGetDriverBranch of extra/nvml_560.h.
func TestCount(t *testing.T) {
	if procs.Len() != 326 {
		t.Errorf("%d entry points, want 326", procs.Len())
	}
	// nvmlReturn_t: 31 codes, each with the header's explanation.
	if n := bindtest.Explained[Return](t, "nvmlReturn_t", 1000); n != 31 || ErrorUnknown != 999 {
		t.Errorf("Return has %d codes (NVML_ERROR_UNKNOWN %d), want 31 (999)", n, ErrorUnknown)
	}
}

// TestRevisions checks that the plain names bind the revisions nvml.h's
// macros select, resolved to those symbols and not to the older ones the
// library still exports under the plain name (nvmlInit is the NVML 4
// revision, which initializes every GPU).
func TestRevisions(t *testing.T) {
	lib, _ := bindtest.Load(t, pathfinder.NVML)
	for name, want := range map[string]string{
		"nvmlInit":                   "nvmlInit_v2",
		"nvmlDeviceGetCount":         "nvmlDeviceGetCount_v2",
		"nvmlDeviceGetHandleByIndex": "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetPciInfo":       "nvmlDeviceGetPciInfo_v3",
	} {
		i := procs.Index(name)
		if i < 0 {
			t.Errorf("%s: not bound", name)
			continue
		}
		got, err := procs.Get(i)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		sym, err := lib.Symbol(want)
		if err != nil {
			t.Fatal(err)
		}
		old, err := lib.Symbol(name)
		if err != nil {
			t.Fatalf("%s: the library no longer exports the old revision: %v", name, err)
		}
		if got != sym || got == old {
			t.Errorf("%s resolved to %p; %s is %p, %s %p", name, got, want, sym, name, old)
		}
	}
	// Revisions no macro selects keep their own names.
	bindtest.Names(t, "Functions", Functions, map[string]string{
		"nvmlDeviceGetMemoryInfo":           "DeviceGetMemoryInfo",
		"nvmlDeviceGetMemoryInfo_v2":        "DeviceGetMemoryInfoV2",
		"nvmlSystemGetCudaDriverVersion":    "SystemGetCudaDriverVersion",
		"nvmlSystemGetCudaDriverVersion_v2": "SystemGetCudaDriverVersionV2",
		"nvmlInit_v2":                       "InitV2",
		"nvmlDeviceGetPciInfo_v3":           "DeviceGetPciInfoV3",
	})
}

// TestEntryPoints resolves every function in the loaded NVML: a wrong
// symbol name fails here. Debian's libnvidia-ml1 (550.163.01) has every
// function of the 12.4 header, and not nvmlSystemGetDriverBranch (560),
// which returns a *MissingFunctionError naming that version.
func TestEntryPoints(t *testing.T) {
	_, have := bindtest.Load(t, pathfinder.NVML)
	if n := bindtest.Resolves(t, pathfinder.NVML, procs); n < 325 && !version.Less(have, "550") {
		t.Errorf("only %d of 326 functions found in NVML %s", n, have)
	}
	if _, err := procs.Get(procs.Index("nvmlSystemGetDriverBranch")); err != nil {
		var missing *MissingFunctionError
		info := SystemDriverBranchInfo{Version: uint32(unsafe.Sizeof(SystemDriverBranchInfo{})) | 1<<24}
		if err := SystemGetDriverBranch(&info, uint32(len(info.Branch))); !errors.As(err, &missing) || missing.Need != "560" {
			t.Errorf("SystemGetDriverBranch = %v (%T), want a *MissingFunctionError needing 560", err, err)
		}
		t.Logf("without 560: %v", err)
	}
}

// TestWithoutDriver: without an NVIDIA driver (CI, with Debian's
// libnvidia-ml1), nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED and
// nvmlErrorString's message; calls that need it say it is missing.
func TestWithoutDriver(t *testing.T) {
	bindtest.Load(t, pathfinder.NVML)
	if msg, err := ErrorString(ErrorDriverNotLoaded); err != nil || msg != "Driver Not Loaded" {
		t.Errorf("ErrorString(ErrorDriverNotLoaded) = %q, %v", msg, err)
	}
	err := Init()
	if err == nil {
		defer Shutdown()
		n, err := DeviceGetCount()
		t.Logf("a driver is loaded: %d GPUs, %v", n, err)
		if err != nil {
			t.Error(err)
		}
		return
	}
	if testenv.OnGPUMachine() {
		t.Fatalf("CUDAGO_REQUIRE_GPU=1 but nvmlInit failed: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorDriverNotLoaded || e.Func != "nvmlInit" ||
		err.Error() != "nvml: nvmlInit: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded)" {
		t.Fatalf("Init without a driver = %v (%T), want NVML_ERROR_DRIVER_NOT_LOADED", err, err)
	}
	if _, err := DeviceGetCount(); !errors.Is(err, ErrorUninitialized) {
		t.Errorf("DeviceGetCount after a failed Init = %v, want NVML_ERROR_UNINITIALIZED", err)
	}
}
