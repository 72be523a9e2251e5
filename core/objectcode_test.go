package core

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// codes compiles one code of every kind, in memory.
func codes(t *testing.T) map[string][]byte {
	t.Helper()
	obj, err := os.ReadFile("testdata/helper.o")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := os.ReadFile("testdata/libhelper.a")
	if err != nil {
		t.Fatal(err)
	}
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_90"})
	cubin := mustCompile(t, p, "cubin").Code()
	b := newBuilder(t, nil)
	if err := b.AddCubin(cubin, "", "saxpy"); err != nil {
		t.Fatal(err)
	}
	fb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		CodeCubin:   cubin,
		CodeFatbin:  fb.Code(),
		CodePTX:     mustCompile(t, p, "ptx").Code(),
		CodeLTOIR:   mustCompile(t, p, "ltoir").Code(),
		CodeObject:  obj,
		CodeLibrary: lib,
	}
}

var (
	fromBytesFuncs = map[string]func([]byte, ...ObjectCodeOption) (*ObjectCode, error){
		CodeCubin: FromCubin, CodeFatbin: FromFatbin, CodePTX: FromPTX,
		CodeLTOIR: FromLTOIR, CodeObject: FromObject, CodeLibrary: FromLibrary,
	}
	fromFileFuncs = map[string]func(string, ...ObjectCodeOption) (*ObjectCode, error){
		CodeCubin: FromCubinFile, CodeFatbin: FromFatbinFile, CodePTX: FromPTXFile,
		CodeLTOIR: FromLTOIRFile, CodeObject: FromObjectFile, CodeLibrary: FromLibraryFile,
	}
)

func TestObjectCodeFromBytesAndFiles(t *testing.T) {
	dir := t.TempDir()
	mapping := map[string]string{"saxpy<float>": "_Z5saxpyIfEvv"}
	for kind, data := range codes(t) {
		t.Run(kind, func(t *testing.T) {
			in := bytes.Clone(data)
			o, err := fromBytesFuncs[kind](in, WithCodeName("mem."+kind), WithSymbolMapping(mapping))
			if err != nil {
				t.Fatalf("From %s bytes: %v", kind, err)
			}
			if o.CodeType() != kind || o.Name() != "mem."+kind || !bytes.Equal(o.Code(), data) {
				t.Errorf("got %v named %q", o, o.Name())
			}
			in[0] ^= 0xff // the code was copied
			if !bytes.Equal(o.Code(), data) {
				t.Error("ObjectCode shares the caller's slice")
			}
			if !reflect.DeepEqual(o.SymbolMapping(), mapping) {
				t.Errorf("SymbolMapping = %v", o.SymbolMapping())
			}
			path := filepath.Join(dir, "code."+kind)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := fromFileFuncs[kind](path)
			if err != nil {
				t.Fatalf("From %s file: %v", kind, err)
			}
			if f.CodeType() != kind || f.Name() != path || !bytes.Equal(f.Code(), data) {
				t.Errorf("from file: got %v named %q", f, f.Name())
			}
			if f.SymbolMapping() != nil {
				t.Errorf("SymbolMapping without option = %v", f.SymbolMapping())
			}
			f, err = fromFileFuncs[kind](path, WithCodeName("named"))
			if err != nil || f.Name() != "named" {
				t.Errorf("WithCodeName on a file: %v, %v", f, err)
			}
			// A missing file: the error names the path.
			missing := filepath.Join(dir, "missing."+kind)
			_, err = fromFileFuncs[kind](missing)
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
				t.Errorf("missing file: %v", err)
			}
		})
	}
	// PTX loses a trailing NUL.
	o, err := FromPTX([]byte(".version 8.0\n.target sm_90\n\x00"))
	if err != nil || bytes.HasSuffix(o.Code(), []byte{0}) {
		t.Errorf("FromPTX with NUL: %q, %v", o.Code(), err)
	}
}

func TestObjectCodeValidation(t *testing.T) {
	hostELF, err := os.ReadFile("testdata/helper.o") // x86-64 ELF, not CUDA
	if err != nil {
		t.Fatal(err)
	}
	cubin := codes(t)[CodeCubin]
	tests := []struct {
		kind string
		data []byte
		msg  string
	}{
		{CodeCubin, []byte("not an elf at all"), "not an ELF"},
		{CodeCubin, hostELF, "EM_CUDA"},
		{CodeCubin, cubin[:40], "shorter than the 64-byte ELF header"},
		{CodeCubin, cubin[:len(cubin)-1], "past the end of the file"},
		{CodeCubin, nil, "empty"},
		{CodeFatbin, []byte("\x50\xed\x55\xbbxxxxxxxxxxxxxxxx"), "fatbin magic 0xBA55ED50"},
		{CodeFatbin, cubin, "fatbin magic"},
		{CodeFatbin, []byte{0x50, 0xed, 0x55, 0xba}, "fatbin magic"},
		{CodePTX, []byte(".target sm_90\n.entry k() { ret; }"), ".version"},
		{CodePTX, []byte("// .version 8.0"), ".version"},
		{CodePTX, nil, "empty"},
		{CodeLTOIR, nil, "empty"},
		{CodeLTOIR, []byte{}, "empty"},
		{CodeObject, []byte("!<arch>\n"), "not an ELF"},
		{CodeLibrary, hostELF, "ar archive"},
	}
	for _, tt := range tests {
		_, err := fromBytesFuncs[tt.kind](tt.data)
		if !errors.Is(err, ErrInvalidCode) || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), tt.kind) {
			t.Errorf("From %s(%.20q) = %v, want ErrInvalidCode saying %q", tt.kind, tt.data, err, tt.msg)
		}
	}
	// From a file, the error names the file too.
	path := filepath.Join(t.TempDir(), "bad.cubin")
	os.WriteFile(path, []byte("garbage"), 0o644)
	if _, err := FromCubinFile(path); !errors.Is(err, ErrInvalidCode) || !strings.Contains(err.Error(), path) {
		t.Errorf("FromCubinFile(garbage) = %v", err)
	}
}

// TestObjectCodeHandle checks what loading does here: without a GPU, the
// driver's cuInit fails with CUDA_ERROR_NO_DEVICE; on the GPU machine it
// loads.
func TestObjectCodeHandle(t *testing.T) {
	cs := codes(t)
	for _, kind := range []string{CodeLTOIR, CodeObject, CodeLibrary} {
		o, err := fromBytesFuncs[kind](cs[kind])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Handle(); !errors.Is(err, ErrNotLoadable) || !strings.Contains(err.Error(), "NewLinker") {
			t.Errorf("%s: Handle = %v, want ErrNotLoadable", kind, err)
		}
		if _, err := o.Kernel("saxpy"); !errors.Is(err, ErrNotLoadable) {
			t.Errorf("%s: Kernel = %v, want ErrNotLoadable", kind, err)
		}
	}
	for _, kind := range []string{CodeCubin, CodeFatbin, CodePTX} {
		o, err := fromBytesFuncs[kind](cs[kind])
		if err != nil {
			t.Fatal(err)
		}
		h, err := o.Handle()
		if testenv.OnGPUMachine() {
			if err != nil || h == 0 {
				t.Errorf("%s: Handle on the GPU machine = %#x, %v", kind, h, err)
			}
		} else {
			if !errors.Is(err, driver.ErrorNoDevice) || h != 0 {
				t.Errorf("%s: Handle without a GPU = %#x, %v; want CUDA_ERROR_NO_DEVICE", kind, h, err)
			}
			if !strings.Contains(err.Error(), "initializing the CUDA driver") {
				t.Errorf("%s: error does not say what failed: %v", kind, err)
			}
			if _, err := o.Kernel("saxpy"); !errors.Is(err, driver.ErrorNoDevice) {
				t.Errorf("%s: Kernel without a GPU = %v", kind, err)
			}
		}
		if err := o.Close(); err != nil {
			t.Errorf("%s: Close: %v", kind, err)
		}
		if err := o.Close(); err != nil {
			t.Errorf("%s: second Close: %v", kind, err)
		}
		if _, err := o.Handle(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Handle after Close = %v, want ErrClosed", kind, err)
		}
		if _, err := o.Kernel("saxpy"); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Kernel after Close = %v, want ErrClosed", kind, err)
		}
		if !bytes.Equal(o.Code(), cs[kind]) {
			t.Errorf("%s: Code after Close changed", kind)
		}
	}
}

func TestObjectCodeConcurrentHandle(t *testing.T) {
	o, err := FromCubin(codes(t)[CodeCubin])
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	hs := make([]driver.Library, 8)
	for i := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs[i], _ = o.Handle()
		}()
	}
	wg.Wait()
	for _, h := range hs {
		if h != hs[0] {
			t.Errorf("handles differ: %v", hs)
		}
	}
	o.Close()
}

func TestKernelNames(t *testing.T) {
	cs := codes(t)
	for _, kind := range []string{CodeCubin, CodePTX, CodeFatbin} {
		o := &ObjectCode{codeType: kind, code: cs[kind]}
		if got := o.kernelNames(); !reflect.DeepEqual(got, []string{"saxpy"}) {
			t.Errorf("%s: kernelNames = %q", kind, got)
		}
	}
	ptx := []byte(".visible .entry a(\n.entry b ()\n.func c()\n")
	if got := ptxKernels(ptx); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("ptxKernels = %q", got)
	}
	if arch, ok := ptxArch(cs[CodePTX]); !ok || arch != "sm_90" {
		t.Errorf("ptxArch = %q, %v", arch, ok)
	}
	if _, err := cubinArch([]byte("nope")); err == nil {
		t.Error("cubinArch of garbage succeeded")
	}
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_90a"})
	c := mustCompile(t, p, "cubin").Code()
	want := "sm_90a"
	if c[8] >= 8 { // ELF ABI v8 (CUDA 13) has no 'a' in e_flags
		want = "sm_90"
	}
	if arch, err := cubinArch(c); err != nil || arch != want {
		t.Errorf("cubinArch of sm_90a code = %q, %v; want %s", arch, err, want)
	}
}

// TestGPUObjectCodeKernel loads a cubin, a fatbin and PTX and gets their
// kernel.
func TestGPUObjectCodeKernel(t *testing.T) {
	requireGPU(t)
	arch := defaultArch()
	if arch == "" {
		t.Fatal("no device architecture")
	}
	p := mustProgram(t, templateSrc+saxpySrc, "c++", &ProgramOptions{Arch: arch, NameExpressions: []string{"scale<float>"}})
	cubin := mustCompile(t, p, "cubin")
	ptx := mustCompile(t, p, "ptx")
	fb, err := CompileFatbin(templateSrc+saxpySrc, []string{arch}, &ProgramOptions{NameExpressions: []string{"scale<float>"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*ObjectCode{cubin, ptx, fb} {
		h, err := o.Handle()
		if err != nil || h == 0 {
			t.Fatalf("%v: Handle = %#x, %v", o, h, err)
		}
		for _, name := range []string{"saxpy", "scale<float>", "_Z5scaleIfEvPT_S0_i"} {
			k, err := o.Kernel(name)
			if err != nil {
				t.Fatalf("%v: Kernel(%q): %v", o, name, err)
			}
			if k.Handle() == 0 || k.Name() != name {
				t.Errorf("%v: Kernel(%q) = handle %#x, name %q", o, name, k.Handle(), k.Name())
			}
			if again, err := o.Kernel(name); again != k || err != nil {
				t.Errorf("%v: Kernel(%q) twice gave two Kernels (%v)", o, name, err)
			}
		}
		_, err = o.Kernel("nope")
		if !errors.Is(err, driver.ErrorNotFound) || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "saxpy") {
			t.Errorf("%v: Kernel(nope) = %v, want CUDA_ERROR_NOT_FOUND naming nope and listing saxpy", o, err)
		}
		if err := o.Close(); err != nil {
			t.Errorf("%v: Close: %v", o, err)
		}
	}
}
