package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/enum"
)

// NVRTC's precompiled headers (12.8 and newer): ProgramOptions.PCH has
// NVRTC save the parsed state of a program's leading #includes to a file
// and load it when another compilation starts with the same headers,
// which is most of the compile time of a kernel that includes CCCL's
// <cuda/std/...> or CUB. CreatePCH and UsePCH name the file instead.
//
// NewProgram refuses the PCH fields on an older NVRTC, naming the version
// needed, and gives automatic PCH a folder under the compile cache's root
// when PCHDir is empty. After a compilation that may create a header,
// Program.PCHStatus says whether it did; when NVRTC's PCH heap was too
// small, the heap is grown to what NVRTC asks for and the program
// compiled once more, as cuda.core does.

// pchMinMajor and pchMinMinor are the first NVRTC with precompiled headers.
const pchMinMajor, pchMinMinor = 12, 8

// PCHStatus is what the last compilation of a Program did about a
// precompiled header it could create (ProgramOptions.PCH or CreatePCH).
type PCHStatus int

const (
	// PCHNotRequested: the options asked for no header to be created,
	// or the compilation failed.
	PCHNotRequested PCHStatus = iota
	// PCHCreated: a precompiled header was created.
	PCHCreated
	// PCHNotAttempted: NVRTC created none; with automatic PCH, because
	// one was used or it judged none worth making.
	PCHNotAttempted
	// PCHFailed: NVRTC could not create one (the compilation itself
	// succeeded).
	PCHFailed
)

func (s PCHStatus) String() string {
	return enum.Name(s, "PCHStatus", "PCHNotRequested", "PCHCreated", "PCHNotAttempted", "PCHFailed")
}

// pchFields names the set PCH fields of o.
func (o *ProgramOptions) pchFields() []string {
	var f []string
	for _, c := range []struct {
		set  bool
		name string
	}{
		{o.PCH, "PCH"}, {o.CreatePCH != "", "CreatePCH"}, {o.UsePCH != "", "UsePCH"}, {o.PCHDir != "", "PCHDir"},
		{o.PCHVerbose != nil, "PCHVerbose"}, {o.PCHMessages != nil, "PCHMessages"},
		{o.InstantiateTemplatesInPCH != nil, "InstantiateTemplatesInPCH"},
	} {
		if c.set {
			f = append(f, c.name)
		}
	}
	return f
}

// nvrtcHasPCH returns NVRTC's version, and whether it has precompiled
// headers; when it has not, tooOld says so, naming both versions.
func nvrtcHasPCH() (major, minor int32, ok bool, err error) {
	major, minor, err = nvrtc.Version()
	if err != nil {
		return 0, 0, false, fmt.Errorf("reading NVRTC's version: %w", err)
	}
	ok = major > pchMinMajor || major == pchMinMajor && minor >= pchMinMinor
	return major, minor, ok, nil
}

func pchTooOld(major, minor int32) string {
	return fmt.Sprintf("precompiled headers need NVRTC %d.%d or newer; the NVRTC loaded is %d.%d", pchMinMajor, pchMinMinor, major, minor)
}

// checkPCH is nvrtcHasPCH's error for function fn.
func checkPCH(fn string) error {
	major, minor, ok, err := nvrtcHasPCH()
	switch {
	case err != nil:
		return fmt.Errorf("core: %s: %w", fn, err)
	case !ok:
		return fmt.Errorf("core: %s: %s", fn, pchTooOld(major, minor))
	}
	return nil
}

// setupPCH checks the PCH fields of a "c++" program against NVRTC's
// version and, for automatic PCH without PCHDir, adds the default
// folder to its options. NewProgram calls it.
func (p *Program) setupPCH() error {
	f := p.opts.pchFields()
	if len(f) == 0 {
		return nil
	}
	major, minor, ok, err := nvrtcHasPCH()
	switch {
	case err != nil:
		return fmt.Errorf("core: NewProgram: ProgramOptions.%s: %w", f[0], err)
	case !ok:
		return badOption("ProgramOptions."+f[0], "%s", pchTooOld(major, minor))
	}
	if p.opts.PCH && p.opts.PCHDir == "" {
		dir, err := defaultPCHDir(major, minor)
		if err != nil {
			return badOption("ProgramOptions.PCHDir", "empty, and the default folder of automatic PCH is unusable: %v; set PCHDir", err)
		}
		p.args = append(p.args, "--pch-dir="+dir)
	}
	return nil
}

// defaultPCHDir is the folder of automatic PCH files: pch/nvrtc-M.N
// under the compile cache's root (CacheDir), one per NVRTC version, since
// a header is only good for the compiler that made it. The root must pass
// the cache's ownership check: NVRTC loads what it finds there as
// compiled code, as the cache's entries are. It is created 0700. NVRTC
// manages its files; the cache's trimming (CUDAGO_CACHE_MAX) walks only
// its own folders and leaves them.
func defaultPCHDir(major, minor int32) (string, error) {
	root, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := checkCacheRoot(root); err != nil {
		return "", err
	}
	dir := filepath.Join(root, "pch", fmt.Sprintf("nvrtc-%d.%d", major, minor))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// pchHeap serializes the growth of NVRTC's PCH heap, which is one for the
// process.
var pchHeap sync.Mutex

// PCHHeapSize returns the size of NVRTC's PCH heap in bytes
// (nvrtcGetPCHHeapSize), from which precompiled headers are made.
func PCHHeapSize() (int, error) {
	if err := checkPCH("PCHHeapSize"); err != nil {
		return 0, err
	}
	n, err := nvrtc.GetPCHHeapSize()
	return int(n), err
}

// SetPCHHeapSize sets the size of NVRTC's PCH heap (nvrtcSetPCHHeapSize),
// for all programs of the process. Compile grows it itself when a header
// does not fit; setting it first saves that compilation's repetition.
func SetPCHHeapSize(n int) error {
	if n < 0 {
		return fmt.Errorf("core: SetPCHHeapSize: negative size %d", n)
	}
	if err := checkPCH("SetPCHHeapSize"); err != nil {
		return err
	}
	pchHeap.Lock()
	defer pchHeap.Unlock()
	return nvrtc.SetPCHHeapSize(uint64(n))
}

// PCHStatus reports what the last Compile did about a precompiled header
// it could create: PCHNotRequested unless ProgramOptions.PCH or CreatePCH
// is set and the compilation succeeded.
func (p *Program) PCHStatus() PCHStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pch
}

// pchCompiled follows NVRTC's compilation of prog with args, whose result
// was cerr: it reads the PCH creation status and, when the PCH heap was
// too small, grows it and compiles again in a fresh program, whose
// handle and result it returns. Called by runNVRTC with p.mu held.
func (p *Program) pchCompiled(prog nvrtc.Program, args []string, cerr error) (nvrtc.Program, error) {
	p.pch = PCHNotRequested
	if cerr != nil || !p.opts.PCH && p.opts.CreatePCH == "" {
		return prog, cerr
	}
	st := nvrtc.GetPCHCreateStatus(prog)
	if !errors.Is(st, nvrtc.ErrorPchCreateHeapExhausted) {
		p.pch = pchStatusOf(st)
		return prog, nil
	}
	need, err := nvrtc.GetPCHHeapSizeRequired(prog)
	if err != nil {
		return prog, fmt.Errorf("core: NVRTC: the PCH heap size program %q needs: %w", p.opts.name(), err)
	}
	if err := growPCHHeap(need); err != nil {
		return prog, fmt.Errorf("core: NVRTC: growing the PCH heap to %d bytes: %w", need, err)
	}
	if err := p.newHandle(); err != nil {
		return 0, err // prog is destroyed
	}
	p.used = true
	prog = p.h.nvrtc
	for _, e := range p.opts.NameExpressions {
		if err := nvrtc.AddNameExpression(prog, e); err != nil {
			return prog, fmt.Errorf("core: NVRTC: adding name expression %q: %w", e, err)
		}
	}
	if cerr = nvrtc.CompileProgram(prog, int32(len(args)), args); cerr != nil {
		return prog, cerr
	}
	p.pch = pchStatusOf(nvrtc.GetPCHCreateStatus(prog)) // exhausted again: failed
	return prog, nil
}

// pchStatusOf reads nvrtcGetPCHCreateStatus's result.
func pchStatusOf(err error) PCHStatus {
	switch {
	case err == nil:
		return PCHCreated
	case errors.Is(err, nvrtc.ErrorNoPchCreateAttempted):
		return PCHNotAttempted
	}
	return PCHFailed
}

// growPCHHeap makes NVRTC's PCH heap at least n bytes.
func growPCHHeap(n uint64) error {
	pchHeap.Lock()
	defer pchHeap.Unlock()
	cur, err := nvrtc.GetPCHHeapSize()
	if err != nil {
		return err
	}
	if cur >= n {
		return nil // another program grew it meanwhile
	}
	return nvrtc.SetPCHHeapSize(n)
}
