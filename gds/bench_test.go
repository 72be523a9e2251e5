package gds

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/core"
)

// BenchmarkGDS moves one 1 GiB file between the disk and one 1 GiB device
// buffer, every way, in the same run (GB/s decimal, and MB/s from
// SetBytes). Reads, into the buffer:
//
//	read/gds            File.ReadAt, O_DIRECT: from the disk
//	read/gds-async      File.ReadAtAsync and Wait, O_DIRECT
//	read/gds-buffered   File.ReadAt of a file opened Buffered, page cache warm
//	read/slice-cold     os.File.ReadAt into a Go slice, then core.CopyToDevice,
//	                    the file dropped from the page cache before each read
//	                    (posix_fadvise DONTNEED): from the disk
//	read/slice-warm     the same, page cache warm: from memory
//	read/slice-direct   the same through O_DIRECT (a 4096-aligned slice): from the disk
//	read/pinned-warm    os.File.ReadAt into pinned memory, then CopyToDevice
//	                    (a direct DMA from pinned memory), page cache warm
//	read/pinned-direct  the same through O_DIRECT: from the disk
//
// Writes, from the buffer into a second 1 GiB file, overwritten in place;
// every iteration ends with fsync(2), so each row's time is until its
// bytes are on the disk device (the host beneath a VM may cache them):
//
//	write/gds            File.WriteAt, O_DIRECT
//	write/slice-sync     core.CopyFromDevice into a Go slice, os.File.WriteAt
//	                     through the page cache, fsync
//	write/slice-direct   the same through O_DIRECT
//	write/pinned-sync    CopyFromDevice into pinned memory, os.File.WriteAt, fsync
//	write/pinned-direct  the same through O_DIRECT
//
// Each way checks the bytes once, outside the timing: the buffer is zeroed
// before a read row and compared with the file after it; blocks of the
// output file are zeroed before a write row, and the whole file is
// compared after it. The files go where the GPU tests put theirs
// (dataDir: CUDAGO_GDS_DIR, the temporary folder or the package's).
func BenchmarkGDS(b *testing.B) {
	dev, s := gpu(b)
	const size = 1 << 30
	dir := dataDir(b)
	info, err := Driver()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("cuFile %s, %v mode", info.Version, info.Mode)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	data := randomBytes(size, 11)
	for _, p := range []string{in, out} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := dropCache(p); err != nil { // written back: O_DIRECT and dropped reads see the disk
			b.Fatal(err)
		}
	}
	buf := alloc(b, dev, s, size)
	host := alignedBytes(size)
	copy(host, data) // touched: no row pays the first faults
	pinnedBuf, err := core.NewPinnedMemoryResource(dev).Allocate(size, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pinnedBuf.Close() })
	pinned, err := pinnedBuf.Bytes()
	if err != nil {
		b.Fatal(err)
	}

	rate := func(b *testing.B) {
		b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	}
	// readRow runs one read way: the buffer is zeroed first and must hold
	// the file after.
	readRow := func(name string, body func(b *testing.B)) {
		b.Run("read/"+name, func(b *testing.B) {
			if err := buf.Memset8(0); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			body(b)
			rate(b)
			if got := readBack(b, buf); !bytes.Equal(got, data) {
				sameBytes(b, name, got, data)
			}
		})
	}
	// writeRow runs one write way: blocks of the output file are zeroed
	// first, and the whole file must be the data after.
	writeRow := func(name string, body func(b *testing.B)) {
		b.Run("write/"+name, func(b *testing.B) {
			if err := stamp(out, size); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			body(b)
			rate(b)
			got, err := os.ReadFile(out)
			if err != nil {
				b.Fatal(err)
			}
			sameBytes(b, name, got, data)
			if err := dropCache(out); err != nil {
				b.Fatal(err)
			}
		})
	}
	gdsFile := func(b *testing.B, name string, flag int, opts *Options) *File {
		f, err := Open(name, flag, 0, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	// osFile opens name for a row; with direct, through O_DIRECT, which
	// some file systems refuse (the row is skipped).
	osFile := func(b *testing.B, name string, flag int, direct bool) *os.File {
		if direct {
			flag |= syscall.O_DIRECT
		}
		f, err := os.OpenFile(name, flag, 0)
		if direct && errors.Is(err, syscall.EINVAL) {
			b.Skipf("the file system refuses O_DIRECT: %v", err)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	// full is nil for a whole transfer.
	full := func(n int, err error) error {
		if n != size || err != nil {
			return fmt.Errorf("%d bytes of %d: %v", n, size, err)
		}
		return nil
	}

	readRow("gds", func(b *testing.B) {
		f := gdsFile(b, in, os.O_RDONLY, nil)
		b.Logf("O_DIRECT %t", f.Direct())
		for b.Loop() {
			if err := full(f.ReadAt(buf, 0)); err != nil {
				b.Fatal(err)
			}
		}
	})
	readRow("gds-async", func(b *testing.B) {
		f := gdsFile(b, in, os.O_RDONLY, nil)
		for b.Loop() {
			p, err := f.ReadAtAsync(s, buf, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := full(p.Wait()); err != nil {
				b.Fatal(err)
			}
		}
	})
	readRow("gds-buffered", func(b *testing.B) {
		f := gdsFile(b, in, os.O_RDONLY, &Options{Buffered: true})
		if err := full(f.ReadAt(buf, 0)); err != nil { // warms the page cache
			b.Fatal(err)
		}
		for b.Loop() {
			if err := full(f.ReadAt(buf, 0)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// viaHost reads the file into mem, then copies mem to the buffer.
	viaHost := func(mem []byte, direct, warm, cold bool) func(b *testing.B) {
		return func(b *testing.B) {
			f := osFile(b, in, os.O_RDONLY, direct)
			if warm {
				if err := full(f.ReadAt(mem, 0)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if cold {
					b.StopTimer()
					if err := dropCache(in); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if err := full(f.ReadAt(mem, 0)); err != nil {
					b.Fatal(err)
				}
				if err := core.CopyToDevice(buf, mem); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	readRow("slice-cold", viaHost(host, false, false, true))
	readRow("slice-warm", viaHost(host, false, true, false))
	readRow("slice-direct", viaHost(host, true, false, false))
	readRow("pinned-warm", viaHost(pinned, false, true, false))
	readRow("pinned-direct", viaHost(pinned, true, false, false))

	if err := core.CopyToDevice(buf, data); err != nil { // whichever read rows ran
		b.Fatal(err)
	}
	writeRow("gds", func(b *testing.B) {
		f := gdsFile(b, out, os.O_WRONLY, nil)
		b.Logf("O_DIRECT %t", f.Direct())
		syncer := osFile(b, out, os.O_RDONLY, false) // fsync through any descriptor of the file
		for b.Loop() {
			if err := full(f.WriteAt(buf, 0)); err != nil {
				b.Fatal(err)
			}
			if err := syncer.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// viaHostWrite copies the buffer into mem, then writes mem to the file.
	viaHostWrite := func(mem []byte, direct bool) func(b *testing.B) {
		return func(b *testing.B) {
			f := osFile(b, out, os.O_WRONLY, direct)
			for b.Loop() {
				if err := core.CopyFromDevice(mem, buf); err != nil {
					b.Fatal(err)
				}
				if err := full(f.WriteAt(mem, 0)); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	writeRow("slice-sync", viaHostWrite(host, false))
	writeRow("slice-direct", viaHostWrite(host, true))
	writeRow("pinned-sync", viaHostWrite(pinned, false))
	writeRow("pinned-direct", viaHostWrite(pinned, true))
}

// alignedBytes returns n bytes of Go memory at a 4096-byte boundary, as
// O_DIRECT wants (the Go heap does not move objects).
func alignedBytes(n int) []byte {
	const align = 4096
	b := make([]byte, n+align)
	off := (align - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%align)) % align
	return b[off : off+n : off+n]
}

// stamp zeroes 256 blocks of 4096 bytes spread over the first size bytes
// of the file, writes them to the disk and drops the file from the page
// cache: a write row that leaves any of them is caught.
func stamp(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	zero := make([]byte, 4096)
	for i := range int64(256) {
		if _, err := f.WriteAt(zero, i*(size/256)+i%7*4096); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return dropCache(path)
}

// dropCache writes the file's pages back and drops them from the page
// cache (posix_fadvise DONTNEED, which needs no privilege), so that the
// next buffered read comes from the disk.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return e
	}
	return nil
}
