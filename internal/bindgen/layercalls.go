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

	"modernc.org/cc/v4"
)

// The packages over the math libraries (blas, rng, fft, sparse, solver)
// call the libraries as core calls the driver: in a context, which CUDA
// keeps per OS thread, made current within the same cgo call. With -calls
// DIR, bindgen writes into package DIR, from the //cudago: lines of its Go
// files (calls.go by convention; calllist.go reads them):
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
//
// A call returns its library's status, or (cuFile's cuFileRead, ...) an
// integer, which the shim stores through an extra pointer, or nothing. A
// status that is a struct (cuFile's CUfileError_t, two codes) is packed
// into the cg_ret's 32 bits by a function the header defines
// (cgx_pack_<lib>), which the bindings' packedStatus function unpacks.

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
	// errno lists calls that return an integer and report a failure as -1
	// with errno set (cuFileRead, cuFileWrite): the shim clears errno
	// before the call and cgo reads it after, and the generated function
	// returns it as err (a syscall.Errno) when the call returned -1.
	errno []string
	// unchecked lists calls whose untyped pointer inputs (void *, pointers
	// to structs) are device addresses or host memory holding no Go
	// pointer: the shim takes them as unsigned char *, so cgo does not
	// check each for Go pointers (cgoCheckPointer), a fifth of the Go side
	// of a small cublasLtMatmul. Outputs stay checked, and a call with
	// another untyped pointer input (an array of pointers) is refused.
	unchecked []string
}

// The files -calls writes.
const (
	callsGoFile = "calls_gen.go"
	callsHFile  = "calls_gen.h"
	callsCFile  = "calls_gen.c"
)

// generateCalls writes the calls of the package in folder dir, listed in
// its //cudago: lines (calllist.go), into out.
func generateCalls(dir, out string, load loader) error {
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
	list, err := readCallList(dir)
	if err != nil {
		return fmt.Errorf("-calls %s: %v", dir, err)
	}
	models := map[string]*model{}
	for _, lib := range append([]string{"driver"}, list.libs...) {
		if _, ok := configs[lib]; !ok {
			return fmt.Errorf("-calls %s: unknown library %q (want one of %s)", key, lib, libNames())
		}
		if models[lib], err = load(lib); err != nil {
			return err
		}
	}
	files, err := emitCalls(key, list, models)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
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
	ret    retKind
	errno  bool // the call reports -1 with errno (callList.errno)
}

// retKind is what a library call returns.
type retKind int

const (
	retStatus       retKind = iota // the library's status, an integer
	retPackedStatus                // a struct status, packed by cgx_pack_<lib>
	retInt                         // an integer result, stored through ret_
	retVoid                        // nothing
)

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
		"cgx": true, "cgxCalls": true, "driver": true, "ret": true, "ret_": true, "e_": true, "s_": true}
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
			return nil, fmt.Errorf("calls of %s: library %s is the driver, whose calls are core's (core/calls.go)", key, lib)
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
	withErrno := map[string]bool{}
	for _, n := range list.errno {
		if !slices.Contains(list.calls, n) {
			return nil, fmt.Errorf("calls of %s: errno names %s, which is not in its calls", key, n)
		}
		withErrno[n] = true
	}
	raw := map[string]bool{}
	for _, n := range list.unchecked {
		if !slices.Contains(list.calls, n) {
			return nil, fmt.Errorf("calls of %s: unchecked names %s, which is not in its calls", key, n)
		}
		raw[n] = true
	}
	packed := map[string]bool{} // libraries whose status is a struct, packed into 32 bits
	for _, lib := range list.libs {
		if m := models[lib]; m != nil && m.cfg.packedStatus != "" {
			packed[lib] = true
		}
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
		rk, err := returnKind(m, f)
		if err != nil {
			return nil, fmt.Errorf("calls of %s: %v", key, err)
		}
		if withErrno[name] && rk != retInt {
			return nil, fmt.Errorf("calls of %s: errno names %s, which does not return an integer", key, name)
		}
		if _, ok := m.cfg.logFuncs[name]; ok {
			return nil, fmt.Errorf("calls of %s: %s: the bindings add the library's log to its error, which the generated call cannot", key, name)
		}
		e := &layerEntry{m: m, g: g, f: f, shim: true, ret: rk, errno: withErrno[name]}
		if quiet[name] {
			e.flags = noEscape | noCallback
		}
		flags := inCtx
		if raw[name] {
			flags |= unchecked
		}
		renamed := false
		for _, p := range f.params {
			if p.kind == pkStrings {
				return nil, fmt.Errorf("calls of %s: %s: parameter %s: an array of strings is not supported", key, name, p.cname)
			}
			cp, err := g.param(&coreCall{name: name, flags: flags}, p, false)
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
	fmt.Fprintf(&h, "/* %s */\n\n/* Package %s's library calls (the //cudago: lines of %s/calls.go);\n   internal/cgx/cgx.h says what is here. */\n", text, pkg, key)
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
	for _, lib := range list.libs {
		if packed[lib] {
			h.WriteString(packStatusC(models[lib]))
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
	fmt.Fprintf(&c, "/* %s */\n\n", text)
	if len(list.errno) > 0 {
		c.WriteString("#include <errno.h>\n")
	}
	fmt.Fprintf(&c, "#include %q\n\nvoid *%s[CGX_N];\n", callsHFile, tableC)
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
		if e.ret == retInt {
			ps = append(ps, cDecl(e.f.retC+" *", "ret_"))
		}
		proto := fmt.Sprintf("cg_ret %s(%s)", shimName(e), strings.Join(ps, ", "))
		fmt.Fprintf(&h, "%s;\n", proto)
		fmt.Fprintf(&c, "\n%s {\n\tCGX_ENTER_LIB(ctx);\n%s\treturn 0;\n}\n", proto, shimCall(e, args))
	}
	h.WriteString("\n#endif\n")

	// The Go side.
	var body bytes.Buffer
	fmt.Fprintf(&body, "// cgx.Missing is CG_MISSING.\nvar _ = [1]struct{}{}[C.CG_MISSING-cgx.Missing]\n\n")
	body.WriteString("// The bindings packages whose entry points the table holds.\nvar (\n")
	for _, lib := range append([]string{"driver"}, list.libs...) {
		statusErr := "StatusError"
		if packed[lib] {
			statusErr = models[lib].cfg.packedStatus
		}
		fmt.Fprintf(&body, "\tcgx%s = cgx.NewLib(%q, %s.Proc, %s.%s)\n", exportName(lib), libFile(lib), lib, lib, statusErr)
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
	if e.ret == retInt {
		outs = append(outs, "ret "+e.f.retGo)
		args = append(args, fmt.Sprintf("(*%s)(unsafe.Pointer(&ret))", cgoType(e.f.retC)))
	}
	outs = append(outs, "err error")
	ref := lib + "." + e.f.goName
	decl := ""
	if e.f.decl != e.f.cname {
		decl = " (" + e.f.decl + ")"
	}
	doc := fmt.Sprintf("%s is %s%s called in context ctx: one cgo call makes ctx current, if it is not, and calls the entry point that package %s resolves; a ctx of 0 leaves the thread's current context as it is. Its results and errors are those of %s, and a *driver.Error where ctx cannot be made current.",
		callName(e), ref, decl, lib, ref)
	if e.errno {
		doc += " When it returns -1, err is the errno it set (a syscall.Errno), if any."
	}
	b.WriteString("\n")
	comment(b, wrap(doc, 76))
	fmt.Fprintf(b, "func %s(%s) (%s) {\n", callName(e), strings.Join(ins, ", "), strings.Join(outs, ", "))
	e.m.emitChecksAs(b, e.f, "cgx.CountError")
	b.WriteString("\tcgxCalls.Load()\n")
	for _, p := range e.params {
		b.WriteString(p.pre)
	}
	if e.errno {
		fmt.Fprintf(b, "\tr_, e_ := C.%s(%s)\n\terr = cgxCalls.Err(uint64(r_))\n", shim, strings.Join(args, ", "))
		b.WriteString("\tif err == nil && ret == -1 && e_ != nil {\n\t\terr = e_\n\t}\n")
	} else {
		fmt.Fprintf(b, "\terr = cgxCalls.Err(uint64(C.%s(%s)))\n", shim, strings.Join(args, ", "))
	}
	for _, p := range e.params {
		b.WriteString(p.post)
	}
	b.WriteString("\treturn\n}\n")
}

// returnKind says how a generated call returns what f returns: the
// library's status, a struct status packed by the header's cgx_pack_<lib>
// (which needs the library's packedStatus), an integer, or nothing.
// Anything else (a string, a pointer, another struct) is refused.
func returnKind(m *model, f *funcDef) (retKind, error) {
	switch {
	case f.retIsStatus && !strings.HasPrefix(f.retC, "struct"):
		return retStatus, nil
	case f.retIsStatus:
		if m.cfg.packedStatus == "" {
			return 0, fmt.Errorf("%s returns the struct %s, and library %s has no packedStatus to unpack it", f.cname, m.cfg.resultType, m.cfg.name)
		}
		if err := packableStatus(f.ret); err != nil {
			return 0, fmt.Errorf("%s returns %s: %v", f.cname, m.cfg.resultType, err)
		}
		return retPackedStatus, nil
	case f.ret.Kind() == cc.Void:
		return retVoid, nil
	case f.retGo != "" && f.retGo != "string" && isIntegerKind(f.ret.Kind()):
		return retInt, nil
	}
	return 0, fmt.Errorf("%s returns %s, not %s, an integer or nothing, which a generated call cannot return", f.cname, f.retC, m.cfg.resultType)
}

func isIntegerKind(k cc.Kind) bool {
	switch k {
	case cc.Char, cc.SChar, cc.UChar, cc.Short, cc.UShort, cc.Int, cc.UInt, cc.Long, cc.ULong, cc.LongLong, cc.ULongLong, cc.Enum:
		return true
	}
	return false
}

// packableStatus checks that a struct status is two 32-bit codes, which
// cgx_pack_<lib> fits into a cg_ret's 32 bits.
func packableStatus(t cc.Type) error {
	type fielder interface {
		NumFields() int
		FieldByIndex(int) *cc.Field
	}
	ft, ok := t.(fielder)
	if !ok || ft.NumFields() != 2 {
		return fmt.Errorf("a struct status must hold two 32-bit codes")
	}
	for i := range 2 {
		f := ft.FieldByIndex(i).Type()
		if !isIntegerKind(f.Kind()) || f.Size() != 4 {
			return fmt.Errorf("a struct status must hold two 32-bit codes; field %d is %v", i, f)
		}
	}
	return nil
}

// packStatusC is the C that a header needs for library m's struct status:
// its definition (the bindings' layout) and cgx_pack_<lib>, which packs it
// as m's packedStatus function unpacks it.
func packStatusC(m *model) string {
	var def, name string
	for _, f := range m.funcs {
		if f.retIsStatus && strings.HasPrefix(f.retC, "struct") {
			name = f.retC
			def = m.cstructs[name]
			break
		}
	}
	if name == "" {
		return ""
	}
	return fmt.Sprintf(`/* The status of %s, %s, is a struct of two codes: the shims pack a
   failed one into a cg_ret's 32 bits, the first code in the low 16 bits and
   the second in the 15 above (each saturated, so never CG_MISSING), and
   %s.%s unpacks them. */
%sstatic inline unsigned cgx_pack_%s(%s s) {
	unsigned lo = s.f0 > 0xffffu ? 0xffffu : (unsigned)s.f0;
	unsigned hi = s.f1 > 0x7ffeu ? 0x7ffeu : (unsigned)s.f1;
	return lo | hi << 16;
}

`, m.cfg.name, m.cfg.resultType, m.cfg.name, m.cfg.packedStatus, def, m.cfg.name, name)
}

// shimCall is the body of a shim after CGX_ENTER_LIB: the call through the
// table, as CGX_CALL makes it for a status, and for the other returns the
// same lookup written out.
func shimCall(e *layerEntry, args []string) string {
	name := e.f.cname
	call := fmt.Sprintf("((cgx_%s_t)f_)(%s)", name, strings.Join(args, ", "))
	lookup := fmt.Sprintf("\tvoid *f_ = CGX_TABLE[CGX_%s];\n\tif (!f_) return CG_RET(CGX_%s, CG_MISSING);\n", name, name)
	switch e.ret {
	case retPackedStatus:
		return lookup + fmt.Sprintf("\t%s s_ = %s;\n\tif (s_.f0 || s_.f1) return CG_RET(CGX_%s, cgx_pack_%s(s_));\n", e.f.retC, call, name, e.m.cfg.name)
	case retInt:
		clear := ""
		if e.errno {
			clear = "\terrno = 0;\n"
		}
		return lookup + clear + fmt.Sprintf("\t*ret_ = %s;\n", call)
	case retVoid:
		return lookup + fmt.Sprintf("\t%s;\n", call)
	}
	return fmt.Sprintf("\tCGX_CALL(%s);\n", strings.Join(append([]string{name}, args...), ", "))
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
