package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cudago/cudago/internal/testenv"
)

// TestGeneratedUpToDate regenerates every bindings package into a temporary
// folder and requires the committed files to be byte-identical: the
// generator is deterministic and nobody edited its output by hand.
func TestGeneratedUpToDate(t *testing.T) {
	headers, err := findHeaders()
	if err != nil {
		if testenv.OnGPUMachine() {
			t.Skipf("%v: shared/ is not carried to the GPU machine; this test runs in CI", err)
		}
		t.Fatal(err)
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			if err := generate(cfg, headers, out); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(out, "*"))
			if len(files) < 4 {
				t.Fatalf("generated only %d files", len(files))
			}
			for _, f := range files {
				want, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				committed := filepath.Join("..", "..", "bindings", name, filepath.Base(f))
				got, err := os.ReadFile(committed)
				if err != nil {
					t.Errorf("%s: %v (run go generate ./bindings/...)", committed, err)
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the generator's output: run go generate ./bindings/...", committed)
				}
			}
		})
	}
}

func TestExportName(t *testing.T) {
	for in, want := range map[string]string{
		"MEMORYTYPE_HOST":     "MemorytypeHost",
		"ARRAY3D_DESCRIPTOR":  "Array3DDescriptor",
		"MEMCPY2D":            "Memcpy2D",
		"launchConfig":        "LaunchConfig",
		"ERROR_INVALID_VALUE": "ErrorInvalidValue",
		"cuCtxCreate_v4":      "CuCtxCreateV4",
		"P2P_TOKENS":          "P2PTokens",
	} {
		if got := exportName(in); got != want {
			t.Errorf("exportName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersioned(t *testing.T) {
	for in, want := range map[string]string{
		"cuMemAlloc_v2":   "cuMemAlloc",
		"cuMemAlloc":      "cuMemAlloc",
		"cuCtxCreate_v12": "cuCtxCreate",
		"cu_v":            "cu_v",
		"cuGraph_vx":      "cuGraph_vx",
	} {
		if got := versioned(in); got != want {
			t.Errorf("versioned(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLooksOut(t *testing.T) {
	for doc, want := range map[string]bool{
		"Returned device pointer":               true,
		"[out] Address of nvJitLink handle.":    true,
		"Returns the CUDA driver version":       true,
		"[out] sorted array of supported archs": false,
		"Pointer to return the nodes":           false,
		"Optional location to store a pointer":  false,
		"Device to get identifier string for":   false,
	} {
		if got := looksOut(doc); got != want {
			t.Errorf("looksOut(%q) = %v, want %v", doc, got, want)
		}
	}
}

func TestCountStem(t *testing.T) {
	for in, want := range map[string]string{
		"numOptions":   "Options",
		"nHeaders":     "Headers",
		"optionsCount": "options",
		"num_count":    "num",
		"number":       "",
		"n":            "",
		"numbers":      "",
		"size":         "",
	} {
		if got := countStem(in); got != want {
			t.Errorf("countStem(%q) = %q, want %q", in, got, want)
		}
	}
}
