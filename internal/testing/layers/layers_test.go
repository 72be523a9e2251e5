package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cudago/cudago"

// The layers, bottom first: a package may import its own layer's and
// those below (Go refuses cycles within one). A new package must be put
// in one of them.
var layers = []struct {
	name string
	pkgs []string // paths from the module root; "x/..." is x and everything under it
}{
	{"foundations", []string{"internal/version", "internal/fsutil", "internal/cudaheaders", "internal/enum", "lib", "fatbin", "rendezvous"}},
	{"library loading", []string{"pathfinder"}},
	{"runtime support", []string{"internal/dl", "internal/cgx"}},
	{"bindings", []string{"bindings/..."}},
	{"core", []string{"core"}},
	{"library handle", []string{"internal/libhandle"}},
	{"library packages", []string{"blas", "fft", "rng", "solver", "sparse", "nccl", "gds", "system", "checkpoint"}},
	{"programs", []string{"cmd/...", "examples/...", "bench/..."}},
}

const (
	helpers   = "internal/testing/..." // test helpers: imported by tests and by bench's programs only
	generator = "internal/bindgen"     // a program of its own, imported by nothing
)

// match reports whether the package at rel is pat ("x/..." is x and
// below).
func match(pat, rel string) bool {
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pat
}

// layerOf is the index of rel's layer, or -1.
func layerOf(rel string) int {
	for i, l := range layers {
		for _, p := range l.pkgs {
			if match(p, rel) {
				return i
			}
		}
	}
	return -1
}

// pkg is one package of the module as go list tells it.
type pkg struct {
	rel     string   // from the module root: "core"
	imports []string // the module's packages its non-test files import, likewise
}

// list asks go list for the module's packages.
func list(t *testing.T) []pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	own := func(paths string) []string {
		var rels []string
		for _, p := range strings.Fields(paths) {
			if rel, ok := strings.CutPrefix(p, module+"/"); ok {
				rels = append(rels, rel)
			}
		}
		return rels
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 2 {
			t.Fatalf("go list printed %q", sc.Text())
		}
		rel, ok := strings.CutPrefix(f[0], module+"/")
		if !ok {
			continue // the module root has no package
		}
		pkgs = append(pkgs, pkg{rel: rel, imports: own(f[1])})
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages of %s; want the whole module", len(pkgs), module)
	}
	return pkgs
}

// TestImportsRunDownward: no package imports one of a layer above its
// own; the test helpers are imported by tests (and bench's programs)
// only, and the generator by nothing.
func TestImportsRunDownward(t *testing.T) {
	for _, p := range list(t) {
		switch {
		case match(helpers, p.rel):
			// Beside the layers: a helper may import any package that
			// is not a program.
			for _, imp := range p.imports {
				if l := layerOf(imp); l == len(layers)-1 || imp == generator {
					t.Errorf("test helper %s imports %s, a program", p.rel, imp)
				}
			}
			continue
		case p.rel == generator:
			for _, imp := range p.imports {
				if l := layerOf(imp); l < 0 || l > 0 {
					t.Errorf("the generator %s imports %s: it may use the foundations only (%v)", p.rel, imp, layers[0].pkgs)
				}
			}
			continue
		}
		own := layerOf(p.rel)
		if own < 0 {
			t.Errorf("%s is in no layer: put it in one in internal/testing/layers (and in docs/design.md's picture)", p.rel)
			continue
		}
		for _, imp := range p.imports {
			switch l := layerOf(imp); {
			case match(helpers, imp):
				if !match("bench/...", p.rel) {
					t.Errorf("%s imports the test helper %s: only tests (and bench's programs) may", p.rel, imp)
				}
			case imp == generator:
				t.Errorf("%s imports the generator %s", p.rel, imp)
			case l > own:
				t.Errorf("%s (%s) imports %s, of the layer above it (%s)", p.rel, layers[own].name, imp, layers[l].name)
			}
		}
	}
}

// TestLayersExist: every pattern of the layers names packages, so that
// a package renamed or moved leaves no stale entry behind.
func TestLayersExist(t *testing.T) {
	pkgs := list(t)
	pats := []string{helpers, generator}
	for _, l := range layers {
		pats = append(pats, l.pkgs...)
	}
	for _, pat := range pats {
		found := false
		for _, p := range pkgs {
			found = found || match(pat, p.rel)
		}
		if !found {
			t.Errorf("no package matches %s: remove it from the layers", pat)
		}
	}
}
