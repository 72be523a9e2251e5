package main

import (
	"fmt"
	"testing"

	"github.com/cudago/cudago/internal/testing/layoutcheck"
)

// TestMathABIStable compares every function that the math libraries'
// 12.4 and 13.0 headers both declare, as the runtime's generation does
// (abiCheck): none may differ in ABI, since those packages resolve by
// symbol name alone. A header update that changes one must give the
// package the runtime's treatment (abiCheck and a resolver).
func TestMathABIStable(t *testing.T) {
	headers := layoutcheck.Headers(t)
	for _, name := range []string{"curand", "cufft", "cublas", "cublaslt", "cusparse", "cusolver"} {
		cfg := *configs[name]
		cfg.abiCheck = true
		m, err := buildModel(&cfg, headers)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.abiSkipped) > 0 {
			t.Errorf("%s: 12.4 declarations with another ABI than 13.0's: %v", name, m.abiSkipped)
		}
		for _, f := range m.funcs {
			if f.procVersion != 0 {
				t.Errorf("%s: %s has another ABI in the 12.4 library", name, f.decl)
			}
		}
	}
}

// TestRuntimeABIRevisions checks the runtime's revisions against what the
// headers say: cudaMemAdvise (13.0's cudaMemLocation signature) falls back
// to 12.4's cudaMemAdvise_v2, cudaGetDeviceProperties (13.0's struct
// layout) has no fallback, and cudaMalloc is one ABI everywhere.
func TestRuntimeABIRevisions(t *testing.T) {
	headers := layoutcheck.Headers(t)
	m, err := buildModel(configs["runtime"], headers)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cudaMemAdvise":            "13000 [cudaMemAdvise cudaMemAdvise_v2] 12.4",
		"cudaGetDeviceProperties":  "13000 [cudaGetDeviceProperties] 13.0",
		"cudaMalloc":               "0 [cudaMalloc] 12.4",
		"cudaStreamGetCaptureInfo": "13000 [cudaStreamGetCaptureInfo cudaStreamGetCaptureInfo_v3] 12.4",
	}
	for _, f := range m.funcs {
		if w, ok := want[f.cname]; ok {
			if got := fmtProc(f); got != w {
				t.Errorf("%s: %s, want %s", f.cname, got, w)
			}
			delete(want, f.cname)
		}
	}
	if len(want) > 0 {
		t.Errorf("not generated: %v", want)
	}
}

func fmtProc(f *funcDef) string {
	return fmt.Sprintf("%d %v %s", f.procVersion, f.syms, f.since)
}
