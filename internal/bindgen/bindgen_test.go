package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/cudaheaders"
	"github.com/cudago/cudago/internal/version"
)

// TestGeneratedUpToDate regenerates every bindings package into a temporary
// folder and requires the committed files to be byte-identical: the
// generator is deterministic and nobody edited its output by hand. A
// library whose headers are not found skips (internal/cudaheaders): the
// local install's 12.4 headers regenerate nvvm and nvml.
func TestGeneratedUpToDate(t *testing.T) {
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			headers := headersFor(t, name)
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
					t.Errorf("%s differs from the generator's output from %s: run go generate ./bindings/..., unless these are not the headers it was generated from", committed, headerPlaces(headers, cfg))
				}
			}
		})
	}
}

// headersFor returns the headers that generating the libraries reads, or
// ends t: it skips, naming what is missing, unless CUDAGO_CUDA_HEADERS is
// set (CI), where it fails.
func headersFor(t *testing.T, libs ...string) *cudaheaders.Set {
	t.Helper()
	var need []cudaheaders.Header
	for _, l := range libs {
		cfg, ok := configs[l]
		if !ok {
			t.Fatalf("no library %q", l)
		}
		need = append(need, cfg.needs()...)
	}
	return cudaheaders.Require(t, need...)
}

// headerPlaces says where cfg's headers were read from.
func headerPlaces(hs *cudaheaders.Set, cfg *libConfig) string {
	var out []string
	for _, h := range cfg.needs() {
		d, _ := hs.Dir(h.Version, h.File)
		out = append(out, filepath.Join(d, h.File))
	}
	return strings.Join(out, ", ")
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
		"Reference in which to return it":       true, // nvml.h
		"Reference in which to provide a size":  false,
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

// TestHeaderVersions checks that every configured header version parses,
// and that the oldest one is found by number: 12.10 is newer than 12.4,
// which a float compare got wrong.
func TestHeaderVersions(t *testing.T) {
	for name, cfg := range configs {
		for _, h := range append([]header{cfg.primary}, cfg.others...) {
			if _, err := version.Parse(h.version); err != nil {
				t.Errorf("%s: header %s: %v", name, h.file, err)
			}
		}
	}
	m := &model{cfg: &libConfig{
		primary: header{"13.0", "x.h", false},
		others:  []header{{"12.10", "x.h", false}, {"12.4", "x.h", false}, {"12.2", "x_extra.h", true}},
	}}
	if got := m.oldest(); got != "12.4" {
		t.Errorf("oldest of 13.0, 12.10, 12.4 (and extra 12.2) = %q, want 12.4", got)
	}
	m.cfg.others = m.cfg.others[:1]
	if got := m.oldest(); got != "12.10" {
		t.Errorf("oldest of 13.0, 12.10 = %q, want 12.10", got)
	}
}

// containsAll fails t for each of wants that text, what t describes ("the
// Go file"), lacks.
func containsAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", what, want)
		}
	}
}
