package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cudago/cudago/fatbin"
)

func init() {
	register(&command{
		name:    "ls",
		args:    "[--json] file",
		summary: "list the code images of a fat binary, or of a host ELF file or archive holding some",
		help: `
Ls lists the ELF (cubin) and PTX images of a fat binary, or of a host
object, executable, shared library or static library (ar archive, as
nvcc -lib writes) with embedded fat binaries, printing exactly what
cuobjdump -lelf -lptx prints:

	ELF file    1: x.sm_80.cubin
	ELF file    2: x.sm_90.cubin
	PTX file    1: x.sm_90.ptx

For an archive each member's images come under a line naming it, and are
numbered and named after the archive across members:

	member /abs/libk.a:k.o:
	ELF file    1: libk.1.sm_90.cubin

The names are those cudago extract (and cuobjdump -xelf all -xptx all)
write the images under. It reads the file with cudago's own pure-Go
reader: no CUDA library is needed.

--json prints one object describing every entry, LTO-IR and other kinds
cuobjdump does not list included:

	{
	  "file": "x.fatbin",
	  "entries": [{
	    "index": 0,                  // position in the file, over all containers
	    "container": 0,              // which fat binary container holds it
	    "member": "k.o",             // archive member holding it (archives only)
	    "kind": "elf",               // elf, ptx, ltoir, cubin, index, relocptx
	    "arch": "sm_80",             // as in the extract name (sm_90a, sm_100f)
	    "sm": 80,
	    "version": "[1,8]",          // ELF ABI or PTX ISA version
	    "listed": true,              // cuobjdump lists and extracts it
	    "ordinal": 1,                // its number in "ELF file 1: ..."
	    "extract_name": "x.sm_80.cubin",
	    "identifier": "x.cu",        // "" if none
	    "compression": "",           // "lz4", "zstd" or ""
	    "stored_size": 4096,         // payload bytes in the file, padding included
	    "compressed_size": 0,        // meaningful compressed bytes, 0 if not compressed
	    "uncompressed_size": 0,      // declared size after decompression, 0 if not compressed
	    "data_size": 4096,           // bytes extract writes (-1 if they cannot be decoded)
	    "debug": false,
	    "host": "linux",
	    "flags": "64bit|linux",
	    "options": "",               // ptxas/NVVM options (text ones only)
	    "obfuscated": false,
	    "error": ""                  // why the data cannot be decoded
	  }]
	}

A file with no fat binary is an error (exit 1).`,
		flags: lsFlags,
	})
}

type lsReport struct {
	File    string    `json:"file"`
	Entries []lsEntry `json:"entries"`
}

type lsEntry struct {
	Index            int    `json:"index"`
	Container        int    `json:"container"`
	Member           string `json:"member,omitempty"`
	Kind             string `json:"kind"`
	Arch             string `json:"arch"`
	SM               int    `json:"sm"`
	Version          string `json:"version"`
	Listed           bool   `json:"listed"`
	Ordinal          int    `json:"ordinal"`
	ExtractName      string `json:"extract_name"`
	Identifier       string `json:"identifier"`
	Compression      string `json:"compression"`
	StoredSize       int64  `json:"stored_size"`
	CompressedSize   int64  `json:"compressed_size"`
	UncompressedSize int64  `json:"uncompressed_size"`
	DataSize         int64  `json:"data_size"`
	Debug            bool   `json:"debug"`
	Host             string `json:"host"`
	Flags            string `json:"flags"`
	Options          string `json:"options"`
	Obfuscated       bool   `json:"obfuscated"`
	Error            string `json:"error"`
}

// openFatbin reads the fat binaries of path, failing when there is none.
func openFatbin(path string) (*fatbin.File, error) {
	if err := checkInput(path); err != nil {
		return nil, err
	}
	f, err := fatbin.Open(path)
	if err != nil {
		return nil, err
	}
	if len(f.Entries) == 0 {
		return nil, fmt.Errorf("%s does not contain device code", path)
	}
	return f, nil
}

func lsFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	asJSON := fs.Bool("json", false, "print every entry as JSON (see -h for the fields)")
	return func(args []string, stdout, stderr io.Writer) int {
		path, code, ok := parseOneFile("ls", "file", fs, args, stdout, stderr)
		if !ok {
			return code
		}
		f, err := openFatbin(path)
		if err != nil {
			return failure(stderr, "ls", err)
		}
		if !*asJSON {
			if err := f.List(stdout, path); err != nil {
				return failure(stderr, "ls", err)
			}
			return exitOK
		}
		rep := lsReport{File: path, Entries: []lsEntry{}}
		for i, e := range f.Entries {
			le := lsEntry{
				Index:            e.Index,
				Container:        e.Container,
				Kind:             strings.ToLower(e.Kind.String()),
				Arch:             e.ArchName(),
				SM:               e.Arch,
				Version:          e.Version.String(),
				Listed:           e.Kind.IsELF() || e.Kind.IsPTX(),
				Ordinal:          f.Ordinal(i),
				ExtractName:      f.ExtractName(i, path),
				Identifier:       e.Identifier,
				Compression:      e.Compression,
				StoredSize:       e.Size,
				CompressedSize:   e.CompressedSize,
				UncompressedSize: e.UncompressedSize,
				DataSize:         -1,
				Debug:            e.Debug,
				Host:             e.Host(),
				Flags:            e.Flags.String(),
				Obfuscated:       e.Obfuscated,
			}
			if f.Members != nil {
				le.Member = f.Members[f.Containers[e.Container].Member].Name
			}
			if e.Flags&fatbin.FlagELFAttrs == 0 {
				le.Options = strings.TrimRight(e.Options, "\x00")
			}
			if d, err := e.Data(); err != nil {
				le.Error = err.Error()
				if errors.Is(err, fatbin.ErrObfuscated) {
					le.Error = "payload is obfuscated"
				}
			} else {
				le.DataSize = int64(len(d))
			}
			rep.Entries = append(rep.Entries, le)
		}
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return failure(stderr, "ls", err)
		}
		stdout.Write(append(b, '\n'))
		return exitOK
	}
}
