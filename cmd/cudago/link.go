package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudago/cudago/core"
)

func init() {
	register(&command{
		name:    "link",
		args:    "-arch sm_NN [-o out.cubin] [--ptx] [--lto] [--kind kind] [-X option] input...",
		summary: "link LTO-IR, PTX, cubins, fatbins, objects and libraries with nvJitLink",
		help: `
Link links device code for one architecture with nvJitLink into a cubin,
or with --ptx into PTX. The kind of each input comes from its extension:

	.ltoir    LTO-IR (nvrtc -dlto, cudago compile --ltoir)
	.ptx      PTX
	.cubin    cubin (relocatable device code for a useful link)
	.fatbin   fat binary
	.o        host object holding device code (nvcc -rdc -c)
	.a        host library of such objects

--kind KIND sets the kind of the inputs that follow it on the command line
(like gcc -x): ltoir, ptx, cubin, fatbin, object, library, or any to tell
it from the content; --kind auto goes back to extensions.

Link-time optimisation (--lto, nvJitLink -lto) is turned on by itself when
an input is LTO-IR. --ptx needs it. -X passes an option to nvJitLink
unchanged (repeatable): -X -O3, -X -maxrregcount=64, -X -verbose.

The output defaults to a.cubin (a.ptx with --ptx). The linker's
information log goes to standard error; a failed link prints its error log
there and exits 1.`,
		flags: linkFlags,
	})
}

// linkKinds maps the --kind names to what reads such an input.
var linkKinds = map[string]func(string, ...core.ObjectCodeOption) (*core.ObjectCode, error){
	"ltoir":   core.FromLTOIRFile,
	"ptx":     core.FromPTXFile,
	"cubin":   core.FromCubinFile,
	"fatbin":  core.FromFatbinFile,
	"object":  core.FromObjectFile,
	"o":       core.FromObjectFile,
	"library": core.FromLibraryFile,
	"a":       core.FromLibraryFile,
	"any":     core.FromFile,
}

// linkExts maps input file extensions to --kind names.
var linkExts = map[string]string{
	".ltoir":  "ltoir",
	".ptx":    "ptx",
	".cubin":  "cubin",
	".fatbin": "fatbin",
	".o":      "object",
	".a":      "library",
}

type linkInput struct {
	path string
	kind string // a key of linkKinds
}

func linkFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	archFlag := fs.String("arch", "", "target `architecture` (sm_90; 90, compute_90 and 9.0 accepted)")
	out := fs.String("o", "", "output `file` (default a.cubin, or a.ptx with --ptx)")
	ptx := fs.Bool("ptx", false, "write linked PTX instead of a cubin (needs LTO)")
	lto := fs.Bool("lto", false, "link-time optimisation (on by itself with LTO-IR inputs)")
	kind := fs.String("kind", "auto", "`kind` of the inputs that follow: auto, ltoir, ptx, cubin, fatbin, object, library, any")
	var extra listFlag
	fs.Var(&extra, "X", "pass `option` to nvJitLink unchanged (repeatable)")
	mkdir := addMkdirFlag(fs)
	return func(args []string, stdout, stderr io.Writer) int {
		var inputs []linkInput
		var bad []string
		onArg := func(a string) {
			k := strings.ToLower(*kind)
			if k == "auto" || k == "" {
				k = linkExts[strings.ToLower(filepath.Ext(a))]
				if k == "" {
					bad = append(bad, fmt.Sprintf("cannot tell the kind of %s from its extension: use --kind", a))
				}
			} else if _, ok := linkKinds[k]; !ok {
				bad = append(bad, fmt.Sprintf("unknown --kind %q: want auto, %s", *kind, strings.Join(slices.Sorted(maps.Keys(linkKinds)), ", ")))
			}
			inputs = append(inputs, linkInput{a, k})
		}
		if code, ok := parseInterspersed("link", fs, args, stdout, stderr, onArg); !ok {
			return code
		}
		if k := strings.ToLower(*kind); k != "auto" && k != "" {
			if _, ok := linkKinds[k]; !ok { // also when no input follows it
				bad = append(bad, fmt.Sprintf("unknown --kind %q: want auto, %s", *kind, strings.Join(slices.Sorted(maps.Keys(linkKinds)), ", ")))
			}
		}
		if len(bad) > 0 {
			return usageError(stderr, "link", "%s", bad[0])
		}
		if len(inputs) == 0 {
			return usageError(stderr, "link", "no input files")
		}
		if *archFlag == "" {
			return usageError(stderr, "link", "no architecture: use -arch sm_NN")
		}
		a, err := core.ParseArch(*archFlag)
		if err != nil {
			return usageError(stderr, "link", "%v", err)
		}
		for _, in := range inputs {
			if in.kind == "ltoir" {
				*lto = true
			}
		}
		if slices.Contains(extra, "-lto") {
			*lto = true
		}
		anyKind := false // --kind any: the contents tell, once read
		for _, in := range inputs {
			anyKind = anyKind || in.kind == "any"
		}
		if *ptx && !*lto && !anyKind {
			return usageError(stderr, "link", "--ptx needs --lto (linked PTX comes from link-time optimisation)")
		}
		path := *out
		if path == "" {
			path = "a.cubin"
			if *ptx {
				path = "a.ptx"
			}
		}
		if err := outputDir(path, *mkdir); err != nil {
			return failure(stderr, "link", err)
		}
		codes := make([]*core.ObjectCode, len(inputs))
		for i, in := range inputs {
			if err := checkInput(in.path); err != nil {
				return failure(stderr, "link", err)
			}
			if codes[i], err = linkKinds[in.kind](in.path); err != nil {
				return failure(stderr, "link", err)
			}
			if codes[i].CodeType() == core.CodeLTOIR { // found by --kind any
				*lto = true
			}
		}
		if *ptx && !*lto { // after --kind any has told what the inputs are
			return usageError(stderr, "link", "--ptx needs --lto (linked PTX comes from link-time optimisation)")
		}
		opts := &core.LinkerOptions{Arch: a.SM(), LTO: *lto, Extra: extra, NoCache: true}
		l, err := core.NewLinker(opts, codes...)
		if errors.Is(err, core.ErrInvalidOption) {
			return usageError(stderr, "link", "%v", err)
		}
		if err != nil {
			return failure(stderr, "link", err)
		}
		defer l.Close()
		target := core.CodeCubin
		if *ptx {
			target = core.CodePTX
		}
		linked, err := l.Link(target)
		if info := strings.TrimRight(l.InfoLog(), "\n"); info != "" {
			fmt.Fprintln(stderr, info)
		}
		if err != nil {
			return failure(stderr, "link", err)
		}
		if err := writeOutput(path, linked.Code(), *mkdir); err != nil {
			return failure(stderr, "link", err)
		}
		return exitOK
	}
}
