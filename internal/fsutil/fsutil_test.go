package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	// A missing directory fails and leaves nothing behind; the error
	// names the path asked for, not the temporary file.
	missing := filepath.Join(dir, "no", "such")
	err = WriteAtomic(missing, []byte("x"), 0o600)
	if err == nil {
		t.Error("write into a missing directory succeeded")
	}
	checkNames(t, err, missing, syscall.ENOENT)
	// A path that is a directory cannot be replaced; the old one stays.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = WriteAtomic(sub, []byte("x"), 0o600)
	if err == nil {
		t.Error("renaming over a non-empty directory succeeded")
	}
	checkNames(t, err, sub, syscall.EISDIR)
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries after the failed write, want 2 (its temporary file removed)", len(ents))
	}
}

// checkNames checks that err is a *fs.PathError about path with the
// system's reason want, and mentions no temporary file.
func checkNames(t *testing.T, err error, path string, want syscall.Errno) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, want) {
		t.Errorf("error %v (%T), want a *fs.PathError for %s: %v", err, err, path, want)
	}
	if err != nil && strings.Contains(err.Error(), TempPrefix) {
		t.Errorf("error %q names the temporary file", err)
	}
}

// unwritableDir returns a directory this process cannot create files in:
// a read-only temporary one, or for root (whom modes do not stop) /sys.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir
	}
	f, err := os.OpenFile("/sys/cudago-probe", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
		os.Remove("/sys/cudago-probe")
		t.Skip("running as root, and /sys is writable")
	}
	return "/sys"
}

func TestWriteAtomicUnwritable(t *testing.T) {
	p := filepath.Join(unwritableDir(t), "out.bin")
	checkNames(t, WriteAtomic(p, []byte("x"), 0o600), p, syscall.EACCES)
}

// TestFindShared: shared/name is found in a folder above the working
// directory or beside one, by its probe file, and named when it is not.
func TestFindShared(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "work", "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if _, err := FindShared("seeds", "README.md"); err == nil || !strings.Contains(err.Error(), "no shared/seeds found above "+deep) {
		t.Errorf("without shared/: %v", err)
	}
	beside := filepath.Join(root, "work", "shared", "seeds")
	if err := os.MkdirAll(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindShared("seeds", "README.md"); err == nil {
		t.Error("a shared/seeds without its probe file was taken")
	}
	if err := os.WriteFile(filepath.Join(beside, "README.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FindShared("seeds", "README.md")
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(got); real != beside && got != beside {
		t.Errorf("FindShared = %s, want %s", got, beside)
	}
}
