package fatbin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse (raw fat binaries and host ELF
// files) and then to everything a caller may do with the result: Data on
// every entry, names, listing. Seeds: the committed samples of up to 12 KiB
// under testdata/cuda*/ (made by nvcc, fatbinary and nvFatbin from CUDA 12.4
// and 13.0), synthetic entries with each compression, ar archives, and
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, b := range testdataInputs(f) {
		// Large seeds make the fuzzer spend its time minimizing; the small
		// ones cover the same structures.
		if len(b) <= 12<<10 {
			f.Add(b)
		}
	}
	text := []byte(".version 9.0\n.target sm_90\n.address_size 64\n\x00")
	f.Add(container(
		synth{kind: KindELF, arch: 80, payload: []byte("\x7fELF\x02\x01\x01\x00"), ident: "a/b.cu"}.build(),
		synth{kind: KindPTX, arch: 90, flags: FlagZstd, payload: zstdBytes(f, text), usize: uint64(len(text)), options: "-O3"}.build(),
		synth{kind: KindPTX, arch: 90, flags: FlagLZ4, payload: []byte{0x1f, 'a', 1, 0, 10, 0x20, 'b', 'c'}, usize: 32}.build(),
		synth{kind: KindLTOIR, arch: 90, flags: FlagObfuscated | FlagZstd, payload: []byte("opaque"), usize: 100}.build(),
	))
	f.Add(append(container(ptxEntry(".version 8.4").build()), container()...))
	// ar archives: GNU and BSD long names, an object with fat binaries, a
	// raw fat binary member and a member of neither kind.
	obj := readTestdata(f, "cuda12.4/xrdc.o")
	fb := container(ptxEntry(".version 8.4").build())
	f.Add(arArchive("gnu", arMember{"tmpxft_00006afb_00000000-13_k.o", obj}, arMember{"h.txt", []byte("x")}))
	f.Add(arArchive("bsd", arMember{"a long member name.fatbin", fb}, arMember{"b.fatbin", fb}))
	f.Add(arArchive("gnu", arMember{"a_long_member_name.fatbin", fb}, arMember{"another_long_name.fatbin", fb}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = exercise(t, b)
	})
}

// TestWriteFuzzCorpus regenerates the hand-made entries of
// testdata/fuzz/FuzzParse when FATBIN_WRITE_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("FATBIN_WRITE_CORPUS") != "1" {
		t.Skip("set FATBIN_WRITE_CORPUS=1 to rewrite testdata/fuzz/FuzzParse")
	}
	text := []byte(".version 8.4\n.target sm_90\n\x00")
	rle := []byte{0x1f, '/', 1, 0, 20, 0x20, '\n', '.'}
	corpus := map[string][]byte{
		"lz4-ptx": container(synth{kind: KindPTX, arch: 90, flags: FlagLZ4, payload: rle, usize: 42}.build()),
		"zstd-ptx": container(synth{kind: KindPTX, arch: 120, flags: FlagZstd | FlagArchF, payload: zstdBytes(t, text),
			usize: uint64(len(text)), ident: "dir/k.cu", options: "-O3 -lineinfo"}.build()),
		"ident-options": container(
			synth{kind: KindELF, arch: 90, flags: FlagArchA, payload: []byte("\x7fELF\x02\x01\x01\x00"), ident: "x.cu"}.build(),
			synth{kind: KindPTX, arch: 90, payload: text, ident: "x.cu", options: " -g --dont-merge-basicblocks "}.build()),
		"padded-containers": append(append(container(ptxEntry(".version 9.0").build()), make([]byte, 8)...),
			container(synth{kind: KindELF, arch: 75, payload: []byte("\x7fELF")}.build())...),
		"truncated-entry": container(synth{kind: KindELF, arch: 75, payload: make([]byte, 64)}.build())[:100],
		"obfuscated-lto":  container(synth{kind: KindLTOIR, arch: 90, flags: FlagObfuscated | FlagLZ4, payload: []byte("\x31\x32\x33"), usize: 80}.build()),
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range corpus {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
