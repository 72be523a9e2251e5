package fatbin

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// mutations returns damaged copies of b: truncated (every length up to
// 256 bytes, then 64 evenly spaced lengths), bit-flipped (flips random
// bits, a fixed seed per input) and oversized (trailing garbage, and the
// size fields of the first container and entry set to huge values).
func mutations(name string, b []byte) map[string][]byte {
	m := map[string][]byte{}
	for n := 0; n < len(b) && n <= 256; n++ {
		m["trunc"+strconv.Itoa(n)] = b[:n]
	}
	for i := 1; i <= 64; i++ {
		n := len(b) * i / 65
		m["trunc"+strconv.Itoa(n)] = b[:n]
	}
	var seed uint64
	for _, c := range name {
		seed = seed*31 + uint64(c)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range 300 {
		c := append([]byte(nil), b...)
		for range 1 + r.IntN(3) {
			c[r.IntN(len(c))] ^= 1 << r.IntN(8)
		}
		m["flip"+strconv.Itoa(i)] = c
	}
	m["garbage-tail"] = append(append([]byte(nil), b...), make([]byte, 1<<20)...)
	for i := range 4 {
		g := append([]byte(nil), b...)
		for j := range 1 << 12 {
			g = append(g, byte(r.Uint32()), byte(j))
		}
		m["random-tail"+strconv.Itoa(i)] = g
	}
	if len(b) >= 16 && binary.LittleEndian.Uint32(b) == Magic {
		for _, off := range []int{8, 16 + 8, 16 + 16, 16 + 56, 16 + 4} { // container size, entry payload/compressed/uncompressed/header sizes
			for _, v := range []uint64{1 << 62, 1<<32 - 1, 0} {
				c := append([]byte(nil), b...)
				if off+8 <= len(c) {
					if off == 16+4 || off == 16+16 {
						binary.LittleEndian.PutUint32(c[off:], uint32(v))
					} else {
						binary.LittleEndian.PutUint64(c[off:], v)
					}
					m["size@"+strconv.Itoa(off)+"="+strconv.Itoa(int(v>>32))] = c
				}
			}
		}
	}
	return m
}

// TestReliabilityDamagedInputs parses truncated, bit-flipped and
// oversized copies of every committed sample (fatbins, host objects,
// executables) with Parse, ParseELF and Open, and runs Data, List and the
// names on what parses: errors, never a panic or an allocation beyond the
// declared limits (exercise checks the invariants).
func TestReliabilityDamagedInputs(t *testing.T) {
	inputs := testdataInputs(t)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	dir := t.TempDir()
	total, parsed := 0, 0
	for _, name := range names {
		for what, b := range mutations(name, inputs[name]) {
			total++
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s (%s): panic: %v", name, what, r)
					}
				}()
				if f, err := exercise(t, b); err == nil && f != nil {
					parsed++
				}
				_, _ = ParseELF(b)
			}()
		}
		// Open goes through a file (io.ReaderAt) rather than memory.
		for _, what := range []string{"trunc100", "flip0", "garbage-tail"} {
			b := mutations(name, inputs[name])[what]
			p := filepath.Join(dir, "in")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if f, err := Open(p); err == nil {
				for _, e := range f.Entries {
					_, _ = e.Data()
				}
			}
		}
	}
	t.Logf("%d damaged inputs from %d samples: %d still parse, the rest fail cleanly", total, len(names), parsed)
}
