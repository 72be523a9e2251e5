package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A package lists the library calls it makes in its own Go files, one
// //cudago: line each, as golang.org/x/sys keeps its //sys lines beside the
// wrappers: adding a call touches only the package that makes it. By
// convention the lines are in the package's calls.go, beside the
// calls_gen.* they generate; -calls and -core read every non-test,
// non-generated Go file of the folder (in file name order, then line
// order, which is the order of the generated table), so a line may also
// sit above the hand-written function that uses the call. The lines are
// Go directive comments (//word:word, no space), which gofmt keeps as they
// are and go doc leaves out of a doc comment.
//
// A layer package (-calls: blas, fft, ...) has
//
//	//cudago:libs cublas cublaslt          the bindings packages the calls are in
//	//cudago:call cublasSgemm              a C API name, as their Functions list it
//	//cudago:call ncclCommCount noescape nocallback
//	//cudago:call cuFileRead errno
//	//cudago:call cublasLtMatmul unchecked
//
// where noescape nocallback (both or neither: the generated code keeps
// outputs on the stack only with both) marks a call that keeps no pointer
// past the call and never calls back into Go (callList.noEscape), errno
// one that reports -1 with errno (callList.errno), and unchecked one whose
// untyped pointers cgo need not check (callList.unchecked).
//
// Package core (-core) lists its driver calls with coreCall's flags, and
// what its hand-written C takes from the header:
//
//	//cudago:call cuStreamSynchronize inctx nocallback
//	//cudago:call cuLaunchKernel conly
//	//cudago:call cuEventElapsedTime inctx noescape nocallback out=pMilliseconds fallback=2000
//	//cudago:const CU_LAUNCH_PARAM_END_AS_INT
//	//cudago:struct CUlaunchConfig
//
// A word the generator does not know is an error naming its file and line.

// directivePrefix starts every line the generator reads.
const directivePrefix = "//cudago:"

// directive is one //cudago: line.
type directive struct {
	pos  token.Position
	verb string   // libs, call, const, struct
	args []string // the words after the verb
}

func (d directive) errorf(format string, a ...any) error {
	return fmt.Errorf("%s: %s%s: %s", d.pos, directivePrefix, d.verb, fmt.Sprintf(format, a...))
}

// readDirectives returns the //cudago: lines of the Go files of folder
// dir, test and generated files left out.
func readDirectives(dir string) ([]directive, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var ds []directive
	for _, e := range entries { // sorted by name
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				rest, ok := strings.CutPrefix(c.Text, directivePrefix)
				if !ok {
					continue
				}
				words := strings.Fields(rest)
				d := directive{pos: fset.Position(c.Slash)}
				if len(words) == 0 {
					return nil, fmt.Errorf("%s: %s without a verb", d.pos, directivePrefix)
				}
				d.verb, d.args = words[0], words[1:]
				ds = append(ds, d)
			}
		}
	}
	return ds, nil
}

// readCallList reads the list of a layer package (-calls) in folder dir.
func readCallList(dir string) (*callList, error) {
	ds, err := readDirectives(dir)
	if err != nil {
		return nil, err
	}
	list := &callList{}
	for _, d := range ds {
		switch d.verb {
		case "libs":
			if len(d.args) == 0 {
				return nil, d.errorf("names no library")
			}
			for _, lib := range d.args {
				if slices.Contains(list.libs, lib) {
					return nil, d.errorf("%s is named twice", lib)
				}
				list.libs = append(list.libs, lib)
			}
		case "call":
			if len(d.args) == 0 {
				return nil, d.errorf("names no function")
			}
			name := d.args[0]
			var esc, cb bool
			for _, w := range d.args[1:] {
				switch w {
				case "noescape":
					esc = true
				case "nocallback":
					cb = true
				case "errno":
					list.errno = append(list.errno, name)
				case "unchecked":
					list.unchecked = append(list.unchecked, name)
				default:
					return nil, d.errorf("%s: unknown word %q (want noescape nocallback, errno, unchecked)", name, w)
				}
			}
			if esc != cb {
				return nil, d.errorf("%s: noescape and nocallback go together in a library call", name)
			}
			if esc {
				list.noEscape = append(list.noEscape, name)
			}
			list.calls = append(list.calls, name)
		default:
			return nil, d.errorf("unknown verb in a library package (want libs, call)")
		}
	}
	if len(list.calls) == 0 {
		return nil, fmt.Errorf("%s has no %scall lines: list the package's library calls in its calls.go", dir, directivePrefix)
	}
	if len(list.libs) == 0 {
		return nil, fmt.Errorf("%s has no %slibs line naming the libraries of its calls", dir, directivePrefix)
	}
	return list, nil
}

// coreWords are the flags of a core call, as its //cudago:call line spells them.
var coreWords = map[string]coreFlags{"inctx": inCtx, "noescape": noEscape, "nocallback": noCallback, "conly": cOnly}

// readCoreList reads package core's driver list (-core) in folder dir.
func readCoreList(dir string) (*coreConfig, error) {
	ds, err := readDirectives(dir)
	if err != nil {
		return nil, err
	}
	cfg := &coreConfig{}
	for _, d := range ds {
		if len(d.args) == 0 {
			return nil, d.errorf("names nothing")
		}
		switch d.verb {
		case "call":
			c := coreCall{name: d.args[0]}
			for _, w := range d.args[1:] {
				key, val, kv := strings.Cut(w, "=")
				switch {
				case !kv && coreWords[w] != 0:
					c.flags |= coreWords[w]
				case kv && key == "out" && val != "":
					c.outs = append(c.outs, strings.Split(val, ",")...)
				case kv && key == "fallback":
					v, err := strconv.Atoi(val)
					if err != nil || v <= 0 {
						return nil, d.errorf("%s: fallback %q is no cuGetProcAddress version (2000)", c.name, val)
					}
					c.fallback = v
				default:
					return nil, d.errorf("%s: unknown word %q (want inctx, noescape, nocallback, conly, out=p1,p2, fallback=N)", c.name, w)
				}
			}
			cfg.calls = append(cfg.calls, c)
		case "const", "struct":
			if len(d.args) != 1 {
				return nil, d.errorf("takes one name, not %d", len(d.args))
			}
			if d.verb == "const" {
				cfg.consts = append(cfg.consts, d.args[0])
			} else {
				cfg.structs = append(cfg.structs, d.args[0])
			}
		default:
			return nil, d.errorf("unknown verb in package core (want call, const, struct)")
		}
	}
	if len(cfg.calls) == 0 {
		return nil, fmt.Errorf("%s has no %scall lines: list core's driver calls in its calls.go", dir, directivePrefix)
	}
	return cfg, nil
}
