package main

// NCCL (nccl.h), versioned apart from CUDA: the 13.0 folder holds NCCL
// 2.28.3's header, the local install (scripts/setup-cuda.sh) Debian's
// 2.22.3, whose functions need no newer library. NCCL_MAJOR, _MINOR and
// _PATCH give each header's version; since gives the releases between
// (from src/nccl.h.in at NCCL's release tags).
//
// The header documents no parameter directions: outParams names the
// pointers each call writes one value through, so that they are results.
// ncclCommInitAll's comm is an array of ndev handles, and the sim info of
// ncclGroupSimulateEnd is read and written: both stay pointers.
func init() {
	configs["nccl"] = &libConfig{
		name: "nccl", pathLib: "NCCL",
		primary:      header{"13.0", "nccl.h", false},
		others:       []header{{localVersion, "nccl.h", false}},
		localHeaders: true,
		verMacro:     "NCCL",
		ownedFiles:   []string{"nccl.h"},
		funcPrefix:   []string{"nccl"},
		typePrefix:   []string{"nccl"},
		constPref:    []string{"NCCL_", "nccl"},
		resultType:   "ncclResult_t",
		foreign:      runtimeHandles,
		rename:       map[string]string{"ncclResult_t": "Result"},
		skipPrefix:   []string{"pnccl"},
		since: map[string]string{
			"ncclCommInitRankScalable": "2.23.4",
			"ncclResetDebugInit":       "2.24.3",
			"ncclCommShrink":           "2.27.3",
			"ncclCommWindowRegister":   "2.27.3",
			"ncclCommWindowDeregister": "2.27.3",
		},
		outParams: map[string]bool{
			"ncclGetVersion.version":           true,
			"ncclGetUniqueId.uniqueId":         true,
			"ncclMemAlloc.ptr":                 true,
			"ncclCommInitRank.comm":            true,
			"ncclCommInitRankConfig.comm":      true,
			"ncclCommInitRankScalable.newcomm": true,
			"ncclCommSplit.newcomm":            true,
			"ncclCommShrink.newcomm":           true,
			"ncclCommGetAsyncError.asyncError": true,
			"ncclCommCount.count":              true,
			"ncclCommCuDevice.device":          true,
			"ncclCommUserRank.rank":            true,
			"ncclCommRegister.handle":          true,
			"ncclCommWindowRegister.win":       true,
			"ncclRedOpCreatePreMulSum.op":      true,
		},
		symbolCandidates: plainSymbol,
	}
}
