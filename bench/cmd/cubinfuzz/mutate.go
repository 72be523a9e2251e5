package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/cudago/cudago/fatbin"
)

var le = binary.LittleEndian

// region is a table in the seed image: where it is and its entry size.
type region struct {
	off, size, entsize uint64
}

// seedImage is the cubin the mutations start from, with the places of the
// structures that the field-targeted mutations edit.
type seedImage struct {
	img     []byte
	kernels []string // entry points, looked up after each load

	ehdrFields []field
	shdrs      []uint64 // file offsets of the section headers
	phdrs      []uint64 // file offsets of the program headers
	symtabs    []region
	relocs     []region
	nvinfo     []uint64 // file offsets of the .nv.info attribute records
}

// field is a header field: its offset and width in bytes.
type field struct {
	off   uint64
	width int
}

var (
	ehdrFields = []field{{4, 1}, {5, 1}, {6, 1}, {7, 1}, {8, 1}, {16, 2}, {18, 2}, {20, 4}, {24, 8},
		{32, 8}, {40, 8}, {48, 4}, {52, 2}, {54, 2}, {56, 2}, {58, 2}, {60, 2}, {62, 2}}
	shdrFields = []field{{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 4}, {44, 4}, {48, 8}, {56, 8}}
	phdrFields = []field{{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 8}, {48, 8}}
	symFields  = []field{{0, 4}, {4, 1}, {5, 1}, {6, 2}, {8, 8}, {16, 8}}
	relFields  = []field{{0, 8}, {8, 4}, {12, 4}, {16, 8}} // the addend only in RELA
)

// newSeed checks the seed (it must pass the validator: the campaign
// measures what damage does to a sound image) and finds its structures.
func newSeed(img []byte) (*seedImage, error) {
	if err := fatbin.ValidateCubin(img); err != nil {
		return nil, fmt.Errorf("the seed is not a sound cubin: %w", err)
	}
	s := &seedImage{img: img, ehdrFields: ehdrFields}
	shoff, shnum := le.Uint64(img[40:]), uint64(le.Uint16(img[60:]))
	for i := range shnum {
		h := shoff + i*64
		s.shdrs = append(s.shdrs, h)
		typ, off, size, entsize := le.Uint32(img[h+4:]), le.Uint64(img[h+24:]), le.Uint64(img[h+32:]), le.Uint64(img[h+56:])
		switch typ {
		case uint32(elf.SHT_SYMTAB):
			s.symtabs = append(s.symtabs, region{off, size, 24})
		case uint32(elf.SHT_REL), uint32(elf.SHT_RELA):
			if size > 0 {
				s.relocs = append(s.relocs, region{off, size, entsize})
			}
		case 0x70000000: // SHT_CUDA_INFO: records {fmt, attr, u16 size-or-value, ...}
			for p := off; p+4 <= off+size; {
				s.nvinfo = append(s.nvinfo, p)
				n := uint64(4)
				if img[p] == 4 {
					n += uint64(le.Uint16(img[p+2:]))
				}
				p += n
			}
		}
	}
	phoff, phnum := le.Uint64(img[32:]), uint64(le.Uint16(img[56:]))
	for i := range phnum {
		s.phdrs = append(s.phdrs, phoff+i*56)
	}
	s.kernels = kernelNames(img)
	if len(s.kernels) == 0 {
		return nil, errors.New("the seed has no kernel")
	}
	return s, nil
}

// kernelNames lists the entry points of a cubin (STT_FUNC symbols marked
// STO_CUDA_ENTRY). CUDA writes its ABI version into e_version, which
// debug/elf refuses: it reads a copy with e_version 1.
func kernelNames(img []byte) []string {
	b := bytes.Clone(img)
	le.PutUint32(b[20:], 1)
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	var out []string
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && sym.Other&0x10 != 0 {
			out = append(out, sym.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Mutation kinds, with their weights (out of 100).
var kinds = []struct {
	name   string
	weight int
}{
	{"bitflip", 20}, // 1 to 4 random bits anywhere
	{"byte", 10},    // 1 to 4 bytes anywhere set to 0, 0xff, 0x7f, 0x80 or random
	{"ehdr", 10},    // one ELF header field
	{"shdr", 20},    // one field of one section header
	{"phdr", 5},     // one field of one program header
	{"sym", 10},     // one field of one symbol
	{"reloc", 7},    // one field of one relocation
	{"nvinfo", 12},  // one .nv.info record: format, attribute, size or a value word
	{"truncate", 6}, // cut the image short
}

// kindNames lists the mutation kinds in table order.
func kindNames() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}

// mutate returns mutation i of the campaign with PRNG seed seed, and its
// kind. It depends on (seed, i) only, so that a child process makes the
// same image as its parent and a mutation can be made again alone.
func (s *seedImage) mutate(seed uint64, i int) ([]byte, string) {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	b := bytes.Clone(s.img)
	n := len(b)
	w := r.IntN(100)
	kind := kinds[len(kinds)-1].name
	for _, k := range kinds {
		if w < k.weight {
			kind = k.name
			break
		}
		w -= k.weight
	}
	pick := func(offs []uint64) (uint64, bool) {
		if len(offs) == 0 {
			return 0, false
		}
		return offs[r.IntN(len(offs))], true
	}
	switch kind {
	case "bitflip":
		for range 1 + r.IntN(4) {
			b[r.IntN(n)] ^= 1 << r.IntN(8)
		}
	case "byte":
		for range 1 + r.IntN(4) {
			b[r.IntN(n)] = []byte{0, 0xff, 0x7f, 0x80, byte(r.Uint32())}[r.IntN(5)]
		}
	case "ehdr":
		s.editField(r, b, 0, ehdrFields)
	case "shdr":
		if h, ok := pick(s.shdrs); ok {
			s.editField(r, b, h, shdrFields)
		}
	case "phdr":
		if h, ok := pick(s.phdrs); ok {
			s.editField(r, b, h, phdrFields)
		} else {
			s.editField(r, b, 0, ehdrFields)
		}
	case "sym":
		if len(s.symtabs) > 0 {
			t := s.symtabs[r.IntN(len(s.symtabs))]
			if cnt := t.size / 24; cnt > 1 {
				s.editField(r, b, t.off+(1+r.Uint64N(cnt-1))*24, symFields)
			}
		}
	case "reloc":
		if len(s.relocs) > 0 {
			t := s.relocs[r.IntN(len(s.relocs))]
			fields := relFields
			if t.entsize != 24 {
				fields = fields[:3]
			}
			if t.entsize > 0 && t.size/t.entsize > 0 {
				s.editField(r, b, t.off+r.Uint64N(t.size/t.entsize)*t.entsize, fields)
			}
		}
	case "nvinfo":
		if p, ok := pick(s.nvinfo); ok {
			switch r.IntN(4) {
			case 0:
				b[p] = byte(r.IntN(6)) // format: 0..5, valid ones are 1..4
			case 1:
				b[p+1] = byte(r.Uint32()) // attribute
			case 2:
				s.set(r, b, field{p + 2, 2}) // size or value
			default:
				if b[p] == 4 {
					if size := uint64(le.Uint16(s.img[p+2:])); size >= 4 {
						s.set(r, b, field{p + 4 + 4*r.Uint64N(size/4), 4})
						break
					}
				}
				s.set(r, b, field{p + 2, 2})
			}
		}
	case "truncate":
		b = b[:r.IntN(n)]
	}
	return b, kind
}

// editField sets one of fields of the structure at base.
func (s *seedImage) editField(r *rand.Rand, b []byte, base uint64, fields []field) {
	f := fields[r.IntN(len(fields))]
	s.set(r, b, field{base + f.off, f.width})
}

// set writes an interesting value to field f: 0, 1, all ones, the sign
// bit, the old value nudged or with one bit flipped, doubled, the image
// size and its neighbours, a random value in [0, 2*size) or at random.
func (s *seedImage) set(r *rand.Rand, b []byte, f field) {
	if f.off+uint64(f.width) > uint64(len(b)) {
		return
	}
	var old uint64
	switch f.width {
	case 1:
		old = uint64(b[f.off])
	case 2:
		old = uint64(le.Uint16(b[f.off:]))
	case 4:
		old = uint64(le.Uint32(b[f.off:]))
	case 8:
		old = le.Uint64(b[f.off:])
	}
	bitsN := uint(8 * f.width)
	mask := uint64(1)<<bitsN - 1
	if bitsN == 64 {
		mask = ^uint64(0)
	}
	size := uint64(len(s.img))
	var v uint64
	switch r.IntN(14) {
	case 0:
		v = 0
	case 1:
		v = 1
	case 2:
		v = mask
	case 3:
		v = mask >> 1
	case 4:
		v = (mask >> 1) + 1
	case 5:
		v = old + 1
	case 6:
		v = old - 1
	case 7:
		v = old + 1 + r.Uint64N(64)
	case 8:
		v = old ^ 1<<r.UintN(bitsN)
	case 9:
		v = old * 2
	case 10:
		v = size
	case 11:
		v = size - 1 - r.Uint64N(16)
	case 12:
		v = r.Uint64N(2 * size)
	default:
		v = r.Uint64()
	}
	v &= mask
	switch f.width {
	case 1:
		b[f.off] = byte(v)
	case 2:
		le.PutUint16(b[f.off:], uint16(v))
	case 4:
		le.PutUint32(b[f.off:], uint32(v))
	case 8:
		le.PutUint64(b[f.off:], v)
	}
}
