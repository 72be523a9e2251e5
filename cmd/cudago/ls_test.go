package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const hostProgram = saxpySrc + `
#include <cstdio>
__global__ void twice(int *v) { v[threadIdx.x] *= 2; }
int main() { printf("%p %p\n", (void*)saxpy, (void*)twice); return 0; }
`

// readDir returns the files of dir by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

// checkLikeCuobjdump checks that cudago ls prints what cuobjdump -lelf -lptx
// prints for path, and that cudago extract writes the same files, byte for
// byte, as cuobjdump -xelf all -xptx all run in another directory. It
// returns the listing. cuobjdump must extract at least minFiles files.
func checkLikeCuobjdump(t *testing.T, path string, minFiles int) string {
	t.Helper()
	dir := filepath.Dir(path)
	want := tool(t, dir, "cuobjdump", "-lelf", "-lptx", path)
	got := mustRun(t, "ls", path)
	if got != want {
		t.Errorf("%s: cudago ls:\n%s\ncuobjdump -lelf -lptx:\n%s", path, got, want)
	}

	cdir, gdir := filepath.Join(dir, "cuobjdump.x"), filepath.Join(dir, "cudago.x")
	if err := os.Mkdir(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	tool(t, cdir, "cuobjdump", "-xelf", "all", "-xptx", "all", path)
	out := mustRun(t, "extract", path, "-o", gdir)
	cf, gf := readDir(t, cdir), readDir(t, gdir)
	if !slices.Equal(slices.Sorted(maps.Keys(cf)), slices.Sorted(maps.Keys(gf))) {
		t.Errorf("%s: cuobjdump extracts %v, cudago %v", path, slices.Sorted(maps.Keys(cf)), slices.Sorted(maps.Keys(gf)))
	}
	if len(cf) < minFiles {
		t.Errorf("%s: cuobjdump extracts %d files %v, the test expects at least %d", path, len(cf), slices.Sorted(maps.Keys(cf)), minFiles)
	}
	for n, b := range cf {
		if g, ok := gf[n]; ok && !bytes.Equal(g, b) {
			t.Errorf("%s: %s differs: cudago wrote %d bytes, cuobjdump %d", path, n, len(g), len(b))
		}
	}
	if strings.Count(out, "Extracting ") != len(gf) {
		t.Errorf("extract printed %q for %d files", out, len(gf))
	}
	return got
}

func TestLsExtractNvccFatbin(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "x.cu", saxpySrc)
	fb := filepath.Join(dir, "x.fatbin")
	tool(t, dir, "nvcc", "-fatbin", "-gencode", "arch=compute_80,code=sm_80",
		"-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o", fb, src)
	list := checkLikeCuobjdump(t, fb, 3)
	if strings.Count(list, "ELF file") != 2 || strings.Count(list, "PTX file") != 1 {
		t.Errorf("listing:\n%s", list)
	}
}

func TestLsExtractNvccExecutable(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "prog.cu", hostProgram)
	exe := filepath.Join(dir, "a.out")
	tool(t, dir, "nvcc", "-gencode", "arch=compute_80,code=sm_80",
		"-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o", exe, src)
	// The static CUDA runtime linked in brings device code of its own.
	list := checkLikeCuobjdump(t, exe, 3)
	t.Logf("a.out:\n%s", list)
	if !strings.Contains(list, "sm_80.cubin") || !strings.Contains(list, "sm_90.ptx") {
		t.Errorf("listing:\n%s", list)
	}
	// --elf and --ptx select kinds.
	odir := filepath.Join(dir, "elf-only")
	mustRun(t, "extract", "--elf", exe, "-o", odir)
	for n := range readDir(t, odir) {
		if !strings.HasSuffix(n, ".cubin") {
			t.Errorf("extract --elf wrote %s", n)
		}
	}
	pdir := filepath.Join(dir, "ptx-only")
	mustRun(t, "extract", "--ptx", exe, "-o", pdir)
	if n := slices.Sorted(maps.Keys(readDir(t, pdir))); len(n) != 1 || !strings.HasSuffix(n[0], ".ptx") {
		t.Errorf("extract --ptx wrote %v", n)
	}
}

// TestLsExtractNvccArchive: a static library of two objects, as nvcc -lib
// writes it, is listed and extracted as cuobjdump does (member lines,
// numbering across members, names after the archive).
func TestLsExtractNvccArchive(t *testing.T) {
	dir := t.TempDir()
	k := writeFile(t, dir, "k.cu", saxpySrc)
	m := writeFile(t, dir, "m.cu", "__global__ void twice(int *v) { v[threadIdx.x] *= 2; }\n")
	lib := filepath.Join(dir, "libk.a")
	tool(t, dir, "nvcc", "-lib", "-rdc=true", "-gencode", "arch=compute_80,code=[sm_80,compute_80]",
		"-gencode", "arch=compute_90,code=sm_90", "-o", lib, k, m)
	list := checkLikeCuobjdump(t, lib, 5)
	if strings.Count(list, "\nmember "+lib+":") != 2 || !strings.Contains(list, "ELF file    4: libk.4.sm_90.cubin") ||
		!strings.Contains(list, "PTX file    2: libk.2.sm_80.ptx") {
		t.Errorf("listing:\n%s", list)
	}
	var rep lsReport
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--json", lib)), &rep); err != nil {
		t.Fatal(err)
	}
	members := map[string]int{}
	for _, e := range rep.Entries {
		members[e.Member]++
	}
	if len(members) != 2 || members[""] != 0 {
		t.Errorf("entries by member: %v", members)
	}
}

func TestLsJSON(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	fb := filepath.Join(dir, "k.fatbin")
	mustRun(t, "compile", src, "-arch", "sm_80,sm_90", "-o", fb)
	var rep struct {
		File    string           `json:"file"`
		Entries []map[string]any `json:"entries"`
	}
	out := mustRun(t, "ls", fb, "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if rep.File != fb || len(rep.Entries) != 3 {
		t.Fatalf("file %q, %d entries:\n%s", rep.File, len(rep.Entries), out)
	}
	want := []struct {
		kind, arch, name string
		sm               float64
	}{
		{"elf", "sm_80", "saxpy.sm_80.cubin", 80},
		{"elf", "sm_90", "saxpy.sm_90.cubin", 90},
		{"ptx", "sm_90", "saxpy.sm_90.ptx", 90},
	}
	for i, e := range rep.Entries {
		for _, k := range []string{"index", "container", "kind", "arch", "sm", "version", "listed", "ordinal", "extract_name",
			"identifier", "compression", "stored_size", "compressed_size", "uncompressed_size", "data_size", "debug", "host",
			"flags", "options", "obfuscated", "error"} {
			if _, ok := e[k]; !ok {
				t.Errorf("entry %d lacks %q", i, k)
			}
		}
		w := want[i]
		if e["kind"] != w.kind || e["arch"] != w.arch || e["extract_name"] != w.name || e["sm"] != w.sm ||
			e["identifier"] != "saxpy.cu" || e["listed"] != true || e["index"] != float64(i) {
			t.Errorf("entry %d = %v, want %+v", i, e, w)
		}
		if ds, ss := e["data_size"].(float64), e["stored_size"].(float64); ds <= 0 || e["compression"] == "" && ds > ss {
			t.Errorf("entry %d: data_size %v, stored_size %v", i, ds, ss)
		}
	}
}

func TestLsNoDeviceCode(t *testing.T) {
	dir := t.TempDir()
	txt := writeFile(t, dir, "notes.txt", "no fat binary here\n")
	for _, cmd := range []string{"ls", "extract"} {
		code, stdout, stderr := runCmd(t, cmd, txt, "-o", filepath.Join(dir, "x"))
		if cmd == "ls" {
			code, stdout, stderr = runCmd(t, cmd, txt)
		}
		if code != exitFail || stdout != "" || !strings.HasPrefix(stderr, "cudago "+cmd+": ") {
			t.Errorf("%s of a text file: exit %d, stdout %q, stderr %q", cmd, code, stdout, stderr)
		}
	}
	// An ELF file without device code (this test binary).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "ls", exe); code != exitFail || !strings.Contains(stderr, "no fat binary") {
		t.Errorf("ls of a host ELF without device code: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd(t, "ls", filepath.Join(dir, "missing")); code != exitFail {
		t.Errorf("ls of a missing file: exit %d", code)
	}
}
