package main

// Writing and naming the commands' outputs.

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/fsutil"
)

// writeOutput writes b to path, creating its directory. It writes a
// temporary file and renames it, so that a failed write never leaves a
// truncated output (or a damaged previous one) behind.
func writeOutput(path string, b []byte) error {
	dir := filepath.Dir(path)
	if dir != "." {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	}
	// 0666, as os.WriteFile would create it (umask applies).
	return fsutil.WriteAtomic(path, b, 0o666)
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
