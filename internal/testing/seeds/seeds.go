// Package seeds reads the reference API lists in ../shared/seeds and the
// declarations of a Go package, for tests that prove the bindings cover them.
package seeds

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudago/cudago/internal/fsutil"
)

// Dir finds ../shared/seeds beside the repository.
func Dir() (string, error) { return fsutil.FindShared("seeds", "README.md") }

// Lines returns the non-empty lines of a seed file.
func Lines(name string) ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// Declared returns the top-level names (funcs, vars, types, consts) that the
// non-test Go files in dir declare.
func Declared(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						names[d.Name.Name] = "func"
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							names[s.Name.Name] = "type"
						case *ast.ValueSpec:
							for _, n := range s.Names {
								names[n.Name] = d.Tok.String()
							}
						}
					}
				}
			}
		}
	}
	return names, nil
}
