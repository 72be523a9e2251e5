package fatbin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
)

// Names of the host ELF sections that hold fat binaries.
const (
	SectionFatbin    = ".nv_fatbin"       // fat binaries of whole-program (and linked) code
	SectionRelFatbin = "__nv_relfatbin"   // fat binaries of relocatable device code (-rdc) objects
	SectionWrapper   = ".nvFatBinSegment" // __fatBinC_Wrapper_t records pointing at them
)

// Open reads the file at path, which may be a raw fat binary (nvcc -fatbin,
// fatbinary, nvFatbin output), a host ELF (object, executable or shared
// library) with embedded fat binaries (see ParseELF for which sections are
// read) or an ar archive of such objects (see ParseArchive).
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var magic [4]byte
	if _, err := io.ReadFull(fh, magic[:]); err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if string(magic[:]) == "\x7fELF" {
		st, err := fh.Stat()
		if err != nil {
			return nil, err
		}
		return readELF(fh, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// ParseELF parses the fat binaries embedded in the host ELF file b. Like
// cuobjdump it reads the .nv_fatbin sections, or when there are none (as in
// objects compiled with -rdc) the __nv_relfatbin sections. When neither
// exists it follows the wrapper records (magic 0x466243B1) of the
// .nvFatBinSegment section to the containers they point at. Container and
// entry offsets are file offsets.
func ParseELF(b []byte) (*File, error) {
	return readELF(bytes.NewReader(b), int64(len(b)))
}

// readELF reads the fat binaries of the ELF file r, which is size bytes long,
// failing when there are none.
func readELF(r io.ReaderAt, size int64) (*File, error) {
	f, err := readELFFile(r, size)
	if err != nil {
		return nil, err
	}
	if len(f.Containers) == 0 {
		return nil, fmt.Errorf("fatbin: no fat binary in ELF file (no %s, %s or %s section)", SectionFatbin, SectionRelFatbin, SectionWrapper)
	}
	return f, nil
}

// readELFFile is readELF, except that an ELF file without fat binaries (a
// host-only object in an archive) gives a File with no containers.
func readELFFile(r io.ReaderAt, size int64) (f *File, err error) {
	// debug/elf is meant to return errors on malformed input; make sure a
	// panic in it on some corner case surfaces as an error all the same.
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("fatbin: malformed ELF file: %v", p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %w", err)
	}
	f = &File{}
	found := false
	for _, name := range []string{SectionFatbin, SectionRelFatbin} {
		for _, s := range ef.Sections {
			if s.Name != name {
				continue
			}
			found = true
			if err := f.readSection(s); err != nil {
				return nil, err
			}
		}
		if found {
			break
		}
	}
	if !found {
		if err := f.readWrappers(ef, r, size); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *File) readSection(s *elf.Section) error {
	if s.Type == elf.SHT_NOBITS {
		return fmt.Errorf("fatbin: section %s has no data in the file", s.Name)
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return fmt.Errorf("fatbin: section %s is compressed", s.Name)
	}
	data, err := s.Data()
	if err != nil {
		return fmt.Errorf("fatbin: section %s at offset %#x: %w", s.Name, s.Offset, err)
	}
	if len(data) == 0 {
		return nil
	}
	return f.parseContainers(data, int64(s.Offset), s.Name)
}

// readWrappers follows the data pointers of the __fatBinC_Wrapper_t records
// ({int32 magic; int32 version; ptr data; ptr filename_or_fatbins}) in the
// .nvFatBinSegment section.
func (f *File) readWrappers(ef *elf.File, r io.ReaderAt, size int64) error {
	ws := ef.Section(SectionWrapper)
	if ws == nil || ws.Type == elf.SHT_NOBITS {
		return nil
	}
	if ws.Flags&elf.SHF_COMPRESSED != 0 {
		return fmt.Errorf("fatbin: section %s is compressed", ws.Name)
	}
	data, err := ws.Data()
	if err != nil {
		return fmt.Errorf("fatbin: section %s at offset %#x: %w", ws.Name, ws.Offset, err)
	}
	ptrSize, rec := 8, 24
	if ef.Class == elf.ELFCLASS32 {
		ptrSize, rec = 4, 16
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if ef.ByteOrder != nil {
		bo = ef.ByteOrder
	}
	seen := map[uint64]bool{}
	for off := 0; off+rec <= len(data); off += rec {
		w := data[off : off+rec]
		if bo.Uint32(w) != WrapperMagic {
			continue
		}
		var va uint64
		if ptrSize == 8 {
			va = bo.Uint64(w[8:])
		} else {
			va = uint64(bo.Uint32(w[8:]))
		}
		if va == 0 || seen[va] { // unrelocated (object file) or duplicate
			continue
		}
		seen[va] = true
		fileOff, avail, ok := vaToOffset(ef, va)
		if !ok {
			return fmt.Errorf("fatbin: wrapper at offset %#x: data address %#x is not in the file", int64(ws.Offset)+int64(off), va)
		}
		if fileOff >= uint64(size) {
			return fmt.Errorf("fatbin: wrapper at offset %#x: data offset %#x is past the end of the file", int64(ws.Offset)+int64(off), fileOff)
		}
		avail = min(avail, uint64(size)-fileOff)
		if avail < ContainerHeaderSize {
			return errf(-1, int64(fileOff), "truncated container header (%d bytes, need %d)", avail, ContainerHeaderSize)
		}
		var hdr [ContainerHeaderSize]byte
		if _, err := r.ReadAt(hdr[:], int64(fileOff)); err != nil {
			return fmt.Errorf("fatbin: reading container at offset %#x: %w", fileOff, err)
		}
		if le.Uint32(hdr[:]) != Magic {
			return errf(-1, int64(fileOff), "bad magic %#08x (want %#08x)", le.Uint32(hdr[:]), uint32(Magic))
		}
		total := uint64(le.Uint16(hdr[6:])) + le.Uint64(hdr[8:])
		if total < ContainerHeaderSize || total > avail {
			return errf(-1, int64(fileOff), "container size %d exceeds file (remaining %d)", total, avail)
		}
		buf := make([]byte, total) // bounded by the file size
		if _, err := r.ReadAt(buf, int64(fileOff)); err != nil {
			return fmt.Errorf("fatbin: reading container at offset %#x: %w", fileOff, err)
		}
		if _, err := f.parseContainer(buf, int64(fileOff), SectionWrapper); err != nil {
			return err
		}
	}
	sort.SliceStable(f.Containers, func(i, j int) bool { return f.Containers[i].Offset < f.Containers[j].Offset })
	f.renumber()
	return nil
}

// vaToOffset maps a virtual address to a file offset using the sections with
// file data, then the loadable segments. avail is the number of file bytes
// from there to the end of that section or segment.
func vaToOffset(ef *elf.File, va uint64) (off, avail uint64, ok bool) {
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 || s.Addr == 0 {
			continue
		}
		if va >= s.Addr && va-s.Addr < s.Size {
			d := va - s.Addr
			return s.Offset + d, s.Size - d, true
		}
	}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if va >= p.Vaddr && va-p.Vaddr < p.Filesz {
			d := va - p.Vaddr
			return p.Off + d, p.Filesz - d, true
		}
	}
	return 0, 0, false
}

// renumber restores Index/Container numbering after containers were
// reordered.
func (f *File) renumber() {
	f.Entries = f.Entries[:0]
	for ci, c := range f.Containers {
		for _, e := range c.Entries {
			e.Container = ci
			e.Index = len(f.Entries)
			f.Entries = append(f.Entries, e)
		}
	}
}
