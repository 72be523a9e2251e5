package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// OnlyGeneratedCalls fails t if a non-test Go file of the package in the
// working directory, other than its generated calls_gen.go, calls a
// function of one of the bindings packages named in funcs (import path
// suffix such as "cublas" -> the Go names of its functions, the package's
// Functions map values). Library calls must go through the generated
// in-context calls, which make the right context current within the cgo
// call (internal/bindgen's layerCalls).
func OnlyGeneratedCalls(t *testing.T, funcs map[string]map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "calls_gen.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lib := map[string]string{} // import name -> bindings package
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			l, ok := strings.CutPrefix(p, "github.com/cudago/cudago/bindings/")
			if !ok || funcs[l] == nil {
				continue
			}
			n := l
			if im.Name != nil {
				n = im.Name.Name
			}
			lib[n] = l
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || lib[id.Name] == "" {
				return true
			}
			if isFunc(funcs[lib[id.Name]], sel.Sel.Name) {
				t.Errorf("%s: uses %s.%s directly; call it through the generated in-context calls (calls_gen.go)", fset.Position(sel.Pos()), id.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

func isFunc(m map[string]string, goName string) bool {
	for _, g := range m {
		if g == goName {
			return true
		}
	}
	return false
}
