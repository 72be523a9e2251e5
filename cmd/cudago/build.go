package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvjitlink"
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
	return func(args []string, stdout, stderr io.Writer) int {
		var files []string
		if code, ok := parseInterspersed("build", fs, args, stdout, stderr, func(a string) { files = append(files, a) }); !ok {
			return code
		}
		if len(files) == 0 {
			return usageError(stderr, "build", "no .cu files")
		}
		if *out == "" {
			return usageError(stderr, "build", "no output: use -o file.fatbin")
		}
		archs, err := parseArchList(o.archs)
		if err != nil {
			return usageError(stderr, "build", "%v", err)
		}
		if len(archs) == 0 {
			return usageError(stderr, "build", "no architecture: use -arch sm_NN[,sm_MM...]")
		}
		srcs := make([][]byte, len(files))
		for i, f := range files {
			if srcs[i], err = os.ReadFile(f); err != nil {
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
		if old, err := os.ReadFile(*out); err == nil && string(old) == string(fb) {
			return exitOK
		}
		if err := writeOutput(*out, fb); err != nil {
			return failure(stderr, "build", err)
		}
		return exitOK
	}
}

// buildLinked compiles several sources to LTO-IR for every architecture,
// links them per architecture with nvJitLink and returns a fat binary of the
// linked cubins and the linked PTX of the newest architecture.
func buildLinked(stderr io.Writer, files []string, srcs [][]byte, archs []gpuArch, o *compileOptions, ident string) ([]byte, error) {
	lo := *o
	lo.dlto, lo.rdc = true, true
	// Compile every file for every architecture at once.
	res := make([][]compiled, len(files))
	var wg sync.WaitGroup
	for i := range files {
		wg.Go(func() {
			res[i] = compileArchs(srcs[i], files[i], archs, &lo, func(gpuArch) int { return wantLTOIR })
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
	// Link per architecture (and the PTX of the newest); lockLink makes the
	// links run one at a time.
	top := newest(archs)
	type job struct {
		ai   int // index in archs
		ptx  bool
		out  []byte
		info string
		err  error
	}
	var jobs []*job
	for ai, a := range archs {
		jobs = append(jobs, &job{ai: ai})
		if a == top {
			jobs = append(jobs, &job{ai: ai, ptx: true})
		}
	}
	for _, j := range jobs {
		wg.Go(func() {
			opts := []string{"-arch=" + archs[j.ai].sm(), "-lto"}
			if j.ptx {
				opts = append(opts, "-ptx")
			}
			if o.debug {
				opts = append(opts, "-g")
			}
			j.out, j.info, j.err = linkLTOIR(opts, j.ptx, files, res, j.ai)
		})
	}
	wg.Wait()
	var entries []fatbinEntry
	var ptx []fatbinEntry
	for _, j := range jobs {
		if j.info != "" {
			fmt.Fprintln(stderr, j.info)
		}
		if j.err != nil {
			what := "cubin"
			if j.ptx {
				what = "PTX"
			}
			return nil, fmt.Errorf("linking the %s for %s: %w", what, archs[j.ai], j.err)
		}
		if j.ptx {
			ptx = append(ptx, fatbinEntry{kind: "ptx", arch: archs[j.ai], data: j.out, ident: ident})
		} else {
			entries = append(entries, fatbinEntry{kind: "cubin", arch: archs[j.ai], data: j.out, ident: ident})
		}
	}
	return buildFatbin(append(entries, ptx...), o.fatbinOptions())
}

// linkLTOIR links the LTO-IR of architecture index ai of every file.
func linkLTOIR(opts []string, ptx bool, files []string, res [][]compiled, ai int) ([]byte, string, error) {
	defer lockLink()()
	h, err := nvjitlink.Create(uint32(len(opts)), opts)
	if err != nil {
		return nil, "", err
	}
	defer nvjitlink.Destroy(&h)
	var pin runtime.Pinner // nvJitLink may read the inputs until Complete
	defer pin.Unpin()
	for i, f := range files {
		b := res[i][ai].ltoir
		pin.Pin(&b[0])
		if err := nvjitlink.AddData(h, nvjitlink.InputLtoir, unsafe.Pointer(&b[0]), uint64(len(b)), f); err != nil {
			return nil, "", err
		}
	}
	return linkComplete(h, ptx)
}
