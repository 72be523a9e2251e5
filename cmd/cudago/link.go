package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvjitlink"
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
(like gcc -x): ltoir, ptx, cubin, fatbin, object, library, or any to let
nvJitLink decide; --kind auto goes back to extensions.

Link-time optimisation (--lto, nvJitLink -lto) is turned on by itself when
an input is LTO-IR. --ptx needs it. -X passes an option to nvJitLink
unchanged (repeatable): -X -O3, -X -maxrregcount=64, -X -verbose.

The output defaults to a.cubin (a.ptx with --ptx). A failed link prints the
linker's error log on standard error and exits 1.`,
		flags: linkFlags,
	})
}

var linkKinds = map[string]nvjitlink.InputType{
	"ltoir":   nvjitlink.InputLtoir,
	"ptx":     nvjitlink.InputPtx,
	"cubin":   nvjitlink.InputCubin,
	"fatbin":  nvjitlink.InputFatbin,
	"object":  nvjitlink.InputObject,
	"o":       nvjitlink.InputObject,
	"library": nvjitlink.InputLibrary,
	"a":       nvjitlink.InputLibrary,
	"any":     nvjitlink.InputAny,
}

// linkExts maps input file extensions to nvJitLink input kinds.
var linkExts = map[string]nvjitlink.InputType{
	".ltoir":  nvjitlink.InputLtoir,
	".ptx":    nvjitlink.InputPtx,
	".cubin":  nvjitlink.InputCubin,
	".fatbin": nvjitlink.InputFatbin,
	".o":      nvjitlink.InputObject,
	".a":      nvjitlink.InputLibrary,
}

// kindFromExt returns the nvJitLink input kind of path from its extension.
func kindFromExt(path string) (nvjitlink.InputType, bool) {
	k, ok := linkExts[strings.ToLower(filepath.Ext(path))]
	return k, ok
}

type linkInput struct {
	path string
	kind nvjitlink.InputType
}

func linkFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	archFlag := fs.String("arch", "", "target `architecture` (sm_90; 90 and compute_90 accepted)")
	out := fs.String("o", "", "output `file` (default a.cubin, or a.ptx with --ptx)")
	ptx := fs.Bool("ptx", false, "write linked PTX instead of a cubin (needs LTO)")
	lto := fs.Bool("lto", false, "link-time optimisation (on by itself with LTO-IR inputs)")
	kind := fs.String("kind", "auto", "`kind` of the inputs that follow: auto, ltoir, ptx, cubin, fatbin, object, library, any")
	var extra listFlag
	fs.Var(&extra, "X", "pass `option` to nvJitLink unchanged (repeatable)")
	return func(args []string, stdout, stderr io.Writer) int {
		var inputs []linkInput
		var bad []string
		onArg := func(a string) {
			k := strings.ToLower(*kind)
			if k == "auto" || k == "" {
				t, ok := kindFromExt(a)
				if !ok {
					bad = append(bad, fmt.Sprintf("cannot tell the kind of %s from its extension: use --kind", a))
				}
				inputs = append(inputs, linkInput{a, t})
				return
			}
			t, ok := linkKinds[k]
			if !ok {
				bad = append(bad, fmt.Sprintf("unknown --kind %q: want auto, %s", *kind, strings.Join(sortedKeys(linkKinds), ", ")))
			}
			inputs = append(inputs, linkInput{a, t})
		}
		if code, ok := parseInterspersed("link", fs, args, stdout, stderr, onArg); !ok {
			return code
		}
		if k := strings.ToLower(*kind); k != "auto" && k != "" {
			if _, ok := linkKinds[k]; !ok { // also when no input follows it
				bad = append(bad, fmt.Sprintf("unknown --kind %q: want auto, %s", *kind, strings.Join(sortedKeys(linkKinds), ", ")))
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
		a, err := parseArch(*archFlag)
		if err != nil {
			return usageError(stderr, "link", "%v", err)
		}
		for _, in := range inputs {
			if in.kind == nvjitlink.InputLtoir {
				*lto = true
			}
		}
		if slices.Contains(extra, "-lto") {
			*lto = true
		}
		if *ptx && !*lto {
			return usageError(stderr, "link", "--ptx needs --lto (linked PTX comes from link-time optimisation)")
		}
		path := *out
		if path == "" {
			path = "a.cubin"
			if *ptx {
				path = "a.ptx"
			}
		}
		opts := []string{"-arch=" + a.sm()}
		if *lto {
			opts = append(opts, "-lto")
		}
		if *ptx {
			opts = append(opts, "-ptx")
		}
		opts = append(opts, extra...)
		b, info, err := link(opts, *ptx, inputs)
		if info != "" {
			fmt.Fprintln(stderr, strings.TrimRight(info, "\n"))
		}
		if err != nil {
			return failure(stderr, "link", err)
		}
		if err := writeOutput(path, b); err != nil {
			return failure(stderr, "link", err)
		}
		return exitOK
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// linkMu serialises nvJitLink sessions, and each session runs on one
// locked OS thread. nvJitLink 12.4 keeps per-thread state: a session whose
// calls move between OS threads, as a goroutine's do, crashed (SIGSEGV in
// nvJitLinkCreate or nvJitLinkComplete). Overlapping sessions on locked
// threads did not crash in trials, but links are quick next to compiles,
// so they are serialised as well, to be safe.
var linkMu sync.Mutex

// lockLink takes linkMu and the OS thread; the function it returns gives
// both back.
func lockLink() func() {
	linkMu.Lock()
	runtime.LockOSThread()
	return func() {
		runtime.UnlockOSThread()
		linkMu.Unlock()
	}
}

// link runs one nvJitLink session over inputs and returns the linked cubin
// (or PTX when opts hold -ptx) and the linker's information log. Errors
// carry the linker's error log.
func link(opts []string, ptx bool, inputs []linkInput) ([]byte, string, error) {
	defer lockLink()()
	h, err := nvjitlink.Create(uint32(len(opts)), opts)
	if err != nil {
		return nil, "", fmt.Errorf("nvJitLink with options %q: %w", opts, err)
	}
	defer nvjitlink.Destroy(&h)
	// nvJitLink may read the inputs until Complete: keep them pinned, which
	// lets C hold them.
	var pin runtime.Pinner
	defer pin.Unpin()
	for _, in := range inputs {
		b, err := os.ReadFile(in.path)
		if err != nil {
			return nil, "", err
		}
		if len(b) == 0 {
			return nil, "", fmt.Errorf("%s: empty file", in.path)
		}
		pin.Pin(&b[0])
		if err := nvjitlink.AddData(h, in.kind, unsafe.Pointer(&b[0]), uint64(len(b)), in.path); err != nil {
			return nil, "", fmt.Errorf("adding %s (%s): %w", in.path, kindName(in.kind), err)
		}
	}
	return linkComplete(h, ptx)
}

// linkComplete completes the link of h and returns its output.
func linkComplete(h nvjitlink.Handle, ptx bool) ([]byte, string, error) {
	err := nvjitlink.Complete(h)
	info, _ := nvjitlink.InfoLog(h)
	if err != nil {
		return nil, info, err
	}
	if ptx {
		s, err := nvjitlink.LinkedPTX(h)
		return []byte(s), info, err
	}
	b, err := nvjitlink.LinkedCubin(h)
	return b, info, err
}

func kindName(k nvjitlink.InputType) string {
	for _, n := range sortedKeys(linkKinds) {
		if linkKinds[n] == k && len(n) > 1 {
			return n
		}
	}
	return k.String()
}
