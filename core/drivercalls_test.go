package core

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// directDriverCallsAllowed are the calls of bindings/driver functions that
// core's non-test code may make, as "file:Function", with the reason.
var directDriverCallsAllowed = map[string]string{
	"drivercalls.go:Proc":           "the loader resolves the C table's entry points as bindings/driver does",
	"drivercalls.go:StatusError":    "the C layer's failures are the errors bindings/driver's functions return",
	"drivercalls.go:GetProcAddress": "the loader's fallback to an older revision of an entry point",
}

// TestNoDirectDriverCalls fails if core's non-test code calls a function
// of bindings/driver, or uses one as a value: every driver call goes
// through core's C layer (drivercalls_gen.go, fastpath.h), which makes the
// context current within the call. Types, constants and conversions
// (driver.Stream(h)) are fine.
func TestNoDirectDriverCalls(t *testing.T) {
	funcs := driverFuncNames(t)
	if !funcs["StreamSynchronize"] || !funcs["Proc"] || !funcs["CtxCreateV4"] {
		t.Fatalf("the list of bindings/driver functions is incomplete (%d names)", len(funcs))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		alias := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/cudago/cudago/bindings/driver" {
				alias = "driver"
				if im.Name != nil {
					alias = im.Name.Name
				}
			}
		}
		if alias == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != alias || !funcs[sel.Sel.Name] {
				return true
			}
			key := name + ":" + sel.Sel.Name
			if _, ok := directDriverCallsAllowed[key]; ok {
				used[key] = true
				return true
			}
			t.Errorf("%s: calls driver.%s directly; call the generated %s (add its //cudago:call line to calls.go and run go generate ./core) or a fastpath.h function",
				fset.Position(sel.Pos()), sel.Sel.Name, cName(sel.Sel.Name))
			return true
		})
	}
	for key := range directDriverCallsAllowed {
		if !used[key] {
			t.Errorf("allowed direct call %s is no longer made: remove it from directDriverCallsAllowed", key)
		}
	}
}

// driverFuncNames returns the names of bindings/driver's package-level
// functions, generated (with their aliases) and hand-written.
func driverFuncNames(t *testing.T) map[string]bool {
	names := map[string]bool{}
	for _, g := range driver.Functions {
		names[g] = true
	}
	dir := filepath.Join("..", "bindings", "driver")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bindings/driver sources in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
				names[fd.Name.Name] = true
			}
		}
	}
	return names
}

// cName is the C name of a bindings/driver function, for messages.
func cName(goName string) string {
	for c, g := range driver.Functions {
		if g == goName {
			return c
		}
	}
	return goName
}

func driverCallIndex(t *testing.T, name string) int {
	t.Helper()
	for i, c := range driverCalls {
		if c.name == name {
			return i
		}
	}
	t.Fatalf("%s is not in the driver call table", name)
	return -1
}

// TestDriverCallsResolve loads the C table from the installed driver:
// every entry resolves, or is missing because the driver is older than its
// header revision, and cuEventElapsedTime (_v2, 12.8) resolves on older
// drivers through its fallback.
func TestDriverCallsResolve(t *testing.T) {
	if !testenv.OnGPUMachine() {
		testenv.LocalCUDA(t) // the local install's libcuda (550, CUDA 12.4)
	}
	loadProcs()
	v, err := cuDriverGetVersion()
	if err != nil {
		t.Fatalf("cuDriverGetVersion: %v", err)
	}
	if v < 12000 {
		t.Fatalf("driver version %d, want 12.0 or newer", v)
	}
	var missing []string
	for i, c := range driverCalls {
		err := driverTable.LoadErr(i)
		if err == nil {
			continue
		}
		var mf *driver.MissingFunctionError
		if !errors.As(err, &mf) || mf.Need == "" {
			t.Errorf("%s: %v, want resolved or a *MissingFunctionError naming the version needed", c.name, err)
			continue
		}
		missing = append(missing, c.name+" (needs "+mf.Need+")")
	}
	sort.Strings(missing)
	t.Logf("driver %d; entries it lacks: %v", v, missing)
	if err := driverTable.LoadErr(driverCallIndex(t, "cuEventElapsedTime")); err != nil {
		t.Errorf("cuEventElapsedTime is not resolved on driver %d despite its fallback: %v", v, err)
	}
	// cg_ctx_create falls back to cuCtxCreate_v2: one of them is there.
	if driverTable.LoadErr(driverCallIndex(t, "cuCtxCreate")) != nil && driverTable.LoadErr(driverCallIndex(t, "cuCtxCreate_v2")) != nil {
		t.Error("neither cuCtxCreate nor cuCtxCreate_v2 resolves")
	}
}

// TestDriverCallErrors checks the errors the C layer's return codes become.
func TestDriverCallErrors(t *testing.T) {
	if !testenv.OnGPUMachine() {
		testenv.LocalCUDA(t)
	}
	loadProcs()
	alloc := driverCallIndex(t, "cuMemAlloc")
	err := makeErr(uint64(alloc)<<32 | uint64(driver.ErrorOutOfMemory))
	var de *driver.Error
	if !errors.As(err, &de) || !errors.Is(err, driver.ErrorOutOfMemory) || errors.Is(err, driver.ErrorInvalidValue) {
		t.Fatalf("makeErr(cuMemAlloc, out of memory) = %#v, want a *driver.Error matching only ErrorOutOfMemory", err)
	}
	if de.Func != "cuMemAlloc" || de.Message != "out of memory" {
		t.Errorf("error names %q with message %q, want cuMemAlloc and the driver's \"out of memory\"", de.Func, de.Message)
	}
	if msg, err := cuGetErrorString(driver.ErrorInvalidValue); err != nil || msg != "invalid argument" {
		t.Errorf("cuGetErrorString(ErrorInvalidValue) = %q, %v", msg, err)
	}
	// The failure of cuGetErrorString itself has no message (and no loop).
	if err := makeErr(uint64(driverCallIndex(t, "cuGetErrorString"))<<32 | uint64(driver.ErrorInvalidValue)); !errors.As(err, &de) || de.Message != "" {
		t.Errorf("cuGetErrorString's own failure: %#v, want a *driver.Error without a message", err)
	}

	// An entry point that was not resolved: the loader's error (package
	// cgx's tests check the rest), the bindings function's own.
	idx := driverCallIndex(t, "cuGraphUpload")
	err = makeErr(uint64(idx)<<32 | uint64(cgMissing))
	if lerr := driverTable.LoadErr(idx); lerr != nil {
		if err != lerr {
			t.Errorf("a missing entry point gives %v, want the loader's error %v", err, lerr)
		}
	} else {
		var mf *driver.MissingFunctionError
		if !errors.As(err, &mf) || mf.Func != "cuGraphUpload" || mf.Lib != "libcuda" {
			t.Errorf("a missing entry point without a recorded error gives %#v", err)
		}
	}
	// The errors are bindings/driver's, for the same code.
	if want := driver.StatusError("cuMemAlloc", driver.ErrorOutOfMemory); !reflect.DeepEqual(makeErr(uint64(alloc)<<32|uint64(driver.ErrorOutOfMemory)), want) {
		t.Errorf("makeErr differs from driver.StatusError: %#v", want)
	}
}

// TestDriverCallInContext runs a generated call that needs a context with
// none: it fails with a driver error, from making the context current or
// from the call, and does not crash.
func TestDriverCallInContext(t *testing.T) {
	if !testenv.OnGPUMachine() {
		testenv.LocalCUDA(t)
	}
	initDriver()
	err := cuStreamSynchronize(0, 0)
	var de *driver.Error
	if !errors.As(err, &de) {
		t.Fatalf("cuStreamSynchronize without a context: %v, want a *driver.Error", err)
	}
	if de.Func != "cuCtxGetCurrent" && de.Func != "cuStreamSynchronize" {
		t.Errorf("the error names %s, want cuCtxGetCurrent (no driver) or cuStreamSynchronize (no context)", de.Func)
	}
}
