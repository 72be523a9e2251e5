package cublas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cublas_api.h (through
// cublas_v2.h) is bound: 517 that C sees in the 13.0 and 12.4 headers
// together (counted with gcc -E from both) and 22 that the header declares
// for C++ only, 232 of them ILP64 (_64) variants; and that the 314 _v2
// symbols are also bound under their explicit names.
func TestCount(t *testing.T) {
	ilp := 0
	for i := range procs.Len() {
		if strings.HasSuffix(procs.Proc(i).Name, "_64") {
			ilp++
		}
	}
	if procs.Len() != 539 || ilp != 232 || len(Functions) != 539+314 {
		t.Errorf("%d entry points (%d _64) and %d names, want 539 (232) and 853", procs.Len(), ilp, len(Functions))
	}
	bindtest.Names(t, "Functions", Functions, map[string]string{
		"cublasSgemm": "Sgemm", "cublasSgemm_v2": "SgemmV2", "cublasSgemm_64": "Sgemm64",
		"cublasSgemm_v2_64": "SgemmV264", "cublasGemmEx_64": "GemmEx64", "cublasHgemm": "Hgemm",
		"cublasCreate": "Create", "cublasCreate_v2": "CreateV2",
	})
	// The API name binds the _v2 symbol; the ILP64 one its _v2_64 symbol.
	for api, sym := range map[string]string{"cublasSgemm": "cublasSgemm_v2", "cublasSgemm_64": "cublasSgemm_v2_64", "cublasGemmEx_64": "cublasGemmEx_64"} {
		if i := procs.Index(api); i < 0 || fmt.Sprint(procs.Proc(i).Symbols) != "["+sym+"]" {
			t.Errorf("%s: symbols %v, want [%s]", api, procs.Proc(i).Symbols, sym)
		}
	}
	// cublasStatus_t: 10 codes.
	bindtest.Codes[Status](t, "cublasStatus_t", 64, 10)
	// library_types.h yields a clashing name to cuBLAS's own.
	if Types["cublasEmulationStrategy_t"] != "EmulationStrategy" || Types["cudaEmulationStrategy"] != "CudaEmulationStrategy" || Types["cudaDataType"] != "DataType" {
		t.Errorf("Types: %q %q %q", Types["cublasEmulationStrategy_t"], Types["cudaEmulationStrategy"], Types["cudaDataType"])
	}
}

// TestEntryPoints resolves every function in the local cuBLAS: a wrong
// symbol name (a _v2 or _64 mapping) fails here.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CuBLAS, procs); n < 500 {
		t.Errorf("only %d of %d functions found", n, procs.Len())
	}
}

// TestVersion checks that the library reports its version through the
// bindings (cublasGetVersion takes a NULL handle), the same as pathfinder
// reads it.
func TestVersion(t *testing.T) {
	p := bindtest.Version(t, pathfinder.CuBLAS, GetProperty, MajorVersion, MinorVersion, PatchLevel)
	var v int32
	if err := GetVersion(0, &v); err != nil || v != p[0]*10000+p[1]*100+p[2] || p[0] < 12 {
		t.Fatalf("GetVersion = %d, %v; GetProperty says %v", v, err, p)
	}
	rt, err := GetCudartVersion()
	if err != nil || rt < 12000 {
		t.Fatalf("GetCudartVersion = %d, %v", rt, err)
	}
	t.Logf("built with CUDA runtime %d", rt)
	s, err := GetStatusString(StatusNotInitialized)
	if err != nil || s != "the library was not initialized" {
		t.Errorf("GetStatusString = %q, %v", s, err)
	}
}

// TestCreateWithoutGPU: without a GPU, cublasCreate fails with
// CUBLAS_STATUS_NOT_INITIALIZED ("the CUDA Runtime initialization
// failed"), not a crash.
func TestCreateWithoutGPU(t *testing.T) {
	_, err := bindtest.Create(t, pathfinder.CuBLAS, Create, nil, Destroy)
	if err == nil {
		return // with a GPU
	}
	if e := bindtest.Failed(t, err, "cublasCreate", StatusNotInitialized); e.Message == "" {
		t.Fatalf("Create without a GPU = %v: no message", err)
	}
}
