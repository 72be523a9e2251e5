package core

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/fatbin"
	"github.com/cudago/cudago/internal/testing/testenv"
)

func newBuilder(t *testing.T, opts *FatbinOptions) *FatbinBuilder {
	t.Helper()
	b, err := NewFatbinBuilder(opts)
	if err != nil {
		t.Fatalf("NewFatbinBuilder: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// wantCuobjdumpList checks that cuobjdump -lelf -lptx lists the entries
// of code as want: NVIDIA's own tool reads the fat binaries we build.
func wantCuobjdumpList(t *testing.T, code []byte, want ...string) {
	t.Helper()
	tool := testenv.Tool(t, "cuobjdump")
	path := filepath.Join(t.TempDir(), "x.fatbin")
	if err := os.WriteFile(path, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-lelf", "-lptx", path).CombinedOutput()
	if err != nil {
		t.Fatalf("cuobjdump -lelf -lptx: %v\n%s", err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cuobjdump -lelf -lptx:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkFatbin checks that o, which what made, is a fat binary named name
// whose entries cuobjdump lists as list, and returns it parsed.
func checkFatbin(t *testing.T, what string, o *ObjectCode, name string, list ...string) *fatbin.File {
	t.Helper()
	if o.CodeType() != "fatbin" || o.Name() != name {
		t.Errorf("%s gave %v", what, o)
	}
	wantCuobjdumpList(t, o.Code(), list...)
	return try(fatbin.Parse(o.Code())).must(t)
}

func TestFatbinBuilderCuobjdump(t *testing.T) {
	cubin80 := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_80"}), "cubin")
	cubin90 := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_90"}), "cubin")
	ptx90 := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "compute_90"}), "ptx")

	b := newBuilder(t, &FatbinOptions{Name: "saxpy"})
	if err := b.AddCubin(cubin80.Code(), "sm_80", "saxpy80"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddCubin(cubin90.Code(), "", "saxpy90"); err != nil { // arch from the ELF
		t.Fatal(err)
	}
	ptx := bytes.Clone(ptx90.Code())
	if err := b.AddPTX(ptx, "90", "saxpyptx", "-lineinfo"); err != nil {
		t.Fatal(err)
	}
	// nvFatbin keeps the inputs until Build: scribble over our copy and
	// make the GC run, and the fatbin must still hold the right PTX.
	for i := range ptx {
		ptx[i] = 'X'
	}
	runtime.GC()
	o := try(b.Build()).must(t)
	f := checkFatbin(t, "Build", o, "saxpy",
		"ELF file 1: saxpy80.sm_80.cubin",
		"ELF file 2: saxpy90.sm_90.cubin",
		"PTX file 1: saxpyptx.sm_90.ptx",
	)
	if _, err := FromFatbin(o.Code()); err != nil {
		t.Errorf("built fatbin does not validate: %v", err)
	}
	// The entries hold exactly what was added.
	if len(f.Entries) != 3 {
		t.Fatalf("%d entries, want 3", len(f.Entries))
	}
	for i, w := range []struct {
		kind  fatbin.Kind
		arch  int
		ident string
		data  []byte
	}{
		{fatbin.KindELF, 80, "saxpy80", cubin80.Code()},
		{fatbin.KindELF, 90, "saxpy90", cubin90.Code()},
		{fatbin.KindPTX, 90, "saxpyptx", ptx90.Code()},
	} {
		e := f.Entries[i]
		d, err := e.Data()
		if err != nil {
			t.Fatal(err)
		}
		same := bytes.Equal(d, w.data)
		if e.Kind == fatbin.KindPTX {
			// nvFatbin strips the PTX's comments: compare what is left.
			same = bytes.Contains(d, []byte(".entry saxpy(")) && bytes.Contains(d, []byte(".target sm_90")) &&
				!bytes.Contains(d, []byte("XXXX")) && len(d) > len(w.data)/2
		}
		if e.Kind != w.kind || e.Arch != w.arch || e.Identifier != w.ident || !same {
			t.Errorf("entry %d: kind %v arch %d ident %q (%d bytes); want %v %d %q (%d bytes)",
				i, e.Kind, e.Arch, e.Identifier, len(d), w.kind, w.arch, w.ident, len(w.data))
		}
	}
	if opts := f.Entries[2].Options; !strings.Contains(opts, "-lineinfo") {
		t.Errorf("PTX entry options %q lack -lineinfo", opts)
	}
	if ks := (&ObjectCode{codeType: CodeFatbin, code: o.Code()}).kernelNames(); !reflect.DeepEqual(ks, []string{"saxpy"}) {
		t.Errorf("kernelNames of the fatbin = %q", ks)
	}
}

func TestCompileFatbin(t *testing.T) {
	o, err := CompileFatbin(saxpySrc, []string{"sm_90", "sm_80"}, &ProgramOptions{Name: "fatbin_saxpy.cu", Std: "c++17"})
	if err != nil {
		t.Fatal(err)
	}
	// Identified by the source's name, as nvcc does: cuobjdump names the
	// entries of x.cu x.sm_80.cubin...
	f := checkFatbin(t, "CompileFatbin", o, "fatbin_saxpy.cu",
		"ELF file 1: fatbin_saxpy.sm_80.cubin",
		"ELF file 2: fatbin_saxpy.sm_90.cubin",
		"PTX file 1: fatbin_saxpy.sm_90.ptx",
	)
	var idents []string
	for _, e := range f.Entries {
		idents = append(idents, e.Identifier)
		if e.Kind == fatbin.KindELF {
			d, _ := e.Data()
			checkCubin(t, d, e.Arch, "saxpy")
		}
	}
	if w := []string{"fatbin_saxpy.cu", "fatbin_saxpy.cu", "fatbin_saxpy.cu"}; !reflect.DeepEqual(idents, w) {
		t.Errorf("identifiers %q, want %q", idents, w)
	}

	// Name expressions pass to the fatbin.
	o, err = CompileFatbin(templateSrc, []string{"80", "90"}, &ProgramOptions{NameExpressions: []string{"scale<float>"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.SymbolMapping()["scale<float>"]; got != "_Z5scaleIfEvPT_S0_i" {
		t.Errorf("SymbolMapping = %v", o.SymbolMapping())
	}

	// Errors: no archs, bad arch, compile error naming the arch.
	if _, err := CompileFatbin(saxpySrc, nil, nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("CompileFatbin without archs = %v", err)
	}
	if _, err := CompileFatbin(saxpySrc, []string{"sm_80", "volta"}, nil); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "volta") {
		t.Errorf("CompileFatbin with a bad arch = %v", err)
	}
	_, err = CompileFatbin("this is not C++", []string{"sm_80"}, nil)
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "sm_80") || ce.Log == "" {
		t.Errorf("CompileFatbin of broken code = %v", err)
	}
}

func TestFatbinBuilderOtherInputs(t *testing.T) {
	b := newBuilder(t, &FatbinOptions{Compress: ptrTo(true)})
	lto := compileUnit(t, unitHelper, "helper.cu", "sm_90", "ltoir")
	if err := b.AddLTOIR(lto.Code(), "sm_90", "helper_lto", ""); err != nil {
		t.Fatal(err)
	}
	obj, err := os.ReadFile("testdata/helper.o")
	if err != nil {
		t.Fatal(err)
	}
	// nvFatbinAddReloc came with nvFatbin 13.0.
	major, _, err := nvfatbin.Version()
	if err != nil {
		t.Fatal(err)
	}
	relocErr := b.AddReloc(obj)
	if major < 13 {
		var mf *nvfatbin.MissingFunctionError
		if !errors.As(relocErr, &mf) {
			t.Errorf("AddReloc with nvFatbin %d = %v, want a *MissingFunctionError", major, relocErr)
		}
	} else if relocErr != nil {
		t.Fatal(relocErr)
	}
	o, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	f := try(fatbin.Parse(o.Code())).must(t)
	var kinds []fatbin.Kind
	for _, e := range f.Entries {
		kinds = append(kinds, e.Kind)
	}
	if kinds[0] != fatbin.KindLTOIR || f.Entries[0].Arch != 90 || f.Entries[0].Identifier != "helper_lto" {
		t.Errorf("first entry: %v sm_%d %q, want the LTO-IR for sm_90", kinds[0], f.Entries[0].Arch, f.Entries[0].Identifier)
	}
	if major >= 13 && len(kinds) < 2 {
		t.Errorf("entry kinds %v: want the object's relocatable code too", kinds)
	}
	// nvFatbin obfuscates LTO-IR entries, so the payload is not compared.
	if len(f.Entries[0].Raw()) == 0 {
		t.Error("empty LTO-IR entry")
	}
}

func TestFatbinBuilderTileIR(t *testing.T) {
	b := newBuilder(t, nil)
	err := b.AddTileIR([]byte("tile ir"), "t", "")
	major, minor, verr := nvfatbin.Version()
	if verr != nil {
		t.Fatal(verr)
	}
	if major < 13 || major == 13 && minor < 1 {
		var mf *nvfatbin.MissingFunctionError
		if !errors.As(err, &mf) {
			t.Fatalf("AddTileIR with nvFatbin %d.%d = %v, want a *MissingFunctionError", major, minor, err)
		}
		if !strings.Contains(err.Error(), "nvFatbinAddTileIR") {
			t.Errorf("error does not name nvFatbinAddTileIR: %v", err)
		}
	} else if err == nil {
		t.Error("AddTileIR of garbage succeeded")
	}
	if err := b.AddTileIR(nil, "t", ""); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("AddTileIR(nil) = %v", err)
	}
}

func TestFatbinBuilderErrors(t *testing.T) {
	cubin := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_80"}), "cubin")
	b := newBuilder(t, nil)
	if err := b.AddCubin([]byte("not an elf"), "sm_80", "x"); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("AddCubin of garbage = %v", err)
	}
	if err := b.AddCubin(cubin.Code(), "sm80", "x"); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "sm80") {
		t.Errorf("AddCubin with a bad arch = %v", err)
	}
	// nvFatbin checks the arch against the ELF.
	if err := b.AddCubin(cubin.Code(), "sm_90", "x"); !errors.Is(err, nvfatbin.ErrorElfArchMismatch) {
		t.Errorf("AddCubin of sm_80 code as sm_90 = %v, want NVFATBIN_ERROR_ELF_ARCH_MISMATCH", err)
	}
	if err := b.AddPTX([]byte("no version"), "90", "x", ""); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("AddPTX of garbage = %v", err)
	}
	if err := b.AddPTX([]byte(".version 8.0\n"), "", "x", ""); err == nil {
		t.Error("AddPTX without arch or .target succeeded")
	}
	if err := b.AddLTOIR(nil, "90", "x", ""); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("AddLTOIR(nil) = %v", err)
	}
	if err := b.AddReloc([]byte("nope")); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("AddReloc of garbage = %v", err)
	}
	if err := b.Add(&ObjectCode{codeType: CodeLibrary, code: []byte("!<arch>\n")}, ""); err == nil {
		t.Error("Add of a library succeeded")
	}
	if _, err := NewFatbinBuilder(&FatbinOptions{Host: "beos"}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("NewFatbinBuilder with a bad host = %v", err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.AddCubin(cubin.Code(), "sm_80", "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("AddCubin after Close = %v", err)
	}
	if _, err := b.Build(); !errors.Is(err, ErrClosed) {
		t.Errorf("Build after Close = %v", err)
	}
}
