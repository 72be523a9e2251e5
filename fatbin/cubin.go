package fatbin

import (
	"fmt"
	"math/bits"
	"slices"
)

// CubinError reports a cubin (CUDA ELF image) that ValidateCubin refuses:
// what is wrong, naming the section, symbol or record at fault.
type CubinError struct {
	Offset int64 // file offset of the structure at fault (header field, table entry)
	Msg    string
}

func (e *CubinError) Error() string { return "cubin: " + e.Msg }

func cubinErr(off uint64, format string, args ...any) error {
	return &CubinError{Offset: int64(min(off, 1<<62)), Msg: fmt.Sprintf(format, args...)}
}

// ELF constants of CUDA images (debug/elf has the standard ones, but a
// validator on the load path reads the bytes directly: no allocation per
// section or symbol).
const (
	elfHeaderSize  = 64
	elfShdrSize    = 64
	elfPhdrSize    = 56
	elfSymSize     = 24
	elfRelSize     = 16
	elfRelaSize    = 24
	elfMachineCUDA = 190 // EM_CUDA

	shtNull   = 0
	shtSymtab = 2
	shtStrtab = 3
	shtRela   = 4
	shtNote   = 7
	shtNobits = 8
	shtRel    = 9
	shtDynsym = 11
	shtLoOS   = 0x60000000

	shfInfoLink = 0x40

	shnLoReserve = 0xff00
	shnAbs       = 0xfff1
	shnCommon    = 0xfff2
)

// CUDA's processor-specific section types that hold bytes in the file.
// Others (SHT_CUDA_GLOBAL 0x70000007, SHT_CUDA_SHARED 0x7000000a, ...) are
// NOBITS-like: their size is memory, not file bytes, and the offset is
// meaningless, so their bounds are not checked; neither are those of
// types unknown here (the check does not guess what they hold).
const (
	shtCUDAInfo       = 0x70000000 // .nv.info, .nv.info.<kernel>: attribute records
	shtCUDACallgraph  = 0x70000001 // .nv.callgraph: pairs of symbol indices
	shtCUDAPrototype  = 0x70000002 // .nv.prototype
	shtCUDAGlobalInit = 0x70000008 // .nv.global.init of relocatable images
	shtCUDARelAction  = 0x7000000b // .nv.rel.action
	shtCUDAConstant0  = 0x70000064 // .nv.constantN of relocatable images: 0x70000064+N
	shtCUDAConstant17 = 0x70000075
	shtCUDAMercRela   = 0x70000082 // CUDA 13 (sm_100+) "merc" copies: .nv.merc.rela.*
	shtCUDAMercInfo   = 0x70000083 // .nv.merc.nv.info*
	shtCUDAMercSymtab = 0x70000085 // .nv.merc.symtab
	shtCUDACompat     = 0x70000086 // .nv.compat
)

// .nv.info attribute records: {uint8 format, uint8 attribute, then by
// format: NVAL uint16 unused, BVAL uint8 value + pad, HVAL uint16 value,
// SVAL uint16 size + size bytes}.
const (
	eifmtNVAL = 1
	eifmtBVAL = 2
	eifmtHVAL = 3
	eifmtSVAL = 4
)

// Attributes whose values ValidateCubin checks (names as cuobjdump -elf
// prints them). The first group starts with a symbol index, EXTERNS is a
// list of them; the second lists instruction offsets in the kernel's code
// section (the driver patches instructions there).
const (
	eiattrParamCbank         = 0x0a
	eiattrExterns            = 0x0f
	eiattrFrameSize          = 0x11
	eiattrMinStackSize       = 0x12
	eiattrMaxStackSize       = 0x23
	eiattrRegcount           = 0x2f
	eiattrExitInstrOffsets   = 0x1c
	eiattrS2RCtaidOffsets    = 0x1d
	eiattrCoopGroupOffsets   = 0x28
	eiattrIntWarpWideOffsets = 0x31
	eiattrSyscallOffsets     = 0x46
)

// fileBacked reports whether sections of type t hold their size in bytes
// of the file.
func fileBacked(t uint32) bool {
	switch {
	case t == shtNull || t == shtNobits:
		return false
	case t < shtLoOS:
		return true // standard types other than NOBITS
	}
	switch t {
	case shtCUDAInfo, shtCUDACallgraph, shtCUDAPrototype, shtCUDAGlobalInit, shtCUDARelAction,
		shtCUDAMercRela, shtCUDAMercInfo, shtCUDAMercSymtab, shtCUDACompat:
		return true
	}
	return t >= shtCUDAConstant0 && t <= shtCUDAConstant17
}

type cubinSection struct {
	name, typ          uint32
	flags              uint64
	offset, size       uint64
	link, info         uint32
	addralign, entsize uint64
}

// cubinChecker holds what the checks of one image share.
type cubinChecker struct {
	b     []byte
	secs  []cubinSection
	shstr []byte // the section name string table
}

// secName names section i for messages: `section 7 (.nv.info)`.
func (c *cubinChecker) secName(i int) string {
	if c.shstr != nil && i < len(c.secs) && uint64(c.secs[i].name) < uint64(len(c.shstr)) {
		return fmt.Sprintf("section %d (%s)", i, cstring(c.shstr[c.secs[i].name:]))
	}
	return fmt.Sprintf("section %d", i)
}

// data returns the bytes of a file-backed section whose bounds were
// checked.
func (c *cubinChecker) data(i int) []byte {
	s := c.secs[i]
	return c.b[s.offset : s.offset+s.size]
}

// ValidateCubin checks that b is a structurally sound cubin, as the CUDA
// driver expects one, without any CUDA library: what the driver trusts
// when it loads an image (it reads offsets, sizes and indices without
// checking them, and a damaged image can crash it). It returns nil or a
// *CubinError naming the first problem found:
//
//   - the ELF header: 64-bit little-endian ELF version 1, ET_EXEC or ET_REL
//     (what nvcc, ptxas, nvlink and nvJitLink write), e_machine EM_CUDA
//     (190), the header and table entry sizes;
//   - the section and program header tables inside the file, not
//     overlapping the ELF header or each other;
//   - every section: its name inside the section name string table; its
//     bytes (except for NOBITS-like types) inside the file, overlapping no
//     header table and no other section (except one with exactly the same
//     bytes); its alignment a power of two and its offset a multiple of
//     it; sh_link a section index, sh_info one where the type or
//     SHF_INFO_LINK says so;
//   - string tables that start and end with a NUL;
//   - symbol tables: entry size, their string table, each symbol's name
//     inside it, its section index valid, and its value and size inside
//     its section for defined functions and objects;
//   - relocation tables: entry size, sh_link to a symbol table, sh_info to
//     the section they patch, each entry's symbol index valid and its
//     offset inside that section;
//   - .nv.info attribute records (SHT_CUDA_INFO): well framed, the symbol
//     indices of REGCOUNT, FRAME_SIZE, MIN/MAX_STACK_SIZE, PARAM_CBANK and
//     EXTERNS valid, and the instruction offsets of EXIT_INSTR_OFFSETS,
//     SYSCALL_OFFSETS and the like inside the kernel's code;
//   - .nv.callgraph entries: symbol indices or the negative markers;
//   - notes: each inside its section;
//   - program headers: contents inside the file, alignment a power of two.
//
// It is meant never to refuse what NVIDIA's tools write: every cubin of
// CUDA 12.4 and 13.0 in the tests passes (nvcc, NVRTC, nvlink, nvJitLink;
// -G, -rdc, sm_50 to sm_120). The checks are linear in the size of the
// tables and allocate only the section lists.
func ValidateCubin(b []byte) (err error) {
	// Every index below is checked first; the recover is a second line of
	// defence so that a missed case is an error, never a crash.
	defer func() {
		if p := recover(); p != nil {
			err = cubinErr(0, "malformed image (%v)", p)
		}
	}()
	c := &cubinChecker{b: b}
	if err := c.header(); err != nil {
		return err
	}
	if err := c.sections(); err != nil {
		return err
	}
	if err := c.layout(); err != nil {
		return err
	}
	for i := range c.secs {
		if err := c.contents(i); err != nil {
			return err
		}
	}
	return c.programHeaders()
}

func (c *cubinChecker) header() error {
	b := c.b
	n := uint64(len(b))
	if n < elfHeaderSize {
		return cubinErr(0, "%d bytes, shorter than the 64-byte ELF header", n)
	}
	if string(b[:4]) != "\x7fELF" {
		return cubinErr(0, "no ELF magic (starts % x)", b[:4])
	}
	if b[4] != 2 {
		return cubinErr(4, "ELF class %d, not ELFCLASS64 (2)", b[4])
	}
	if b[5] != 1 {
		return cubinErr(5, "ELF data encoding %d, not little-endian (1)", b[5])
	}
	if b[6] != 1 {
		return cubinErr(6, "ELF identification version %d, not 1", b[6])
	}
	if t := le.Uint16(b[16:]); t != 1 && t != 2 {
		return cubinErr(16, "ELF type %d, not ET_REL (1) or ET_EXEC (2)", t)
	}
	if m := le.Uint16(b[18:]); m != elfMachineCUDA {
		return cubinErr(18, "ELF machine %d, not EM_CUDA (190)", m)
	}
	if s := le.Uint16(b[52:]); s != elfHeaderSize {
		return cubinErr(52, "ELF header size %d, not 64", s)
	}
	phoff, shoff := le.Uint64(b[32:]), le.Uint64(b[40:])
	phentsize, phnum := uint64(le.Uint16(b[54:])), uint64(le.Uint16(b[56:]))
	shentsize, shnum := uint64(le.Uint16(b[58:])), uint64(le.Uint16(b[60:]))
	shstrndx := uint64(le.Uint16(b[62:]))
	if shnum == 0 {
		// Also what extended numbering (more than 0xff00 sections) looks
		// like: no cubin has that many.
		return cubinErr(60, "no section headers (e_shnum 0)")
	}
	if shentsize != elfShdrSize {
		return cubinErr(58, "section header size %d, not 64", shentsize)
	}
	if err := tableInFile(shoff, shnum, elfShdrSize, n, 40, "section header table"); err != nil {
		return err
	}
	if phnum > 0 {
		if phentsize != elfPhdrSize {
			return cubinErr(54, "program header size %d, not 56", phentsize)
		}
		if err := tableInFile(phoff, phnum, elfPhdrSize, n, 32, "program header table"); err != nil {
			return err
		}
		if phoff < shoff+shnum*elfShdrSize && shoff < phoff+phnum*elfPhdrSize {
			return cubinErr(32, "program header table [%#x, %#x) overlaps the section header table [%#x, %#x)",
				phoff, phoff+phnum*elfPhdrSize, shoff, shoff+shnum*elfShdrSize)
		}
	}
	if shstrndx == 0 || shstrndx >= shnum {
		return cubinErr(62, "section name table index %d not in [1, %d)", shstrndx, shnum)
	}
	return nil
}

// tableInFile checks that a table of num entries of size each at off lies
// after the ELF header and inside a file of n bytes; field is the header
// offset of the table's offset, for the error.
func tableInFile(off, num, size, n, field uint64, what string) error {
	if off%8 != 0 {
		return cubinErr(field, "%s offset %#x not 8-byte aligned", what, off)
	}
	if off < elfHeaderSize {
		return cubinErr(field, "%s at %#x overlaps the ELF header", what, off)
	}
	if off > n || num*size > n-off {
		return cubinErr(field, "%s [%#x, %#x) past the end of the file (%#x bytes)", what, off, off+num*size, n)
	}
	return nil
}

// sections reads the section headers and checks each one on its own:
// name, bounds, alignment, link and info indices.
func (c *cubinChecker) sections() error {
	b := c.b
	n := uint64(len(b))
	shoff := le.Uint64(b[40:])
	shnum := int(le.Uint16(b[60:]))
	c.secs = make([]cubinSection, shnum)
	for i := range c.secs {
		h := b[shoff+uint64(i)*elfShdrSize:]
		c.secs[i] = cubinSection{
			name: le.Uint32(h[0:]), typ: le.Uint32(h[4:]), flags: le.Uint64(h[8:]),
			offset: le.Uint64(h[24:]), size: le.Uint64(h[32:]),
			link: le.Uint32(h[40:]), info: le.Uint32(h[44:]),
			addralign: le.Uint64(h[48:]), entsize: le.Uint64(h[56:]),
		}
	}
	if c.secs[0] != (cubinSection{}) {
		return cubinErr(shoff, "section 0 is not the null section")
	}
	shstrndx := int(le.Uint16(b[62:]))
	// The name table first, so that later messages can name sections.
	if err := c.stringTable(shstrndx, "section name table"); err != nil {
		return err
	}
	c.shstr = c.data(shstrndx)
	for i := 1; i < shnum; i++ {
		s := &c.secs[i]
		at := shoff + uint64(i)*elfShdrSize
		if uint64(s.name) >= uint64(len(c.shstr)) {
			return cubinErr(at, "section %d: name offset %#x outside the section name table (%#x bytes)", i, s.name, len(c.shstr))
		}
		if fileBacked(s.typ) && (s.offset > n || s.size > n-s.offset) {
			return cubinErr(at+24, "%s: offset+size %#x past the end of the file (%#x bytes)", c.secName(i), s.offset+s.size, n)
		}
		if s.addralign > 1 {
			if bits.OnesCount64(s.addralign) != 1 {
				return cubinErr(at+48, "%s: alignment %#x not a power of two", c.secName(i), s.addralign)
			}
			if fileBacked(s.typ) && s.size > 0 && s.offset%s.addralign != 0 {
				return cubinErr(at+24, "%s: offset %#x not aligned to %#x", c.secName(i), s.offset, s.addralign)
			}
		}
		if int(s.link) >= shnum {
			return cubinErr(at+40, "%s: sh_link %d not a section index (%d sections)", c.secName(i), s.link, shnum)
		}
		if (s.flags&shfInfoLink != 0 || s.typ == shtRel || s.typ == shtRela) && int(s.info) >= shnum {
			return cubinErr(at+44, "%s: sh_info %d not a section index (%d sections)", c.secName(i), s.info, shnum)
		}
	}
	return nil
}

// stringTable checks that section i is a string table whose strings all
// end inside it.
func (c *cubinChecker) stringTable(i int, what string) error {
	s := c.secs[i]
	at := le.Uint64(c.b[40:]) + uint64(i)*elfShdrSize
	if s.typ != shtStrtab {
		return cubinErr(at+4, "%s %s: type %#x, not SHT_STRTAB", what, c.secName(i), s.typ)
	}
	n := uint64(len(c.b))
	if s.offset > n || s.size > n-s.offset {
		return cubinErr(at+24, "%s %s: offset+size %#x past the end of the file (%#x bytes)", what, c.secName(i), s.offset+s.size, n)
	}
	d := c.data(i)
	if len(d) == 0 || d[0] != 0 || d[len(d)-1] != 0 {
		return cubinErr(s.offset, "%s %s: empty, or does not start and end with a NUL", what, c.secName(i))
	}
	return nil
}

// layout checks that no two file-backed sections overlap each other or
// the header tables.
func (c *cubinChecker) layout() error {
	type extent struct {
		off, end uint64
		sec      int // -1 ELF header, -2 section headers, -3 program headers
	}
	b := c.b
	ext := make([]extent, 0, len(c.secs)+3)
	ext = append(ext, extent{0, elfHeaderSize, -1})
	shoff := le.Uint64(b[40:])
	ext = append(ext, extent{shoff, shoff + uint64(len(c.secs))*elfShdrSize, -2})
	if phnum := uint64(le.Uint16(b[56:])); phnum > 0 {
		phoff := le.Uint64(b[32:])
		ext = append(ext, extent{phoff, phoff + phnum*elfPhdrSize, -3})
	}
	for i, s := range c.secs {
		if fileBacked(s.typ) && s.size > 0 {
			ext = append(ext, extent{s.offset, s.offset + s.size, i})
		}
	}
	slices.SortFunc(ext, func(x, y extent) int {
		if x.off != y.off {
			return cmpU64(x.off, y.off)
		}
		return cmpU64(x.end, y.end)
	})
	name := func(e extent) string {
		switch e.sec {
		case -1:
			return "the ELF header"
		case -2:
			return "the section header table"
		case -3:
			return "the program header table"
		}
		return c.secName(e.sec)
	}
	// Two sections may share exactly the same bytes (CUDA 13 debug images
	// alias .nv_debug_ptx_txt as .nv.merc.nv_debug_ptx_txt); any other
	// overlap is refused. Sorted, each extent is compared with the one
	// that reaches furthest before it.
	last := ext[0]
	for _, e := range ext[1:] {
		if e.off < last.end && (e.off != last.off || e.end != last.end || e.sec < 0 || last.sec < 0) {
			return cubinErr(e.off, "%s [%#x, %#x) overlaps %s [%#x, %#x)", name(e), e.off, e.end, name(last), last.off, last.end)
		}
		if e.end > last.end {
			last = e
		}
	}
	return nil
}

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// contents checks what section i holds, by type.
func (c *cubinChecker) contents(i int) error {
	switch s := c.secs[i]; s.typ {
	case shtStrtab:
		if s.size > 0 {
			return c.stringTable(i, "string table")
		}
	case shtSymtab, shtDynsym:
		return c.symbolTable(i)
	case shtRel, shtRela:
		return c.relocations(i)
	case shtCUDAInfo:
		return c.nvInfo(i)
	case shtCUDACallgraph:
		return c.callgraph(i)
	case shtNote:
		return c.notes(i)
	}
	return nil
}

// notes checks the framing of a note section (.note.nv.cuinfo,
// .note.nv.tkinfo): {uint32 namesz, descsz, type}, then the name and the
// descriptor, each padded to 4 bytes, inside the section.
func (c *cubinChecker) notes(i int) error {
	s := c.secs[i]
	d := c.data(i)
	for off := uint64(0); off < uint64(len(d)); {
		rest := uint64(len(d)) - off
		if rest < 12 {
			return cubinErr(s.offset+off, "%s: truncated note header at %#x", c.secName(i), off)
		}
		namesz, descsz := uint64(le.Uint32(d[off:])), uint64(le.Uint32(d[off+4:]))
		n := 12 + (namesz+3)&^3 + (descsz+3)&^3
		if n > rest {
			return cubinErr(s.offset+off, "%s: note at %#x (name %d, descriptor %d bytes) past the end of the section", c.secName(i), off, namesz, descsz)
		}
		off += n
	}
	return nil
}

// symtab checks that section i, which section user links to, is a symbol
// table and returns its number of symbols.
func (c *cubinChecker) symtab(i, user int) (uint64, error) {
	s := c.secs[i]
	if s.typ != shtSymtab && s.typ != shtDynsym {
		return 0, cubinErr(s.offset, "%s links to %s, not a symbol table", c.secName(user), c.secName(i))
	}
	return s.size / elfSymSize, nil
}

func (c *cubinChecker) symbolTable(i int) error {
	s := c.secs[i]
	if s.entsize != elfSymSize || s.size%elfSymSize != 0 {
		return cubinErr(s.offset, "%s: entry size %d and size %#x, want 24-byte entries", c.secName(i), s.entsize, s.size)
	}
	if err := c.stringTable(int(s.link), "string table"); err != nil {
		return err
	}
	nsym := s.size / elfSymSize
	if uint64(s.info) > nsym {
		return cubinErr(s.offset, "%s: sh_info %d (first global symbol) past its %d symbols", c.secName(i), s.info, nsym)
	}
	strtab := uint64(c.secs[s.link].size)
	d := c.data(i)
	if nsym > 0 && string(d[:elfSymSize]) != string(make([]byte, elfSymSize)) {
		return cubinErr(s.offset, "%s: symbol 0 is not the null symbol", c.secName(i))
	}
	for k := uint64(1); k < nsym; k++ {
		e := d[k*elfSymSize:]
		at := s.offset + k*elfSymSize
		name, info, shndx := le.Uint32(e[0:]), e[4], uint64(le.Uint16(e[6:]))
		value, size := le.Uint64(e[8:]), le.Uint64(e[16:])
		if uint64(name) >= strtab {
			return cubinErr(at, "%s: symbol %d: name offset %#x outside its string table (%#x bytes)", c.secName(i), k, name, strtab)
		}
		switch {
		case shndx == 0 || shndx == shnAbs || shndx == shnCommon:
			continue
		case shndx >= shnLoReserve || shndx >= uint64(len(c.secs)):
			return cubinErr(at+6, "%s: symbol %d: section index %#x not valid (%d sections)", c.secName(i), k, shndx, len(c.secs))
		}
		// A defined function or object lies inside its section (values
		// are section offsets in cubins).
		if t := info & 0xf; (t == 1 || t == 2) && size > 0 {
			if ss := c.secs[shndx].size; value > ss || size > ss-value {
				return cubinErr(at+8, "%s: symbol %d: [%#x, %#x) outside %s (%#x bytes)", c.secName(i), k, value, value+size, c.secName(int(shndx)), ss)
			}
		}
	}
	return nil
}

func (c *cubinChecker) relocations(i int) error {
	s := c.secs[i]
	want := uint64(elfRelSize)
	if s.typ == shtRela {
		want = elfRelaSize
	}
	if s.entsize != want || s.size%want != 0 {
		return cubinErr(s.offset, "%s: entry size %d and size %#x, want %d-byte entries", c.secName(i), s.entsize, s.size, want)
	}
	nsym, err := c.symtab(int(s.link), i)
	if err != nil {
		return err
	}
	if s.info == 0 {
		return cubinErr(s.offset, "%s: sh_info 0 names no section to relocate", c.secName(i))
	}
	target := c.secs[s.info].size
	d := c.data(i)
	for k := uint64(0); k < s.size/want; k++ {
		e := d[k*want:]
		off, sym := le.Uint64(e[0:]), le.Uint64(e[8:])>>32
		if sym >= nsym {
			return cubinErr(s.offset+k*want+8, "%s: relocation %d: symbol %d not in %s (%d symbols)", c.secName(i), k, sym, c.secName(int(s.link)), nsym)
		}
		if off >= target {
			return cubinErr(s.offset+k*want, "%s: relocation %d: offset %#x outside %s (%#x bytes)", c.secName(i), k, off, c.secName(int(s.info)), target)
		}
	}
	return nil
}

// nvInfo checks the attribute records of a .nv.info section. Those of a
// kernel (.nv.info.<kernel>) name its code section in sh_info.
func (c *cubinChecker) nvInfo(i int) error {
	s := c.secs[i]
	d := c.data(i)
	var nsym uint64
	var symErr error
	if s.link != 0 {
		nsym, symErr = c.symtab(int(s.link), i)
	} else {
		symErr = cubinErr(s.offset, "%s: sh_link 0 names no symbol table", c.secName(i))
	}
	code := int(s.info) // the kernel's code section, or 0
	for off := 0; off < len(d); {
		at := s.offset + uint64(off)
		if len(d)-off < 4 {
			return cubinErr(at, "%s: truncated attribute record at %#x", c.secName(i), off)
		}
		format, attr := d[off], d[off+1]
		n := 4
		switch format {
		case eifmtNVAL, eifmtBVAL, eifmtHVAL:
		case eifmtSVAL:
			n += int(le.Uint16(d[off+2:]))
			if n > len(d)-off {
				return cubinErr(at, "%s: attribute %#x at %#x: %d value bytes past the end of the section", c.secName(i), attr, off, n-4)
			}
		default:
			return cubinErr(at, "%s: attribute %#x at %#x: unknown format %d", c.secName(i), attr, off, format)
		}
		val := d[off+4 : off+n]
		off += n
		if format != eifmtSVAL {
			continue
		}
		switch attr {
		case eiattrRegcount, eiattrFrameSize, eiattrMinStackSize, eiattrMaxStackSize, eiattrParamCbank, eiattrExterns:
			if symErr != nil {
				return symErr
			}
			if len(val) < 4 || len(val)%4 != 0 {
				return cubinErr(at, "%s: attribute %#x: value of %d bytes, want 4-byte words", c.secName(i), attr, len(val))
			}
			m := 1
			if attr == eiattrExterns {
				m = len(val) / 4
			}
			for k := range m {
				if sym := uint64(le.Uint32(val[4*k:])); sym >= nsym {
					return cubinErr(at, "%s: attribute %#x: symbol %d not in %s (%d symbols)", c.secName(i), attr, sym, c.secName(int(s.link)), nsym)
				}
			}
		case eiattrExitInstrOffsets, eiattrS2RCtaidOffsets, eiattrCoopGroupOffsets, eiattrIntWarpWideOffsets, eiattrSyscallOffsets:
			if len(val)%4 != 0 {
				return cubinErr(at, "%s: attribute %#x: value of %d bytes, want 4-byte offsets", c.secName(i), attr, len(val))
			}
			if code == 0 || code >= len(c.secs) {
				return cubinErr(at, "%s: attribute %#x lists instruction offsets but sh_info %d names no code section", c.secName(i), attr, code)
			}
			size := c.secs[code].size
			for k := 0; k < len(val); k += 4 {
				if o := uint64(le.Uint32(val[k:])); o >= size {
					return cubinErr(at, "%s: attribute %#x: instruction offset %#x outside %s (%#x bytes)", c.secName(i), attr, o, c.secName(code), size)
				}
			}
		}
	}
	return nil
}

// callgraph checks .nv.callgraph: pairs of uint32 symbol indices (caller,
// callee), where a callee may be one of the markers 0xffffffff..0xfffffffc.
func (c *cubinChecker) callgraph(i int) error {
	s := c.secs[i]
	if s.size%8 != 0 {
		return cubinErr(s.offset, "%s: size %#x not a multiple of 8", c.secName(i), s.size)
	}
	nsym, err := c.symtab(int(s.link), i)
	if err != nil {
		return err
	}
	d := c.data(i)
	for k := 0; k < len(d); k += 4 {
		if v := uint64(le.Uint32(d[k:])); v >= nsym && v < 0xfffffff0 {
			return cubinErr(s.offset+uint64(k), "%s: symbol %d not in %s (%d symbols)", c.secName(i), v, c.secName(int(s.link)), nsym)
		}
	}
	return nil
}

func (c *cubinChecker) programHeaders() error {
	b := c.b
	n := uint64(len(b))
	phoff, phnum := le.Uint64(b[32:]), int(le.Uint16(b[56:]))
	for k := range phnum {
		at := phoff + uint64(k)*elfPhdrSize
		h := b[at:]
		off, filesz, align := le.Uint64(h[8:]), le.Uint64(h[32:]), le.Uint64(h[48:])
		if off > n || filesz > n-off {
			return cubinErr(at+8, "program header %d: offset+size %#x past the end of the file (%#x bytes)", k, off+filesz, n)
		}
		if align > 1 && bits.OnesCount64(align) != 1 {
			return cubinErr(at+48, "program header %d: alignment %#x not a power of two", k, align)
		}
	}
	return nil
}

// ValidateCubins checks every cubin of f, as the driver would find them:
// each entry cuobjdump lists as ELF (Kind.IsELF) is decompressed by Data
// and checked by ValidateCubin. It returns nil or the first failure,
// naming the entry (errors.As finds a *CubinError when the image itself is
// at fault). PTX, LTO-IR and other kinds are not checked.
func (f *File) ValidateCubins() error {
	for _, e := range f.Entries {
		if !e.Kind.IsELF() {
			continue
		}
		d := e.raw // what Data returns for a stored ELF entry, without the copy
		if e.Compressed || e.Obfuscated {
			var err error
			if d, err = e.Data(); err != nil {
				return err
			}
		}
		if err := ValidateCubin(d); err != nil {
			return fmt.Errorf("fatbin: entry %d at offset %#x (%s %s): %w", e.Index, e.Offset, e.Kind, e.ArchName(), err)
		}
	}
	return nil
}
