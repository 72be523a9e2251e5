package core

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
)

// Compiling one source for several GPU architectures, and packing the
// results into one fatbin, as nvcc -arch=sm_80,sm_90 does.

// ArchCode is what compiling (or linking) for one architecture gave.
type ArchCode struct {
	Arch Arch
	// Codes holds one ObjectCode per target asked for, in order; nil when
	// Err is set.
	Codes []*ObjectCode
	// Log is the compiler's log, warnings included; set on failure too.
	Log string
	// Err is why the compilation failed: a *CompileError holding the log
	// when the compiler rejected the source.
	Err error
}

// nvrtcSlots bounds the compilations CompileArchs runs at once in the
// whole process (cudago build compiles files × architectures): one per
// CPU, since NVRTC is CPU-bound and more would only share the CPUs.
var nvrtcSlots = make(chan struct{}, max(runtime.GOMAXPROCS(0), 2))

// CompileArchs compiles CUDA C++ src with NVRTC for each architecture of
// archs, in parallel, to every target of targets ("ptx", "cubin",
// "ltoir"), and returns the results in the order of archs. Each
// architecture is compiled for sm_NN (opts.Arch is ignored) and once only
// where the targets allow: its cubin and PTX come from one compilation.
// opts may be nil; opts.Name names the program in the compiler's
// messages and the ObjectCodes.
func CompileArchs(src string, archs []Arch, opts *ProgramOptions, targets ...string) []ArchCode {
	res := make([]ArchCode, len(archs))
	var wg sync.WaitGroup
	for i, a := range archs {
		res[i].Arch = a
		if len(targets) == 0 {
			res[i].Err = errors.New("core: CompileArchs: no target")
			continue
		}
		wg.Go(func() {
			nvrtcSlots <- struct{}{}
			defer func() { <-nvrtcSlots }()
			res[i].Codes, res[i].Log, res[i].Err = compileArch(src, a, opts, targets)
		})
	}
	wg.Wait()
	return res
}

func compileArch(src string, a Arch, opts *ProgramOptions, targets []string) ([]*ObjectCode, string, error) {
	var o ProgramOptions
	if opts != nil {
		o = *opts
	}
	o.Arch = a.SM()
	p, err := NewProgram(src, "c++", &o)
	if err != nil {
		return nil, "", err
	}
	defer p.Close()
	codes, err := p.compile(targets...)
	return codes, p.Log(), err
}

// CompileFatbin compiles CUDA C++ src with NVRTC once per architecture in
// archs (any form ParseArch reads: "sm_80", "90", "9.0"), in parallel,
// and puts the results into one fatbin as nvcc does (see
// CompileFatbinArchs). opts (may be nil) applies to every compilation;
// its Arch is ignored. The result carries the lowered names of
// opts.NameExpressions as symbol mapping.
func CompileFatbin(src string, archs []string, opts *ProgramOptions) (*ObjectCode, error) {
	as, err := ParseArchList(archs...)
	if err != nil {
		return nil, err
	}
	fb, _, err := CompileFatbinArchs(src, as, opts)
	return fb, err
}

// CompileFatbinArchs is CompileFatbin for parsed architectures, which
// also returns each architecture's compilation (logs and errors
// included, even when it fails). The fatbin holds a cubin per
// architecture and the PTX of the newest, which the driver can JIT for
// newer GPUs; with opts.LTO, LTO-IR per architecture instead. All entries
// are identified by the base name of opts.Name, as nvcc identifies them
// by the source file's name (cuobjdump -xelf then writes x.sm_90.cubin
// for x.cu). opts.Debug makes the fatbin a debug one (nvFatbin -g).
func CompileFatbinArchs(src string, archs []Arch, opts *ProgramOptions) (*ObjectCode, []ArchCode, error) {
	if len(archs) == 0 {
		return nil, nil, badOption("archs", "no architecture given")
	}
	targets := []string{CodeCubin, CodePTX}
	if opts != nil && opts.LTO {
		targets = []string{CodeLTOIR}
	}
	res := CompileArchs(src, archs, opts, targets...)
	for _, r := range res {
		if r.Err != nil {
			return nil, res, fmt.Errorf("core: CompileFatbin for %s: %w", r.Arch, r.Err)
		}
	}
	name := opts.name()
	fo := &FatbinOptions{Name: name, Debug: opts != nil && opts.Debug}
	fb, err := FatbinOfArchs(res, filepath.Base(name), fo)
	return fb, res, err
}

// FatbinOfArchs packs code made per architecture into one fatbin, as
// nvcc does: every cubin, LTO-IR and host object of codes, in order, then
// the PTX of the newest architecture only (the driver JITs it for GPUs
// newer than all; older PTX would only add size). Every entry is
// identified by identifier, which may be empty. The symbol mappings of
// the codes pass to the fatbin. opts may be nil.
func FatbinOfArchs(codes []ArchCode, identifier string, opts *FatbinOptions) (*ObjectCode, error) {
	if len(codes) == 0 {
		return nil, errors.New("core: FatbinOfArchs: no code")
	}
	archs := make([]Arch, len(codes))
	for i, r := range codes {
		if r.Err != nil {
			return nil, fmt.Errorf("core: FatbinOfArchs: the code for %s failed: %w", r.Arch, r.Err)
		}
		archs[i] = r.Arch
	}
	top := NewestArch(archs)
	b, err := NewFatbinBuilder(opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var ptx []*ObjectCode
	for _, r := range codes {
		for _, c := range r.Codes {
			if c == nil {
				return nil, fmt.Errorf("core: FatbinOfArchs: nil code for %s", r.Arch)
			}
			if c.codeType == CodePTX {
				if r.Arch == top {
					ptx = append(ptx, c)
				}
				continue
			}
			if err := b.add(c, r.Arch.Bare(), identifier); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range ptx {
		if err := b.add(c, top.Bare(), identifier); err != nil {
			return nil, err
		}
	}
	return b.Build()
}
