package fatbin

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// ArchiveMagic starts an ar archive (static library), as nvcc -lib writes.
const ArchiveMagic = "!<arch>\n"

const (
	thinArchiveMagic = "!<thin>\n"
	arHeaderSize     = 60 // name 16, date 12, uid 6, gid 6, mode 8, size 10, "`\n"
)

// Member is one object of an ar archive. Its containers are those whose
// Member field is its index in File.Members.
type Member struct {
	Name   string // as ar t prints it
	Offset int64  // offset of its data (after the header and any BSD name) in the archive
	Size   int64  // data size
}

// IsArchive reports whether b starts with the ar archive magic.
func IsArchive(b []byte) bool { return bytes.HasPrefix(b, []byte(ArchiveMagic)) }

// ParseArchive parses the fat binaries of the members of the ar archive b,
// as nvcc -lib writes. Members that are host ELF objects are read as
// ParseELF reads them, members that are raw fat binaries as Parse reads
// them; members of neither kind, and ELF objects without device code, are
// listed in File.Members with no containers. GNU long names ("//" table and
// "/N" references, "/" and "/SYM64/" symbol tables) and BSD long names
// ("#1/N", "__.SYMDEF" symbol tables) are understood. Offsets are archive
// offsets. It is an error when no member holds a fat binary.
func ParseArchive(b []byte) (*File, error) {
	if !IsArchive(b) {
		if bytes.HasPrefix(b, []byte(thinArchiveMagic)) {
			return nil, errf(-1, 0, "thin ar archive (its members are separate files): not supported")
		}
		return nil, errf(-1, 0, "not an ar archive (no %q magic)", strings.TrimSuffix(ArchiveMagic, "\n"))
	}
	f := &File{}
	var longNames []byte
	for off := int64(len(ArchiveMagic)); off < int64(len(b)); {
		if rem := int64(len(b)) - off; rem < arHeaderSize {
			if rem == 1 && b[off] == '\n' { // padding of the last member
				break
			}
			return nil, errf(-1, off, "truncated ar member header (%d bytes, need %d)", rem, arHeaderSize)
		}
		h := b[off : off+arHeaderSize]
		if string(h[58:60]) != "`\n" {
			return nil, errf(-1, off, "bad ar member header (ends in %q, want %q)", h[58:60], "`\n")
		}
		sizeField := strings.TrimRight(string(h[48:58]), " ")
		size, err := strconv.ParseInt(sizeField, 10, 64)
		if err != nil || size < 0 {
			return nil, errf(-1, off+48, "bad ar member size %q", sizeField)
		}
		data := off + arHeaderSize
		if size > int64(len(b))-data {
			return nil, errf(-1, off+48, "ar member size %d exceeds file (remaining %d)", size, int64(len(b))-data)
		}
		next := data + size + size&1 // members start at even offsets
		rawName := strings.TrimRight(string(h[:16]), " ")
		var name string
		switch {
		case rawName == "/" || rawName == "/SYM64/": // GNU symbol tables
			off = next
			continue
		case rawName == "//": // GNU long name table
			longNames = b[data : data+size]
			off = next
			continue
		case strings.HasPrefix(rawName, "#1/"): // BSD: the name leads the data
			n, err := strconv.ParseInt(rawName[3:], 10, 64)
			if err != nil || n < 0 || n > size {
				return nil, errf(-1, off, "bad BSD ar member name %q (member size %d)", rawName, size)
			}
			name = strings.TrimRight(string(b[data:data+n]), "\x00")
			data += n
			size -= n
		case len(rawName) > 1 && rawName[0] == '/' && rawName[1] >= '0' && rawName[1] <= '9': // GNU "/N"
			n, err := strconv.ParseInt(rawName[1:], 10, 64)
			if err != nil || n < 0 || n >= int64(len(longNames)) {
				return nil, errf(-1, off, "ar member name %q: offset outside the long name table (%d bytes)", rawName, len(longNames))
			}
			s := longNames[n:]
			if i := bytes.IndexByte(s, '\n'); i >= 0 {
				s = s[:i]
			}
			name = strings.TrimSuffix(string(s), "/")
		default:
			name = strings.TrimSuffix(rawName, "/")
		}
		if name == "__.SYMDEF" || name == "__.SYMDEF SORTED" || name == "__.SYMDEF_64" || name == "__.SYMDEF_64 SORTED" {
			off = next
			continue
		}
		if err := f.readMember(b[data:data+size], Member{Name: name, Offset: data, Size: size}); err != nil {
			return nil, err
		}
		off = next
	}
	if len(f.Containers) == 0 {
		return nil, errf(-1, 0, "no fat binary in ar archive (%d members)", len(f.Members))
	}
	f.renumber() // Entries and their numbers, over all members
	return f, nil
}

// memberError locates an error inside an archive member; it unwraps to the
// member's own error (a *FormatError for a bad fat binary).
type memberError struct {
	name string
	off  int64
	err  error
}

func (e *memberError) Error() string {
	return fmt.Sprintf("fatbin: ar member %q at offset %#x: %s", e.name, e.off, strings.TrimPrefix(e.err.Error(), "fatbin: "))
}

func (e *memberError) Unwrap() error { return e.err }

// readMember adds m and the containers of its data b to f; the caller
// renumbers the entries.
func (f *File) readMember(b []byte, m Member) error {
	mi := len(f.Members)
	f.Members = append(f.Members, &m)
	var sub *File
	var err error
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		sub, err = readELFFile(bytes.NewReader(b), int64(len(b)))
	case len(b) >= 4 && le.Uint32(b) == Magic:
		sub = &File{}
		err = sub.parseContainers(b, 0, "")
	default:
		return nil // not an object cuobjdump reads
	}
	if err != nil {
		return &memberError{m.Name, m.Offset, err}
	}
	for _, c := range sub.Containers {
		c.Offset += m.Offset
		c.Member = mi
		for _, e := range c.Entries {
			e.Offset += m.Offset
			e.DataOffset += m.Offset
		}
		f.Containers = append(f.Containers, c)
	}
	return nil
}
