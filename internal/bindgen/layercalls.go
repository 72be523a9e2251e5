package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The packages over the math libraries (blas, rng, fft, sparse, solver)
// call the libraries as core calls the driver: in a context, which CUDA
// keeps per OS thread, made current within the same cgo call. With -calls
// DIR, bindgen writes into package DIR, from its list in layerCalls
// (config.go):
//
//   - calls_gen.h: the package's table of entry points (cgx_<pkg>_fn,
//     indexed by CGX_<name>; cuCtxGetCurrent and cuCtxSetCurrent first),
//     their C types, and the shims' prototypes; the helpers are
//     internal/cgx/cgx.h's, included by relative path;
//   - calls_gen.c: one shim per call, cg_ret cgx_<pkg>_<name>(uintptr_t ctx,
//     params...), that makes ctx current (CGX_ENTER_LIB: not with ctx 0)
//     and calls the entry point;
//   - calls_gen.go: the table (an internal/cgx Table that resolves each
//     entry point through its bindings package's Proc and makes the errors
//     through its StatusError), and one unexported Go function per call,
//     named <lib><GoName> (cublasSgemm for cublas.Sgemm, cublasLtMatmul for
//     cublaslt.Matmul: the library's C prefix and the bindings' Go name),
//     whose signature is the bindings function's with ctx driver.Context
//     first: the same parameters, results, count checks and errors.

// callList is what one package calls in its libraries.
type callList struct {
	// libs are the bindings packages (configs' keys) the calls are in:
	// "cublas", "cublaslt".
	libs []string
	// calls are C API names, as the bindings packages' Functions list them
	// ("cublasSgemm", not the symbol cublasSgemm_v2).
	calls []string
	// noEscape lists calls that keep no pointer they are given past the
	// call and never call back into Go: they are marked #cgo noescape and
	// nocallback, which lets the Go side keep the variables it passes by
	// address (outputs, host scalars) on its stack.
	noEscape []string
}

// The files -calls writes.
const (
	callsGoFile = "calls_gen.go"
	callsHFile  = "calls_gen.h"
	callsCFile  = "calls_gen.c"
)

// generateCalls writes the calls of the package in folder dir.
func generateCalls(dir, headersDir string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	key, err := filepath.Rel(root, abs)
	if err != nil {
		return err
	}
	key = filepath.ToSlash(key)
	list, ok := layerCalls[key]
	if !ok {
		return fmt.Errorf("-calls %s: no list for package folder %q in layerCalls (internal/bindgen/config.go)", dir, key)
	}
	models := map[string]*model{}
	for _, lib := range append([]string{"driver"}, list.libs...) {
		cfg, ok := configs[lib]
		if !ok {
			return fmt.Errorf("-calls %s: unknown library %q (want one of %s)", key, lib, libNames())
		}
		if models[lib], err = buildModel(cfg, headersDir); err != nil {
			return err
		}
	}
	files, err := emitCalls(key, list, models)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("bindgen -calls %s: %d calls in %s\n", key, len(list.calls), strings.Join(list.libs, ", "))
	return nil
}

// layerEntry is one entry of a package's table.
type layerEntry struct {
	m      *model
	g      *coreGen
	f      *funcDef
	params []*coreParam
	shim   bool // has a shim and a Go function (not the context helpers)
	flags  coreFlags
}

// libFile names a library in errors about an entry point never resolved.
func libFile(lib string) string {
	if lib == "driver" {
		return "libcuda"
	}
	return "lib" + lib
}

// emitCalls returns the three files for the package in folder key (from
// the module root), with models holding the driver's and each library's.
func emitCalls(key string, list *callList, models map[string]*model) (map[string][]byte, error) {
	pkg := path.Base(key)
	if len(list.libs) == 0 || len(list.calls) == 0 {
		return nil, fmt.Errorf("calls of %s: no libraries or no calls listed", key)
	}
	drv := models["driver"]
	if drv == nil {
		return nil, fmt.Errorf("calls of %s: no driver model", key)
	}
	// Names a parameter must not take: the packages and globals the
	// generated file uses, its context and error, CGX_CALL's locals.
	reserved := map[string]bool{"ctx": true, "err": true, "unsafe": true, "C": true, "f_": true, "r_": true,
		"cgx": true, "cgxCalls": true, "driver": true}
	for _, lib := range list.libs {
		reserved[lib] = true
		reserved["cgx"+exportName(lib)] = true
	}
	gens := map[string]*coreGen{}
	funcs := map[string]*funcDef{}
	libOf := map[string]string{}
	for _, lib := range list.libs {
		m := models[lib]
		if m == nil {
			return nil, fmt.Errorf("calls of %s: no model of library %s", key, lib)
		}
		if m.cfg.procAddr {
			return nil, fmt.Errorf("calls of %s: library %s is the driver, whose calls are core's (driverCore)", key, lib)
		}
		gens[lib] = &coreGen{m: m, pkg: m.cfg.name, reserved: reserved}
		for _, f := range m.funcs {
			if prev, dup := libOf[f.cname]; dup {
				return nil, fmt.Errorf("calls of %s: %s is in both %s and %s", key, f.cname, prev, lib)
			}
			funcs[f.cname] = f
			libOf[f.cname] = lib
		}
	}
	quiet := map[string]bool{}
	for _, n := range list.noEscape {
		if !slices.Contains(list.calls, n) {
			return nil, fmt.Errorf("calls of %s: noEscape names %s, which is not in its calls", key, n)
		}
		quiet[n] = true
	}

	// The context helpers CGX_ENTER uses, from the driver's model.
	var entries []*layerEntry
	dg := &coreGen{m: drv, pkg: "driver"}
	for _, name := range []string{"cuCtxGetCurrent", "cuCtxSetCurrent"} {
		f := findFunc(drv, name)
		if f == nil {
			return nil, fmt.Errorf("calls of %s: the driver headers lack %s", key, name)
		}
		e := &layerEntry{m: drv, g: dg, f: f}
		for _, p := range f.params {
			cp, err := dg.param(&coreCall{name: name}, p, false)
			if err != nil {
				return nil, err
			}
			e.params = append(e.params, cp)
		}
		entries = append(entries, e)
	}
	seen := map[string]bool{}
	for _, name := range list.calls {
		if seen[name] {
			return nil, fmt.Errorf("calls of %s: %s is listed twice", key, name)
		}
		seen[name] = true
		f, ok := funcs[name]
		if !ok {
			return nil, fmt.Errorf("calls of %s: %s is no function of %s (use the C API name the bindings' Functions list, such as cublasSgemm)", key, name, strings.Join(list.libs, ", "))
		}
		lib := libOf[name]
		m, g := models[lib], gens[lib]
		if !f.retIsStatus || strings.HasPrefix(f.retC, "struct") {
			return nil, fmt.Errorf("calls of %s: %s does not return %s", key, name, m.cfg.resultType)
		}
		if _, ok := m.cfg.logFuncs[name]; ok {
			return nil, fmt.Errorf("calls of %s: %s: the bindings add the library's log to its error, which the generated call cannot", key, name)
		}
		e := &layerEntry{m: m, g: g, f: f, shim: true}
		if quiet[name] {
			e.flags = noEscape | noCallback
		}
		renamed := false
		for _, p := range f.params {
			if p.kind == pkStrings {
				return nil, fmt.Errorf("calls of %s: %s: parameter %s: an array of strings is not supported", key, name, p.cname)
			}
			cp, err := g.param(&coreCall{name: name, flags: inCtx}, p, false)
			if err != nil {
				return nil, fmt.Errorf("calls of %s: %v", key, err)
			}
			renamed = renamed || cp.name != p.goName
			e.params = append(e.params, cp)
		}
		if renamed && len(f.checks) > 0 {
			return nil, fmt.Errorf("calls of %s: %s: a renamed parameter in a function with count checks", key, name)
		}
		entries = append(entries, e)
	}
	include, err := cgxInclude(key)
	if err != nil {
		return nil, err
	}
	text := "Code generated by `go run ./internal/bindgen -calls " + key + "` from NVIDIA's headers " + headerList(drv, list, models) + "; DO NOT EDIT."
	tableC := "cgx_" + pkg + "_fn"
	shimName := func(e *layerEntry) string { return "cgx_" + pkg + "_" + e.f.cname }

	// The header.
	var h bytes.Buffer
	guard := "CUDAGO_" + strings.ToUpper(strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(key)) + "_CALLS_GEN_H"
	fmt.Fprintf(&h, "/* %s */\n\n/* Package %s's library calls (layerCalls[%q] in internal/bindgen/config.go);\n   internal/cgx/cgx.h says what is here. */\n", text, pkg, key)
	fmt.Fprintf(&h, "#ifndef %s\n#define %s\n%s#define CGX_TABLE %s\n\n", guard, guard, include, tableC)
	h.WriteString("/* What CGX_CALL keeps a status in: wide enough for every library's. */\ntypedef long long cgx_result;\n\n")
	var structs []string
	for _, lib := range list.libs {
		for _, s := range gens[lib].cstructs {
			if !slices.Contains(structs, s) {
				structs = append(structs, s)
				h.WriteString("/* " + lib + "'s C struct of that layout, as its shims pass it. */\n")
				h.WriteString(models[lib].cstructs[s])
				h.WriteString("\n")
			}
		}
	}
	h.WriteString("/* The entry points, by index. */\nenum {\n")
	for _, e := range entries {
		fmt.Fprintf(&h, "\tCGX_%s,\n", e.f.cname)
	}
	fmt.Fprintf(&h, "\tCGX_N\n};\nextern void *%s[CGX_N];\n\n", tableC)
	h.WriteString("/* Their C types: handles are uintptr_t, other pointers void *. */\n")
	for _, e := range entries {
		fnTypedef(&h, e.f.retC, e.f.cname, e.params)
	}
	h.WriteString("\n/* The shims. */\n")
	var c bytes.Buffer
	fmt.Fprintf(&c, "/* %s */\n\n#include %q\n\nvoid *%s[CGX_N];\n", text, callsHFile, tableC)
	for _, e := range entries {
		if !e.shim {
			continue
		}
		ps := []string{"uintptr_t ctx"}
		var args []string
		for _, p := range e.params {
			ps = append(ps, cDecl(p.shimC, p.name))
			args = append(args, p.name)
		}
		proto := fmt.Sprintf("cg_ret %s(%s)", shimName(e), strings.Join(ps, ", "))
		fmt.Fprintf(&h, "%s;\n", proto)
		fmt.Fprintf(&c, "\n%s {\n\tCGX_ENTER_LIB(ctx);\n\tCGX_CALL(%s);\n\treturn 0;\n}\n", proto, strings.Join(append([]string{e.f.cname}, args...), ", "))
	}
	h.WriteString("\n#endif\n")

	// The Go side.
	var body bytes.Buffer
	fmt.Fprintf(&body, "// cgx.Missing is CG_MISSING.\nvar _ = [1]struct{}{}[C.CG_MISSING-cgx.Missing]\n\n")
	body.WriteString("// The bindings packages whose entry points the table holds.\nvar (\n")
	for _, lib := range append([]string{"driver"}, list.libs...) {
		fmt.Fprintf(&body, "\tcgx%s = cgx.NewLib(%q, %s.Proc, %s.StatusError)\n", exportName(lib), libFile(lib), lib, lib)
	}
	body.WriteString(")\n\n")
	fmt.Fprintf(&body, `// cgxCalls fills the C table %s (by CGX_ index) on first use, with
// the entry points the bindings packages resolve, and makes the shims'
// errors: the bindings functions' own.
var cgxCalls = cgx.NewTable(unsafe.Slice(&C.%s[0], C.CGX_N), (&[C.CGX_N]cgx.Entry{
`, tableC, tableC)
	for _, e := range entries {
		fmt.Fprintf(&body, "\t{Name: %q, Lib: cgx%s},\n", e.f.cname, exportName(e.m.cfg.name))
	}
	body.WriteString("})[:])\n")
	for _, e := range entries {
		if !e.shim {
			continue
		}
		emitLayerCall(&body, e, shimName(e))
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n\npackage %s\n\n/*\n#include %q\n", text, pkg, callsHFile)
	var marks []string
	for _, flag := range []struct {
		f    coreFlags
		name string
	}{{noEscape, "noescape"}, {noCallback, "nocallback"}} {
		for _, e := range entries {
			if e.flags&flag.f != 0 {
				marks = append(marks, fmt.Sprintf("#cgo %s %s\n", flag.name, shimName(e)))
			}
		}
	}
	if len(marks) > 0 {
		b.WriteString("\n" + strings.Join(marks, ""))
	}
	b.WriteString("*/\nimport \"C\"\n\nimport (\n\t\"unsafe\"\n\n")
	imports := []string{"github.com/cudago/cudago/internal/cgx"}
	for _, lib := range append([]string{"driver"}, list.libs...) {
		imports = append(imports, "github.com/cudago/cudago/bindings/"+lib)
	}
	sort.Strings(imports)
	for _, im := range imports {
		fmt.Fprintf(&b, "\t%q\n", im)
	}
	b.WriteString(")\n\n")
	b.Write(body.Bytes())
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %v\n%s", callsGoFile, err, b.Bytes())
	}
	return map[string][]byte{callsGoFile: src, callsHFile: h.Bytes(), callsCFile: c.Bytes()}, nil
}

// findFunc returns m's function with C API name name, or nil.
func findFunc(m *model, name string) *funcDef {
	for _, f := range m.funcs {
		if f.cname == name {
			return f
		}
	}
	return nil
}

// headerList names the primary headers of the driver and the libraries.
func headerList(drv *model, list *callList, models map[string]*model) string {
	var hs []string
	for _, m := range append([]*model{drv}, func() []*model {
		var ms []*model
		for _, lib := range list.libs {
			ms = append(ms, models[lib])
		}
		return ms
	}()...) {
		for _, h := range append([]header{m.cfg.primary}, m.cfg.also...) {
			hs = append(hs, h.version+"/"+h.file)
		}
	}
	return strings.Join(hs, ", ")
}

// callName is the Go name of a library call: the library's C prefix and
// the bindings' Go name (cublasSgemm, cublasLtMatmul, curandGenerateUniform).
func callName(e *layerEntry) string {
	return e.m.cfg.funcPrefix[0] + e.f.goName
}

// emitLayerCall writes the Go function of one library call.
func emitLayerCall(b *bytes.Buffer, e *layerEntry, shim string) {
	lib := e.m.cfg.name
	ins := []string{"ctx driver.Context"}
	args := []string{"C.uintptr_t(ctx)"}
	var outs []string
	for _, p := range e.params {
		if p.out {
			outs = append(outs, p.name+" "+p.goType)
		} else {
			ins = append(ins, p.name+" "+p.goType)
		}
		args = append(args, p.arg)
	}
	outs = append(outs, "err error")
	ref := lib + "." + e.f.goName
	decl := ""
	if e.f.decl != e.f.cname {
		decl = " (" + e.f.decl + ")"
	}
	b.WriteString("\n")
	comment(b, wrap(fmt.Sprintf("%s is %s%s called in context ctx: one cgo call makes ctx current, if it is not, and calls the entry point that package %s resolves; a ctx of 0 leaves the thread's current context as it is. Its results and errors are those of %s, and a *driver.Error where ctx cannot be made current.",
		callName(e), ref, decl, lib, ref), 76))
	fmt.Fprintf(b, "func %s(%s) (%s) {\n", callName(e), strings.Join(ins, ", "), strings.Join(outs, ", "))
	e.m.emitChecksAs(b, e.f, "cgx.CountError")
	b.WriteString("\tcgxCalls.Load()\n")
	for _, p := range e.params {
		b.WriteString(p.pre)
	}
	fmt.Fprintf(b, "\terr = cgxCalls.Err(uint64(C.%s(%s)))\n", shim, strings.Join(args, ", "))
	for _, p := range e.params {
		b.WriteString(p.post)
	}
	b.WriteString("\treturn\n}\n")
}

// wrap breaks text into lines of at most width bytes, between words.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}
