package main

import (
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/layoutcheck"
)

// TestNVMLModel checks what nvml.h needs of the generator: the revisions
// its macros select bind under the plain names and the others keep their
// own (macroRevisions), the docs of functions declared under another's
// comment or after a /** @} */ (groupDocs, groupMarker), arrays counted by
// a pointer and versioned structs stay pointers, and the configured
// overrides apply.
func TestNVMLModel(t *testing.T) {
	headers := layoutcheck.Headers(t)
	m, err := buildModel(configs["nvml"], headers)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*funcDef{}
	for _, f := range m.funcs {
		funcs[f.cname] = f
	}
	for name, want := range map[string]string{
		"nvmlInit":                          "Init [nvmlInit_v2] 550",
		"nvmlDeviceGetPciInfo":              "DeviceGetPciInfo [nvmlDeviceGetPciInfo_v3] 550",
		"nvmlDeviceGetMemoryInfo":           "DeviceGetMemoryInfo [nvmlDeviceGetMemoryInfo] 550",
		"nvmlDeviceGetMemoryInfo_v2":        "DeviceGetMemoryInfoV2 [nvmlDeviceGetMemoryInfo_v2] 550",
		"nvmlSystemGetCudaDriverVersion_v2": "SystemGetCudaDriverVersionV2 [nvmlSystemGetCudaDriverVersion_v2] 550",
		"nvmlSystemGetDriverBranch":         "SystemGetDriverBranch [nvmlSystemGetDriverBranch] 560",
	} {
		f := funcs[name]
		if f == nil {
			t.Errorf("%s: not generated", name)
			continue
		}
		if got := f.goName + " [" + strings.Join(f.syms, " ") + "] " + f.since; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if funcs["nvmlInit_v2"] != nil || funcs["nvmlDeviceGetCount_v2"] != nil {
		t.Error("a selected revision is generated twice")
	}
	for name, prefix := range map[string]string{
		// Declared on the line after nvmlDeviceGetMemoryInfo, under its doc.
		"nvmlDeviceGetMemoryInfo_v2": "Retrieves the amount of used, free, reserved and total memory",
		// /** @} */ between the doc and the declaration.
		"nvmlDeviceGetTopologyCommonAncestor": "Retrieve the common ancestor for two devices",
	} {
		if f := funcs[name]; f == nil || !strings.HasPrefix(f.doc, prefix) {
			t.Errorf("%s: doc does not start with %q", name, prefix)
		}
	}
	outs := func(name string) string {
		var o []string
		for _, p := range funcs[name].params {
			if p.out {
				o = append(o, p.cname)
			}
		}
		return strings.Join(o, " ")
	}
	for name, want := range map[string]string{
		"nvmlDeviceGetCount":                           "deviceCount",
		"nvmlDeviceGetCudaComputeCapability":           "major minor",
		"nvmlDeviceGetTopologyCommonAncestor":          "pathInfo", // outParams
		"nvmlDeviceGetMemoryInfo":                      "memory",
		"nvmlDeviceGetMemoryInfo_v2":                   "", // nvmlMemory_v2_t: the caller sets version
		"nvmlDeviceGetComputeRunningProcesses":         "", // infos: an array of *infoCount
		"nvmlDeviceGetGpuInstancePossiblePlacements":   "", // placements, counted by count
		"nvmlDeviceGetMemoryErrorCounter":              "count",
		"nvmlDeviceGetConfComputeGpuAttestationReport": "", // outParams: false (the nonce is read)
		"nvmlDeviceGetName":                            "", // a buffer
	} {
		if funcs[name] == nil {
			t.Errorf("%s: not generated", name)
		} else if got := outs(name); got != want {
			t.Errorf("%s: outputs %q, want %q", name, got, want)
		}
	}
}

func TestGroupMarker(t *testing.T) {
	for l, want := range map[string]bool{
		"/** @} */": true, "  /** @{ */": true, "/* @} */": true,
		"/** @} END */": false, "/** Returns @} */": false, "*/": false,
	} {
		if got := groupMarker(l); got != want {
			t.Errorf("groupMarker(%q) = %v, want %v", l, got, want)
		}
	}
}
