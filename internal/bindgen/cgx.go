package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// cgxHeader is the shared C header of the in-context calls, from the
// module root.
const cgxHeader = "internal/cgx/cgx.h"

// moduleRoot walks up from the working directory to the folder holding
// cudago's go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/cudago/cudago\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no cudago go.mod above " + wd)
		}
	}
}

// cgxInclude returns the lines of a generated header in folder dir (from
// the module root, slash-separated) that include internal/cgx/cgx.h by
// relative path, with the header's hash: the Go build cache does not see
// headers of other folders, but it sees this line change.
func cgxInclude(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(cgxHeader)))
	if err != nil {
		return "", err
	}
	up := strings.Repeat("../", strings.Count(path.Clean(dir), "/")+1)
	return fmt.Sprintf("#include %q /* cg_ret, CGX_CALL, CGX_ENTER: hand-written; sha256 %x */\n", up+cgxHeader, sha256.Sum256(b)), nil
}
