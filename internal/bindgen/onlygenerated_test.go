package main

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
	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/bindings/nvvm"
)

// bindingsFuncs are the Functions of the bindings packages that a call
// list's //cudago:libs line may name (the driver's: every package's).
var bindingsFuncs = map[string]map[string]string{
	"cublas": cublas.Functions, "cublaslt": cublaslt.Functions, "cufft": cufft.Functions, "cufile": cufile.Functions,
	"curand": curand.Functions, "cusolver": cusolver.Functions, "cusparse": cusparse.Functions, "driver": driver.Functions,
	"nccl": nccl.Functions, "nvvm": nvvm.Functions,
}

// TestOnlyGeneratedCalls: in every package whose library calls are
// generated (bindgen -calls), no hand-written file calls a function of
// those libraries' bindings (or of the driver's) itself. Every library
// call goes through the generated in-context calls (calls_gen.go), which
// make the stream's context current within the cgo call. core has its
// own test (TestNoDirectDriverCalls), which knows fastpath.c.
func TestOnlyGeneratedCalls(t *testing.T) {
	for dir, list := range layerLists(t) {
		funcs := map[string]map[string]string{"driver": driver.Functions}
		for _, l := range list.libs {
			if funcs[l] = bindingsFuncs[l]; funcs[l] == nil {
				t.Errorf("%s: its calls are in %s, which bindingsFuncs lacks", dir, l)
			}
		}
		onlyGeneratedCalls(t, filepath.Join(moduleDir, dir), funcs)
	}
}

// onlyGeneratedCalls fails t if a non-test Go file of the package in dir,
// other than its generated calls_gen.go, calls a function of one of the
// bindings packages named in funcs (import path suffix such as "cublas"
// -> the Go names of its functions, the package's Functions map values). Library calls must go through the generated
// in-context calls, which make the right context current within the cgo
// call.
func onlyGeneratedCalls(t *testing.T, dir string, funcs map[string]map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == "calls_gen.go" {
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
