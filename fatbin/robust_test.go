package fatbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// synth describes an entry for the synthetic-input builder.
type synth struct {
	kind    Kind
	flags   Flags
	arch    uint32
	payload []byte // stored bytes (compressed or not)
	csize   uint32 // compressed size field; 0 = len(payload) when compressed
	usize   uint64 // uncompressed size field
	ident   string
	options string
	// Raw header overrides, applied last: offset -> value (uint32 or uint64).
	patch32 map[int]uint32
	patch64 map[int]uint64
}

func pad8(n int) int { return (n + 7) &^ 7 }

// build returns the entry header followed by the payload padded to 8 bytes,
// laid out the way fatbinary does it.
func (s synth) build() []byte {
	hs := EntryHeaderSize
	identOff, optDesc := 0, 0
	if s.ident != "" {
		identOff = hs
		hs += pad8(len(s.ident) + 1)
	}
	if s.options != "" {
		optDesc = hs
		hs += 8 + pad8(len(s.options)+1)
	}
	h := make([]byte, hs)
	le := binary.LittleEndian
	le.PutUint16(h[0:], uint16(s.kind))
	le.PutUint16(h[2:], 0x0101)
	le.PutUint32(h[4:], uint32(hs))
	le.PutUint64(h[8:], uint64(pad8(len(s.payload))))
	if s.flags&compressionMask != 0 {
		cs := s.csize
		if cs == 0 {
			cs = uint32(len(s.payload))
		}
		le.PutUint32(h[16:], cs)
		le.PutUint64(h[56:], s.usize)
	}
	le.PutUint32(h[20:], uint32(optDesc))
	le.PutUint32(h[24:], 0x00010008)
	le.PutUint32(h[28:], s.arch)
	if identOff != 0 {
		le.PutUint32(h[32:], uint32(identOff))
		le.PutUint32(h[36:], uint32(len(s.ident)))
		copy(h[identOff:], s.ident)
	}
	le.PutUint64(h[40:], uint64(s.flags|Flag64Bit|FlagLinux))
	if optDesc != 0 {
		le.PutUint32(h[optDesc:], uint32(optDesc+8))
		le.PutUint32(h[optDesc+4:], uint32(len(s.options)))
		copy(h[optDesc+8:], s.options)
	}
	for off, v := range s.patch32 {
		le.PutUint32(h[off:], v)
	}
	for off, v := range s.patch64 {
		le.PutUint64(h[off:], v)
	}
	out := append(h, s.payload...)
	return append(out, make([]byte, pad8(len(s.payload))-len(s.payload))...)
}

func container(entries ...[]byte) []byte {
	var body []byte
	for _, e := range entries {
		body = append(body, e...)
	}
	h := make([]byte, ContainerHeaderSize)
	binary.LittleEndian.PutUint32(h[0:], Magic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], ContainerHeaderSize)
	binary.LittleEndian.PutUint64(h[8:], uint64(len(body)))
	return append(h, body...)
}

func ptxEntry(text string) synth {
	return synth{kind: KindPTX, arch: 90, payload: append([]byte(text), 0)}
}

func zstdBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(b, nil)
}

func TestSynthetic(t *testing.T) {
	text := ".version 8.4\n.target sm_90\n" + strings.Repeat("// padding padding\n", 50)
	b := container(
		synth{kind: KindELF, arch: 80, payload: []byte("\x7fELF\x02\x01\x01rest-of-cubin"), ident: "/src/kern.cu"}.build(),
		synth{kind: KindPTX, arch: 90, flags: FlagZstd, payload: zstdBytes(t, append([]byte(text), 0)), usize: uint64(len(text) + 1), options: "-O3"}.build(),
		synth{kind: KindPTX, arch: 90, flags: FlagLZ4, payload: []byte("\x50hello"), usize: 5, ident: "k.cu"}.build(),
	)
	b = append(b, make([]byte, 24)...) // zero padding after the container is fine
	b = append(b, container(ptxEntry(".version 9.0").build())...)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Containers) != 2 || len(f.Entries) != 4 {
		t.Fatalf("%d containers, %d entries", len(f.Containers), len(f.Entries))
	}
	wantData := []string{"\x7fELF\x02\x01\x01rest-of-cubin\x00\x00\x00\x00", text, "hello", ".version 9.0"}
	for i, e := range f.Entries {
		d, err := e.Data()
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if string(d) != wantData[i] {
			t.Errorf("entry %d: data %q, want %q", i, d, wantData[i])
		}
	}
	if f.Entries[1].Options != "-O3" || f.Entries[0].Identifier != "/src/kern.cu" {
		t.Errorf("options %q ident %q", f.Entries[1].Options, f.Entries[0].Identifier)
	}
	names := []string{f.ExtractName(0, "a.fb"), f.ExtractName(1, "a.fb"), f.ExtractName(2, "a.fb"), f.ExtractName(3, "a.fb")}
	if got := strings.Join(names, " "); got != "kern.sm_80.cubin a.1.sm_90.ptx k.sm_90.ptx a.3.sm_90.ptx" {
		t.Errorf("names: %s", got)
	}
	if f.Entries[3].Container != 1 || f.Containers[1].Offset != int64(len(b)-len(f.Containers[1].Entries[0].raw)-EntryHeaderSize-ContainerHeaderSize) {
		t.Errorf("second container: %+v", f.Containers[1])
	}
}

// errorCase is a malformed input and a fragment of the error it must give.
type errorCase struct {
	name string
	in   []byte
	want string
}

func malformed(t *testing.T) []errorCase {
	ok := ptxEntry(".version 9.0").build()
	huge := func(s synth) []byte { return container(ok, s.build()) }
	second := int64(ContainerHeaderSize + len(ok)) // offset of the second entry
	withVersion := append([]byte(nil), container(ok)...)
	binary.LittleEndian.PutUint16(withVersion[4:], 2)
	bigContainer := append([]byte(nil), container(ok)...)
	binary.LittleEndian.PutUint64(bigContainer[8:], 1<<63)
	badHS := append([]byte(nil), container(ok)...)
	binary.LittleEndian.PutUint16(badHS[6:], 8)
	garbage := append(container(ok), "JUNK"...)
	leftover := container(ok, make([]byte, 10))
	shortPayload := container(ok, synth{kind: KindELF, arch: 90, payload: make([]byte, 4096)}.build()[:EntryHeaderSize+100])
	binary.LittleEndian.PutUint64(shortPayload[8:], uint64(len(shortPayload)-ContainerHeaderSize))
	return []errorCase{
		{"empty", nil, "offset 0x0: empty input"},
		{"zeros", make([]byte, 64), "no fat binary container found"},
		{"bad magic", []byte("not a fat binary at all"), "offset 0x0: bad magic"},
		{"short header", []byte{0x50, 0xed, 0x55, 0xba, 1, 0}, "offset 0x0: truncated container header (6 bytes, need 16)"},
		{"version", withVersion, "unsupported container version 2"},
		{"container header size", badHS, "bad container header size 8"},
		{"container size", bigContainer, "container size 9223372036854775808 exceeds file (remaining"},
		{"header only", container(), ""}, // valid: an empty container
		{"trailing garbage", garbage, fmt.Sprintf("offset %#x: bad magic", len(container(ok)))},
		{"leftover bytes", leftover, fmt.Sprintf("entry 1 at offset %#x: truncated entry header (10 bytes left in container, need 64)", second)},
		{"payload size", shortPayload, fmt.Sprintf("fatbin: entry 1 at offset %#x: payload size 4096 exceeds container (remaining 100)", second)},
		{"huge payload size", huge(synth{kind: KindELF, patch64: map[int]uint64{8: 1 << 62}}), "payload size 4611686018427387904 exceeds container (remaining 0)"},
		{"entry header size", huge(synth{kind: KindELF, patch32: map[int]uint32{4: 0xffffffff}}), "entry header size 4294967295 exceeds container (remaining 64)"},
		{"small entry header", huge(synth{kind: KindELF, patch32: map[int]uint32{4: 16}}), "entry header size 16 smaller than 64"},
		{"ident offset", huge(synth{kind: KindELF, ident: "x.cu", patch32: map[int]uint32{32: 1 << 20}}), fmt.Sprintf("offset %#x: identifier (offset 1048576, length 4) outside entry header (size 72)", second+32)},
		{"ident length", huge(synth{kind: KindELF, ident: "x.cu", patch32: map[int]uint32{36: 0xfffffff0}}), "identifier (offset 64, length 4294967280) outside"},
		{"ident in fixed header", huge(synth{kind: KindELF, ident: "x.cu", patch32: map[int]uint32{32: 8}}), "identifier (offset 8, length 4)"},
		{"options descriptor", huge(synth{kind: KindPTX, options: "-O3", patch32: map[int]uint32{20: 0x7fffffff}}), "options descriptor offset 2147483647 outside entry header"},
		{"options", huge(synth{kind: KindPTX, options: "-O3", patch32: map[int]uint32{68: 1 << 30}}), "options (offset 72, length 1073741824) outside entry header (size 80)"},
		{"two compressions", huge(synth{kind: KindPTX, flags: FlagLZ4 | FlagZstd, payload: []byte("x"), usize: 1}), "both LZ4 and zstd compression flags set"},
		{"compressed size", huge(synth{kind: KindPTX, flags: FlagLZ4, payload: []byte("x"), csize: 9, usize: 1}), "compressed size 9 exceeds payload size 8"},
		{"no uncompressed size", huge(synth{kind: KindPTX, flags: FlagLZ4, payload: []byte("x")}), "compressed entry without uncompressed size"},
		{"huge uncompressed size", huge(synth{kind: KindPTX, flags: FlagZstd, payload: []byte("0123456789"), usize: 1 << 40}), fmt.Sprintf("offset %#x: declared uncompressed size 1099511627776 exceeds limit 1058816 for 10 compressed bytes", second+56)},
		{"uncompressed over 1 GiB", huge(synth{kind: KindPTX, flags: FlagZstd, payload: make([]byte, 2<<20), usize: 3 << 30}), "exceeds limit 1073741824 for 2097152 compressed bytes"},
		{"uncompressed ratio", huge(synth{kind: KindPTX, flags: FlagLZ4, payload: make([]byte, 100), usize: 1<<20 + 102401}), "exceeds limit 1150976 for 100 compressed bytes"},
	}
}

func TestMalformed(t *testing.T) {
	for _, c := range malformed(t) {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.in)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; parsed %d entries", len(f.Entries))
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "fatbin: ") {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
		})
	}
}

// TestDataErrors covers payloads that parse but do not decode.
func TestDataErrors(t *testing.T) {
	text := []byte("some ptx text\x00")
	z := zstdBytes(t, text)
	cases := []struct {
		name string
		s    synth
		want string
	}{
		{"zstd garbage", synth{kind: KindPTX, flags: FlagZstd, payload: []byte("garbage!"), usize: 10}, "zstd"},
		{"zstd size mismatch", synth{kind: KindPTX, flags: FlagZstd, payload: z, usize: uint64(len(text) + 5)}, "declared uncompressed size is 19"},
		{"zstd truncated", synth{kind: KindPTX, flags: FlagZstd, payload: z[:len(z)-3], usize: uint64(len(text))}, "zstd"},
		{"lz4 bad offset", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x10, 'a', 5, 0}, usize: 10}, "lz4: match offset 5 invalid at output byte 1"},
		{"lz4 zero offset", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x10, 'a', 0, 0}, usize: 10}, "lz4: match offset 0 invalid"},
		{"lz4 overflow", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x1f, 'a', 1, 0, 200}, usize: 100}, "lz4: output exceeds declared uncompressed size 100"},
		{"lz4 short", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x50, 'h', 'e', 'l', 'l', 'o'}, usize: 9}, "lz4: decoded 5 bytes, declared uncompressed size is 9"},
		{"lz4 literal overrun", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0xf0, 40, 'x'}, usize: 100}, "exceeds input"},
		{"lz4 truncated offset", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x10, 'a', 1}, usize: 100}, "lz4: truncated match offset"},
		{"lz4 truncated length", synth{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x1f, 'a', 1, 0}, usize: 100}, "lz4: truncated match length"},
		{"obfuscated", synth{kind: KindLTOIR, flags: FlagObfuscated, payload: []byte("secret")}, "payload is obfuscated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(container(c.s.build()))
			if err != nil {
				t.Fatal(err)
			}
			d, err := f.Entries[0].Data()
			if err == nil {
				t.Fatalf("no error, data %q", d)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "fatbin: entry 0 at offset 0x10: ") {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestZstdContentSize patches the declared uncompressed size of a real
// nvcc-made zstd entry, whose frame records its content size.
func TestZstdContentSize(t *testing.T) {
	b := readTestdata(t, "cuda13.0/cm_size.fatbin")
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries[3]
	mut := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(mut[e.Offset+56:], uint64(e.UncompressedSize+1))
	g, err := Parse(mut)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Entries[3].Data()
	want := fmt.Sprintf("zstd frame content size %d does not match declared uncompressed size %d", e.UncompressedSize, e.UncompressedSize+1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestLZ4(t *testing.T) {
	long := strings.Repeat("L", 300)
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"literals", []byte("\x50hello"), "hello"},
		{"empty", nil, ""},
		{"rle", []byte{0x1f, 'a', 1, 0, 10, 0x00}, "a" + strings.Repeat("a", 29)},
		{"copy", []byte{0x30, 'a', 'b', 'c', 3, 0, 0x10, 'd'}, "abcabcad"},
		{"far copy", []byte{0x52, 'a', 'b', 'c', 'd', 'e', 5, 0, 0x10, 'f'}, "abcdeabcdeaf"},
		{"long literal", append([]byte{0xf0, 255, 30}, long...), long},
	}
	for _, c := range cases {
		dst := make([]byte, len(c.want))
		if err := lz4Decode(dst, c.in); err != nil || string(dst) != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, dst, err, c.want)
		}
	}
}

// testdataInputs returns every committed sample, raw fat binaries and ELF files.
func testdataInputs(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/cuda*/*")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".list") || strings.HasSuffix(p, ".sha256") {
			continue
		}
		m[p] = readTestdata(t, strings.TrimPrefix(p, "testdata/"))
	}
	return m
}

// exercise runs everything a caller may do with a parsed file and checks the
// invariants that must hold whatever the input.
func exercise(t testing.TB, in []byte) (*File, error) {
	f, err := Parse(in)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fatbin: ") {
			t.Fatalf("error without prefix: %v", err)
		}
		return nil, err
	}
	if len(f.Containers) == 0 {
		t.Fatal("no error and no container")
	}
	for i, e := range f.Entries {
		if e.Index != i || e.Offset < 0 || e.DataOffset+e.Size > int64(len(in)) || len(e.raw) != int(e.Size) {
			t.Fatalf("entry %d: bad bounds: offset %d data %d size %d of %d", i, e.Offset, e.DataOffset, e.Size, len(in))
		}
		if e.Compressed && (e.UncompressedSize > uncompressedLimit(e.CompressedSize) || e.CompressedSize > e.Size) {
			t.Fatalf("entry %d: sizes %d/%d/%d accepted", i, e.Size, e.CompressedSize, e.UncompressedSize)
		}
		d, err := e.Data()
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("fatbin: entry %d at offset %#x: ", i, e.Offset)) {
				t.Fatalf("Data error without location: %v", err)
			}
		} else if e.Compressed && int64(len(d)) > e.UncompressedSize || !e.Compressed && int64(len(d)) > e.Size {
			t.Fatalf("entry %d: %d bytes of data exceed declared sizes", i, len(d))
		}
		_ = f.ExtractName(i, "x.fatbin")
		_ = e.ArchName() + e.Host() + e.Flags.String() + e.Kind.String() + e.Version.String()
		_ = e.Raw()
	}
	if err := f.ValidateCubins(); err != nil {
		var ce *CubinError
		if !strings.HasPrefix(err.Error(), "fatbin: entry ") || errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "malformed image (") {
			t.Fatalf("ValidateCubins: %v", err)
		}
	}
	var sb strings.Builder
	if err := f.List(&sb, "x"); err != nil {
		t.Fatal(err)
	}
	return f, nil
}

// TestTruncation parses every prefix of every sample: never a panic, and for
// raw fat binaries an error unless the cut falls between containers.
func TestTruncation(t *testing.T) {
	for path, b := range testdataInputs(t) {
		full, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		isELF := strings.HasPrefix(string(b), "\x7fELF")
		boundaries := map[int]bool{}
		for _, c := range full.Containers {
			boundaries[int(c.Offset+c.Size)] = true
		}
		step := 1
		if isELF {
			step = 13 // debug/elf is slower; still thousands of cuts per file
		}
		for n := 0; n < len(b); n += step {
			f, err := exercise(t, b[:n])
			if isELF || err != nil {
				continue
			}
			if !boundaries[n] {
				t.Fatalf("%s: truncated to %d bytes parsed without error (%d entries)", path, n, len(f.Entries))
			}
		}
	}
}

// TestBitFlips flips every bit of every header byte, and of a sample of
// payload bytes, of the raw samples.
func TestBitFlips(t *testing.T) {
	inputs := testdataInputs(t)
	for path, b := range inputs {
		if strings.HasPrefix(string(b), "\x7fELF") {
			continue
		}
		full, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		headers := map[int]bool{}
		for _, c := range full.Containers {
			for i := range ContainerHeaderSize {
				headers[int(c.Offset)+i] = true
			}
		}
		for _, e := range full.Entries {
			for i := range e.HeaderSize {
				headers[int(e.Offset+i)] = true
			}
		}
		mut := make([]byte, len(b))
		for pos := range b {
			if !headers[pos] && pos%61 != 0 {
				continue
			}
			for bit := range 8 {
				copy(mut, b)
				mut[pos] ^= 1 << bit
				if _, err := exercise(t, mut); err != nil {
					continue
				}
			}
		}
		_ = path
	}
}

// TestBoundedAllocation checks that Data allocates about the declared
// uncompressed size and no more, even when the payload is garbage.
func TestBoundedAllocation(t *testing.T) {
	const usize = 1 << 20
	// Warm up the zstd decoder, whose creation allocates once.
	if _, err := (&Entry{Kind: KindPTX, Compressed: true, Compression: "zstd", raw: zstdBytes(t, []byte("x")), CompressedSize: 0}).Data(); err == nil {
		t.Log("warm-up decoded")
	}
	for _, comp := range []Flags{FlagZstd, FlagLZ4} {
		payload := make([]byte, 2048)
		for i := range payload {
			payload[i] = byte(i*7 + 3)
		}
		f, err := Parse(container(synth{kind: KindPTX, flags: comp, payload: payload, usize: usize}.build()))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _ = f.Entries[0].Data()
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > usize+256<<10 {
			t.Errorf("%s: Data allocated %d bytes for a declared size of %d", comp, got, usize)
		}
	}
}
