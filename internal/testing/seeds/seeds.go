// Package seeds reads the reference API lists and the declarations of a Go
// package, for tests that prove the bindings cover them. The lists are this
// project's shared/seeds, copied into testdata/seeds (testdata/README.md
// says from where; a test keeps the copy equal to its origin).
package seeds

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// copyDir is the copy of the lists, relative to the repository root.
var copyDir = filepath.Join("internal", "testing", "seeds", "testdata", "seeds")

// Dir returns the repository's copy of the lists, found walking up from the
// working directory (a test's is its package's folder) to the repository
// root.
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			c := filepath.Join(d, copyDir)
			if _, err := os.Stat(filepath.Join(c, "README.md")); err != nil {
				return "", fmt.Errorf("the reference lists are missing from the repository: %v", err)
			}
			return c, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

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
