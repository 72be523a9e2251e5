package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/bindings/nvrtc"
)

func init() {
	register(&command{
		name:    "compile",
		args:    "[flags] file.cu",
		summary: "compile CUDA C++ with NVRTC for several GPU architectures (a fatbin by default)",
		help: `
Compile compiles one CUDA C++ file with NVRTC for every architecture given
with -arch (sm_80,sm_90; compute_90 and 90 are accepted too), all
architectures in parallel, one goroutine each. Flags may come before or
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

// compileOptions are the NVRTC options compile and build share.
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
	fs.Var(&o.archs, "arch", "GPU `architectures`, comma-separated or repeated: sm_80,sm_90 (also compute_90, 90, sm_90a)")
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

// nvrtcOptions returns the NVRTC options compiling src for a.
func (o *compileOptions) nvrtcOptions(a gpuArch, src string) []string {
	opts := []string{"-arch=" + a.sm()}
	for _, d := range o.includes {
		opts = append(opts, "--include-path="+d)
	}
	opts = append(opts, "--include-path="+filepath.Dir(src))
	for _, d := range o.defines {
		opts = append(opts, "-D"+d)
	}
	if o.std != "" {
		opts = append(opts, "--std="+o.std)
	}
	if o.debug {
		opts = append(opts, "-G")
	}
	if o.lineinfo {
		opts = append(opts, "-lineinfo")
	}
	if o.fastMath {
		opts = append(opts, "--use_fast_math")
	}
	if o.dlto {
		opts = append(opts, "-dlto")
	}
	if o.rdc {
		opts = append(opts, "-rdc=true")
	}
	return append(opts, o.extra...)
}

// Which outputs a compilation keeps.
const (
	wantPTX = 1 << iota
	wantCubin
	wantLTOIR
)

// compiled is the result of compiling one source for one architecture.
type compiled struct {
	arch  gpuArch
	ptx   []byte // without trailing NUL
	cubin []byte
	ltoir []byte
	log   string // the compiler's log (warnings), also on failure
	err   error
}

// compileOne compiles src (named name, for messages) with NVRTC.
func compileOne(src []byte, name string, a gpuArch, opts []string, want int) compiled {
	c := compiled{arch: a}
	// Keep the program on one OS thread, as NVIDIA's libraries expect of a
	// handle's calls.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := nvrtc.CreateProgram(string(src), name, 0, nil, nil)
	if err != nil {
		c.err = err
		return c
	}
	defer nvrtc.DestroyProgram(&p)
	err = nvrtc.CompileProgram(p, int32(len(opts)), opts)
	c.log, _ = nvrtc.ProgramLog(p)
	c.log = strings.TrimRight(c.log, "\n")
	if err != nil {
		var e *nvrtc.Error
		if errors.As(err, &e) && e.Log != "" {
			// Report the log by itself: it says what is wrong.
			e.Log = ""
		}
		c.err = err
		return c
	}
	if want&wantPTX != 0 {
		if c.ptx, err = nvrtc.PTX(p); err == nil && len(c.ptx) == 0 {
			err = fmt.Errorf("NVRTC produced no PTX for %s", a)
		}
	}
	if err == nil && want&wantCubin != 0 {
		if c.cubin, err = nvrtc.CUBIN(p); err == nil && len(c.cubin) == 0 {
			err = fmt.Errorf("NVRTC produced no cubin for %s", a)
		}
	}
	if err == nil && want&wantLTOIR != 0 {
		if c.ltoir, err = nvrtc.LTOIR(p); err == nil && len(c.ltoir) == 0 {
			err = fmt.Errorf("NVRTC produced no LTO-IR for %s (is -dlto set?)", a)
		}
	}
	c.err = err
	return c
}

// compileParallel controls whether compileArchs runs one goroutine per
// architecture (the default) or compiles one after the other (for the
// benchmark comparing the two).
var compileParallel = true

// compileArchs compiles src for every architecture, one goroutine each, and
// returns the results in the order of archs. want(a) says what to keep of
// a's compilation.
func compileArchs(src []byte, name string, archs []gpuArch, o *compileOptions, want func(gpuArch) int) []compiled {
	res := make([]compiled, len(archs))
	if !compileParallel {
		for i, a := range archs {
			res[i] = compileOne(src, name, a, o.nvrtcOptions(a, name), want(a))
		}
		return res
	}
	var wg sync.WaitGroup
	for i, a := range archs {
		wg.Go(func() {
			compileSlots <- struct{}{}
			defer func() { <-compileSlots }()
			res[i] = compileOne(src, name, a, o.nvrtcOptions(a, name), want(a))
		})
	}
	wg.Wait()
	return res
}

// compileSlots bounds the NVRTC compilations running at once, across files
// (build compiles files × architectures): one per CPU.
var compileSlots = make(chan struct{}, max(runtime.GOMAXPROCS(0), 2))

// reportCompile prints the logs of the compilations to stderr: each
// distinct log once, naming the architectures it came from. It returns the
// error of the first failed compilation, if any.
func reportCompile(stderr io.Writer, name string, res []compiled) error {
	type logArchs struct {
		log   string
		archs []string
	}
	var logs []*logArchs
	var failed []string
	var first error
	for _, r := range res {
		if r.err != nil {
			failed = append(failed, r.arch.sm())
			if first == nil {
				first = r.err
			}
		}
		if r.log == "" {
			continue
		}
		found := false
		for _, l := range logs {
			if l.log == r.log {
				l.archs = append(l.archs, r.arch.sm())
				found = true
			}
		}
		if !found {
			logs = append(logs, &logArchs{r.log, []string{r.arch.sm()}})
		}
	}
	for _, l := range logs {
		if len(res) > 1 {
			fmt.Fprintf(stderr, "%s (%s):\n", name, strings.Join(l.archs, ", "))
		}
		fmt.Fprintln(stderr, l.log)
	}
	if first != nil {
		return fmt.Errorf("%s: compilation for %s failed: %w", name, strings.Join(failed, ", "), first)
	}
	return nil
}

// fatbinEntry is one image for buildFatbin.
type fatbinEntry struct {
	kind  string // "cubin", "ptx" or "ltoir"
	arch  gpuArch
	data  []byte
	ident string
	opts  string // ptxas options (PTX) or NVVM options (LTO-IR)
	src   string // where data came from, for messages
}

// buildFatbin makes a fat binary of entries with nvFatbin; opts are
// nvFatbin options (such as -g or -compress-all).
func buildFatbin(entries []fatbinEntry, opts []string) ([]byte, error) {
	// One handle, one OS thread (see compileOne); and nvFatbin may read
	// the cubins and LTO-IR it was given until nvFatbinGet: they stay
	// pinned until then, which lets C hold them.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var pin runtime.Pinner
	defer pin.Unpin()
	h, err := nvfatbin.Create(opts, uint64(len(opts)))
	if err != nil {
		return nil, err
	}
	defer nvfatbin.Destroy(&h)
	for _, e := range entries {
		if len(e.data) == 0 {
			return nil, fmt.Errorf("empty %s input for %s%s", e.kind, e.arch, from(e.src))
		}
		pin.Pin(&e.data[0])
		p, n := unsafe.Pointer(&e.data[0]), uint64(len(e.data))
		switch e.kind {
		case "cubin":
			err = nvfatbin.AddCubin(h, p, n, e.arch.number(), e.ident)
		case "ltoir":
			err = nvfatbin.AddLTOIR(h, p, n, e.arch.number(), e.ident, e.opts)
		case "ptx":
			// A size without the NUL makes nvFatbin copy the PTX: the
			// binding's C string is gone when AddPTX returns.
			code := strings.TrimRight(string(e.data), "\x00")
			err = nvfatbin.AddPTX(h, code, uint64(len(code)), e.arch.number(), e.ident, e.opts)
		default:
			err = fmt.Errorf("unknown fatbin entry kind %q", e.kind)
		}
		if err != nil {
			return nil, fmt.Errorf("adding %s for %s%s: %w", e.kind, e.arch, from(e.src), err)
		}
	}
	return nvfatbin.Bytes(h)
}

func from(src string) string {
	if src == "" {
		return ""
	}
	return " from " + src
}

// fatbinOptions are the nvFatbin options matching compile options.
func (o *compileOptions) fatbinOptions() []string {
	if o.debug {
		return []string{"-g"}
	}
	return nil
}

func compileFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	o := addCompileFlags(fs)
	out := fs.String("o", "", "output `file` (default: the source's name with the output's extension)")
	ptx := fs.Bool("ptx", false, "write PTX, one file per architecture")
	cubin := fs.Bool("cubin", false, "write cubins, one file per architecture")
	ltoir := fs.Bool("ltoir", false, "write LTO-IR, one file per architecture (implies -dlto)")
	fat := fs.Bool("fatbin", false, "write one fat binary (the default)")
	return func(args []string, stdout, stderr io.Writer) int {
		var files []string
		if code, ok := parseInterspersed("compile", fs, args, stdout, stderr, func(a string) { files = append(files, a) }); !ok {
			return code
		}
		if len(files) != 1 {
			return usageError(stderr, "compile", "want one .cu file, have %d", len(files))
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
		archs, err := parseArchList(o.archs)
		if err != nil {
			return usageError(stderr, "compile", "%v", err)
		}
		if len(archs) == 0 {
			return usageError(stderr, "compile", "no architecture: use -arch sm_NN[,sm_MM...]")
		}
		if *ltoir {
			o.dlto = true
		}
		src, err := os.ReadFile(files[0])
		if err != nil {
			return failure(stderr, "compile", err)
		}
		name := files[0]
		switch {
		case *ptx, *cubin, *ltoir:
			ext, want := ".ptx", wantPTX
			if *cubin {
				ext, want = ".cubin", wantCubin
			} else if *ltoir {
				ext, want = ".ltoir", wantLTOIR
			}
			res := compileArchs(src, name, archs, o, func(gpuArch) int { return want })
			if err := reportCompile(stderr, name, res); err != nil {
				return failure(stderr, "compile", err)
			}
			for _, r := range res {
				path := perArchName(*out, name, ext, r.arch, len(archs) > 1)
				data := r.ptx
				if *cubin {
					data = r.cubin
				} else if *ltoir {
					data = r.ltoir
				}
				if err := writeOutput(path, data); err != nil {
					return failure(stderr, "compile", err)
				}
			}
			return exitOK
		}
		path := *out
		if path == "" {
			path = stem(name) + ".fatbin"
		}
		fb, err := compileFatbin(stderr, src, name, archs, o)
		if err != nil {
			return failure(stderr, "compile", err)
		}
		if err := writeOutput(path, fb); err != nil {
			return failure(stderr, "compile", err)
		}
		return exitOK
	}
}

// perArchName names the output for arch a of source src: out itself when
// there is one architecture, else out with ".sm_NN" before its extension;
// without out, the source's stem and ext.
func perArchName(out, src, ext string, a gpuArch, several bool) string {
	if out == "" {
		out = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ext
	}
	if !several {
		return out
	}
	e := filepath.Ext(out)
	if e == "" {
		return out + "." + a.sm() + ext
	}
	return strings.TrimSuffix(out, e) + "." + a.sm() + e
}

// compileFatbin compiles one source for archs in parallel and returns a fat
// binary of a cubin per architecture and the PTX of the newest (LTO-IR per
// architecture with -dlto), identified by the source's file name.
func compileFatbin(stderr io.Writer, src []byte, name string, archs []gpuArch, o *compileOptions) ([]byte, error) {
	top := newest(archs)
	want := func(a gpuArch) int {
		if o.dlto {
			return wantLTOIR
		}
		if a == top {
			return wantCubin | wantPTX
		}
		return wantCubin
	}
	res := compileArchs(src, name, archs, o, want)
	if err := reportCompile(stderr, name, res); err != nil {
		return nil, err
	}
	ident := filepath.Base(name)
	var entries []fatbinEntry
	for _, r := range res {
		if o.dlto {
			entries = append(entries, fatbinEntry{kind: "ltoir", arch: r.arch, data: r.ltoir, ident: ident})
		} else {
			entries = append(entries, fatbinEntry{kind: "cubin", arch: r.arch, data: r.cubin, ident: ident})
		}
	}
	if !o.dlto {
		for _, r := range res {
			if r.arch == top {
				entries = append(entries, fatbinEntry{kind: "ptx", arch: r.arch, data: r.ptx, ident: ident})
			}
		}
	}
	return buildFatbin(entries, o.fatbinOptions())
}
