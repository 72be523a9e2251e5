package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cudago/cudago/core"
)

func init() {
	register(&command{
		name:    "fatbin",
		args:    "-o out.fatbin [--cubin ARCH:FILE] [--ptx ARCH:FILE] [--ltoir ARCH:FILE] [--ident name] [-X option]",
		summary: "make a fat binary of cubins, PTX and LTO-IR with nvFatbin (like fatbinary)",
		help: `
Fatbin puts code images into one fat binary with nvFatbin, as NVIDIA's
fatbinary does. Each image is given as ARCH:FILE, where ARCH is sm_90,
compute_90, lto_90, 90 or 9.0 (sm_90a for arch-specific code):

	--cubin sm_80:k80.cubin --cubin sm_90:k90.cubin --ptx 90:k.ptx

The flags are repeatable and the images go into the fat binary in the
order given.

--ident names the code (nvcc uses the source file name, x.cu): cuobjdump
then extracts the images as x.sm_90.cubin rather than after the fat
binary's own name. Without it, as with fatbinary, the images have no
identifier. -X passes an option to nvFatbin unchanged (repeatable), for
example -X -compress-all or -X -g.`,
		flags: fatbinFlags,
	})
}

// imageFlag collects --cubin/--ptx/--ltoir images, in command-line order.
type imageFlag struct {
	kind   string
	images *[]fatbinImage
}

type fatbinImage struct {
	kind string
	arch core.Arch
	path string
}

func (f imageFlag) String() string { return "" }

func (f imageFlag) Set(s string) error {
	archStr, path, ok := strings.Cut(s, ":")
	if !ok || path == "" {
		return fmt.Errorf("want ARCH:FILE, such as sm_90:k.%s", f.kind)
	}
	a, err := core.ParseArch(archStr)
	if err != nil {
		return err
	}
	*f.images = append(*f.images, fatbinImage{f.kind, a, path})
	return nil
}

func fatbinFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	var images []fatbinImage
	fs.Var(imageFlag{"cubin", &images}, "cubin", "add a cubin: `ARCH:FILE` (repeatable)")
	fs.Var(imageFlag{"ptx", &images}, "ptx", "add PTX: `ARCH:FILE` (repeatable)")
	fs.Var(imageFlag{"ltoir", &images}, "ltoir", "add LTO-IR: `ARCH:FILE` (repeatable)")
	out := fs.String("o", "", "output `file` (required)")
	ident := fs.String("ident", "", "identifier of the images (such as the source file name x.cu)")
	var extra listFlag
	fs.Var(&extra, "X", "pass `option` to nvFatbin unchanged (repeatable)")
	mkdir := addMkdirFlag(fs)
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 1 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 0 {
			return usageError(stderr, "fatbin", "unexpected argument %q (images are given as --cubin/--ptx/--ltoir ARCH:FILE)", args[0])
		}
		if *out == "" {
			return usageError(stderr, "fatbin", "no output: use -o out.fatbin")
		}
		if len(images) == 0 {
			return usageError(stderr, "fatbin", "no images: use --cubin, --ptx or --ltoir ARCH:FILE")
		}
		if err := outputDir(*out, *mkdir); err != nil {
			return failure(stderr, "fatbin", err)
		}
		for _, im := range images { // before nvFatbin is loaded
			if err := checkInput(im.path); err != nil {
				return failure(stderr, "fatbin", err)
			}
		}
		b, err := core.NewFatbinBuilder(&core.FatbinOptions{Extra: extra})
		if errors.Is(err, core.ErrInvalidOption) {
			return usageError(stderr, "fatbin", "%v", err)
		}
		if err != nil {
			return failure(stderr, "fatbin", err)
		}
		defer b.Close()
		for _, im := range images {
			data, err := readInput(im.path)
			if err != nil {
				return failure(stderr, "fatbin", err)
			}
			switch im.kind {
			case "cubin":
				err = b.AddCubin(data, im.arch.Bare(), *ident)
			case "ptx":
				err = b.AddPTX(data, im.arch.Bare(), *ident, "")
			case "ltoir":
				err = b.AddLTOIR(data, im.arch.Bare(), *ident, "")
			}
			if err != nil {
				return failure(stderr, "fatbin", fmt.Errorf("%s: %w", im.path, err))
			}
		}
		fb, err := b.Build()
		if err != nil {
			return failure(stderr, "fatbin", err)
		}
		if err := writeOutput(*out, fb.Code(), *mkdir); err != nil {
			return failure(stderr, "fatbin", err)
		}
		return exitOK
	}
}
