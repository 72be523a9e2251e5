package fatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFiles returns the sample files under testdata/cuda*/ that have a
// .list (cuobjdump -lelf -lptx) and .sha256 (cuobjdump -xelf all -xptx all)
// golden result next to them.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	lists, err := filepath.Glob("testdata/cuda*/*.list")
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) < 20 {
		t.Fatalf("found only %d golden samples in testdata/cuda*/", len(lists))
	}
	var files []string
	for _, l := range lists {
		files = append(files, strings.TrimSuffix(l, ".list"))
	}
	return files
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGolden checks every committed sample against what cuobjdump (CUDA 12.4
// and 13.0) listed and extracted when the sample was made.
func TestGolden(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(path, func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			wantList, err := os.ReadFile(path + ".list")
			if err != nil {
				t.Fatal(err)
			}
			equalLines(t, path, ourList(t, f, path), listLines(string(wantList)))
			wantSums, err := os.ReadFile(path + ".sha256")
			if err != nil {
				t.Fatal(err)
			}
			if got := manifest(extractAll(t, f, path)); got != string(wantSums) {
				t.Errorf("extracted files differ from cuobjdump's\n got:\n%s\nwant:\n%s", got, wantSums)
			}
			// Parse on the bytes gives the same as Open.
			b, _ := os.ReadFile(path)
			g, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Entries) != len(f.Entries) {
				t.Fatalf("Parse found %d entries, Open %d", len(g.Entries), len(f.Entries))
			}
			for i, e := range f.Entries {
				if e.Offset != g.Entries[i].Offset || !bytes.Equal(e.Raw(), g.Entries[i].Raw()) {
					t.Errorf("entry %d differs between Open and Parse", i)
				}
				// Offsets are offsets in the input file.
				if e.DataOffset+e.Size > int64(len(b)) || !bytes.Equal(b[e.DataOffset:e.DataOffset+e.Size], e.raw) {
					t.Errorf("entry %d: payload not at DataOffset %#x", i, e.DataOffset)
				}
				if e.Index != i {
					t.Errorf("entry %d has Index %d", i, e.Index)
				}
			}
		})
	}
}

func openTestdata(t *testing.T, name string) *File {
	t.Helper()
	f, err := Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type entryWant struct {
	kind        Kind
	arch        string
	version     Version
	compression string
	ident       string
	options     string
	debug       bool
	obfuscated  bool
	host        string
	size        int64 // len(Data()), -1 to skip
}

func checkEntries(t *testing.T, f *File, want []entryWant) {
	t.Helper()
	if len(f.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(f.Entries), len(want))
	}
	for i, w := range want {
		e := f.Entries[i]
		if e.Kind != w.kind || e.ArchName() != w.arch || e.Version != w.version || e.Compression != w.compression ||
			e.Compressed != (w.compression != "") || e.Identifier != w.ident || e.Debug != w.debug ||
			e.Obfuscated != w.obfuscated || e.Host() != w.host || !e.Is64Bit || e.Format != 0x0101 {
			t.Errorf("entry %d: got %s %s %s %q ident=%q debug=%v obf=%v host=%s 64=%v format=%#x, want %+v",
				i, e.Kind, e.ArchName(), e.Version, e.Compression, e.Identifier, e.Debug, e.Obfuscated, e.Host(), e.Is64Bit, e.Format, w)
		}
		if e.Kind != KindELF || e.Flags&FlagELFAttrs == 0 {
			if e.Options != w.options {
				t.Errorf("entry %d: options %q, want %q", i, e.Options, w.options)
			}
		}
		d, err := e.Data()
		if w.obfuscated {
			if !errors.Is(err, ErrObfuscated) {
				t.Errorf("entry %d: Data error %v, want ErrObfuscated", i, err)
			}
			if len(e.Raw()) != int(e.CompressedSize) {
				t.Errorf("entry %d: Raw has %d bytes, want %d", i, len(e.Raw()), e.CompressedSize)
			}
			continue
		}
		if err != nil {
			t.Errorf("entry %d: %v", i, err)
			continue
		}
		if w.size >= 0 && int64(len(d)) != w.size {
			t.Errorf("entry %d: %d bytes of data, want %d", i, len(d), w.size)
		}
		switch {
		case e.Kind.IsELF():
			if !bytes.HasPrefix(d, []byte("\x7fELF\x02\x01")) {
				t.Errorf("entry %d: data is not a 64-bit ELF: % x", i, d[:min(len(d), 8)])
			}
		case e.Kind.IsPTX():
			if !bytes.Contains(d, []byte(".version ")) || bytes.IndexByte(d, 0) >= 0 {
				t.Errorf("entry %d: data is not PTX text", i)
			}
		}
		if e.Compressed && int64(len(d)) > e.UncompressedSize {
			t.Errorf("entry %d: %d bytes of data, more than declared %d", i, len(d), e.UncompressedSize)
		}
	}
}

func TestCUDA13Formats(t *testing.T) {
	v18, v90, v165 := Version{1, 8}, Version{9, 0}, Version{1, 65}
	t.Run("zstd", func(t *testing.T) {
		checkEntries(t, openTestdata(t, "cuda13.0/cm_size.fatbin"), []entryWant{
			{KindELF, "sm_75", v18, "zstd", "", "", false, false, "linux", 3488},
			{KindELF, "sm_90", v18, "zstd", "", "", false, false, "linux", 4208},
			{KindELF, "sm_100", v18, "zstd", "", "", false, false, "linux", 6208},
			{KindPTX, "sm_120", v90, "zstd", "", "", false, false, "linux", 573},
			{KindELF, "sm_120", v18, "zstd", "", "", false, false, "linux", 6208},
		})
	})
	t.Run("lz4", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/nvfb_speed.fatbin")
		checkEntries(t, f, []entryWant{
			{KindELF, "sm_120", v18, "lz4", "cubin_ident", "", false, false, "linux", 6208},
			{KindPTX, "sm_120", v90, "lz4", "ptx_ident", "-O3 -lineinfo", false, false, "linux", 573},
			{KindLTOIR, "sm_120", v165, "lz4", "lto_ident", "-O2", false, true, "linux", -1},
		})
		if f.Entries[2].Tag == 0 {
			t.Error("obfuscated LTO-IR entry has no tag")
		}
		if got := f.ExtractName(2, "x"); got != "lto_ident.sm_120.ltoir" {
			t.Errorf("LTO-IR name %q", got)
		}
	})
	t.Run("debug", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/debug.fatbin")
		checkEntries(t, f, []entryWant{
			{KindELF, "sm_120", v18, "zstd", "x.cu", "", true, false, "linux", 15760},
			{KindPTX, "sm_120", v90, "zstd", "x.cu", " -g --dont-merge-basicblocks --return-at-end ", true, false, "linux", 2910},
		})
		if e := f.Entries[0]; e.Flags&FlagELFAttrs == 0 || len(e.Options) != 36 {
			t.Errorf("sm_120 cubin: flags %s, %d bytes of attributes", e.Flags, len(e.Options))
		}
	})
	t.Run("arch-suffixes", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/a100.fatbin")
		checkEntries(t, f, []entryWant{
			{KindELF, "sm_100a", v18, "", "", "", false, false, "linux", 5320},
			{KindPTX, "sm_100a", v90, "zstd", "", "", false, false, "linux", 475},
			{KindELF, "sm_100", v18, "", "", "", false, false, "linux", 5320},
			{KindPTX, "sm_100f", v90, "zstd", "", "", false, false, "linux", 475},
			{KindELF, "sm_103", v18, "", "", "", false, false, "linux", 5320},
		})
		if f.Entries[2].Flags&FlagArchF == 0 || f.Entries[0].Flags&FlagArchA == 0 {
			t.Errorf("flags %s / %s", f.Entries[0].Flags, f.Entries[2].Flags)
		}
	})
	t.Run("relocatable-object", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/xrdc.o")
		if len(f.Containers) != 1 || f.Containers[0].Section != SectionRelFatbin {
			t.Fatalf("containers %+v", f.Containers)
		}
		if got := f.Entries[3].Options; got != "--compile-only  " {
			t.Errorf("PTX options %q", got)
		}
	})
	t.Run("relocatable-ptx", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/nvfb_reloc.fatbin") // nvFatbinAddCubin + nvFatbinAddReloc
		checkEntries(t, f, []entryWant{
			{KindELF, "sm_90", v18, "", "c", "", false, false, "linux", 3568},
			{KindRelocPTX, "sm_90", v90, "zstd", "_6a8d480b_4_x_cu__Z1kPf", "--compile-only  ", false, false, "linux", 276},
		})
		// cuobjdump 13.0 on the same file with the cubin's kind patched:
		// 0x10 is still listed as ELF, 4 (cubin) is not listed at all.
		b := readTestdata(t, "cuda13.0/nvfb_reloc.fatbin")
		for kind, want := range map[uint16]string{
			0x10: "ELF file    1: c.sm_90.cubin\nPTX file    1: _6a8d480b_4_x_cu__Z1kPf.sm_90.ptx\n",
			4:    "PTX file    1: _6a8d480b_4_x_cu__Z1kPf.sm_90.ptx\n",
			0x20: "PTX file    1: _6a8d480b_4_x_cu__Z1kPf.sm_90.ptx\n",
		} {
			mut := bytes.Clone(b)
			binary.LittleEndian.PutUint16(mut[16:], kind)
			g, err := Parse(mut)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := g.List(&buf, "k.fatbin"); err != nil {
				t.Fatal(err)
			}
			if buf.String() != want {
				t.Errorf("kind %#x: list\n%s\nwant\n%s", kind, buf.String(), want)
			}
		}
	})
	t.Run("lto", func(t *testing.T) {
		f := openTestdata(t, "cuda13.0/rdc.fatbin")
		checkEntries(t, f, []entryWant{
			{KindELF, "sm_120", v18, "zstd", "", "", false, false, "linux", 5928},
			{KindLTOIR, "sm_120", v165, "zstd", "", "-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 ", false, true, "linux", -1},
			{KindPTX, "sm_120", v90, "zstd", "", "--compile-only  ", false, false, "linux", 582},
		})
	})
}

func TestCUDA124Formats(t *testing.T) {
	v17, v84 := Version{1, 7}, Version{8, 4}
	t.Run("default", func(t *testing.T) {
		checkEntries(t, openTestdata(t, "cuda12.4/plain.fatbin"), []entryWant{
			{KindELF, "sm_75", v17, "", "", "", false, false, "linux", 3104},
			{KindELF, "sm_80", v17, "", "", "", false, false, "linux", 3232},
			{KindPTX, "sm_90", v84, "lz4", "", "", false, false, "linux", 574},
			{KindELF, "sm_90", v17, "", "", "", false, false, "linux", 3440},
		})
	})
	t.Run("compress-all", func(t *testing.T) {
		checkEntries(t, openTestdata(t, "cuda12.4/compall.fatbin"), []entryWant{
			{KindELF, "sm_75", v17, "lz4", "", "", false, false, "linux", 3104},
			{KindELF, "sm_80", v17, "lz4", "", "", false, false, "linux", 3232},
			{KindPTX, "sm_90", v84, "lz4", "", "", false, false, "linux", 574},
			{KindELF, "sm_90", v17, "lz4", "", "", false, false, "linux", 3440},
		})
	})
	t.Run("executable", func(t *testing.T) {
		f := openTestdata(t, "cuda12.4/small.out")
		if len(f.Containers) != 2 {
			t.Fatalf("%d containers, want 2", len(f.Containers))
		}
		for _, c := range f.Containers {
			if c.Section != SectionFatbin {
				t.Errorf("container at %#x from section %q", c.Offset, c.Section)
			}
		}
	})
}

// TestWrapperFallback hides the .nv_fatbin section of an executable so that
// the containers can only be found through the .nvFatBinSegment wrappers.
func TestWrapperFallback(t *testing.T) {
	b := readTestdata(t, "cuda12.4/small.out")
	want, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	hidden := bytes.Clone(b)
	i := bytes.Index(hidden, []byte(".nv_fatbin\x00"))
	if i < 0 {
		t.Fatal("no .nv_fatbin in the section name table")
	}
	copy(hidden[i:], ".nv_hidden")
	got, err := Parse(hidden)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entries via wrappers, want %d", len(got.Entries), len(want.Entries))
	}
	for i, e := range got.Entries {
		w := want.Entries[i]
		if e.Offset != w.Offset || e.Kind != w.Kind || e.Arch != w.Arch || e.Index != i {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	for _, c := range got.Containers {
		if c.Section != SectionWrapper {
			t.Errorf("container section %q", c.Section)
		}
	}
	// Without the wrappers either, there is nothing to find.
	j := bytes.Index(hidden, []byte(".nvFatBinSegment\x00"))
	copy(hidden[j:], ".nvHiddenSegment")
	if _, err := Parse(hidden); err == nil || !strings.Contains(err.Error(), "no fat binary") {
		t.Errorf("got %v, want a 'no fat binary' error", err)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a.out", "a"}, {"libx.so", "libx"}, {"a.b.c", "a.b"}, {"noext", "noext"},
		{".hidden", ""}, {"d.x/y", "y"}, {"/some/dir/name.with.dots.cu", "name.with.dots"}, {"dir/", ""},
	} {
		if got := stem(c.in); got != c.want {
			t.Errorf("stem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	f := openTestdata(t, "cuda12.4/cat2.fatbin") // identified container, then two anonymous ones
	var got []string
	for i := range f.Entries {
		got = append(got, f.ExtractName(i, "/tmp/dir.x/other.name.fatbin"))
	}
	want := []string{
		"noext.sm_90.cubin", "noext.sm_90.ptx",
		"other.name.2.sm_90.cubin", "other.name.2.sm_90.ptx",
		"other.name.3.sm_90.cubin", "other.name.3.sm_90.ptx",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("names %q, want %q", got, want)
	}
	if f.ExtractName(-1, "x") != "" || f.ExtractName(len(f.Entries), "x") != "" || f.Ordinal(99) != 0 {
		t.Error("out of range index gave a name")
	}
	var buf bytes.Buffer
	if err := f.List(&buf, "x.fatbin"); err != nil {
		t.Fatal(err)
	}
	wantList := "ELF file    1: noext.sm_90.cubin\nPTX file    1: noext.sm_90.ptx\n" +
		"ELF file    2: x.2.sm_90.cubin\nPTX file    2: x.2.sm_90.ptx\n" +
		"ELF file    3: x.3.sm_90.cubin\nPTX file    3: x.3.sm_90.ptx\n"
	if buf.String() != wantList {
		t.Errorf("List:\n%s\nwant:\n%s", buf.String(), wantList)
	}
}

func TestStringers(t *testing.T) {
	if s := KindPTX.String() + KindELF.String() + KindCubin.String() + KindLTOIR.String() + KindIndex.String() + KindRelocPTX.String() + Kind(3).String(); s != "PTXELFCubinLTOIRIndexRelocPTXKind(3)" {
		t.Errorf("kinds: %s", s)
	}
	if s := Flags(0x1008013).String(); s != "64bit|debug|linux|zstd|elf-attrs" {
		t.Errorf("flags: %s", s)
	}
	if s := Flags(0x4000011).String(); s != "64bit|linux|0x4000000" {
		t.Errorf("flags: %s", s)
	}
	if s := Flags(0).String(); s != "0x0" {
		t.Errorf("flags: %s", s)
	}
	if s := (Version{9, 0}).String(); s != "[9,0]" {
		t.Errorf("version: %s", s)
	}
}
