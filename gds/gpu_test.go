package gds

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cudago/cudago/core"
)

// TestGPUDriver: the driver opens (in compatibility mode without
// nvidia-fs, as TestMain's configuration allows) and says what it does.
func TestGPUDriver(t *testing.T) {
	gpu(t)
	info, err := Driver()
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode == ModeUnknown || info.Version == "" && info.Props.Nvfs.MaxDirectIoSize == 0 {
		t.Errorf("Driver: %+v", info)
	}
	r := Check(true)
	if !r.DriverOpened || r.Mode != info.Mode {
		t.Errorf("Check(true): %+v", r)
	}
	t.Logf("libcufile %s, mode %v (%s), nvidia-fs %q, allow_compat_mode %t, max direct I/O %d bytes, stream API %t %s",
		info.Version, info.Mode, r.Summary, info.NvidiaFS, info.AllowCompat, info.MaxDirectIOSize, drv.async, drv.noAsync)
}

// TestGPURoundTrip: files of 1 byte, 4 KiB - 1 and 1 GiB + 3 bytes read
// into GPU memory and written back to new files, synchronously and on a
// stream, byte for byte.
func TestGPURoundTrip(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	sizes := []int{1, 4095, 1<<30 + 3}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for i, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data := randomBytes(n, uint64(i))
			in := filepath.Join(dir, "in")
			if err := os.WriteFile(in, data, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(in)
			for _, async := range []bool{false, true} {
				how := map[bool]string{false: "ReadAt", true: "ReadAtAsync"}[async]
				f, err := Open(in, os.O_RDONLY, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				buf := alloc(t, dev, s, n)
				transferAll(t, how, f, opRead, async, s, buf)
				sameBytes(t, how, readBack(t, buf), data)

				out := filepath.Join(dir, "out")
				g, err := Open(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600, nil)
				if err != nil {
					t.Fatal(err)
				}
				transferAll(t, "write after "+how, g, opWrite, async, s, buf)
				back, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				sameBytes(t, "written after "+how, back, data)
				os.Remove(out)
				buf.Close()
				t.Logf("%s and back: %d bytes, O_DIRECT %t", how, n, f.Direct())
			}
		})
	}
}

// transferAll reads (opRead) or writes all of buf with f at offset 0,
// synchronously or queued on s and waited for, then closes f.
func transferAll(t *testing.T, how string, f *File, k opKind, async bool, s *core.Stream, buf *core.Buffer) {
	t.Helper()
	var got int
	var err error
	switch {
	case async:
		var p *Pending
		if k == opRead {
			p, err = f.ReadAtAsync(s, buf, 0)
		} else {
			p, err = f.WriteAtAsync(s, buf, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err = p.Wait()
	case k == opRead:
		got, err = f.ReadAt(buf, 0)
	default:
		got, err = f.WriteAt(buf, 0)
	}
	if err != nil || got != buf.Size() {
		t.Fatalf("%s: %d bytes, %v; want %d", how, got, err, buf.Size())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUOffsetsAndViews: unaligned file offsets into views at unaligned
// offsets of a buffer, both ways and on a stream; the bytes around stay.
func TestGPUOffsetsAndViews(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	data, f := inputFile(t, dir, 3*4096+123, 7, os.O_RDWR)
	const size = 10000
	buf := alloc(t, dev, s, size)
	if err := buf.Memset8(0xAB); err != nil {
		t.Fatal(err)
	}
	view := func(off, n int) *core.Buffer {
		v, err := buf.View(off, n)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := slices.Repeat([]byte{0xAB}, size)

	if n, err := f.ReadAt(view(13, 5000), 4097); n != 5000 || err != nil {
		t.Fatalf("ReadAt(view 13:5013, 4097): %d, %v", n, err)
	}
	copy(want[13:], data[4097:9097])
	p, err := f.ReadAtAsync(s, view(6000, 3001), 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Wait(); n != 3001 || err != nil {
		t.Fatalf("ReadAtAsync(view 6000:9001, 1): %d, %v", n, err)
	}
	copy(want[6000:], data[1:3002])
	sameBytes(t, "views after reads", readBack(t, buf), want)

	// Writes from views into a file of a known pattern.
	out := filepath.Join(dir, "out")
	if err := os.WriteFile(out, slices.Repeat([]byte{0x5A}, 20000), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := Open(out, os.O_RDWR, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if n, err := g.WriteAt(view(13, 5000), 777); n != 5000 || err != nil {
		t.Fatalf("WriteAt(view, 777): %d, %v", n, err)
	}
	p, err = g.WriteAtAsync(s, view(6001, 2999), 12345)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Wait(); n != 2999 || err != nil {
		t.Fatalf("WriteAtAsync(view, 12345): %d, %v", n, err)
	}
	wantFile := slices.Repeat([]byte{0x5A}, 20000)
	copy(wantFile[777:], want[13:5013])
	copy(wantFile[12345:], want[6001:9000])
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "file after writes from views", got, wantFile)
}

// TestGPUStreamOrder: a transfer on a stream runs after the work queued
// before it and before the work queued after it.
func TestGPUStreamOrder(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	data, f := inputFile(t, dir, 1<<20, 3, os.O_RDONLY)
	buf := alloc(t, dev, s, len(data))
	head, err := buf.View(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := buf.Memset8Async(s, 0xAB); err != nil { // before: overwritten by the read
			t.Fatal(err)
		}
		p, err := f.ReadAtAsync(s, buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := head.Memset8Async(s, 0xCD); err != nil { // after: overwrites the read
			t.Fatal(err)
		}
		if n, err := p.Wait(); n != len(data) || err != nil {
			t.Fatalf("Wait: %d, %v", n, err)
		}
		want := slices.Clone(data)
		copy(want, slices.Repeat([]byte{0xCD}, 10))
		sameBytes(t, "memset, read, memset on one stream", readBack(t, buf), want)
	}
}

// TestGPUEOF: reads past the end return what there is and io.EOF.
func TestGPUEOF(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	data, f := inputFile(t, dir, 100, 4, os.O_RDONLY)
	buf := alloc(t, dev, s, 4096)
	if n, err := f.ReadAt(buf, 0); n != 100 || err != io.EOF {
		t.Errorf("ReadAt of 4096 from a 100-byte file: %d, %v; want 100, io.EOF", n, err)
	}
	sameBytes(t, "short read", readBack(t, buf)[:100], data)
	if n, err := f.ReadAt(buf, 100); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at the end: %d, %v; want 0, io.EOF", n, err)
	}
	p, err := f.ReadAtAsync(s, buf, 50)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Wait(); n != 50 || err != io.EOF {
		t.Errorf("ReadAtAsync of 4096 at 50 of 100: %d, %v; want 50, io.EOF", n, err)
	}
	if !p.Done() {
		t.Error("Done after Wait is false")
	}
}

// TestGPURegister: a registered buffer serves transfers into it and its
// views, and its registration ends by Deregister, or by Close before the
// memory goes; overlapping ranges are refused.
func TestGPURegister(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	data, f := inputFile(t, dir, 1<<20, 5, os.O_RDONLY)
	buf, err := dev.Allocate(len(data), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := Register(buf); err != nil {
		t.Fatal(err)
	}
	if err := Register(buf); err != nil {
		t.Errorf("registering again: %v", err)
	}
	if r := registered(); len(r) != 1 || r[0] != (useKey{buf.Ptr(), buf.Size()}) {
		t.Fatalf("registered %v", r)
	}
	half, _ := buf.View(4096, 1<<19)
	if err := Register(half); err == nil {
		t.Error("registering a view of a registered buffer succeeded")
	}
	if n, err := f.ReadAt(half, 12345); n != 1<<19 || err != nil {
		t.Fatalf("ReadAt into a view of the registered buffer: %d, %v", n, err)
	}
	p, err := f.ReadAtAsync(s, buf, 0) // pending while Deregister waits
	if err != nil {
		t.Fatal(err)
	}
	if err := Deregister(buf); err != nil {
		t.Fatal(err)
	}
	waitedFor(t, "Deregister", p, buf, data)
	if r := registered(); len(r) != 0 {
		t.Fatalf("after Deregister: registered %v", r)
	}
	if err := Deregister(buf); err == nil {
		t.Error("Deregister of an unregistered buffer succeeded")
	}

	// Registered again, then closed with a transfer queued: Close waits
	// for it and ends the registration before the memory goes.
	if err := Register(buf); err != nil {
		t.Fatal(err)
	}
	if p, err = f.ReadAtAsync(s, buf, 0); err != nil {
		t.Fatal(err)
	}
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	if r := registered(); len(r) != 0 || !p.Done() {
		t.Fatalf("after Close: registered %v, transfer done %t", r, p.Done())
	}
	if n, err := p.Wait(); n != len(data) || err != nil {
		t.Fatalf("ReadAtAsync before Close: %d, %v", n, err)
	}
}

// TestGPUAutoRegister: with the policy on (as with GPUDirect), a buffer's
// second transfer registers it, and freeing it ends that.
func TestGPUAutoRegister(t *testing.T) {
	dev, s := gpu(t)
	autoRegister = func() bool { return true }
	defer func() { autoRegister = nil }()
	dir := dataDir(t)
	data, f := inputFile(t, dir, 1<<16, 6, os.O_RDONLY)
	buf, err := dev.Allocate(len(data), s)
	if err != nil {
		t.Fatal(err)
	}
	s.Sync()
	key := useKey{buf.Ptr(), buf.Size()}
	for i := range 3 {
		if n, err := f.ReadAt(buf, 0); n != len(data) || err != nil {
			t.Fatalf("ReadAt %d: %d, %v", i, n, err)
		}
		if got := slices.Contains(registered(), key); got != (i >= 1) {
			t.Errorf("after transfer %d: registered %t", i+1, got)
		}
	}
	sameBytes(t, "auto-registered buffer", readBack(t, buf), data)
	buf.Close()
	if slices.Contains(registered(), key) {
		t.Error("registered after Close")
	}
}

// TestGPUConcurrent: goroutines read ranges of one File into views of one
// buffer at once.
func TestGPUConcurrent(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	const parts, part = 16, 65536 + 7
	data, f := inputFile(t, dir, parts*part, 8, os.O_RDONLY)
	buf := alloc(t, dev, s, len(data))
	var wg sync.WaitGroup
	errs := make(chan error, parts)
	for i := range parts {
		wg.Go(func() {
			v, err := buf.View(i*part, part)
			if err == nil {
				var n int
				n, err = f.ReadAt(v, int64((parts-1-i)*part)) // reversed
				if err == nil && n != part {
					err = fmt.Errorf("part %d: %d bytes", i, n)
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := make([]byte, 0, len(data))
	for i := range parts {
		want = append(want, data[(parts-1-i)*part:(parts-i)*part]...)
	}
	sameBytes(t, "concurrent reads", readBack(t, buf), want)
}

// TestGPUCloseWaits: Close waits for the transfers queued on streams, and
// later calls say the File is closed.
func TestGPUCloseWaits(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	data, f := inputFile(t, dir, 8<<20, 9, os.O_RDONLY)
	buf := alloc(t, dev, s, len(data))
	p, err := f.ReadAtAsync(s, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitedFor(t, "Close", p, buf, data)
	if _, err := f.ReadAt(buf, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt after Close: %v, want os.ErrClosed", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
}

// TestGPUFileErrors: the os errors of opening, and a write to a file
// opened read-only, before cuFile.
func TestGPUFileErrors(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	if _, err := Open(filepath.Join(dir, "missing"), os.O_RDONLY, 0, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
	p := filepath.Join(dir, "x")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p, os.O_RDONLY, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := alloc(t, dev, s, 1)
	if _, err := f.WriteAt(buf, 0); err == nil {
		t.Error("WriteAt on a read-only file succeeded")
	}
	g, err := Open(p, os.O_RDONLY, 0, &Options{Buffered: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Direct() {
		t.Error("a Buffered file has O_DIRECT")
	}
	if n, err := g.ReadAt(buf, 0); n != 1 || err != nil {
		t.Errorf("ReadAt from a buffered file: %d, %v", n, err)
	}
}

// TestGPUZCloseDriver (last: it closes the driver the others share):
// CloseDriver refuses while Files are open, then closes, and the next
// use opens the driver again.
func TestGPUZCloseDriver(t *testing.T) {
	dev, s := gpu(t)
	dir := dataDir(t)
	p := filepath.Join(dir, "x")
	data := randomBytes(4096, 10)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p, os.O_RDONLY, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := alloc(t, dev, s, len(data))
	if err := Register(buf); err != nil {
		t.Fatal(err)
	}
	if err := CloseDriver(); err == nil {
		t.Error("CloseDriver with a File open succeeded")
	}
	f.Close()
	if err := CloseDriver(); err != nil {
		t.Fatal(err)
	}
	if len(registered()) != 0 {
		t.Error("registrations outlive CloseDriver")
	}
	f, err = Open(p, os.O_RDONLY, 0, nil)
	if err != nil {
		t.Fatalf("Open after CloseDriver: %v", err)
	}
	defer f.Close()
	if n, err := f.ReadAt(buf, 0); n != len(data) || err != nil {
		t.Fatalf("ReadAt after CloseDriver: %d, %v", n, err)
	}
	sameBytes(t, "after reopening the driver", readBack(t, buf), data)
}
