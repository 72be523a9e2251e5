package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/pathfinder"
)

func init() {
	register(&command{
		name:    "compile",
		args:    "[flags] file.cu",
		summary: "compile CUDA C++ with NVRTC for several GPU architectures (a fatbin by default)",
		help: `
Compile compiles one CUDA C++ file with NVRTC for every architecture given
with -arch (sm_80,sm_90; compute_90, lto_90, 90 and 9.0 are accepted too),
all architectures in parallel, one goroutine each. Flags may come before or
after the file.

By default it writes one fat binary (nvFatbin) holding a cubin for each
architecture and the PTX of the newest one, so that the driver can JIT it
for newer GPUs. The entries are identified by the source file name, as nvcc
does: cuobjdump -xelf all extracts them as x.sm_80.cubin, x.sm_90.cubin,
x.sm_90.ptx. With -dlto the fatbin holds LTO-IR instead of cubins and PTX.

--ptx, --cubin and --ltoir write one file per architecture instead. With
one architecture, -o names the file (default x.ptx, x.cubin, x.ltoir for
x.cu). With several, the architecture goes before the extension of -o:
-o out.cubin gives out.sm_80.cubin and out.sm_90.cubin (default
x.sm_80.cubin, ...). --ltoir implies -dlto.

-I dirs (repeatable) are passed to NVRTC as --include-path, followed by the
directory of the source file, so that #include "x.h" finds the headers next
to it as with nvcc. -D NAME or -D NAME=VALUE (repeatable) defines a macro.
-X passes any other option to NVRTC unchanged (repeatable), for example
-X --maxrregcount=64 or -X -default-device.

A failed compilation prints the compiler's log on standard error and exits
1; warnings of a successful one are printed there too.`,
		flags: compileFlags,
	})
}

// compileOptions are the compiler flags compile and build share.
type compileOptions struct {
	archs    listFlag
	includes listFlag
	defines  listFlag
	extra    listFlag
	std      string
	debug    bool
	lineinfo bool
	fastMath bool
	dlto     bool
	rdc      bool
}

// addCompileFlags defines the flags compile and build share.
func addCompileFlags(fs *flag.FlagSet) *compileOptions {
	o := &compileOptions{}
	fs.Var(&o.archs, "arch", "GPU `architectures`, comma-separated or repeated: sm_80,sm_90 (also compute_90, lto_90, 90, 9.0, sm_90a)")
	fs.Var(&o.includes, "I", "add `dir` to the include path (repeatable; NVRTC --include-path)")
	fs.Var(&o.defines, "D", "define macro `name[=value]` (repeatable)")
	fs.Var(&o.extra, "X", "pass `option` to NVRTC unchanged (repeatable)")
	fs.StringVar(&o.std, "std", "", "C++ `dialect`: c++03, c++11, c++14, c++17, c++20 (NVRTC's default if empty)")
	fs.BoolVar(&o.debug, "G", false, "generate debug information for device code (-G)")
	fs.BoolVar(&o.lineinfo, "lineinfo", false, "generate line-number information (-lineinfo)")
	fs.BoolVar(&o.fastMath, "use-fast-math", false, "use the fast math library (--use_fast_math)")
	fs.BoolVar(&o.dlto, "dlto", false, "generate LTO-IR for link-time optimisation (-dlto)")
	fs.BoolVar(&o.rdc, "rdc", false, "generate relocatable device code (-rdc=true), for linking")
	return o
}

// programOptions are the options compiling the source at path. Its
// directory comes last in the include path, so that #include "x.h" finds
// the headers next to it as with nvcc. The commands leave the compile
// cache alone: their results are files already.
func (o *compileOptions) programOptions(path string) *core.ProgramOptions {
	return &core.ProgramOptions{
		Name:                  path,
		IncludePaths:          append(slices.Clone(o.includes), filepath.Dir(path)),
		DefineList:            o.defines,
		Std:                   o.std,
		Debug:                 o.debug,
		LineInfo:              o.lineinfo,
		FastMath:              o.fastMath,
		LTO:                   o.dlto,
		RelocatableDeviceCode: o.rdc,
		Extra:                 o.extra,
		NoCache:               true,
	}
}

// check reports flags that give no valid compiler options (a bad -D name,
// an unknown --std), before anything is compiled.
func (o *compileOptions) check() error {
	_, err := o.programOptions("x.cu").NVRTCOptions()
	return err
}

// parseArchs returns the -arch architectures, after checking them and
// the other flags (check, checkArchs) before anything is compiled: each
// error is a usage error.
func (o *compileOptions) parseArchs() ([]core.Arch, error) {
	archs, err := core.ParseArchList(o.archs...)
	if err != nil {
		return nil, err
	}
	if len(archs) == 0 {
		return nil, errors.New("no architecture: use -arch sm_NN[,sm_MM...]")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := checkArchs(archs); err != nil {
		return nil, err
	}
	return archs, nil
}

// reportCompile prints the logs of the compilations of the source name to
// stderr: each distinct log once, naming the architectures it came from.
// It returns the error of the first failed compilation, if any.
func reportCompile(stderr io.Writer, name string, res []core.ArchCode) error {
	type logArchs struct {
		log   string
		archs []string
	}
	var logs []*logArchs
	var failed []string
	var first error
	for _, r := range res {
		if r.Err != nil {
			failed = append(failed, r.Arch.SM())
			if first == nil {
				first = r.Err
			}
		}
		log := strings.TrimRight(r.Log, "\n")
		if log == "" {
			continue
		}
		found := false
		for _, l := range logs {
			if l.log == log {
				l.archs = append(l.archs, r.Arch.SM())
				found = true
			}
		}
		if !found {
			logs = append(logs, &logArchs{log, []string{r.Arch.SM()}})
		}
	}
	for _, l := range logs {
		if len(res) > 1 {
			fmt.Fprintf(stderr, "%s (%s):\n", name, strings.Join(l.archs, ", "))
		}
		fmt.Fprintln(stderr, l.log)
	}
	if first != nil {
		return fmt.Errorf("%s: compilation for %s failed: %w", name, strings.Join(failed, ", "), withoutLog(first))
	}
	return nil
}

// withoutLog is NVRTC's error in err without the log, which reportCompile
// has printed already: it says what is wrong. Other errors are err.
func withoutLog(err error) error {
	var e *nvrtc.Error
	if errors.As(err, &e) && e.Log != "" {
		c := *e
		c.Log = ""
		return &c
	}
	return err
}

func compileFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	o := addCompileFlags(fs)
	out := fs.String("o", "", "output `file` (default: the source's name with the output's extension)")
	ptx := fs.Bool("ptx", false, "write PTX, one file per architecture")
	cubin := fs.Bool("cubin", false, "write cubins, one file per architecture")
	ltoir := fs.Bool("ltoir", false, "write LTO-IR, one file per architecture (implies -dlto)")
	fat := fs.Bool("fatbin", false, "write one fat binary (the default)")
	mkdir := addMkdirFlag(fs)
	return func(args []string, stdout, stderr io.Writer) int {
		name, code, ok := parseOneFile("compile", ".cu file", fs, args, stdout, stderr)
		if !ok {
			return code
		}
		kinds := 0
		for _, b := range []bool{*ptx, *cubin, *ltoir, *fat} {
			if b {
				kinds++
			}
		}
		if kinds > 1 {
			return usageError(stderr, "compile", "--ptx, --cubin, --ltoir and --fatbin exclude each other")
		}
		if *ltoir {
			o.dlto = true
		}
		archs, err := o.parseArchs()
		if err != nil {
			return usageError(stderr, "compile", "%v", err)
		}
		src, err := readInput(name)
		if err != nil {
			return failure(stderr, "compile", err)
		}
		switch {
		case *ptx, *cubin, *ltoir:
			ext, target := ".ptx", core.CodePTX
			if *cubin {
				ext, target = ".cubin", core.CodeCubin
			} else if *ltoir {
				ext, target = ".ltoir", core.CodeLTOIR
			}
			for _, a := range archs { // before compiling
				if err := outputDir(perArchName(*out, name, ext, a, len(archs) > 1), *mkdir); err != nil {
					return failure(stderr, "compile", err)
				}
			}
			res := core.CompileArchs(string(src), archs, o.programOptions(name), target)
			if err := reportCompile(stderr, name, res); err != nil {
				return failure(stderr, "compile", err)
			}
			for _, r := range res {
				path := perArchName(*out, name, ext, r.Arch, len(archs) > 1)
				if err := writeOutput(path, r.Codes[0].Code(), *mkdir); err != nil {
					return failure(stderr, "compile", err)
				}
			}
			return exitOK
		}
		path := *out
		if path == "" {
			path = stem(name) + ".fatbin"
		}
		if err := outputDir(path, *mkdir); err != nil {
			return failure(stderr, "compile", err)
		}
		fb, err := compileFatbin(stderr, src, name, archs, o)
		if err != nil {
			return failure(stderr, "compile", err)
		}
		if err := writeOutput(path, fb, *mkdir); err != nil {
			return failure(stderr, "compile", err)
		}
		return exitOK
	}
}

// compileFatbin compiles one source for archs in parallel and returns the
// fat binary core.CompileFatbinArchs makes of it, after printing the
// compilers' logs.
func compileFatbin(stderr io.Writer, src []byte, name string, archs []core.Arch, o *compileOptions) ([]byte, error) {
	fb, res, err := core.CompileFatbinArchs(string(src), archs, o.programOptions(name))
	if rerr := reportCompile(stderr, name, res); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, err
	}
	return fb.Code(), nil
}

// checkArchs refuses, before compiling, architectures the loaded NVRTC
// cannot compile for, listing those it can (nvrtcGetSupportedArchs): NVRTC
// itself says only "invalid value for --gpu-architecture". When NVRTC does
// not load, compiling reports that.
func checkArchs(archs []core.Arch) error {
	supported, err := nvrtcArchs()
	if err != nil {
		return nil
	}
	var bad []string
	for _, a := range archs {
		if !slices.Contains(supported, a.Number) {
			bad = append(bad, a.String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	names := make([]string, len(supported))
	for i, n := range supported {
		names[i] = core.Arch{Number: n}.SM()
	}
	which := "the loaded NVRTC"
	if maj, min, err := nvrtc.Version(); err == nil {
		which = fmt.Sprintf("NVRTC %d.%d", maj, min)
	}
	if lib, err := pathfinder.Load(pathfinder.NVRTC); err == nil {
		which += " (" + lib.Path + ")"
	}
	return fmt.Errorf("%s: not an architecture %s compiles for; it supports %s", strings.Join(bad, ", "), which, strings.Join(names, ", "))
}

// nvrtcArchs returns the architectures the loaded NVRTC compiles for, as
// core.Arch numbers (90 for sm_90), ascending.
func nvrtcArchs() ([]int, error) {
	n, err := nvrtc.GetNumSupportedArchs()
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("nvrtcGetNumSupportedArchs returned %d", n)
	}
	list := make([]int32, n)
	if err := nvrtc.GetSupportedArchs(&list[0]); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, a := range list {
		out[i] = int(a)
	}
	return out, nil
}
