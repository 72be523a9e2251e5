package fatbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// arMember is one member for arArchive.
type arMember struct {
	name string
	data []byte
}

// arArchive builds an ar archive as GNU ar (style "gnu": "/" symbol table,
// "//" long name table for names over 15 bytes) or BSD ar (style "bsd":
// "__.SYMDEF" symbol table, "#1/N" for long names) writes it.
func arArchive(style string, members ...arMember) []byte {
	var b bytes.Buffer
	b.WriteString(ArchiveMagic)
	add := func(name string, data []byte) {
		fmt.Fprintf(&b, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", "644", len(data))
		b.Write(data)
		if len(data)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	symtab := []byte{0, 0, 0, 0} // no symbols
	if style == "bsd" {
		add("__.SYMDEF", symtab)
		for _, m := range members {
			if len(m.name) > 16 || strings.Contains(m.name, " ") {
				add(fmt.Sprintf("#1/%d", len(m.name)), append([]byte(m.name), m.data...))
			} else {
				add(m.name, m.data)
			}
		}
		return b.Bytes()
	}
	add("/", symtab)
	var long []byte
	names := make([]string, len(members))
	for i, m := range members {
		if len(m.name) > 15 {
			names[i] = fmt.Sprintf("/%d", len(long))
			long = append(long, m.name+"/\n"...)
		} else {
			names[i] = m.name + "/"
		}
	}
	if len(long) > 0 {
		add("//", long)
	}
	for i, m := range members {
		add(names[i], m.data)
	}
	return b.Bytes()
}

func TestArchive(t *testing.T) {
	obj := readTestdata(t, "cuda12.4/xrdc.o")
	ref, err := ParseELF(obj)
	if err != nil {
		t.Fatal(err)
	}
	raw := container(synth{kind: KindELF, arch: 75, payload: []byte("\x7fELF\x02\x01\x01\x00")}.build(), ptxEntry(".version 8.4").build())
	text := []byte("just some text\n")
	for _, style := range []string{"gnu", "bsd"} {
		t.Run(style, func(t *testing.T) {
			a := arArchive(style,
				arMember{"tmpxft_00006afb_00000000-13_k.o", obj},
				arMember{"notes.txt", text},
				arMember{"r.fatbin", raw},
				arMember{"tmpxft_00006afb_00000000-16_m with space.o", obj},
			)
			f, err := exercise(t, a)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range f.Members {
				names = append(names, m.Name)
				if m.Offset < 0 || m.Offset+m.Size > int64(len(a)) {
					t.Errorf("member %q: offset %d size %d", m.Name, m.Offset, m.Size)
				}
			}
			want := "tmpxft_00006afb_00000000-13_k.o|notes.txt|r.fatbin|tmpxft_00006afb_00000000-16_m with space.o"
			if got := strings.Join(names, "|"); got != want {
				t.Fatalf("members %q, want %q", got, want)
			}
			n := len(ref.Entries)
			if len(f.Entries) != 2*n+2 {
				t.Fatalf("%d entries, want %d", len(f.Entries), 2*n+2)
			}
			// Entries keep their bytes and point at them by archive offset.
			for i, e := range f.Entries {
				var r *Entry
				switch {
				case i < n:
					r = ref.Entries[i]
				case i >= n+2:
					r = ref.Entries[i-n-2]
				default:
					if !bytes.Equal(a[e.DataOffset:e.DataOffset+e.Size], e.Raw()) {
						t.Errorf("entry %d: data offset %#x does not hold the payload", i, e.DataOffset)
					}
					continue
				}
				if !bytes.Equal(e.Raw(), r.Raw()) || !bytes.Equal(a[e.DataOffset:e.DataOffset+int64(len(e.Raw()))], r.Raw()) {
					t.Errorf("entry %d differs from the object's entry %d", i, r.Index)
				}
			}
			nc := len(ref.Containers)
			for ci, c := range f.Containers {
				w := 0 // the first object, then the raw fat binary, then the second object
				if ci == nc {
					w = 2
				} else if ci > nc {
					w = 3
				}
				if c.Member != w {
					t.Errorf("container %d in member %d, want %d", ci, c.Member, w)
				}
			}
			var sb strings.Builder
			if err := f.List(&sb, "/lib/libk.a"); err != nil {
				t.Fatal(err)
			}
			var wl strings.Builder
			wl.WriteString("\nmember /lib/libk.a:tmpxft_00006afb_00000000-13_k.o:\n")
			nelf, nptx := 0, 0
			line := func(e *Entry) {
				if e.Kind.IsELF() {
					nelf++
					fmt.Fprintf(&wl, "ELF file %4d: libk.%d.%s.cubin\n", nelf, nelf, e.ArchName())
				} else if e.Kind.IsPTX() {
					nptx++
					fmt.Fprintf(&wl, "PTX file %4d: libk.%d.%s.ptx\n", nptx, nptx, e.ArchName())
				}
			}
			for _, e := range f.Entries[:n] {
				line(e)
			}
			wl.WriteString("\nmember /lib/libk.a:notes.txt:\n\nmember /lib/libk.a:r.fatbin:\n")
			line(f.Entries[n])
			line(f.Entries[n+1])
			wl.WriteString("\nmember /lib/libk.a:tmpxft_00006afb_00000000-16_m with space.o:\n")
			for _, e := range f.Entries[n+2:] {
				line(e)
			}
			if sb.String() != wl.String() {
				t.Errorf("List:\n%s\nwant:\n%s", sb.String(), wl.String())
			}
		})
	}
	// A relative path is joined to the working directory, as cuobjdump does.
	f, err := Parse(arArchive("gnu", arMember{"k.o", obj}))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := f.List(&sb, "../libk.a"); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := "\nmember " + wd + "/../libk.a:k.o:\n"; !strings.HasPrefix(sb.String(), want) {
		t.Errorf("List starts %q, want %q", sb.String(), want)
	}
	// Open reads archives too.
	p := filepath.Join(t.TempDir(), "libk.a")
	if err := os.WriteFile(p, arArchive("bsd", arMember{"k.o", obj}), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err := Open(p); err != nil || len(g.Entries) != len(ref.Entries) || len(g.Members) != 1 {
		t.Errorf("Open: %v", err)
	}
}

func TestArchiveMalformed(t *testing.T) {
	obj := readTestdata(t, "cuda12.4/xrdc.o")
	good := arArchive("gnu", arMember{"tmpxft_00006afb_00000000-13_k.o", obj})
	hdr := func(name, size string) string {
		return fmt.Sprintf("%-16s%-12s%-6s%-6s%-8s%-10s`\n", name, "0", "0", "0", "644", size)
	}
	badObj := append([]byte(nil), obj...)
	copy(badObj[len(badObj)-200:], bytes.Repeat([]byte{0xff}, 200))
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"magic only", []byte(ArchiveMagic), "no fat binary in ar archive (0 members)"},
		{"thin", []byte("!<thin>\n"), "thin ar archive"},
		{"host only", arArchive("gnu", arMember{"h.o", []byte("hello")}), "no fat binary in ar archive (1 members)"},
		{"truncated header", good[:len(ArchiveMagic)+30], "offset 0x8: truncated ar member header (30 bytes, need 60)"},
		{"bad fmag", []byte(ArchiveMagic + hdr("a.o/", "0")[:58] + "xx"), "offset 0x8: bad ar member header"},
		{"bad size", []byte(ArchiveMagic + hdr("a.o/", "12z")), "offset 0x38: bad ar member size \"12z\""},
		{"negative size", []byte(ArchiveMagic + hdr("a.o/", "-4")), "bad ar member size \"-4\""},
		{"size past end", []byte(ArchiveMagic + hdr("a.o/", "1000") + "abc"), "offset 0x38: ar member size 1000 exceeds file (remaining 3)"},
		{"truncated member", good[:len(good)-100], "exceeds file"},
		{"name offset", []byte(ArchiveMagic + hdr("//", "4") + "a/\n\n" + hdr("/77", "0")), "ar member name \"/77\": offset outside the long name table (4 bytes)"},
		{"name without table", []byte(ArchiveMagic + hdr("/0", "0")), "offset outside the long name table (0 bytes)"},
		{"bsd name length", []byte(ArchiveMagic + hdr("#1/20", "4") + "abcd"), "bad BSD ar member name \"#1/20\" (member size 4)"},
		{"bsd name number", []byte(ArchiveMagic + hdr("#1/x", "4") + "abcd"), "bad BSD ar member name \"#1/x\""},
		{"bad member fat binary", arArchive("bsd", arMember{"k.fatbin", container(ptxEntry(".version 8.4").build())[:40]}), "ar member \"k.fatbin\" at offset 0x"},
		{"bad member ELF", arArchive("gnu", arMember{"k.o", []byte("\x7fELF\x02\x01\x01\x00garbage")}), "ar member \"k.o\" at offset 0x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := exercise(t, c.in)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "fatbin: ") != 1 {
				t.Errorf("error %q\nwant it to contain %q (and one prefix)", err, c.want)
			}
		})
	}
	// A bad fat binary inside a member is still a *FormatError.
	_, err := Parse(arArchive("bsd", arMember{"k.fatbin", container(ptxEntry(".version 8.4").build())[:40]}))
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("error %T is not a *FormatError: %v", err, err)
	}
	// Every prefix of a good archive: an error or a parse, never a panic.
	for n := range good {
		_, _ = exercise(t, good[:n])
	}
}

// TestArchiveAgainstCuobjdump builds a two-member archive with nvcc -lib and
// checks List, byte for byte, against cuobjdump -lelf -lptx and the
// extracted files against cuobjdump -xelf all -xptx all.
func TestArchiveAgainstCuobjdump(t *testing.T) {
	setupCUDA(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.cu"), []byte(testKernels), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "y.cu"), []byte(testRDC), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "nvcc", "-lib", "-rdc=true",
		"-gencode", "arch=compute_80,code=[sm_80,compute_80]", "-gencode", "arch=compute_90,code=sm_90",
		"x.cu", "y.cu", "-o", "libk.a")
	path := filepath.Join(dir, "libk.a")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Members) != 2 {
		t.Fatalf("%d members, want 2", len(f.Members))
	}
	want := run(t, dir, "cuobjdump", "-lelf", "-lptx", path)
	var got bytes.Buffer
	if err := f.List(&got, path); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("List:\n%s\ncuobjdump -lelf -lptx:\n%s", got.String(), want)
	}
	if !strings.Contains(want, "ELF file    4: libk.4.sm_90.cubin") || strings.Count(want, "\nmember "+path+":") != 2 {
		t.Errorf("unexpected cuobjdump listing:\n%s", want)
	}
	xdir := filepath.Join(dir, "x")
	if err := os.Mkdir(xdir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, xdir, "cuobjdump", "-xelf", "all", "-xptx", "all", path)
	compareExtracted(t, "libk.a", extractAll(t, f, path), readDir(t, xdir))
}
