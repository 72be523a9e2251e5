package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/fatbin"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// TestBuildEmbedExample runs the go:generate line of examples/embed/gen.go
// in a temporary directory and checks that it reproduces the entries of the
// committed kernels.fatbin.
func TestBuildEmbedExample(t *testing.T) {
	ex := filepath.Join("..", "..", "examples", "embed")
	gen, err := os.ReadFile(filepath.Join(ex, "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "//go:generate go run github.com/cudago/cudago/cmd/cudago "
	var args []string
	for _, l := range strings.Split(string(gen), "\n") {
		if strings.HasPrefix(l, prefix) {
			args = strings.Fields(strings.TrimPrefix(l, prefix))
		}
	}
	if len(args) == 0 || args[0] != "build" {
		t.Fatalf("no %q build line in gen.go", prefix)
	}
	// Run it with the output in a temporary directory and the sources in ex.
	dir := t.TempDir()
	var committed string
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "-o":
			i++
			committed = filepath.Join(ex, args[i])
			args[i] = filepath.Join(dir, args[i])
		case strings.HasSuffix(args[i], ".cu"):
			args[i] = filepath.Join(ex, args[i])
		}
	}
	if committed == "" {
		t.Fatal("the go:generate line has no -o")
	}
	mustRun(t, args...)
	out := filepath.Join(dir, filepath.Base(committed))

	want := mustRun(t, "ls", committed)
	if got := mustRun(t, "ls", out); got != want {
		t.Errorf("cudago build output lists:\n%s\nthe committed %s:\n%s", got, committed, want)
	}
	if want != "ELF file    1: kernels.sm_80.cubin\nELF file    2: kernels.sm_90.cubin\nPTX file    1: kernels.sm_90.ptx\n" {
		t.Errorf("committed kernels.fatbin lists:\n%s", want)
	}
	// Same kinds, architectures and identifiers, entry by entry.
	a, err := fatbin.Open(committed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fatbin.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != len(b.Entries) {
		t.Fatalf("%d entries, committed %d", len(b.Entries), len(a.Entries))
	}
	for i := range a.Entries {
		ea, eb := a.Entries[i], b.Entries[i]
		if ea.Kind != eb.Kind || ea.ArchName() != eb.ArchName() || ea.Identifier != eb.Identifier {
			t.Errorf("entry %d: %v %s %q, committed %v %s %q", i, eb.Kind, eb.ArchName(), eb.Identifier, ea.Kind, ea.ArchName(), ea.Identifier)
		}
	}
	ca, _ := os.ReadFile(committed)
	cb, _ := os.ReadFile(out)
	t.Logf("rebuilt kernels.fatbin is byte-identical to the committed one: %v (it is with the same CUDA version)", bytes.Equal(ca, cb))

	// An unchanged output is not rewritten.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	mustRun(t, args...)
	if st, err := os.Stat(out); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("build rewrote an unchanged output (%v)", err)
	}
}

// TestBuildSeveralFiles builds a kernel that calls a __device__ function of
// another file: the files are linked per architecture.
func TestBuildSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.cu", callerSrc)
	b := writeFile(t, dir, "b.cu", helperSrc)
	c := writeFile(t, dir, "c.cu", saxpySrc)
	out := filepath.Join(dir, "gen", "all.fatbin")
	mustRun(t, "build", "-arch", "sm_80,sm_90", "-mkdir", "-o", out, a, b, c)
	want := "ELF file    1: all.sm_80.cubin\nELF file    2: all.sm_90.cubin\nPTX file    1: all.sm_90.ptx\n"
	if got := tool(t, dir, "cuobjdump", "-lelf", "-lptx", out); got != want {
		t.Errorf("cuobjdump -lelf -lptx:\n%s\nwant:\n%s", got, want)
	}
	f, err := fatbin.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		d, err := e.Data()
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind.IsPTX() {
			if !bytes.Contains(d, []byte(".entry k")) || !bytes.Contains(d, []byte(".entry saxpy")) {
				t.Errorf("linked PTX lacks k or saxpy")
			}
			continue
		}
		ef, sm := testenv.CubinELF(t, d)
		if sm != e.Arch || !testenv.HasFunc(t, ef, "k") || !testenv.HasFunc(t, ef, "saxpy") {
			t.Errorf("cubin for sm_%d: sm_%d, k %v, saxpy %v", e.Arch, sm, testenv.HasFunc(t, ef, "k"), testenv.HasFunc(t, ef, "saxpy"))
		}
	}

	// --lineinfo survives the link, which generates the code: the cubins
	// carry line tables (the LTO-IR holds the line information), and
	// none without it.
	li := filepath.Join(dir, "gen", "li.fatbin")
	mustRun(t, "build", "-arch", "sm_90", "--lineinfo", "-o", li, a, b)
	lf, err := fatbin.Open(li)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lf.Entries {
		if e.Kind.IsPTX() {
			continue
		}
		d, err := e.Data()
		if err != nil {
			t.Fatal(err)
		}
		ef, _ := testenv.CubinELF(t, d)
		if ef.Section(".nv_debug_line_sass") == nil && ef.Section(".debug_line") == nil {
			t.Errorf("cubin of build --lineinfo has no line table")
		}
	}
	mustRun(t, "build", "-arch", "sm_90", "-o", li, a, b)
	if lf, err = fatbin.Open(li); err != nil {
		t.Fatal(err)
	}
	for _, e := range lf.Entries {
		if d, _ := e.Data(); !e.Kind.IsPTX() {
			if ef, _ := testenv.CubinELF(t, d); ef.Section(".nv_debug_line_sass") != nil || ef.Section(".debug_line") != nil {
				t.Errorf("cubin of build without --lineinfo has a line table")
			}
		}
	}

	// A compile error in one file fails the build with its log.
	bad := writeFile(t, dir, "bad.cu", "__global__ void z() { nope(); }\n")
	code, _, stderr := runCmd(t, "build", "-arch", "sm_80,sm_90", "-o", out, a, bad)
	if code != exitFail || !strings.Contains(stderr, `identifier "nope" is undefined`) {
		t.Errorf("build with a broken file: exit %d, stderr:\n%s", code, stderr)
	}
	// An unresolved function fails the link with the linker's log.
	code, _, stderr = runCmd(t, "build", "-arch", "sm_90", "-o", out, a, c)
	if code != exitFail || !strings.Contains(stderr, "_Z6helperf") {
		t.Errorf("build with an unresolved helper: exit %d, stderr:\n%s", code, stderr)
	}
}
