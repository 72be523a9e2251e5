package fatbin

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Extension returns the file name extension cuobjdump uses for entries of
// kind k: ".cubin" for ELF, ".ptx" for PTX (see IsELF, IsPTX). cuobjdump does
// not extract other kinds; this package names them ".ltoir" (LTO-IR) and
// ".bin".
func (k Kind) Extension() string {
	switch {
	case k.IsELF():
		return ".cubin"
	case k.IsPTX():
		return ".ptx"
	case k == KindLTOIR:
		return ".ltoir"
	}
	return ".bin"
}

// class groups the kinds that cuobjdump numbers together.
func (k Kind) class() Kind {
	switch {
	case k.IsELF():
		return KindELF
	case k.IsPTX():
		return KindPTX
	}
	return k
}

// Ordinal returns the 1-based number of entry i among the ELF entries, or the
// PTX entries, in file order (the number cuobjdump prints in "ELF file    3:
// ..."); for other kinds, among the entries of the same kind. It returns 0 if
// i is out of range.
func (f *File) Ordinal(i int) int {
	if i < 0 || i >= len(f.Entries) {
		return 0
	}
	c := f.Entries[i].Kind.class()
	n := 0
	for _, e := range f.Entries[:i+1] {
		if e.Kind.class() == c {
			n++
		}
	}
	return n
}

// ExtractName returns the file name under which cuobjdump -xelf all -xptx all
// writes entry i when run on the file at path (only the last element of path
// matters). Entries with an identifier are named after it,
// "<identifier stem>.<arch>.<ext>" (x.cu -> x.sm_90.cubin); the others after
// the input file, "<file stem>.<n>.<arch>.<ext>" (app.fatbin ->
// app.1.sm_90.cubin), where n is Ordinal(i). A stem is the last path element
// without its last extension. It returns "" if i is out of range.
func (f *File) ExtractName(i int, path string) string {
	if i < 0 || i >= len(f.Entries) {
		return ""
	}
	return f.extractName(f.Entries[i], f.Ordinal(i), path)
}

func (f *File) extractName(e *Entry, ordinal int, path string) string {
	if e.Identifier != "" {
		return stem(e.Identifier) + "." + e.ArchName() + e.Kind.Extension()
	}
	return fmt.Sprintf("%s.%d.%s%s", stem(path), ordinal, e.ArchName(), e.Kind.Extension())
}

// stem returns the last '/'-separated element of p without its last
// extension: "/a/b.c.cu" -> "b.c", ".hidden" -> "", "dir/" -> "".
func stem(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		p = p[:i]
	}
	return p
}

// List writes the lines that cuobjdump -lelf -lptx prints for the file at
// path, one per ELF or PTX entry (see Kind.IsELF, Kind.IsPTX) in file order:
//
//	ELF file    1: app.1.sm_80.cubin
//	PTX file    1: app.1.sm_90.ptx
//
// For an archive, each member's lines follow a blank line and a line naming
// it, "member /abs/libk.a:k.o:", where a relative path is joined to the
// current directory (uncleaned, as cuobjdump does); numbering goes on
// across members.
func (f *File) List(w io.Writer, path string) error {
	var nelf, nptx int
	list := func(e *Entry) error {
		var label string
		var n int
		switch {
		case e.Kind.IsELF():
			nelf++
			label, n = "ELF", nelf
		case e.Kind.IsPTX():
			nptx++
			label, n = "PTX", nptx
		default:
			return nil
		}
		name := f.extractName(e, n, path)
		_, err := fmt.Fprintf(w, "%s file %4d: %s\n", label, n, name)
		return err
	}
	if f.Members == nil {
		for _, e := range f.Entries {
			if err := list(e); err != nil {
				return err
			}
		}
		return nil
	}
	apath := path
	if !strings.HasPrefix(path, "/") {
		if wd, err := os.Getwd(); err == nil {
			apath = strings.TrimSuffix(wd, "/") + "/" + path
		}
	}
	next := 0 // entries are in member order
	for mi, m := range f.Members {
		if _, err := fmt.Fprintf(w, "\nmember %s:%s:\n", apath, m.Name); err != nil {
			return err
		}
		for ; next < len(f.Entries) && f.Containers[f.Entries[next].Container].Member == mi; next++ {
			if err := list(f.Entries[next]); err != nil {
				return err
			}
		}
	}
	return nil
}
