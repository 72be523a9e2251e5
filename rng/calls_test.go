package rng

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/curand"
)

// TestCallsOnlyInCallsGo keeps the layer rule that lets calls.go be
// swapped for generated in-context calls: no other file of the package
// (tests aside: host_test.go calls the host generators, which need no
// context) calls a bindings/curand or bindings/driver function, and each
// function of calls.go is named curand<GoName> after the one binding it
// calls and takes ctx first.
func TestCallsOnlyInCallsGo(t *testing.T) {
	funcs := map[string]bool{}
	for _, g := range curand.Functions {
		funcs[g] = true
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
		bind := map[string]string{} // import name -> package
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == "github.com/cudago/cudago/bindings/curand" || p == "github.com/cudago/cudago/bindings/driver" {
				n := p[strings.LastIndex(p, "/")+1:]
				if im.Name != nil {
					n = im.Name.Name
				}
				bind[n] = p
			}
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
			if !ok || bind[id.Name] == "" {
				return true
			}
			isFunc := funcs[sel.Sel.Name] && strings.HasSuffix(bind[id.Name], "/curand") ||
				sel.Sel.Name == "CtxSetCurrent" && strings.HasSuffix(bind[id.Name], "/driver")
			if isFunc && name != "calls.go" {
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
			g, ok := strings.CutPrefix(fd.Name.Name, "curand")
			if !ok || !funcs[g] {
				t.Errorf("calls.go: %s is not curand<GoName> of a bindings function", fd.Name.Name)
				continue
			}
			if p := fd.Type.Params.List; len(p) == 0 || len(p[0].Names) != 1 || p[0].Names[0].Name != "ctx" {
				t.Errorf("calls.go: %s does not take ctx first", fd.Name.Name)
			}
			if !strings.Contains(selectors(fd), "curand."+g+"( ") {
				t.Errorf("calls.go: %s does not call curand.%s", fd.Name.Name, g)
			}
		}
	}
	if wrappers != 16 {
		t.Errorf("%d functions in calls.go, want the 16 the package uses", wrappers)
	}
}

// selectors lists the pkg.Name selectors in fd's body, each followed by
// "(".
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
