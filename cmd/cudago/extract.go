package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cudago/cudago/fatbin"
)

func init() {
	register(&command{
		name:    "extract",
		args:    "[-o dir] [--elf] [--ptx] [--ltoir] file",
		summary: "extract the code images of a fat binary, host ELF file or archive, as cuobjdump does",
		help: `
Extract writes the images of a fat binary, or of a host object, executable,
shared library or static library (ar archive) with embedded fat binaries,
to files: the same files,
byte for byte and under the same names, that cuobjdump -xelf all -xptx all
writes (x.sm_90.cubin for code identified as x.cu, else a.2.sm_80.cubin
after the input's name; see 'cudago ls'). Compressed images are
decompressed. It prints a line per file written, as cuobjdump does.

By default it extracts the ELF (cubin) and PTX images. --elf, --ptx and
--ltoir select kinds (they add up); --ltoir extracts LTO-IR, which
cuobjdump does not, as NAME.sm_NN.ltoir; LTO-IR that is obfuscated (as
nvFatbin writes it, and 'cudago compile -dlto') cannot be decoded, and
extract says so and exits 1 after writing the other files. The files go to -o dir (default
the current directory), created if missing; its parent must exist, as for
cc -o, unless -mkdir is given. Existing files are replaced.`,
		flags: extractFlags,
	})
}

func extractFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	dir := fs.String("o", ".", "write the files to `dir`")
	elfOnly := fs.Bool("elf", false, "extract the ELF (cubin) images")
	ptxOnly := fs.Bool("ptx", false, "extract the PTX images")
	ltoir := fs.Bool("ltoir", false, "extract the LTO-IR images (cuobjdump does not)")
	mkdir := fs.Bool("mkdir", false, "create the missing parents of the -o directory too (as mkdir -p)")
	return func(args []string, stdout, stderr io.Writer) int {
		path, code, ok := parseOneFile("extract", "file", fs, args, stdout, stderr)
		if !ok {
			return code
		}
		wantELF, wantPTX := *elfOnly, *ptxOnly
		if !wantELF && !wantPTX && !*ltoir {
			wantELF, wantPTX = true, true
		}
		f, err := openFatbin(path)
		if err != nil {
			return failure(stderr, "extract", err)
		}
		if err := extractDir(*dir, *mkdir); err != nil {
			return failure(stderr, "extract", err)
		}
		n, failed := 0, 0
		for i, e := range f.Entries {
			var label string
			switch {
			case e.Kind.IsELF() && wantELF:
				label = "ELF file"
			case e.Kind.IsPTX() && wantPTX:
				label = "PTX file"
			case e.Kind == fatbin.KindLTOIR && *ltoir:
				label = "LTO-IR file"
			default:
				continue
			}
			name := f.ExtractName(i, path)
			data, err := e.Data()
			if err != nil {
				// Go on with the others (obfuscated LTO-IR, as nvFatbin
				// writes, cannot be decoded), and fail at the end.
				failure(stderr, "extract", fmt.Errorf("%s: %s %d (%s): %w", path, label, f.Ordinal(i), name, err))
				failed++
				continue
			}
			if err := writeOutput(filepath.Join(*dir, name), data, false); err != nil {
				return failure(stderr, "extract", err)
			}
			fmt.Fprintf(stdout, "Extracting %s %4d: %s\n", label, f.Ordinal(i), name)
			n++
		}
		if failed > 0 {
			return exitFail
		}
		if n == 0 {
			fmt.Fprintf(stderr, "cudago extract: %s: no images of the kinds asked for\n", path)
		}
		return exitOK
	}
}

// extractDir checks that dir, where extract writes, is a directory. It
// creates dir when its parent exists, as unzip -d does (the user named
// it), and its missing parents only with mkdir.
func extractDir(dir string, mkdir bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("-o %s: not a directory", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	case mkdir:
		return os.MkdirAll(dir, 0o777)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("-o %s: directory %s does not exist (-mkdir creates it)", dir, parent)
	}
	return os.Mkdir(dir, 0o777)
}
