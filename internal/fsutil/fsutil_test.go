package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(p, []byte("new contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new contents" {
		t.Fatalf("read %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("mode %v, want no group or other bits (perm 0600)", fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want 1 (no temporary file)", len(ents))
	}
	// A missing directory fails and leaves nothing behind.
	if err := WriteAtomic(filepath.Join(dir, "no", "such"), []byte("x"), 0o600); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	// A path that is a directory cannot be replaced; the old one stays.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(sub, []byte("x"), 0o600); err == nil {
		t.Error("renaming over a non-empty directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries after the failed write, want 2 (its temporary file removed)", len(ents))
	}
}
