package main

// Reading the commands' inputs.

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxInput is the largest input file the commands read: they read sources
// and code images whole into memory. 4 GiB is above the largest host
// libraries that embed fat binaries (cuBLASLt's, cuDNN's, about 1 GiB).
const maxInput = 4 << 30

// checkInput refuses, before anything is read, an input that is not a
// regular file (a directory, /dev/zero, a FIFO: reading it could block or
// never end) or that is larger than maxInput. Symbolic links are followed.
func checkInput(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkInputInfo(path, fi)
}

func checkInputInfo(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s): the input must be a file", path, fileKind(fi.Mode()))
	}
	if fi.Size() > maxInput {
		return fmt.Errorf("%s: %s, larger than the %s an input may be", path, size(fi.Size()), size(maxInput))
	}
	return nil
}

// readInput reads the input file path whole, after checkInput's checks
// (done on the open file too, so that a file swapped in between is caught).
func readInput(path string) ([]byte, error) {
	if err := checkInput(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkInputInfo(path, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInput { // it grew while being read
		return nil, fmt.Errorf("%s: larger than the %s an input may be", path, size(maxInput))
	}
	return b, nil
}

// fileKind names the kind of a file that is not a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// size writes a byte count for people: "4 GiB", "5.0 GiB", "12 bytes".
func size(n int64) string {
	const gib = 1 << 30
	switch {
	case n%gib == 0 && n > 0:
		return fmt.Sprintf("%d GiB", n/gib)
	case n >= gib:
		return fmt.Sprintf("%.1f GiB (%d bytes)", float64(n)/gib, n)
	}
	return fmt.Sprintf("%d bytes", n)
}
