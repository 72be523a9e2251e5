package cufft

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cufft.h and cufftXt.h is bound:
// 56 in the 13.0 and 12.4 headers together (counted with gcc -E from both).
func TestCount(t *testing.T) {
	if procs.Len() != 56 || len(Functions) != 56 {
		t.Errorf("%d entry points and %d names, want 56", procs.Len(), len(Functions))
	}
	// cufftResult: 18 codes in 13.0, from 0 to 20.
	if n := len(bindtest.Named[Result]("cufftResult", 64)); n != 18 {
		t.Errorf("Result has %d codes, want 18", n)
	}
	if Types["cufftComplex"] != "Complex" || Types["cudaDataType"] != "DataType" || Types["cudaLibXtDesc"] != "LibXtDesc" {
		t.Errorf("Types: cufftComplex %q, cudaDataType %q, cudaLibXtDesc %q", Types["cufftComplex"], Types["cudaDataType"], Types["cudaLibXtDesc"])
	}
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
	bindtest.Load(t, pathfinder.CuFFT)
	var h Handle
	err := Create(&h)
	if testenv.GPUError() == nil {
		if err != nil {
			t.Fatalf("Create with a GPU: %v", err)
		}
		if _, err := MakePlan1d(h, 1024, C2C, 1); err != nil {
			t.Fatalf("MakePlan1d: %v", err)
		}
		if err := Destroy(h); err != nil {
			t.Fatal(err)
		}
		return
	}
	var e *Error
	if !errors.Is(err, InternalError) && !errors.Is(err, SetupFailed) || !errors.As(err, &e) || e.Func != "cufftCreate" {
		t.Fatalf("Create without a GPU = %v (%T), want CUFFT_INTERNAL_ERROR or CUFFT_SETUP_FAILED", err, err)
	}
	t.Logf("without a GPU: %v", err)
	if _, err := MakePlan1d(h, 1024, C2C, 1); !errors.Is(err, InvalidPlan) {
		t.Fatalf("MakePlan1d on no plan = %v, want CUFFT_INVALID_PLAN", err)
	}
}
