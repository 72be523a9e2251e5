package fatbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Magic numbers.
const (
	// Magic starts every fat binary container (little-endian 0xBA55ED50).
	Magic = 0xBA55ED50
	// WrapperMagic starts the __fatBinC_Wrapper_t records that host code
	// keeps in the .nvFatBinSegment section (little-endian 0x466243B1).
	WrapperMagic = 0x466243B1
)

// Sizes of the fixed parts of the format.
const (
	ContainerHeaderSize = 16 // magic, version, header size, payload size
	EntryHeaderSize     = 64 // fixed part of an entry header
)

// Limits applied to declared sizes, so that a small malformed input can never
// make the package allocate much memory.
const (
	// MaxUncompressedSize is the largest uncompressed payload Data accepts.
	MaxUncompressedSize = 1 << 30
	// MaxCompressionRatio bounds the declared uncompressed size relative to
	// the compressed size: an entry may declare at most
	// MaxCompressionRatio*compressed + MinRatioAllowance bytes.
	MaxCompressionRatio = 1024
	// MinRatioAllowance is the uncompressed size always allowed (below
	// MaxUncompressedSize) whatever the compressed size.
	MinRatioAllowance = 1 << 20
)

// Kind is the kind of code an entry holds (header offset 0, uint16).
type Kind uint16

// Entry kinds. cuobjdump names them ptx, elf, cubin, nvvm, index and
// relocatable ptx.
const (
	KindPTX      Kind = 1    // PTX text, NUL terminated
	KindELF      Kind = 2    // CUDA ELF (cubin)
	KindCubin    Kind = 4    // legacy cubin kind; cuobjdump neither lists nor extracts it
	KindLTOIR    Kind = 8    // NVVM IR for link-time optimisation (cuobjdump: "nvvm")
	KindIndex    Kind = 0x20 // index (nvFatbinAddIndex)
	KindRelocPTX Kind = 0x40 // relocatable PTX taken from a host object (nvFatbinAddReloc)
)

// String returns the kind's name ("PTX", "ELF", "Cubin", "LTOIR", "Index",
// "RelocPTX") or "Kind(N)".
func (k Kind) String() string {
	switch k {
	case KindPTX:
		return "PTX"
	case KindELF:
		return "ELF"
	case KindCubin:
		return "Cubin"
	case KindLTOIR:
		return "LTOIR"
	case KindIndex:
		return "Index"
	case KindRelocPTX:
		return "RelocPTX"
	}
	return fmt.Sprintf("Kind(%d)", uint16(k))
}

// kind 0x10 has no name in cuobjdump ("<unknown kind>"), but cuobjdump
// -lelf lists and -xelf extracts it like an ELF entry.
const kindELFAlt Kind = 0x10

// IsELF reports whether cuobjdump lists and extracts entries of kind k as
// ELF files (KindELF, and the unnamed kind 0x10).
func (k Kind) IsELF() bool { return k == KindELF || k == kindELFAlt }

// IsPTX reports whether cuobjdump lists and extracts entries of kind k as
// PTX files (KindPTX and KindRelocPTX).
func (k Kind) IsPTX() bool { return k == KindPTX || k == KindRelocPTX }

// Flags is the 64-bit flag word of an entry header (offset 40).
type Flags uint64

// Flag bits. The host bits and the compression bits are mutually exclusive
// within their group.
const (
	Flag64Bit      Flags = 0x1       // code for a 64-bit host ("compile_size = 64bit")
	FlagDebug      Flags = 0x2       // debug compile (-G)
	FlagLinux      Flags = 0x10      // host = linux
	FlagMac        Flags = 0x20      // host = mac
	FlagWindows    Flags = 0x40      // host = windows
	FlagLZ4        Flags = 0x2000    // payload is an LZ4 block
	FlagZstd       Flags = 0x8000    // payload is a zstd frame
	FlagObfuscated Flags = 0x10000   // payload is obfuscated (LTO-IR); cannot be decoded
	FlagArchA      Flags = 0x100000  // arch-specific target (sm_90a)
	FlagArchF      Flags = 0x200000  // family-specific target (sm_100f)
	FlagELFAttrs   Flags = 0x1000000 // the options area holds a binary attribute record (cubins for sm_100 and later)

	hostMask        = FlagLinux | FlagMac | FlagWindows
	compressionMask = FlagLZ4 | FlagZstd
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{Flag64Bit, "64bit"}, {FlagDebug, "debug"}, {FlagLinux, "linux"}, {FlagMac, "mac"},
	{FlagWindows, "windows"}, {FlagLZ4, "lz4"}, {FlagZstd, "zstd"}, {FlagObfuscated, "obfuscated"},
	{FlagArchA, "arch-specific"}, {FlagArchF, "family-specific"}, {FlagELFAttrs, "elf-attrs"},
}

// String lists the set flags separated by "|", unknown bits in hex.
func (f Flags) String() string {
	var parts []string
	rest := f
	for _, n := range flagNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
			rest &^= n.f
		}
	}
	if rest != 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint64(rest)))
	}
	return strings.Join(parts, "|")
}

// Version is the code version of an entry (header offset 24): the ELF ABI
// version for cubins ([1,8]), the PTX ISA version for PTX ([9,0]).
type Version struct {
	Major, Minor uint16
}

// String formats v the way cuobjdump does: "[major,minor]".
func (v Version) String() string { return fmt.Sprintf("[%d,%d]", v.Major, v.Minor) }

// Entry describes one code image of a fat binary.
type Entry struct {
	Index     int    // position in File.Entries
	Container int    // index in File.Containers
	Kind      Kind   // header offset 0
	Format    uint16 // header offset 2: entry header format, 0x0101 in all known files

	Version Version // code version (offset 24 minor, 26 major)
	Arch    int     // SM number, e.g. 90 for sm_90 (offset 28)
	Flags   Flags   // offset 40

	Is64Bit     bool   // Flags&Flag64Bit
	Debug       bool   // Flags&FlagDebug
	Compressed  bool   // Flags has FlagLZ4 or FlagZstd
	Compression string // "lz4", "zstd" or ""
	Obfuscated  bool   // Flags&FlagObfuscated: Data fails, Raw still works

	Identifier string // source identifier (e.g. "x.cu"), from offsets 32/36; "" if none
	Options    string // ptxas/nvvm options (text) or, with FlagELFAttrs, a binary record

	// Tag is the 64-bit field at offset 48. It is zero except on obfuscated
	// LTO-IR entries.
	Tag uint64

	Offset           int64 // offset of the entry header in the input
	HeaderSize       int64 // offset 4
	DataOffset       int64 // offset of the payload in the input
	Size             int64 // stored payload size, padding included (offset 8)
	CompressedSize   int64 // meaningful bytes of a compressed payload (offset 16); 0 if not compressed
	UncompressedSize int64 // size after decompression (offset 56); 0 if not compressed

	raw []byte // the stored payload, len == Size
}

// ArchName returns the architecture as cuobjdump names it in file names:
// "sm_90", "sm_90a", and for PTX and LTO-IR "sm_100f" (cuobjdump drops the
// family suffix of cubins).
func (e *Entry) ArchName() string {
	s := fmt.Sprintf("sm_%d", e.Arch)
	switch {
	case e.Flags&FlagArchA != 0:
		s += "a"
	case e.Flags&FlagArchF != 0 && !e.Kind.IsELF():
		s += "f"
	}
	return s
}

// Host returns "linux", "mac", "windows" or "" from the host flag bits.
func (e *Entry) Host() string {
	switch e.Flags & hostMask {
	case FlagLinux:
		return "linux"
	case FlagMac:
		return "mac"
	case FlagWindows:
		return "windows"
	}
	return ""
}

// Raw returns the payload as stored (compressed or obfuscated as the case
// may be), without padding for compressed entries. The slice aliases the
// parsed input: do not modify it.
func (e *Entry) Raw() []byte {
	if e.Compressed && e.CompressedSize > 0 {
		return e.raw[:e.CompressedSize]
	}
	return e.raw
}

// Container is one fat binary container (header plus entries).
type Container struct {
	Offset  int64  // offset of the container header in the input
	Size    int64  // header plus payload
	Version uint16 // container format version (1)
	Section string // ELF section it was found in; "" for raw input
	Member  int    // index in File.Members for archive input, else 0
	Entries []*Entry
}

// File is a parsed fat binary: one or more containers.
type File struct {
	Containers []*Container
	Entries    []*Entry  // all entries of all containers, in file order
	Members    []*Member // the objects of an ar archive, in archive order; nil for other input
}

// FormatError reports malformed input.
type FormatError struct {
	Entry  int   // entry index in the file, or -1
	Offset int64 // offset in the input of the container/entry/field at fault
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Entry >= 0 {
		return fmt.Sprintf("fatbin: entry %d at offset %#x: %s", e.Entry, e.Offset, e.Msg)
	}
	return fmt.Sprintf("fatbin: offset %#x: %s", e.Offset, e.Msg)
}

func errf(entry int, off int64, format string, args ...any) error {
	return &FormatError{Entry: entry, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

var le = binary.LittleEndian

// Parse parses a fat binary held in b: a raw fat binary (one or more
// containers, as written by nvcc -fatbin, fatbinary or nvFatbin) or a host
// ELF file holding .nv_fatbin sections (see ParseELF) or an ar archive of
// such files (see ParseArchive). The returned File and its entries alias b.
func Parse(b []byte) (*File, error) {
	if len(b) >= 4 && string(b[:4]) == "\x7fELF" {
		return ParseELF(b)
	}
	if IsArchive(b) || bytes.HasPrefix(b, []byte(thinArchiveMagic)) {
		return ParseArchive(b)
	}
	f := &File{}
	if err := f.parseContainers(b, 0, ""); err != nil {
		return nil, err
	}
	if len(f.Containers) == 0 {
		return nil, errf(-1, 0, "no fat binary container found")
	}
	return f, nil
}

// parseContainers parses the concatenated containers of b, which starts at
// offset base of the input. Zero bytes between and after containers are
// skipped (section alignment padding).
func (f *File) parseContainers(b []byte, base int64, section string) error {
	if len(b) == 0 {
		return errf(-1, base, "empty input")
	}
	off := 0
	for {
		for off < len(b) && b[off] == 0 {
			off++
		}
		if off == len(b) {
			return nil
		}
		n, err := f.parseContainer(b[off:], base+int64(off), section)
		if err != nil {
			return err
		}
		off += n
	}
}

// parseContainer parses the container at the start of b and returns its size.
func (f *File) parseContainer(b []byte, base int64, section string) (int, error) {
	if len(b) >= 4 && le.Uint32(b) != Magic {
		return 0, errf(-1, base, "bad magic %#08x (want %#08x)", le.Uint32(b), uint32(Magic))
	}
	if len(b) < ContainerHeaderSize {
		return 0, errf(-1, base, "truncated container header (%d bytes, need %d)", len(b), ContainerHeaderSize)
	}
	version := le.Uint16(b[4:])
	hsize := int(le.Uint16(b[6:]))
	size := le.Uint64(b[8:])
	if version != 1 {
		return 0, errf(-1, base, "unsupported container version %d", version)
	}
	if hsize < ContainerHeaderSize || hsize > len(b) {
		return 0, errf(-1, base, "bad container header size %d (input has %d bytes)", hsize, len(b))
	}
	if size > uint64(len(b)-hsize) {
		return 0, errf(-1, base, "container size %d exceeds file (remaining %d)", size, len(b)-hsize)
	}
	c := &Container{
		Offset:  base,
		Size:    int64(hsize) + int64(size),
		Version: version,
		Section: section,
	}
	body := b[hsize : hsize+int(size)]
	off := 0
	for off < len(body) {
		e, n, err := parseEntry(body[off:], base+int64(hsize+off), len(f.Entries))
		if err != nil {
			return 0, err
		}
		e.Container = len(f.Containers)
		c.Entries = append(c.Entries, e)
		f.Entries = append(f.Entries, e)
		off += n
	}
	f.Containers = append(f.Containers, c)
	return hsize + int(size), nil
}

// parseEntry parses the entry at the start of b (which ends at the end of
// the container) and returns it with its total size.
func parseEntry(b []byte, base int64, idx int) (*Entry, int, error) {
	if len(b) < EntryHeaderSize {
		return nil, 0, errf(idx, base, "truncated entry header (%d bytes left in container, need %d)", len(b), EntryHeaderSize)
	}
	e := &Entry{
		Index:            idx,
		Kind:             Kind(le.Uint16(b[0:])),
		Format:           le.Uint16(b[2:]),
		HeaderSize:       int64(le.Uint32(b[4:])),
		Size:             0,
		CompressedSize:   int64(le.Uint32(b[16:])),
		Version:          Version{Minor: le.Uint16(b[24:]), Major: le.Uint16(b[26:])},
		Arch:             int(le.Uint32(b[28:])),
		Flags:            Flags(le.Uint64(b[40:])),
		Tag:              le.Uint64(b[48:]),
		Offset:           base,
		UncompressedSize: 0,
	}
	psize := le.Uint64(b[8:])
	optDesc := int64(le.Uint32(b[20:]))
	identOff := int64(le.Uint32(b[32:]))
	identLen := int64(le.Uint32(b[36:]))
	usize := le.Uint64(b[56:])

	hs := e.HeaderSize
	if hs < EntryHeaderSize {
		return nil, 0, errf(idx, base, "entry header size %d smaller than %d", hs, EntryHeaderSize)
	}
	if hs > int64(len(b)) {
		return nil, 0, errf(idx, base, "entry header size %d exceeds container (remaining %d)", hs, len(b))
	}
	hdr := b[:hs]
	rem := int64(len(b)) - hs
	if psize > uint64(rem) {
		return nil, 0, errf(idx, base, "payload size %d exceeds container (remaining %d)", psize, rem)
	}
	e.Size = int64(psize)
	e.DataOffset = base + hs
	e.raw = b[hs : hs+e.Size]

	// Identifier.
	if identLen != 0 || identOff != 0 {
		if identOff < EntryHeaderSize || identOff > hs || identLen > hs-identOff {
			return nil, 0, errf(idx, base+32, "identifier (offset %d, length %d) outside entry header (size %d)", identOff, identLen, hs)
		}
		e.Identifier = cstring(hdr[identOff : identOff+identLen])
	}
	// Options: the header field at 20 is the offset, inside the header, of a
	// {uint32 offset, uint32 size} pair locating the options bytes.
	if optDesc != 0 {
		if optDesc < EntryHeaderSize || optDesc > hs-8 {
			return nil, 0, errf(idx, base+20, "options descriptor offset %d outside entry header (size %d)", optDesc, hs)
		}
		oo := int64(le.Uint32(hdr[optDesc:]))
		ol := int64(le.Uint32(hdr[optDesc+4:]))
		if ol != 0 || oo != 0 {
			if oo < EntryHeaderSize || oo > hs || ol > hs-oo {
				return nil, 0, errf(idx, base+optDesc, "options (offset %d, length %d) outside entry header (size %d)", oo, ol, hs)
			}
			if e.Flags&FlagELFAttrs != 0 && e.Kind.IsELF() {
				e.Options = string(hdr[oo : oo+ol])
			} else {
				e.Options = cstring(hdr[oo : oo+ol])
			}
		}
	}

	e.Is64Bit = e.Flags&Flag64Bit != 0
	e.Debug = e.Flags&FlagDebug != 0
	e.Obfuscated = e.Flags&FlagObfuscated != 0
	switch e.Flags & compressionMask {
	case 0:
		e.CompressedSize = 0
	case FlagLZ4:
		e.Compressed, e.Compression = true, "lz4"
	case FlagZstd:
		e.Compressed, e.Compression = true, "zstd"
	default:
		return nil, 0, errf(idx, base+40, "both LZ4 and zstd compression flags set (flags %#x)", uint64(e.Flags))
	}
	if e.Compressed {
		if e.CompressedSize == 0 {
			e.CompressedSize = e.Size
		}
		if e.CompressedSize > e.Size {
			return nil, 0, errf(idx, base+16, "compressed size %d exceeds payload size %d", e.CompressedSize, e.Size)
		}
		if usize == 0 && e.CompressedSize > 0 {
			return nil, 0, errf(idx, base+56, "compressed entry without uncompressed size")
		}
		if limit := uncompressedLimit(e.CompressedSize); usize > uint64(limit) {
			return nil, 0, errf(idx, base+56, "declared uncompressed size %d exceeds limit %d for %d compressed bytes", usize, limit, e.CompressedSize)
		}
		e.UncompressedSize = int64(usize)
	}
	return e, int(hs + e.Size), nil
}

// uncompressedLimit is the largest uncompressed size accepted for n
// compressed bytes.
func uncompressedLimit(n int64) int64 {
	lim := int64(MinRatioAllowance)
	if n <= (MaxUncompressedSize-MinRatioAllowance)/MaxCompressionRatio {
		lim += n * MaxCompressionRatio
	} else {
		lim = MaxUncompressedSize
	}
	return min(lim, MaxUncompressedSize)
}

// cstring returns b up to its first NUL byte.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
