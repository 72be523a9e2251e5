package core

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestStageCopy checks the staging copy (non-temporal stores where the CPU
// has AVX2) against Go's copy for lengths and alignments around its
// 32-byte alignment prologue and 128-byte loop, and that it writes
// nothing past the end.
func TestStageCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 1<<20+300)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for _, n := range []int{1, 31, 32, 33, 127, 128, 129, 255, 4096 + 77, 1 << 20} {
		for _, so := range []int{0, 1, 17, 32} {
			for _, do := range []int{0, 5, 31, 64} {
				dst := make([]byte, n+do+64)
				for i := range dst {
					dst[i] = 0xee
				}
				stageCopy(dst[do:do+n], src[so:so+n])
				if !bytes.Equal(dst[do:do+n], src[so:so+n]) {
					t.Fatalf("n=%d src+%d dst+%d: copy differs", n, so, do)
				}
				for i, b := range append(dst[:do:do], dst[do+n:]...) {
					if b != 0xee {
						t.Fatalf("n=%d src+%d dst+%d: byte %d outside the copy written", n, so, do, i)
					}
				}
			}
		}
	}
	stageCopy(nil, src) // nothing to copy: no call
}

// BenchmarkStageCopy measures the staging copy against Go's copy for one
// 2 MiB chunk (memory to memory, cache-cold: 64 MiB rotated).
func BenchmarkStageCopy(b *testing.B) {
	const chunk, total = 2 << 20, 64 << 20
	src, dst := make([]byte, total), make([]byte, total)
	for i := range src { // fault the pages in
		src[i], dst[i] = byte(i), 1
	}
	for _, bc := range []struct {
		name string
		f    func(d, s []byte)
	}{{"stageCopy", stageCopy}, {"copy", func(d, s []byte) { copy(d, s) }}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(chunk)
			off := 0
			for b.Loop() {
				bc.f(dst[off:off+chunk], src[off:off+chunk])
				off = (off + chunk) % total
			}
		})
	}
}
