package testenv

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"slices"
	"testing"
)

// CubinELF parses a CUBIN with debug/elf and returns the file and its SM
// number, failing t when it is not a 64-bit little-endian CUDA ELF. CUDA
// ELFs carry e_version = 124 (EV_CURRENT+123), which debug/elf rejects,
// so the header is normalised on a copy first.
func CubinELF(t testing.TB, cubin []byte) (*elf.File, int) {
	t.Helper()
	if len(cubin) < 64 || !bytes.HasPrefix(cubin, []byte(elf.ELFMAG)) {
		t.Fatalf("not an ELF: % x", cubin[:min(len(cubin), 16)])
	}
	if elf.Class(cubin[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(cubin[elf.EI_DATA]) != elf.ELFDATA2LSB {
		t.Fatalf("CUBIN is not a 64-bit little-endian ELF: % x", cubin[:16])
	}
	b := bytes.Clone(cubin)
	binary.LittleEndian.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("debug/elf: %v", err)
	}
	if f.Machine != elf.EM_CUDA { // 190
		t.Fatalf("e_machine = %v, want EM_CUDA (190)", f.Machine)
	}
	flags := binary.LittleEndian.Uint32(cubin[48:])
	// CUDA ELF ABI up to version 7 (CUDA 12) keeps the SM in e_flags' low
	// byte (sm_80 -> 0x500550); ABI 8 (CUDA 13) moved it to bits 8..15.
	sm := int(flags & 0xff)
	if f.ABIVersion >= 8 {
		sm = int(flags>>8) & 0xff
	}
	return f, sm
}

// HasFunc reports whether f defines the function symbol name.
func HasFunc(t testing.TB, f *elf.File, name string) bool {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("Symbols: %v", err)
	}
	return slices.ContainsFunc(syms, func(s elf.Symbol) bool {
		return s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC
	})
}
