package main

// Writing and naming the commands' outputs.

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/fsutil"
)

// writeOutput writes b to path, as cc -o does: the directory must exist
// (with mkdir, the -mkdir flag, missing directories are created first), and
// an error names path, never a temporary file. It writes a temporary file
// and renames it, so that a failed write never leaves a truncated output
// (or a damaged previous one) behind.
func writeOutput(path string, b []byte, mkdir bool) error {
	if err := outputDir(path, mkdir); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A device or a FIFO (-o /dev/null): written to, as cc does, not
		// replaced by a regular file.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if err2 := f.Close(); err == nil {
			err = err2
		}
		return err
	}
	// Through a symbolic link, as cc -o writes: the link's target is
	// replaced, not the link. An existing file keeps its mode; a new one
	// is 0666, as os.WriteFile would create it (umask applies).
	mode := fs.FileMode(0o666)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
		if fi, err := os.Stat(real); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	return fsutil.WriteAtomic(path, b, mode)
}

// outputDir checks, before anything is compiled or written, that path can
// be an output file: not a directory, in a directory that exists (or, with
// mkdir, is created).
func outputDir(path string, mkdir bool) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("write %s: %s is not a directory", path, dir)
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist) && mkdir:
		return os.MkdirAll(dir, 0o777)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: directory %s does not exist (-mkdir creates it)", path, dir)
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// addMkdirFlag defines -mkdir, which the commands that write files share.
func addMkdirFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("mkdir", false, "create the output's missing directories (as mkdir -p); without it they must exist, as with cc -o")
}

// stem is the last element of path without its last extension, as
// cuobjdump names files: "dir/x.cu" -> "x".
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// perArchName names the output for arch a of source src: out itself when
// there is one architecture, else out with ".sm_NN" before its extension;
// without out, the source's stem and ext.
func perArchName(out, src, ext string, a core.Arch, several bool) string {
	if out == "" {
		out = stem(src) + ext
	}
	if !several {
		return out
	}
	e := filepath.Ext(out)
	if e == "" {
		return out + "." + a.SM() + ext
	}
	return strings.TrimSuffix(out, e) + "." + a.SM() + e
}
