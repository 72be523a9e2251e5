package fatbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listLines returns the "ELF file"/"PTX file" lines of cuobjdump -lelf -lptx
// output, dropping warnings and info messages.
func listLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ELF file ") || strings.HasPrefix(l, "PTX file ") {
			lines = append(lines, l)
		}
	}
	return lines
}

func ourList(t *testing.T, f *File, path string) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := f.List(&buf, path); err != nil {
		t.Fatal(err)
	}
	return listLines(buf.String())
}

// extractAll returns name -> Data() for every ELF and PTX entry, as cuobjdump
// -xelf all -xptx all would write them (later entries overwrite earlier ones
// of the same name).
func extractAll(t *testing.T, f *File, path string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for i, e := range f.Entries {
		if !e.Kind.IsELF() && !e.Kind.IsPTX() {
			continue
		}
		d, err := e.Data()
		if err != nil {
			t.Fatalf("%s: entry %d: %v", path, i, err)
		}
		m[f.ExtractName(i, path)] = d
	}
	return m
}

// readDir returns name -> content of the regular files of dir.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, de := range ents {
		if !de.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[de.Name()] = b
	}
	return m
}

// compareExtracted checks that got (our extraction) and want (cuobjdump's)
// hold the same files with identical bytes.
func compareExtracted(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); strings.Join(g, " ") != strings.Join(w, " ") {
		t.Errorf("%s: extracted names\n got %q\nwant %q", what, g, w)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs: got %d bytes (sha256 %s), cuobjdump wrote %d bytes (sha256 %s)",
				what, name, len(g), sum(g), len(w), sum(w))
		}
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// manifest formats name -> data as "name size sha256" lines, sorted.
func manifest(m map[string][]byte) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		h := sha256.Sum256(m[k])
		fmt.Fprintf(&sb, "%s %d %s\n", k, len(m[k]), hex.EncodeToString(h[:]))
	}
	return sb.String()
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: list differs\n got:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
