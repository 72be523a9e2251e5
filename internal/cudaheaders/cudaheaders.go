// Package cudaheaders finds NVIDIA's C headers by CUDA version, for the
// generator (internal/bindgen) and the layout tests
// (internal/testing/layoutcheck).
// The bindings are generated from CUDA 13.0's headers and 12.4's, so a
// header counts only in a place of exactly that version.
//
// Places, searched in this order (for a version and a file, the first place
// of that version holding the file wins):
//
//  1. CUDAGO_CUDA_HEADERS: folders separated by ':', each either a folder of
//     version folders (12.4/, 13.0/, as this project's shared/cuda-headers)
//     or a CUDA include folder, whose version its cuda.h's CUDA_VERSION says
//     (/usr/local/cuda-13.0/include).
//  2. shared/cuda-headers beside the repository (this project's CI has
//     one), the first found walking up from the working directory.
//  3. The local install of scripts/setup-cuda.sh: $CUDAGO_LOCAL_CUDA/usr/include,
//     else the first .cuda/root/usr/include walking up (CUDA 12.4, every
//     header: driver, NVRTC, nvJitLink, nvFatbin, NVVM, the runtime, the math
//     libraries, nvml.h, and NCCL 2.22.3's nccl.h).
//  4. A CUDA install: $CUDA_HOME/include, $CUDA_PATH/include, /usr/local/cuda/include.
//
// A plain clone with the local install has every 12.4 header; the 13.0 ones
// come from a CUDA 13.0 install or from shared/cuda-headers, which CI names
// through CUDAGO_CUDA_HEADERS.
package cudaheaders

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cudago/cudago/internal/version"
)

// Env is the variable naming header folders to search first.
const Env = "CUDAGO_CUDA_HEADERS"

// Header is one header file of one CUDA version: {"13.0", "cuda.h"}.
type Header struct {
	Version string // major.minor
	File    string // relative to the include folder: "cuda.h", "nvtx3/nvToolsExt.h"
}

func (h Header) String() string { return h.Version + "/" + h.File }

// Place is a folder of headers of one CUDA version.
type Place struct {
	Dir     string // the include folder
	Version string // major.minor: "12.4"
	Source  string // how it was found: "CUDAGO_CUDA_HEADERS", "shared/cuda-headers", ...
}

// Set is the places found, in search order.
type Set struct {
	Places []Place
	// Searched says what each place held or why it was passed over, for
	// the errors that name what is missing.
	Searched []string
	// Explicit is set when CUDAGO_CUDA_HEADERS (or the generator's -headers)
	// named folders: the caller asked for these headers, so a missing one
	// is an error rather than a reason to skip.
	Explicit bool
}

// Find searches the places in the package's order, first the folders in
// first (a ':' list, as CUDAGO_CUDA_HEADERS; the generator's -headers).
func Find(first string) *Set {
	s := &Set{}
	for _, src := range []struct{ name, list string }{{"-headers", first}, {Env, os.Getenv(Env)}} {
		if src.list == "" {
			if src.name == Env {
				s.Searched = append(s.Searched, Env+" unset")
			}
			continue
		}
		s.Explicit = true
		for _, d := range filepath.SplitList(src.list) {
			if d != "" {
				s.addAny(d, src.name)
			}
		}
	}
	if d, ok := walkUp(filepath.Join("shared", "cuda-headers")); ok {
		s.addTree(d, "shared/cuda-headers")
	} else {
		s.Searched = append(s.Searched, "no shared/cuda-headers above "+wd())
	}
	if r := os.Getenv("CUDAGO_LOCAL_CUDA"); r != "" {
		s.addInclude(filepath.Join(r, "usr", "include"), "CUDAGO_LOCAL_CUDA")
	} else if d, ok := walkUp(filepath.Join(".cuda", "root", "usr", "include")); ok {
		s.addInclude(d, "the local install")
	} else {
		s.Searched = append(s.Searched, "no .cuda/root/usr/include above "+wd()+" (scripts/setup-cuda.sh makes it)")
	}
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if r := os.Getenv(v); r != "" {
			s.addInclude(filepath.Join(r, "include"), v)
		} else {
			s.Searched = append(s.Searched, v+" unset")
		}
	}
	s.addInclude("/usr/local/cuda/include", "a CUDA install")
	return s
}

// Dir returns the include folder of the first place of version v that
// holds every one of files.
func (s *Set) Dir(v string, files ...string) (string, bool) {
	for _, p := range s.Places {
		if p.Version == v && hasAll(p.Dir, files) {
			return p.Dir, true
		}
	}
	return "", false
}

// Check returns nil when every header is found, else an error naming the
// missing ones, where they were looked for and how to provide them.
func (s *Set) Check(hs ...Header) error {
	missing := map[string][]string{} // version -> files
	for _, h := range hs {
		if _, ok := s.Dir(h.Version, h.File); !ok && !slices.Contains(missing[h.Version], h.File) {
			missing[h.Version] = append(missing[h.Version], h.File)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var names, fix []string
	for _, v := range slices.Sorted(maps.Keys(missing)) {
		names = append(names, "CUDA "+v+"'s "+strings.Join(missing[v], ", "))
		if v == "12.4" {
			fix = append(fix, "run scripts/setup-cuda.sh (CUDA 12.4's headers)")
		} else {
			fix = append(fix, fmt.Sprintf("set %s to a CUDA %s include folder or to a folder holding %s/ (as this project's shared/cuda-headers)", Env, v, v))
		}
	}
	return fmt.Errorf("needs %s: %s (searched: %s)", strings.Join(names, "; "), strings.Join(fix, ", or "), strings.Join(s.Searched, "; "))
}

// Require returns the set when every header is found. Otherwise it skips
// t, naming what is missing, or fails it when CUDAGO_CUDA_HEADERS is set:
// then the headers were asked for (CI sets it), and a test that skipped
// would hide that they are not there.
func Require(t TB, hs ...Header) *Set {
	t.Helper()
	s := Find("")
	if err := s.Check(hs...); err != nil {
		if s.Explicit {
			t.Fatalf("%v", err)
		} else {
			t.Skipf("%v", err)
		}
	}
	return s
}

// TB is what Require uses of a testing.TB (this package does not import
// testing, since the generator uses it too).
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// addAny adds d as a folder of version folders if it has any, else as an
// include folder.
func (s *Set) addAny(d, source string) {
	if s.addTree(d, source) {
		return
	}
	s.addInclude(d, source)
}

var versionDir = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// addTree adds the version folders of d (12.4/, 13.0/), newest first, and
// reports whether there was one.
func (s *Set) addTree(d, source string) bool {
	ents, err := os.ReadDir(d)
	if err != nil {
		return false
	}
	var vs []string
	for _, e := range ents {
		if e.IsDir() && versionDir.MatchString(e.Name()) {
			vs = append(vs, e.Name())
		}
	}
	if len(vs) == 0 {
		return false
	}
	for i := len(vs) - 1; i >= 0; i-- {
		s.add(Place{Dir: filepath.Join(d, vs[i]), Version: vs[i], Source: source})
	}
	return true
}

var cudaVersionRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+CUDA_VERSION\s+([0-9]+)\b`)

// addInclude adds include folder d at the version its cuda.h declares.
func (s *Set) addInclude(d, source string) {
	b, err := os.ReadFile(filepath.Join(d, "cuda.h"))
	if err != nil {
		if os.IsNotExist(err) {
			s.Searched = append(s.Searched, fmt.Sprintf("%s (%s): no cuda.h", d, source))
		} else {
			s.Searched = append(s.Searched, fmt.Sprintf("%s (%s): %v", d, source, err))
		}
		return
	}
	m := cudaVersionRE.FindSubmatch(b)
	if m == nil {
		s.Searched = append(s.Searched, fmt.Sprintf("%s (%s): cuda.h defines no CUDA_VERSION", d, source))
		return
	}
	n, _ := strconv.Atoi(string(m[1]))
	v, err := version.FromCUDA(n)
	if err != nil {
		s.Searched = append(s.Searched, fmt.Sprintf("%s (%s): %v", d, source, err))
		return
	}
	s.add(Place{Dir: d, Version: v.String(), Source: source})
}

func (s *Set) add(p Place) {
	if abs, err := filepath.Abs(p.Dir); err == nil {
		p.Dir = abs
	}
	s.Places = append(s.Places, p)
	s.Searched = append(s.Searched, fmt.Sprintf("%s (%s): CUDA %s", p.Dir, p.Source, p.Version))
}

// walkUp returns the first folder rel found walking up from the working
// directory.
func walkUp(rel string) (string, bool) {
	for d := wd(); ; d = filepath.Dir(d) {
		c := filepath.Join(d, rel)
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func wd() string {
	d, err := os.Getwd()
	if err != nil {
		return "."
	}
	return d
}

func hasAll(dir string, files []string) bool {
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}
