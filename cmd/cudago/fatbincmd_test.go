package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFatbinCommand(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "k.cu", saxpySrc)
	mustRun(t, "compile", src, "--cubin", "-arch", "sm_80,sm_90", "-o", filepath.Join(dir, "k.cubin"))
	mustRun(t, "compile", src, "--ptx", "-arch", "sm_90", "-o", filepath.Join(dir, "k.ptx"))
	mustRun(t, "compile", src, "--ltoir", "-arch", "sm_90", "-o", filepath.Join(dir, "k.ltoir"))

	// With --ident, images are named after it, as nvcc's are after the source.
	out := filepath.Join(dir, "out.fatbin")
	mustRun(t, "fatbin", "-o", out, "--ident", "k.cu",
		"--cubin", "sm_80:"+filepath.Join(dir, "k.sm_80.cubin"),
		"--cubin", "90:"+filepath.Join(dir, "k.sm_90.cubin"),
		"--ptx", "compute_90:"+filepath.Join(dir, "k.ptx"),
		"--ltoir", "sm_90:"+filepath.Join(dir, "k.ltoir"))
	want := "ELF file    1: k.sm_80.cubin\nELF file    2: k.sm_90.cubin\nPTX file    1: k.sm_90.ptx\n"
	cuobjdump := tool(t, dir, "cuobjdump", "-lelf", "-lptx", out)
	if cuobjdump != want {
		t.Errorf("cuobjdump -lelf -lptx:\n%s\nwant:\n%s", cuobjdump, want)
	}
	if ls := mustRun(t, "ls", out); ls != cuobjdump {
		t.Errorf("cudago ls:\n%s\ncuobjdump:\n%s", ls, cuobjdump)
	}
	// cudago ls --json shows the LTO-IR, which cuobjdump does not list.
	if js := mustRun(t, "ls", "--json", out); !strings.Contains(js, `"kind": "ltoir"`) || !strings.Contains(js, `"extract_name": "k.sm_90.ltoir"`) {
		t.Errorf("ls --json has no LTO-IR entry:\n%s", js)
	}

	// The cubins come back byte for byte; nvFatbin strips the comments of
	// the PTX.
	xdir := filepath.Join(dir, "x")
	if err := os.Mkdir(xdir, 0o755); err != nil {
		t.Fatal(err)
	}
	tool(t, xdir, "cuobjdump", "-xelf", "all", "-xptx", "all", out) // extracts into its working directory
	for _, name := range []string{"k.sm_80.cubin", "k.sm_90.cubin"} {
		a, err1 := os.ReadFile(filepath.Join(xdir, name))
		b, err2 := os.ReadFile(filepath.Join(dir, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s extracted by cuobjdump differs from the input (%v, %v)", name, err1, err2)
		}
	}
	if p, err := os.ReadFile(filepath.Join(xdir, "k.sm_90.ptx")); err != nil || !bytes.Contains(p, []byte(".target sm_90")) || !bytes.Contains(p, []byte(".entry saxpy")) {
		t.Errorf("k.sm_90.ptx extracted by cuobjdump is not the input PTX (%v):\n%.300s", err, p)
	}

	// Without --ident, as with fatbinary, names come from the fat binary's.
	out2 := filepath.Join(dir, "noid.fatbin")
	mustRun(t, "fatbin", "-o", out2, "--cubin", "sm_90:"+filepath.Join(dir, "k.sm_90.cubin"), "--ptx", "sm_90:"+filepath.Join(dir, "k.ptx"))
	if got := tool(t, dir, "cuobjdump", "-lelf", "-lptx", out2); got != "ELF file    1: noid.1.sm_90.cubin\nPTX file    1: noid.1.sm_90.ptx\n" {
		t.Errorf("cuobjdump of a fatbin without --ident:\n%s", got)
	}

	// A missing input fails with exit 1.
	code, _, stderr := runCmd(t, "fatbin", "-o", out2, "--cubin", "sm_90:"+filepath.Join(dir, "nope.cubin"))
	if code != exitFail || !strings.Contains(stderr, "nope.cubin") {
		t.Errorf("missing input: exit %d, stderr %s", code, stderr)
	}
}

func TestWriteOutputAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.bin")
	// Its directory must exist, as for cc -o, unless -mkdir asks.
	if err := writeOutput(path, []byte("x"), false); err == nil || !strings.Contains(err.Error(), "-mkdir") {
		t.Errorf("writing into a missing directory: %v, want an error suggesting -mkdir", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); err == nil {
		t.Error("writeOutput created the directory without -mkdir")
	}
	for _, content := range []string{"first", "second, longer"} {
		if err := writeOutput(path, []byte(content), true); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Fatalf("after writeOutput(%q): %q, %v", content, b, err)
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("writeOutput left %d files, want only out.bin: %v", len(ents), ents)
	}
	if st, _ := os.Stat(path); st.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("output mode %v", st.Mode())
	}
	// A write that cannot happen leaves the old file alone.
	if err := writeOutput(filepath.Join(path, "x"), []byte("y"), true); err == nil {
		t.Error("writing under a file: no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "second, longer" {
		t.Errorf("old output changed to %q", b)
	}
}

// TestWriteOutputSymlink: -o through a symbolic link writes the link's
// target, as cc -o does, keeps the link, and keeps the target's mode.
func TestWriteOutputSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.fatbin")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.fatbin")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(link, []byte("new"), false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi, err)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "new" {
		t.Fatalf("the target holds %q, %v; want %q", b, err, "new")
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode is %v, %v; want 0640", fi.Mode().Perm(), err)
	}
}
