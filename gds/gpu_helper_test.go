package gds

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/libtest"
	"github.com/cudago/cudago/pathfinder"
)

// gpu returns device 0 and a new non-blocking stream, synchronized and
// closed when the test ends; it skips without a GPU (fails with
// CUDAGO_REQUIRE_GPU=1).
func gpu(t testing.TB) (*core.Device, *core.Stream) {
	t.Helper()
	s := libtest.SyncedStream(t, core.StreamOptions{NonBlocking: true})
	bindtest.Load(t, pathfinder.CuFile) // a GPU machine without libcufile skips
	return s.Device(), s
}

// alloc allocates n bytes on s, ready for synchronous transfers (which do
// not wait for streams), and frees them when the test ends.
func alloc(t testing.TB, d *core.Device, s *core.Stream, n int) *core.Buffer {
	t.Helper()
	b, err := d.Allocate(n, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// randomBytes are n reproducible random bytes.
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	rand.NewChaCha8(s).Read(b)
	return b
}

// sameBytes fails the test unless got is want, naming the first byte that
// differs.
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: byte %d of %d is %#02x, want %#02x", what, i, len(got), got[i], want[i])
		}
	}
}

// readBack copies a buffer's bytes to the host.
func readBack(t testing.TB, b *core.Buffer) []byte {
	t.Helper()
	return libtest.Download[byte](t, b, b.Size())
}

// inputFile writes n random bytes (from seed) to the file "in" of dir and
// opens it with flag; the File is closed when the test ends.
func inputFile(t testing.TB, dir string, n int, seed uint64, flag int) ([]byte, *File) {
	t.Helper()
	data := randomBytes(n, seed)
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(in, flag, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return data, f
}

// dataDir returns an empty folder, removed when the test ends, on a file
// system where cuFile reads files: the first of CUDAGO_GDS_DIR, the
// temporary folder and the package's folder (on the GPU machine's disk)
// where a probe file reads back through gds. cuFile refuses some file
// systems even in compatibility mode, and /tmp may be one (tmpfs).
func dataDir(t testing.TB) string {
	t.Helper()
	dirChoice.once.Do(chooseDataDir)
	if dirChoice.err != nil {
		if ue := (*UdevError)(nil); errors.As(dirChoice.err, &ue) {
			// The machine, not the package: no transfer can be tested here
			// (scripts/gpu/gds-udev.sh prepares the GPU machine).
			t.Skipf("cuFile registers no file here, for want of a udev record (run scripts/gpu/gds-udev.sh as root, or set CUDAGO_GDS_DIR): %v", dirChoice.err)
		}
		t.Fatal(dirChoice.err)
	}
	t.Log(dirChoice.log)
	d, err := os.MkdirTemp(dirChoice.parent, "gds-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

var dirChoice struct {
	once   sync.Once
	parent string
	log    string
	err    error
}

func chooseDataDir() {
	var cands []string
	if d := os.Getenv("CUDAGO_GDS_DIR"); d != "" {
		cands = append(cands, d)
	}
	cands = append(cands, os.TempDir())
	if wd, err := os.Getwd(); err == nil {
		cands = append(cands, wd)
	}
	var tried []string
	var lastErr error
	for _, c := range cands {
		err := probeDir(c)
		if err == nil {
			dirChoice.parent = c
			dirChoice.log = fmt.Sprintf("test files under %s (%s)", c, describeDir(c))
			return
		}
		tried = append(tried, fmt.Sprintf("%s (%s): %v", c, describeDir(c), err))
		lastErr = err
	}
	dirChoice.err = fmt.Errorf("no folder where cuFile reads a file back (set CUDAGO_GDS_DIR): %s: %w", strings.Join(tried, "; "), lastErr)
}

// probeDir writes a small file in dir and reads it back through gds.
func probeDir(dir string) error {
	d, err := os.MkdirTemp(dir, "gds-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(d)
	want := randomBytes(5000, 1)
	p := filepath.Join(d, "probe")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		return err
	}
	dev, err := core.GetDevice(0)
	if err != nil {
		return err
	}
	b, err := dev.Allocate(len(want), nil)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := dev.Sync(); err != nil {
		return err
	}
	f, err := Open(p, os.O_RDONLY, 0, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	if n, err := f.ReadAt(b, 0); err != nil || n != len(want) {
		return fmt.Errorf("read %d bytes of %d: %v", n, len(want), err)
	}
	got := make([]byte, len(want))
	if err := core.CopyFromDevice(got, b); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("read back other bytes")
	}
	return nil
}

// describeDir names the file system of dir, its device and its udev record.
func describeDir(dir string) string {
	u := CheckUdev(dir)
	s := u.FSType
	if s == "" {
		s = "file system unknown"
	}
	if u.Source != "" {
		s += " on " + u.Source
	}
	switch {
	case u.Device == "":
		s += ", no block device"
	case u.OK:
		s += ", udev record " + u.Path
	default:
		s += ", no udev record " + u.Path
	}
	return s
}

// waitedFor checks p, a read of data into buf queued on a stream before
// the call what (Close, Deregister) returned, which had to wait for it:
// p is done, and read all of data.
func waitedFor(t *testing.T, what string, p *Pending, buf *core.Buffer, data []byte) {
	t.Helper()
	if !p.Done() {
		t.Errorf("%s returned before the transfer queued before it was done", what)
	}
	if n, err := p.Wait(); n != len(data) || err != nil {
		t.Fatalf("the transfer queued before %s: %d, %v", what, n, err)
	}
	sameBytes(t, "read before "+what, readBack(t, buf), data)
}
