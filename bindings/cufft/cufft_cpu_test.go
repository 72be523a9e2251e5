package cufft

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cufft.h and cufftXt.h is bound:
// 56 in the 13.0 and 12.4 headers together (counted with gcc -E from both).
func TestCount(t *testing.T) {
	bindtest.Count(t, procs, Functions, 56)
	// cufftResult: 18 codes in 13.0, from 0 to 20.
	bindtest.Codes[Result](t, "cufftResult", 64, 18)
	bindtest.Names(t, "Types", Types, map[string]string{"cufftComplex": "Complex", "cudaDataType": "DataType", "cudaLibXtDesc": "LibXtDesc"})
}

// TestEntryPoints resolves every function in the local cuFFT: a wrong
// symbol name fails here.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CuFFT, procs); n < 55 {
		t.Errorf("only %d of 56 functions found", n)
	}
}

// TestVersion checks that the library reports its version through the
// bindings, the same as pathfinder reads it.
func TestVersion(t *testing.T) {
	p := bindtest.Version(t, pathfinder.CuFFT, GetProperty, MajorVersion, MinorVersion, PatchLevel)
	var v int32
	if err := GetVersion(&v); err != nil || v != p[0]*1000+p[1]*100+p[2] || p[0] < 11 {
		t.Fatalf("GetVersion = %d, %v; GetProperty says %v", v, err, p)
	}
}

// TestCreateWithoutGPU: without a GPU, cufftCreate fails with one of its
// documented codes for a library that cannot initialize
// (CUFFT_INTERNAL_ERROR from cuFFT 11.2, or CUFFT_SETUP_FAILED), not a
// crash, and the plan calls on the handle it did not make fail cleanly.
func TestCreateWithoutGPU(t *testing.T) {
	h, err := bindtest.Create(t, pathfinder.CuFFT, Create, func(h Handle) {
		if _, err := MakePlan1d(h, 1024, C2C, 1); err != nil {
			t.Fatalf("MakePlan1d: %v", err)
		}
	}, Destroy)
	if err == nil {
		return // with a GPU
	}
	bindtest.Failed(t, err, "cufftCreate", InternalError, SetupFailed)
	if _, err := MakePlan1d(h, 1024, C2C, 1); !errors.Is(err, InvalidPlan) {
		t.Fatalf("MakePlan1d on no plan = %v, want CUFFT_INVALID_PLAN", err)
	}
}
