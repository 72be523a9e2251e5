package gds

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cudago/cudago/core"
)

// BenchmarkGPURead reads one 1 GiB file into GPU memory, every way, in
// the same run (GB/s, and MB/s from SetBytes):
//
//	gds           File.ReadAt, O_DIRECT: from the storage
//	gds-async     File.ReadAtAsync and Wait, O_DIRECT
//	gds-buffered  File.ReadAt of a file opened Buffered: from the page cache
//	pread-cold    os.File.ReadAt into a Go slice, then core.CopyToDevice (the
//	              staged pageable path), with the file dropped from the page
//	              cache before each read: from the storage
//	pread-warm    the same from the page cache
//	pread-pinned  os.File.ReadAt into pinned memory, then Buffer.CopyFrom,
//	              from the page cache: the staged path at its best
//
// Each checks the bytes it read once, outside the timing.
func BenchmarkGPURead(b *testing.B) {
	dev, s := gpu(b)
	const size = 1 << 30
	path := filepath.Join(dataDir(b), "1GiB")
	data := randomBytes(size, 11)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := dropCache(path); err != nil { // written back: O_DIRECT and dropped reads see the storage
		b.Fatal(err)
	}
	buf := alloc(b, dev, s, size)
	host := make([]byte, size)
	check := func(b *testing.B) {
		b.StopTimer()
		defer b.StartTimer()
		if got := readBack(b, buf); !bytes.Equal(got, data) {
			sameBytes(b, "1 GiB read", got, data)
		}
		if err := buf.Memset8(0); err != nil {
			b.Fatal(err)
		}
	}
	gb := func(b *testing.B) {
		b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	}
	openFile := func(b *testing.B, opts *Options) *File {
		f, err := OpenFile(path, os.O_RDONLY, 0, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	b.Run("gds", func(b *testing.B) {
		f := openFile(b, nil)
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			if n, err := f.ReadAt(buf, 0); n != size || err != nil {
				b.Fatalf("ReadAt: %d, %v", n, err)
			}
		}
		gb(b)
		check(b)
		b.Logf("O_DIRECT %t", f.Direct())
	})
	b.Run("gds-async", func(b *testing.B) {
		f := openFile(b, nil)
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			p, err := f.ReadAtAsync(s, buf, 0)
			if err != nil {
				b.Fatal(err)
			}
			if n, err := p.Wait(); n != size || err != nil {
				b.Fatalf("Wait: %d, %v", n, err)
			}
		}
		gb(b)
		check(b)
	})
	b.Run("gds-buffered", func(b *testing.B) {
		f := openFile(b, &Options{Buffered: true})
		if _, err := f.ReadAt(buf, 0); err != nil { // warms the page cache
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if n, err := f.ReadAt(buf, 0); n != size || err != nil {
				b.Fatalf("ReadAt: %d, %v", n, err)
			}
		}
		gb(b)
		check(b)
	})
	pread := func(cold bool) func(b *testing.B) {
		return func(b *testing.B) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if !cold {
				if _, err := f.ReadAt(host, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if cold {
					b.StopTimer()
					if err := dropCache(path); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if n, err := f.ReadAt(host, 0); n != size || err != nil {
					b.Fatalf("pread: %d, %v", n, err)
				}
				if err := core.CopyToDevice(buf, host); err != nil {
					b.Fatal(err)
				}
			}
			gb(b)
			check(b)
		}
	}
	b.Run("pread-cold", pread(true))
	b.Run("pread-warm", pread(false))
	b.Run("pread-pinned", func(b *testing.B) {
		pinned, err := core.NewPinnedMemoryResource(dev).Allocate(size, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer pinned.Close()
		mem, err := pinned.Bytes()
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := f.ReadAt(mem, 0); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if n, err := f.ReadAt(mem, 0); n != size || err != nil {
				b.Fatalf("pread: %d, %v", n, err)
			}
			if err := buf.CopyFrom(pinned); err != nil {
				b.Fatal(err)
			}
		}
		gb(b)
		check(b)
	})
}

// dropCache writes the file's pages back and drops them from the page
// cache (posix_fadvise DONTNEED, which needs no privilege), so that the
// next buffered read comes from the storage.
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
