package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cudago/cudago/core"
)

func init() {
	register(&command{
		name:    "build",
		args:    "-arch sm_NN[,sm_MM...] -o out.fatbin [compile flags] file.cu...",
		summary: "compile .cu files into one fat binary to embed, for go generate",
		help: `
Build compiles CUDA C++ files into one fat binary for a list of
architectures, for a Go package to embed with //go:embed. It is meant for
go generate:

	//go:generate go run github.com/cudago/cudago/cmd/cudago build -arch sm_80,sm_90 -o kernels.fatbin kernels.cu

	//go:embed kernels.fatbin
	var kernels []byte

	obj, err := core.FromFatbin(kernels)

The fat binary holds a cubin for each architecture and the PTX of the
newest, so that GPUs newer than all of them can still JIT it. Build takes
compile's flags (-I, -D, --std, -G, --lineinfo, --use-fast-math, -X; see
'cudago compile -h'); all compilations run in parallel.

With one file, build is 'cudago compile --fatbin': its images are
identified by the file name (cuobjdump extracts kernels.sm_80.cubin).
Several files are one program, as if linked with nvcc -rdc: each is
compiled to LTO-IR (-rdc -dlto) for every architecture, and nvJitLink links
them, per architecture, into one cubin (and the PTX of the newest), so a
kernel in one file may call a __device__ function of another. Their images
are identified by the output's name (out.sm_80.cubin).

The output is written only when its content changed, so that a go generate
run that changes nothing leaves the file, and its time, alone.`,
		flags: buildFlags,
	})
}

func buildFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	o := addCompileFlags(fs)
	out := fs.String("o", "", "output `file` (required), such as kernels.fatbin")
	mkdir := addMkdirFlag(fs)
	return func(args []string, stdout, stderr io.Writer) int {
		files, code, ok := parseFiles("build", fs, args, stdout, stderr)
		if !ok {
			return code
		}
		if len(files) == 0 {
			return usageError(stderr, "build", "no .cu files")
		}
		if *out == "" {
			return usageError(stderr, "build", "no output: use -o file.fatbin")
		}
		archs, err := o.parseArchs()
		if err != nil {
			return usageError(stderr, "build", "%v", err)
		}
		if err := outputDir(*out, *mkdir); err != nil {
			return failure(stderr, "build", err)
		}
		srcs := make([][]byte, len(files))
		for i, f := range files {
			if srcs[i], err = readInput(f); err != nil {
				return failure(stderr, "build", err)
			}
		}
		var fb []byte
		if len(files) == 1 {
			fb, err = compileFatbin(stderr, srcs[0], files[0], archs, o)
		} else {
			fb, err = buildLinked(stderr, files, srcs, archs, o, filepath.Base(*out))
		}
		if err != nil {
			return failure(stderr, "build", err)
		}
		if unchanged(*out, fb) {
			return exitOK
		}
		if err := writeOutput(*out, fb, *mkdir); err != nil {
			return failure(stderr, "build", err)
		}
		return exitOK
	}
}

// buildLinked compiles several sources to LTO-IR for every architecture,
// links them per architecture with nvJitLink and returns a fat binary of the
// linked cubins and the linked PTX of the newest architecture.
func buildLinked(stderr io.Writer, files []string, srcs [][]byte, archs []core.Arch, o *compileOptions, ident string) ([]byte, error) {
	lo := *o
	lo.dlto, lo.rdc = true, true
	// Compile every file for every architecture at once.
	res := make([][]core.ArchCode, len(files))
	var wg sync.WaitGroup
	for i := range files {
		wg.Go(func() {
			res[i] = core.CompileArchs(string(srcs[i]), archs, lo.programOptions(files[i]), core.CodeLTOIR)
		})
	}
	wg.Wait()
	var firstErr error
	for i := range files {
		if err := reportCompile(stderr, files[i], res[i]); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	// Link per architecture, and the PTX of the newest, all at once.
	top := core.NewestArch(archs)
	type job struct {
		ai   int    // index in archs
		what string // core.CodeCubin or core.CodePTX
		out  *core.ObjectCode
		info string
		err  error
	}
	var jobs []*job
	for ai, a := range archs {
		jobs = append(jobs, &job{ai: ai, what: core.CodeCubin})
		if a == top {
			jobs = append(jobs, &job{ai: ai, what: core.CodePTX})
		}
	}
	for _, j := range jobs {
		wg.Go(func() {
			inputs := make([]*core.ObjectCode, len(files))
			for i := range files {
				inputs[i] = res[i][j.ai].Codes[0]
			}
			// Line information needs no -lineinfo here: the LTO-IR carries it.
			opts := &core.LinkerOptions{Arch: archs[j.ai].SM(), LTO: true, Debug: o.debug, NoCache: true}
			l, err := core.NewLinker(opts, inputs...)
			if err != nil {
				j.err = err
				return
			}
			defer l.Close()
			j.out, j.err = l.Link(j.what)
			j.info = strings.TrimRight(l.InfoLog(), "\n")
		})
	}
	wg.Wait()
	linked := make([]core.ArchCode, len(archs))
	for _, j := range jobs {
		if j.info != "" {
			fmt.Fprintln(stderr, j.info)
		}
		if j.err != nil {
			what := "cubin"
			if j.what == core.CodePTX {
				what = "PTX"
			}
			return nil, fmt.Errorf("linking the %s for %s: %w", what, archs[j.ai], j.err)
		}
		linked[j.ai].Arch = archs[j.ai]
		linked[j.ai].Codes = append(linked[j.ai].Codes, j.out)
	}
	fb, err := core.FatbinOfArchs(linked, ident, &core.FatbinOptions{Debug: o.debug})
	if err != nil {
		return nil, err
	}
	return fb.Code(), nil
}

// unchanged reports whether the regular file path holds b already. Only a
// regular file of b's size is read: -o /dev/zero must not be read forever.
func unchanged(path string, b []byte) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(b)) {
		return false
	}
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, b)
}
