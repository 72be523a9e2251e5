package main

// NVML (nvml.h), the NVIDIA Management Library: the driver's monitoring
// library, libnvidia-ml.so.1. The shared headers have no nvml.h; it comes
// from the local install (scripts/setup-cuda.sh unpacks Debian's
// libnvidia-ml-dev, CUDA 12.4's header, which is the 550 drivers'), plus
// extra/nvml_560.h for the driver branch query of newer drivers.
//
// NVML numbers itself by the driver's version (libnvidia-ml.so.550.163.01),
// not CUDA's: libVersion gives the 12.4 header the version of its drivers,
// so a function's Since compares with what pathfinder reads from the
// library.
//
// The header's macros select ABI revisions (#define nvmlInit nvmlInit_v2):
// those bind under the plain name (Init calls nvmlInit_v2, InitV2 is an
// alias), while revisions no macro selects keep their own name
// (nvmlSystemGetCudaDriverVersion_v2 beside nvmlSystemGetCudaDriverVersion,
// nvmlDeviceGetMemoryInfo_v2 beside nvmlDeviceGetMemoryInfo): macroRevisions.
func init() {
	configs["nvml"] = &libConfig{
		name: "nvml", pathLib: "NVML",
		primary:        header{localVersion, "nvml.h", false},
		others:         []header{{"560", "nvml_560.h", true}},
		localHeaders:   true,
		libVersion:     "550",
		macroRevisions: true,
		groupDocs:      true,
		ownedFiles:     []string{"nvml.h", "nvml_560.h"},
		funcPrefix:     []string{"nvml"},
		typePrefix:     []string{"nvml"},
		constPref:      []string{"NVML_"},
		resultType:     "nvmlReturn_t",
		outParams: map[string]bool{
			// "A nvmlGpuTopologyLevel_t that gives the path type": set by the call.
			"nvmlDeviceGetTopologyCommonAncestor.pathInfo": true,
			// The report's nonce is the caller's (nvmlConfComputeGpuAttestationReport_t).
			"nvmlDeviceGetConfComputeGpuAttestationReport.gpuAtstReport": false,
		},
		symbolCandidates: func(decl string) (string, []string) {
			return versioned(decl), []string{decl}
		},
	}
}
