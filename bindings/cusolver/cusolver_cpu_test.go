package cusolver

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cusolverDn.h, cusolverSp.h and
// cusolver_common.h is bound: 455 in the 13.0 and 12.4 headers together
// (counted with gcc -E from both), 14 of them only in 12.4's.
func TestCount(t *testing.T) {
	bindtest.Count(t, procs, Functions, 455)
	dn, sp := 0, 0
	for i := range procs.Len() {
		switch n := procs.Proc(i).Name; {
		case strings.HasPrefix(n, "cusolverDn"):
			dn++
		case strings.HasPrefix(n, "cusolverSp"):
			sp++
		}
	}
	if dn < 300 || sp < 60 || dn+sp != 453 {
		t.Errorf("%d cusolverDn and %d cusolverSp functions, want 453 together", dn, sp)
	}
	// cusolverStatus_t: 25 codes.
	bindtest.Codes[Status](t, "cusolverStatus_t", 64, 25)
	bindtest.Names(t, "Types", Types, map[string]string{"cublasFillMode_t": "FillMode", "cusparseMatDescr_t": "MatDescr", "cusolverDnHandle_t": "DnHandle", "cusolverSpHandle_t": "SpHandle"})
}

// TestEntryPoints resolves every function in the local cuSOLVER: a wrong
// symbol name fails here (Resolves fails on every function that is
// missing without a reason). cusolverDn.h declares the logger functions,
// but libcusolver 11.6.1 (CUDA 12.4) does not export them; the 64-bit
// legacy API (cusolverDnGetrf ...) is gone from CUDA 13's headers and
// library.
func TestEntryPoints(t *testing.T) {
	bindtest.Resolves(t, pathfinder.CuSOLVER, procs, "cusolverDnLoggerForceDisable", "cusolverDnLoggerOpenFile",
		"cusolverDnLoggerSetCallback", "cusolverDnLoggerSetFile", "cusolverDnLoggerSetLevel", "cusolverDnLoggerSetMask")
}

// TestVersion checks that the library reports its version through the
// bindings, the same as pathfinder reads it.
func TestVersion(t *testing.T) {
	p := bindtest.Version(t, pathfinder.CuSOLVER, GetProperty, MajorVersion, MinorVersion, PatchLevel)
	var v int32
	if err := GetVersion(&v); err != nil || v != p[0]*1000+p[1]*100+p[2] || p[0] < 11 {
		t.Fatalf("GetVersion = %d, %v; GetProperty says %v", v, err, p)
	}
}

// TestCreateWithoutGPU: without a GPU, cusolverDnCreate and
// cusolverSpCreate fail with CUSOLVER_STATUS_NOT_INITIALIZED ("the CUDA
// Runtime initialization failed"), not a crash.
func TestCreateWithoutGPU(t *testing.T) {
	_, errDn := bindtest.Create(t, pathfinder.CuSOLVER, DnCreate, nil, DnDestroy)
	_, errSp := bindtest.Create(t, pathfinder.CuSOLVER, SpCreate, nil, SpDestroy)
	if errDn == nil {
		return // with a GPU (Create checked that both succeeded)
	}
	bindtest.Failed(t, errDn, "cusolverDnCreate", StatusNotInitialized)
	bindtest.Failed(t, errSp, "cusolverSpCreate", StatusNotInitialized)
}

// TestIRSParams needs no GPU: the iterative-refinement parameters keep
// what is set on them.
func TestIRSParams(t *testing.T) {
	bindtest.Load(t, pathfinder.CuSOLVER)
	var p DnIRSParams
	if err := DnIRSParamsCreate(&p); err != nil {
		t.Fatal(err)
	}
	defer DnIRSParamsDestroy(p)
	if err := DnIRSParamsSetMaxIters(p, 17); err != nil {
		t.Fatal(err)
	}
	var n Int
	if err := DnIRSParamsGetMaxIters(p, &n); err != nil || n != 17 {
		t.Fatalf("GetMaxIters = %d, %v; want 17", n, err)
	}
	if err := DnIRSParamsSetMaxIters(p, 3); err != nil {
		t.Fatal(err)
	}
	if err := DnIRSParamsGetMaxIters(p, &n); err != nil || n != 3 {
		t.Fatalf("GetMaxIters = %d, %v; want 3", n, err)
	}
	if err := DnIRSParamsGetMaxIters(0, &n); !errors.Is(err, StatusIrsParamsNotInitialized) {
		t.Fatalf("GetMaxIters(NULL) = %v, want CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED", err)
	}
}
