package core

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cudago/cudago/fatbin"
)

// defineSrc compiles only when NEED is defined and EMPTY is defined as
// nothing.
const defineSrc = `
#ifndef NEED
#error NEED is not defined
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
static_assert(sizeof(STR(EMPTY)) == 1, "EMPTY is not empty");
extern "C" __global__ void k(int *x) { x[0] = NEED; }
`

// TestDefineListReachesNVRTC: DefineList goes to NVRTC as given, in
// order, including the empty definition Defines cannot express.
func TestDefineListReachesNVRTC(t *testing.T) {
	opts := &ProgramOptions{Arch: "compute_80", DefineList: []string{"NEED=1", "EMPTY=", "NEED=4242"}}
	args, err := opts.NVRTCOptions()
	if err != nil || strings.Join(args, " ") != "-arch=compute_80 -DNEED=1 -DEMPTY= -DNEED=4242" {
		t.Errorf("NVRTCOptions = %q, %v", args, err)
	}
	ptx := mustCompile(t, mustProgram(t, defineSrc, "c++", opts), "ptx")
	if !bytes.Contains(ptx.Code(), []byte("4242")) {
		t.Errorf("the last -DNEED=4242 did not win: PTX\n%s", ptx.Code())
	}
	// Without the definitions the source does not compile.
	p := mustProgram(t, defineSrc, "c++", &ProgramOptions{Arch: "compute_80"})
	var ce *CompileError
	if _, err := p.Compile("ptx"); !errors.As(err, &ce) || !strings.Contains(ce.Log, "NEED is not defined") {
		t.Errorf("without DefineList: %v", err)
	}
	// "EMPTY" alone defines it as 1, which the static_assert refuses.
	p = mustProgram(t, defineSrc, "c++", &ProgramOptions{Arch: "compute_80", DefineList: []string{"NEED", "EMPTY"}})
	if _, err := p.Compile("ptx"); !errors.As(err, &ce) || !strings.Contains(ce.Log, "EMPTY is not empty") {
		t.Errorf("DefineList EMPTY: %v", err)
	}
	for _, bad := range []string{"", "=1", "1X=2", "A B=3"} {
		_, err := (&ProgramOptions{DefineList: []string{bad}}).NVRTCOptions()
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "ProgramOptions.DefineList") {
			t.Errorf("DefineList %q: %v", bad, err)
		}
	}
	if _, err := NewProgram(seedNVVMIR, "nvvm", &ProgramOptions{DefineList: []string{"X"}}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("DefineList for NVVM: %v", err)
	}
}

func TestCompileArchs(t *testing.T) {
	archs := []Arch{{80, ""}, {90, ""}}
	res := CompileArchs(saxpySrc, archs, &ProgramOptions{Name: "dir/saxpy.cu", Arch: "sm_52"}, CodeCubin, CodePTX)
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Arch, r.Err)
		}
		if r.Arch != archs[i] || len(r.Codes) != 2 || r.Codes[0].CodeType() != CodeCubin || r.Codes[1].CodeType() != CodePTX {
			t.Fatalf("result %d: %v %v", i, r.Arch, r.Codes)
		}
		// opts.Arch is ignored: each is for its own architecture.
		checkCubin(t, r.Codes[0].Code(), r.Arch.Number, "saxpy")
		if a, ok := ptxArch(r.Codes[1].Code()); !ok || a != r.Arch.SM() {
			t.Errorf("PTX for %s has .target %q", r.Arch, a)
		}
		if r.Codes[0].Name() != "dir/saxpy.cu" {
			t.Errorf("code name %q", r.Codes[0].Name())
		}
	}

	// A compile error: every architecture fails with the log.
	res = CompileArchs("extern \"C\" __global__ void k() { nope(); }\n", archs, &ProgramOptions{Name: "bad.cu"}, CodeCubin)
	for _, r := range res {
		var ce *CompileError
		if !errors.As(r.Err, &ce) || !strings.Contains(r.Log, `identifier "nope" is undefined`) || r.Codes != nil {
			t.Errorf("%s: err %v, log %q", r.Arch, r.Err, r.Log)
		}
	}
	// Warnings of a successful compilation come back in Log.
	res = CompileArchs("__global__ void w() { int unused; }\n", archs[:1], &ProgramOptions{Name: "warn.cu"}, CodeLTOIR)
	if r := res[0]; r.Err != nil || !strings.Contains(r.Log, "unused") || r.Codes[0].CodeType() != CodeLTOIR {
		t.Errorf("warning: err %v, log %q", r.Err, r.Log)
	}
	if res := CompileArchs(saxpySrc, archs, nil); res[0].Err == nil || res[1].Err == nil {
		t.Error("CompileArchs without targets did not fail")
	}
	if res := CompileArchs(saxpySrc, archs[:1], &ProgramOptions{Std: "c++99"}, CodePTX); !errors.Is(res[0].Err, ErrInvalidOption) {
		t.Errorf("bad options: %v", res[0].Err)
	}
}

// fatbinEntries lists kind, arch and identifier of a fatbin's entries.
func fatbinEntries(t *testing.T, code []byte) []string {
	t.Helper()
	f, err := fatbin.Parse(code)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range f.Entries {
		s := e.Kind.String() + " " + e.ArchName() + " " + e.Identifier
		if e.Flags&fatbin.FlagDebug != 0 {
			s += " debug"
		}
		out = append(out, s)
	}
	return out
}

func TestFatbinOfArchs(t *testing.T) {
	archs := []Arch{{80, ""}, {90, "a"}, {90, ""}}
	res := CompileArchs(templateSrc, archs, &ProgramOptions{NameExpressions: []string{"scale<float>"}}, CodeCubin, CodePTX)
	fb, err := FatbinOfArchs(res, "k.cu", &FatbinOptions{Name: "k", Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	// Every cubin, and only the newest plain architecture's PTX.
	got := strings.Join(fatbinEntries(t, fb.Code()), "\n")
	want := strings.Join([]string{
		"ELF sm_80 k.cu debug", "ELF sm_90a k.cu debug", "ELF sm_90 k.cu debug", "PTX sm_90 k.cu debug",
	}, "\n")
	if got != want {
		t.Errorf("entries:\n%s\nwant:\n%s", got, want)
	}
	if fb.Name() != "k" || fb.SymbolMapping()["scale<float>"] != "_Z5scaleIfEvPT_S0_i" {
		t.Errorf("fatbin %v, symbols %v", fb, fb.SymbolMapping())
	}
	if _, err := FatbinOfArchs(nil, "", nil); err == nil {
		t.Error("FatbinOfArchs(nil) succeeded")
	}
	res[1].Err = errors.New("boom")
	if _, err := FatbinOfArchs(res, "", nil); err == nil || !strings.Contains(err.Error(), "sm_90a") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("FatbinOfArchs with a failed architecture: %v", err)
	}
}

func TestCompileFatbinArchsLTO(t *testing.T) {
	fb, res, err := CompileFatbinArchs(unitHelper, []Arch{{80, ""}, {90, ""}}, &ProgramOptions{Name: "src/helper.cu", LTO: true, RelocatableDeviceCode: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Codes[0].CodeType() != CodeLTOIR {
		t.Errorf("results %v", res)
	}
	if got := strings.Join(fatbinEntries(t, fb.Code()), ", "); got != "LTOIR sm_80 helper.cu, LTOIR sm_90 helper.cu" {
		t.Errorf("entries: %s", got)
	}
	// A failure returns every architecture's result, logs included.
	_, res, err = CompileFatbinArchs("__global__ void z() { nope(); }\n", []Arch{{80, ""}, {90, ""}}, nil)
	if err == nil || len(res) != 2 || res[1].Err == nil || !strings.Contains(res[1].Log, "nope") {
		t.Errorf("broken source: %v, %v", err, res)
	}
}

func TestFromFileDetects(t *testing.T) {
	dir := t.TempDir()
	cubin := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_80"}), CodeCubin)
	ptx := mustCompile(t, mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "compute_80"}), CodePTX)
	lto := compileUnit(t, unitHelper, "helper.cu", "sm_90", CodeLTOIR)
	nvvmLTO := mustCompile(t, mustProgram(t, seedNVVMIR, "nvvm", &ProgramOptions{Arch: "compute_90"}), CodeLTOIR)
	fb, err := CompileFatbin(saxpySrc, []string{"sm_80"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err1 := os.ReadFile("testdata/helper.o")
	lib, err2 := os.ReadFile("testdata/libhelper.a")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"a.bin": {cubin.Code(), CodeCubin}, "b.bin": {append(bytes.Clone(ptx.Code()), 0), CodePTX},
		"c.bin": {lto.Code(), CodeLTOIR}, "d.bin": {nvvmLTO.Code(), CodeLTOIR}, "e.bin": {fb.Code(), CodeFatbin},
		"f.bin": {obj, CodeObject}, "g.bin": {lib, CodeLibrary},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := FromFile(path)
		if err != nil || o.CodeType() != c.want || o.Name() != path {
			t.Errorf("FromFile(%s) = %v, %v; want %s", name, o, err, c.want)
			continue
		}
		if c.want == CodePTX && bytes.HasSuffix(o.Code(), []byte{0}) {
			t.Error("FromFile kept the NUL of PTX")
		}
	}
	bad := filepath.Join(dir, "text")
	os.WriteFile(bad, []byte("not code\n"), 0o644)
	if _, err := FromFile(bad); !errors.Is(err, ErrInvalidCode) || !strings.Contains(err.Error(), bad) {
		t.Errorf("FromFile of text: %v", err)
	}
	os.WriteFile(bad, cubin.Code()[:40], 0o644) // a CUDA ELF header, cut short
	if _, err := FromFile(bad); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("FromFile of a truncated cubin: %v", err)
	}
	if _, err := FromFile(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("FromFile of a missing file: %v", err)
	}
}

// TestLinkerConcurrentSessions runs LTO links on many goroutines at once:
// each session is on its own locked thread, not serialised, and every
// result equals the one linked alone.
func TestLinkerConcurrentSessions(t *testing.T) {
	a := compileUnit(t, unitKernel, "kernel.cu", "sm_90", CodeLTOIR)
	b := compileUnit(t, unitHelper, "helper.cu", "sm_90", CodeLTOIR)
	opts := &LinkerOptions{Arch: "sm_90", LTO: true, NoCache: true}
	want := mustLink(t, opts, CodeCubin, a, b).Code()
	wantPTX := mustLink(t, opts, CodePTX, a, b).Code()
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for i := range 16 {
		wg.Go(func() {
			target := []string{CodeCubin, CodePTX}[i%2]
			l, err := NewLinker(opts, a, b)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer l.Close()
			o, err := l.Link(target)
			switch {
			case err != nil:
				errs <- err.Error()
			case target == CodeCubin && !bytes.Equal(o.Code(), want), target == CodePTX && !bytes.Equal(o.Code(), wantPTX):
				errs <- target + " differs from the one linked alone"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestHandlesChangeThreads creates an NVRTC program and an nvFatbin
// builder on one OS thread and uses them on another: unlike nvJitLink
// sessions, their handles need no thread of their own.
func TestHandlesChangeThreads(t *testing.T) {
	var (
		p       *Program
		b       *FatbinBuilder
		tid     int
		created = make(chan error)
		done    = make(chan struct{})
	)
	go func() {
		runtime.LockOSThread() // held until done: the other goroutine gets another thread
		defer runtime.UnlockOSThread()
		tid = syscall.Gettid()
		var err error
		if p, err = NewProgram(saxpySrc, "c++", &ProgramOptions{Arch: "sm_80"}); err == nil {
			b, err = NewFatbinBuilder(nil)
		}
		created <- err
		<-done
	}()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	defer close(done)
	defer p.Close()
	defer b.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if syscall.Gettid() == tid {
		t.Fatal("same OS thread")
	}
	for _, target := range []string{CodeCubin, CodePTX} {
		code, err := p.Compile(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(code, "sm_80"); err != nil {
			t.Fatal(err)
		}
	}
	fb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fatbinEntries(t, fb.Code()), ", "); got != "ELF sm_80 default_program, PTX sm_80 default_program" {
		t.Errorf("entries: %s", got)
	}
}

// TestCompileOneRunPerOptions: targets with the same NVRTC options come
// from one compilation (the program's handle is not replaced), others
// from one each.
func TestCompileOneRunPerOptions(t *testing.T) {
	p := mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "sm_80", NoCache: true})
	h := p.h
	codes, err := p.compile(CodeCubin, CodePTX)
	if err != nil || len(codes) != 2 || codes[0].CodeType() != CodeCubin || codes[1].CodeType() != CodePTX {
		t.Fatalf("compile = %v, %v", codes, err)
	}
	if p.h != h {
		t.Error("cubin and PTX for sm_80 took two NVRTC runs")
	}
	p = mustProgram(t, saxpySrc, "c++", &ProgramOptions{Arch: "compute_80", NoCache: true})
	h = p.h
	codes, err = p.compile(CodePTX, CodeCubin)
	if err != nil || codes[0].CodeType() != CodePTX || codes[1].CodeType() != CodeCubin {
		t.Fatalf("compile = %v, %v", codes, err)
	}
	if p.h == h {
		t.Error("PTX for compute_80 and a cubin for sm_80 took one NVRTC run")
	}
	if a, _ := ptxArch(codes[0].Code()); a != "sm_80" {
		t.Errorf("PTX target %q", a)
	}
	checkCubin(t, codes[1].Code(), 80, "saxpy")
}

// TestCompileTargetsCached: each target of one compilation is its own
// cache entry, the same as a Compile of that target alone would store.
func TestCompileTargetsCached(t *testing.T) {
	dir := useCacheDir(t)
	opts := &ProgramOptions{Arch: "sm_80", Name: "multi.cu"}
	first, err := mustProgram(t, saxpySrc, "c++", opts).compile(CodeCubin, CodePTX)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cacheFiles(t, dir)); n != 2 {
		t.Fatalf("%d cache entries, want 2", n)
	}
	p := mustProgram(t, saxpySrc, "c++", opts)
	again, err := p.compile(CodeCubin, CodePTX)
	if err != nil || p.used || !bytes.Equal(again[0].Code(), first[0].Code()) || !bytes.Equal(again[1].Code(), first[1].Code()) {
		t.Errorf("second compile: %v, compiled %v", err, p.used)
	}
	p = mustProgram(t, saxpySrc, "c++", opts)
	if ptx := mustCompile(t, p, CodePTX); p.used || !bytes.Equal(ptx.Code(), first[1].Code()) {
		t.Errorf("Compile(ptx) after compile(cubin, ptx): compiled %v", p.used)
	}
}
