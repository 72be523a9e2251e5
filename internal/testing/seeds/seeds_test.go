package seeds

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cudago/cudago/internal/fsutil"
)

// originEnv names the folder the copy came from; CI sets it.
const originEnv = "CUDAGO_SEEDS_ORIGIN"

// TestCopyMatchesOrigin requires testdata/seeds to hold exactly the files
// of the folder it was copied from, byte for byte, so that a change there
// is not missed here.
func TestCopyMatchesOrigin(t *testing.T) {
	origin := os.Getenv(originEnv)
	if origin == "" {
		d, err := fsutil.FindShared("seeds", "README.md")
		if err != nil {
			t.Skipf("%s unset and %v: the copy is not compared (CI compares it)", originEnv, err)
		}
		origin = d
	}
	copyDir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	want, err := files(origin)
	if err != nil {
		t.Fatalf("%s: %v", originEnv, err)
	}
	got, err := files(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatalf("%s holds no files", origin)
	}
	for name, b := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s is missing from %s", name, copyDir)
		case !bytes.Equal(g, b):
			t.Errorf("%s differs from %s", filepath.Join(copyDir, name), filepath.Join(origin, name))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is not in %s", filepath.Join(copyDir, name), origin)
		}
	}
	if t.Failed() {
		t.Log("copy it again: see internal/testing/seeds/testdata/README.md")
	}
	t.Logf("%d files compared with %s", len(want), origin)
}

// files reads the regular files of dir (it has no subfolders).
func files(dir string) (map[string][]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// TestLines checks what the coverage tests read: the driver's function
// list, one name a line, and the JIT document's sections.
func TestLines(t *testing.T) {
	fns, err := Lines("driver-functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 419 || !slices.Contains(fns, "cuMemAlloc") {
		t.Errorf("driver-functions.txt: %d names (want 419, cuMemAlloc among them)", len(fns))
	}
	j := ParseJIT(t)
	if len(j.NVVMFuncs) == 0 || len(j.JITLinkFuncs) == 0 || len(j.Enums) == 0 {
		t.Errorf("jit-compilation-nvvm-nvjitlink.txt: %d NVVM functions, %d nvJitLink functions, %d enum headings",
			len(j.NVVMFuncs), len(j.JITLinkFuncs), len(j.Enums))
	}
}
