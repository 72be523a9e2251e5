package curand

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of curand.h is bound: 29 in the 13.0
// and 12.4 headers together (counted with gcc -E from both).
func TestCount(t *testing.T) {
	bindtest.Count(t, procs, Functions, 29)
	// curandStatus: 13 codes, each with the header's explanation.
	if n := bindtest.Explained[Status](t, "curandStatus_t", 1000); n != 13 {
		t.Errorf("Status has %d codes, want 13", n)
	}
}

// TestEntryPoints resolves every function in the local cuRAND: a wrong
// symbol name fails here. curand.h declares the binomial generators, but
// libcurand 10.3.5 (CUDA 12.4) does not export them: they return a
// *MissingFunctionError.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CuRAND, procs, "curandGenerateBinomial", "curandGenerateBinomialMethod"); n < 27 {
		t.Errorf("only %d of 29 functions found", n)
	}
	if _, err := procs.Get(procs.Index("curandGenerateBinomial")); err != nil {
		// Not called when present: a NULL generator is not a documented input.
		var missing *MissingFunctionError
		if err := GenerateBinomial(0, nil, 0, 1, 0.5); !errors.As(err, &missing) || missing.Func != "curandGenerateBinomial" {
			t.Errorf("GenerateBinomial = %v (%T), want a *MissingFunctionError", err, err)
		}
	}
}

// TestVersion checks that the library reports its version through the
// bindings, the same as pathfinder reads it.
func TestVersion(t *testing.T) {
	p := bindtest.Version(t, pathfinder.CuRAND, GetProperty, MajorVersion, MinorVersion, PatchLevel)
	var v int32
	if err := GetVersion(&v); err != nil || v != p[0]*1000+p[1]*100+p[2] || p[0] != 10 {
		t.Fatalf("GetVersion = %d, %v; GetProperty says %v", v, err, p)
	}
	if err := GetProperty(LibraryPropertyType(7), &v); !errors.Is(err, StatusOutOfRange) {
		t.Errorf("GetProperty(7) = %v, want CURAND_STATUS_OUT_OF_RANGE", err)
	}
}

// TestCreateGeneratorWithoutGPU: without a GPU, creating a device
// generator fails with CURAND_STATUS_INITIALIZATION_FAILED ("if there was a
// problem setting up the GPU"), not a crash; a host generator still works.
func TestCreateGeneratorWithoutGPU(t *testing.T) {
	g, err := bindtest.Create(t, pathfinder.CuRAND, func(g *Generator) error { return CreateGenerator(g, RngPseudoDefault) }, nil, DestroyGenerator)
	if err == nil {
		return // with a GPU
	}
	if bindtest.Failed(t, err, "curandCreateGenerator", StatusInitializationFailed); g != 0 {
		t.Fatalf("CreateGenerator without a GPU = %v, handle %#x; want no handle", err, g)
	}

	if err := CreateGeneratorHost(&g, RngPseudoDefault); err != nil {
		t.Fatalf("CreateGeneratorHost: %v", err)
	}
	defer DestroyGenerator(g)
	if err := SetPseudoRandomGeneratorSeed(g, 1234); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 1000)
	if err := GenerateUniform(g, &out[0], uint64(len(out))); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, x := range out {
		if x <= 0 || x > 1 {
			t.Fatalf("uniform value %v outside (0, 1]", x)
		}
		sum += float64(x)
	}
	if mean := sum / float64(len(out)); mean < 0.45 || mean > 0.55 {
		t.Fatalf("mean of 1000 uniform values = %v, want about 0.5", mean)
	}
}
