// Package fsutil holds file helpers shared by the cudago command, core,
// the generator and the tests.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
)

// TempPrefix starts the names of WriteAtomic's temporary files, so that
// whoever owns a directory can recognise (and remove) those a crash left.
const TempPrefix = ".tmp-"

// WriteAtomic writes b to path through a temporary file in the same
// directory, renamed over path once complete, so that a failed write never
// leaves a truncated file (or a damaged previous one) behind and readers see
// the old file or the new one, never a mix. The new file is created with
// perm (the umask applies); the directory must exist.
//
// An error is a *fs.PathError naming path, never the temporary file (which
// the caller never chose): "write out.fatbin: permission denied",
// "write adir: is a directory".
func WriteAtomic(path string, b []byte, perm os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("%s%s-%d-%d", TempPrefix, filepath.Base(path), os.Getpid(), rand.Uint64()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return pathError(path, err)
	}
	_, err = f.Write(b)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Rename(tmp, path)
		if err != nil {
			if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
				// os.Rename says "file exists" for a directory.
				err = syscall.EISDIR
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return pathError(path, err)
	}
	return nil
}

// pathError is err about path: the system's reason, without the name of
// the temporary file it was about.
func pathError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: "write", Path: path, Err: err}
}

// FindShared finds the folder shared/name that stands beside the
// repository (../shared, which feeds the generator and the tests that
// need NVIDIA's headers or reference lists) or above it: it walks up from
// the working directory and returns the first d/shared/name or
// d/../shared/name, absolute, that holds the file probe.
func FindShared(name, probe string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, c := range []string{filepath.Join(d, "shared", name), filepath.Join(d, "..", "shared", name)} {
			if _, err := os.Stat(filepath.Join(c, probe)); err == nil {
				return filepath.Abs(c)
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no shared/%s found above %s", name, wd)
		}
	}
}
