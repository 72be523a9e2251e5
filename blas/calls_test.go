package blas

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
)

// TestCallsOnlyInCallsGo keeps the layer rule that lets calls.go be
// swapped for generated in-context calls: no other file calls a
// bindings/cublas, bindings/cublaslt or bindings/driver function, and each
// function of calls.go is named cublas<GoName> or cublaslt<GoName> after
// the one binding it calls, with ctx first.
func TestCallsOnlyInCallsGo(t *testing.T) {
	funcs := map[string]map[string]bool{"cublas": {}, "cublaslt": {}, "driver": {"CtxSetCurrent": true}}
	for _, g := range cublas.Functions {
		funcs["cublas"][g] = true
	}
	for _, g := range cublaslt.Functions {
		funcs["cublaslt"][g] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	wrappers := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lib := map[string]string{} // import name -> "cublas", "cublaslt", "driver"
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
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || lib[id.Name] == "" {
				return true
			}
			if funcs[lib[id.Name]][sel.Sel.Name] && name != "calls.go" {
				t.Errorf("%s: calls %s.%s directly; go through calls.go", fset.Position(call.Pos()), id.Name, sel.Sel.Name)
			}
			return true
		})
		if name != "calls.go" {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			wrappers++
			l, g := "cublaslt", ""
			if g, ok = strings.CutPrefix(fd.Name.Name, "cublaslt"); !ok {
				l = "cublas"
				g, ok = strings.CutPrefix(fd.Name.Name, "cublas")
			}
			if !ok || !funcs[l][g] {
				t.Errorf("calls.go: %s is not cublas<GoName> or cublaslt<GoName> of a bindings function", fd.Name.Name)
				continue
			}
			if p := fd.Type.Params.List; len(p) == 0 || len(p[0].Names) != 1 || p[0].Names[0].Name != "ctx" {
				t.Errorf("calls.go: %s does not take ctx first", fd.Name.Name)
			}
			if !strings.Contains(selectors(fd), l+"."+g+"( ") {
				t.Errorf("calls.go: %s does not call %s.%s", fd.Name.Name, l, g)
			}
		}
	}
	if wrappers == 0 {
		t.Error("no functions in calls.go")
	}
}

// selectors lists the pkg.Name selectors in fd's body, each followed by
// "( ".
func selectors(fd *ast.FuncDecl) string {
	var b strings.Builder
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				b.WriteString(id.Name + "." + sel.Sel.Name + "( ")
			}
		}
		return true
	})
	return b.String()
}
