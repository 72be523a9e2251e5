package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"modernc.org/cc/v4"
)

// Package core calls the driver through its own C layer, because CUDA's
// current context belongs to an OS thread: a call that needs a context
// makes it current and acts within one C call. With -core, bindgen writes
// that layer into package core, from core's //cudago: lines (calls.go;
// calllist.go reads them into a coreConfig):
//
//   - drivercalls_gen.h: the table of entry points (cgx_fn, indexed by
//     CGX_<name>), their C types (cgx_<name>_t), the header's structs and
//     constants core's hand-written C uses (mirrors whose layout is
//     checked by _Static_assert against the header's), the CGX_CALL and
//     CGX_ENTER helpers, and the shims' prototypes;
//   - drivercalls_gen.c: one shim per call, cg_ret cgx_<name>([uintptr_t
//     ctx,] params...), that makes ctx current first when the call needs
//     a context;
//   - drivercalls_gen.go: the table's names, its loader (through
//     driver.Proc, with an older cuGetProcAddress version as fallback),
//     and one unexported Go function per shim, named like the C API
//     (cuStreamSynchronize), typed with bindings/driver's types, output
//     parameters turned into results as in the bindings.
//
// A shim returns 0, or the CGX_ index of the failing entry point in the
// high 32 bits and its CUresult (CG_MISSING when it was not resolved) in
// the low 32 bits; core's cerr turns that into a *driver.Error.

// coreFlags say how a core call is generated.
type coreFlags uint8

const (
	// inCtx: the call acts in a context, which the shim makes current.
	inCtx coreFlags = 1 << iota
	// noEscape: #cgo noescape, the driver keeps no pointer it is given.
	noEscape
	// noCallback: #cgo nocallback, the call never calls back into Go. With
	// noEscape it lets the Go function keep its output variables on the
	// stack: cgo moves them to the heap unless both are set.
	noCallback
	// cOnly: only core's hand-written C calls it; a table entry without a
	// shim or a Go function.
	cOnly
	// unchecked: untyped pointer inputs cross as unsigned char *, which
	// cgo does not check for Go pointers (callList.unchecked).
	unchecked
)

// coreCall is one driver function package core calls.
type coreCall struct {
	name  string // C API name, as bindings/driver lists it: cuMemAlloc
	flags coreFlags
	// outs names pointer parameters that are outputs although the
	// header's doc does not say so: they become results.
	outs []string
	// fallback is an older cuGetProcAddress version (2000) to resolve the
	// entry point at where the driver lacks the header's revision; the
	// C signature must be the same.
	fallback int
}

// coreConfig is what package core takes from the driver's header.
type coreConfig struct {
	calls   []coreCall
	consts  []string // enumerators and macros, as #defines
	structs []string // typedef names mirrored in C (by-value parameters are too)
}

// The files -core writes.
const (
	coreGoFile = "drivercalls_gen.go"
	coreHFile  = "drivercalls_gen.h"
	coreCFile  = "drivercalls_gen.c"
)

// generateCore writes package core's calls of library lib (the driver),
// listed in the //cudago: lines of folder dir (calllist.go), into out.
func generateCore(lib, dir, out string, load loader) error {
	list, err := readCoreList(dir)
	if err != nil {
		return err
	}
	m, err := load(lib)
	if err != nil {
		return err
	}
	cfg := m.cfg
	if !cfg.procAddr {
		return fmt.Errorf("-core: library %s is not the driver, whose calls core makes", cfg.name)
	}
	files, n, err := m.emitCore(list)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("bindgen %s -core: %d entry points, %d generated calls\n", cfg.name, len(list.calls), n)
	return nil
}

// coreParam is one parameter of a generated call.
type coreParam struct {
	p       *paramDef
	name    string // in Go and C
	out     bool
	goType  string // of the Go parameter or result, qualified
	fnC     string // in the entry point's C type
	shimC   string // in the shim
	arg     string // Go expression passed to the shim
	pre     string // Go statements before the call
	post    string // after it
	cstruct string // the mirror of a struct passed by value
}

type coreGen struct {
	m       *model
	cfg     *coreConfig
	byName  map[string]*funcDef
	mirrors *mirrorGen
	usesDL  bool
	// For the library calls of a layer package (layercalls.go): the Go
	// package that qualifies the bindings' types ("" is driver), the names
	// a parameter must not take (instead of goReserved), and the C structs
	// passed by value (the bindings' own definitions instead of core's
	// mirrors). Their C strings come from package cgx, not dl, which
	// cuSPARSE's gtsv calls name a parameter.
	pkg      string
	reserved map[string]bool
	cstructs []string
}

// emitCore returns the three files and the number of generated calls.
func (m *model) emitCore(cfg *coreConfig) (map[string][]byte, int, error) {
	setGenLines(m.cfg, true)
	g := &coreGen{m: m, cfg: cfg, byName: map[string]*funcDef{}}
	for _, f := range m.funcs {
		g.byName[f.cname] = f
	}
	g.mirrors = &mirrorGen{m: m, done: map[string]bool{}, ptr: map[string]bool{}}
	for _, s := range cfg.structs {
		g.mirrors.ptr[s] = true
	}
	type entry struct {
		c      *coreCall
		f      *funcDef
		params []*coreParam
	}
	var entries []*entry
	seen := map[string]bool{}
	needCtx := false
	for i := range cfg.calls {
		c := &cfg.calls[i]
		if seen[c.name] {
			return nil, 0, fmt.Errorf("core call %s is listed twice", c.name)
		}
		seen[c.name] = true
		f, ok := g.byName[c.name]
		if !ok {
			return nil, 0, fmt.Errorf("core call %s: no such function in the %s headers (use the API name bindings/driver lists, such as cuMemAlloc)", c.name, m.cfg.name)
		}
		if !f.retIsStatus {
			return nil, 0, fmt.Errorf("core call %s does not return %s", c.name, m.cfg.resultType)
		}
		if c.flags&cOnly != 0 && c.flags&^cOnly != 0 {
			return nil, 0, fmt.Errorf("core call %s: cOnly takes no other flag", c.name)
		}
		needCtx = needCtx || c.flags&inCtx != 0
		e := &entry{c: c, f: f}
		outs := map[string]bool{}
		for _, o := range c.outs {
			outs[o] = true
		}
		for _, p := range f.params {
			cp, err := g.param(c, p, outs[p.cname])
			if err != nil {
				return nil, 0, err
			}
			delete(outs, p.cname)
			e.params = append(e.params, cp)
		}
		for o := range outs {
			return nil, 0, fmt.Errorf("core call %s: no pointer parameter %s to make an output", c.name, o)
		}
		entries = append(entries, e)
	}
	if needCtx && (!seen["cuCtxGetCurrent"] || !seen["cuCtxSetCurrent"]) {
		return nil, 0, fmt.Errorf("core calls in a context need cuCtxGetCurrent and cuCtxSetCurrent in the list")
	}
	for _, s := range cfg.structs {
		if err := g.mirrors.define(s); err != nil {
			return nil, 0, err
		}
	}
	consts, err := g.consts()
	if err != nil {
		return nil, 0, err
	}
	retC := entries[0].f.retC
	include, err := cgxInclude("core")
	if err != nil {
		return nil, 0, err
	}

	// The header.
	var h bytes.Buffer
	h.WriteString(cGenLine)
	h.WriteString(`/* Package core's driver calls (the //cudago: lines of its calls.go);
   internal/cgx/cgx.h says what is here. */
#ifndef CUDAGO_CORE_DRIVERCALLS_GEN_H
#define CUDAGO_CORE_DRIVERCALLS_GEN_H
`)
	h.WriteString(include)
	h.WriteString("#define CGX_TABLE cgx_fn\n\n")
	fmt.Fprintf(&h, "typedef %s cgx_result; /* %s */\n", retC, m.cfg.resultType)
	fmt.Fprintf(&h, "typedef %s cg_devptr; /* CUdeviceptr */\n\n", g.devptrC())
	if len(consts) > 0 {
		h.WriteString("/* Constants of the header. */\n")
		for _, c := range consts {
			h.WriteString(c)
		}
		h.WriteString("\n")
	}
	if len(g.mirrors.order) > 0 {
		h.WriteString("/* Structs of the header, from primitive types (handles are uintptr_t),\n   with its layout. */\n")
		for _, n := range g.mirrors.order {
			fmt.Fprintf(&h, "typedef %s cgx_%s cgx_%s;\n", g.mirrors.kw[n], n, n)
		}
		h.WriteString("\n")
		for _, n := range g.mirrors.order {
			h.WriteString(g.mirrors.defs[n])
			h.WriteString("\n")
		}
	}
	h.WriteString("/* The entry points, by index. */\nenum {\n")
	for _, e := range entries {
		fmt.Fprintf(&h, "\tCGX_%s,\n", e.c.name)
	}
	h.WriteString("\tCGX_N\n};\nextern void *cgx_fn[CGX_N];\n\n")
	h.WriteString("/* Their C types: handles are uintptr_t, other pointers void *. */\n")
	for _, e := range entries {
		fnTypedef(&h, "cgx_result", e.c.name, e.params)
	}
	h.WriteString("/* The shims. */\n")
	var c bytes.Buffer
	c.WriteString(cGenLine)
	fmt.Fprintf(&c, "#include %q\n\nvoid *cgx_fn[CGX_N];\n", coreHFile)
	generated := 0
	for _, e := range entries {
		if e.c.flags&cOnly != 0 {
			continue
		}
		generated++
		var ps, args []string
		if e.c.flags&inCtx != 0 {
			ps = append(ps, "uintptr_t ctx")
		}
		for _, p := range e.params {
			ps = append(ps, cDecl(p.shimC, p.name))
			args = append(args, p.name)
		}
		if len(ps) == 0 {
			ps = []string{"void"}
		}
		proto := fmt.Sprintf("cg_ret cgx_%s(%s)", e.c.name, strings.Join(ps, ", "))
		fmt.Fprintf(&h, "%s;\n", proto)
		fmt.Fprintf(&c, "\n%s {\n", proto)
		if e.c.flags&inCtx != 0 {
			c.WriteString("\tCGX_ENTER(ctx);\n")
		}
		fmt.Fprintf(&c, "\tCGX_CALL(%s);\n\treturn 0;\n}\n", strings.Join(append([]string{e.c.name}, args...), ", "))
	}
	h.WriteString("\n#endif\n")

	// The Go side.
	var b bytes.Buffer
	b.WriteString(genLine)
	fmt.Fprintf(&b, "package core\n\n/*\n#include %q\n\n", coreHFile)
	for _, flag := range []struct {
		f    coreFlags
		name string
	}{{noEscape, "noescape"}, {noCallback, "nocallback"}} {
		for _, e := range entries {
			if e.c.flags&flag.f != 0 {
				fmt.Fprintf(&b, "#cgo %s cgx_%s\n", flag.name, e.c.name)
			}
		}
	}
	b.WriteString("*/\nimport \"C\"\n\nimport (\n\t\"unsafe\"\n\n\t\"github.com/cudago/cudago/bindings/driver\"\n")
	var body bytes.Buffer
	body.WriteString(`// driverCalls are the entries of the C table cgx_fn, by CGX_ index: the
// C API name bindings/driver resolves, and an older cuGetProcAddress
// version to try where the driver lacks the header's revision.
var driverCalls = [C.CGX_N]struct {
	name     string
	fallback int32
}{
`)
	for _, e := range entries {
		fmt.Fprintf(&body, "\t{%q, %d},\n", e.c.name, e.c.fallback)
	}
	body.WriteString(`}

`)
	for _, e := range entries {
		if e.c.flags&cOnly != 0 {
			continue
		}
		g.emitGoCall(&body, e.c, e.f, e.params)
	}
	if checks := g.mirrors.goChecks(); len(checks) > 0 {
		body.WriteString("\n// The C mirrors of the structs passed by value have their Go types' size.\nvar (\n")
		for _, s := range checks {
			body.WriteString(s)
		}
		body.WriteString(")\n")
	}
	if g.usesDL {
		b.WriteString("\t\"github.com/cudago/cudago/internal/dl\"\n")
	}
	b.WriteString(")\n\n")
	b.Write(body.Bytes())
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, 0, fmt.Errorf("formatting %s: %v\n%s", coreGoFile, err, b.Bytes())
	}
	return map[string][]byte{coreGoFile: src, coreHFile: h.Bytes(), coreCFile: c.Bytes()}, generated, nil
}

// cDecl declares name with C type t ("void *" -> "void *name").
func cDecl(t, name string) string {
	if strings.HasSuffix(t, "*") {
		return t + name
	}
	return t + " " + name
}

// devptrC is the C type of CUdeviceptr.
func (g *coreGen) devptrC() string {
	if dr := g.m.typedefs["CUdeviceptr"]; dr != nil {
		return g.m.cType(dr.Type())
	}
	return "unsigned long long"
}

// dl is the package whose CString the generated calls use.
func (g *coreGen) dl() string {
	if g.pkg != "" {
		return "cgx"
	}
	return "dl"
}

// goReserved are names a parameter must not take in a generated function:
// the context, the Go names the function uses, the locals of CGX_CALL.
var goReserved = map[string]bool{"ctx": true, "err": true, "driver": true, "unsafe": true, "dl": true, "C": true, "cerr": true, "f_": true, "r_": true, "e_": true}

func (g *coreGen) param(c *coreCall, p *paramDef, forceOut bool) (*coreParam, error) {
	cp := &coreParam{p: p, name: p.goName}
	reserved := goReserved
	if g.reserved != nil {
		reserved = g.reserved
	}
	for reserved[cp.name] && (cp.name != "ctx" || c.flags&inCtx != 0) {
		cp.name += "_"
	}
	cp.out = p.out || forceOut
	if forceOut && p.kind != pkPointer {
		return nil, fmt.Errorf("core call %s: parameter %s is not a pointer and cannot be an output", c.name, p.cname)
	}
	fail := func(what string) error {
		return fmt.Errorf("core call %s: parameter %s: %s is not supported", c.name, p.cname, what)
	}
	n := cp.name
	switch p.kind {
	case pkValue:
		cp.goType = g.qualify(p.goType)
		cp.fnC = g.m.shimParamC(p)
		cp.shimC = cp.fnC
		cp.arg = fmt.Sprintf("%s(%s)", cgoType(cp.shimC), n)
	case pkStruct:
		if g.pkg != "" {
			// The bindings' C struct of the same layout, as their shims pass it.
			cp.goType = g.qualify(p.goType)
			cp.fnC, cp.shimC = p.cType, p.cType
			cp.arg = fmt.Sprintf("*(*%s)(unsafe.Pointer(&%s))", cgoType(p.cType), n)
			if !slices.Contains(g.cstructs, p.cType) {
				g.cstructs = append(g.cstructs, p.cType)
			}
			break
		}
		td := p.ct.Typedef()
		if td == nil {
			return nil, fail("an untyped struct passed by value")
		}
		if err := g.mirrors.define(td.Name()); err != nil {
			return nil, err
		}
		g.mirrors.byValue(td.Name())
		cp.goType = g.qualify(p.goType)
		cp.fnC = "cgx_" + td.Name()
		cp.shimC = cp.fnC
		cp.arg = fmt.Sprintf("*(*C.cgx_%s)(unsafe.Pointer(&%s))", td.Name(), n)
	case pkString:
		if cp.out {
			return nil, fail("an output string parameter that is const")
		}
		cp.goType = "string"
		cp.fnC, cp.shimC = "const char *", "const char *"
		cp.pre = fmt.Sprintf("\t%s_c := %s.CString(%s)\n", n, g.dl(), n)
		cp.arg = fmt.Sprintf("(*C.char)(unsafe.Pointer(&%s_c[0]))", n)
		g.usesDL = true
	case pkStrings:
		return nil, fail("an array of strings")
	case pkPointer:
		el := p.ct.(*cc.PointerType).Elem()
		constEl := isConstType(el)
		cp.fnC = "void *"
		if constEl {
			cp.fnC = "const void *"
		}
		if cp.out && p.outGoType == "string" {
			// const char **: the driver's own string.
			cp.goType = "string"
			cp.shimC = "const char **"
			cp.pre = fmt.Sprintf("\tvar %s_c *C.char\n", n)
			cp.arg = fmt.Sprintf("&%s_c", n)
			cp.post = fmt.Sprintf("\t%s = C.GoString(%s_c)\n", n, n)
			break
		}
		if cp.out {
			ot := p.outGoType
			if forceOut && !p.out {
				ot = strings.TrimPrefix(p.goType, "*")
			}
			cp.goType = g.qualify(ot)
		} else {
			cp.goType = g.qualify(p.goType)
		}
		addr := n
		if cp.out {
			addr = "&" + n
		}
		// A pointer to a number or handle is typed, which spares cgo's
		// pointer check; others are void *.
		if et := g.pointee(el); et != "" {
			cp.shimC = et + " *"
			if constEl {
				cp.shimC = "const " + cp.shimC
			}
			cp.arg = fmt.Sprintf("(*%s)(unsafe.Pointer(%s))", cgoType(et), addr)
		} else if c.flags&unchecked != 0 && !cp.out {
			// What it points to holds no Go pointer (the call list says
			// so): typed, cgo skips its check. Only void and structs: an
			// array of pointers is where Go pointers would hide.
			if k := el.Kind(); k != cc.Void && k != cc.Struct {
				return nil, fail("an unchecked pointer to something other than void or a struct")
			}
			cp.shimC = "unsigned char *"
			if constEl {
				cp.shimC = "const " + cp.shimC
			}
			cp.arg = fmt.Sprintf("(*C.uchar)(unsafe.Pointer(%s))", addr)
		} else {
			cp.shimC = cp.fnC
			if cp.goType == "unsafe.Pointer" && !cp.out {
				cp.arg = n
			} else {
				cp.arg = fmt.Sprintf("unsafe.Pointer(%s)", addr)
			}
		}
	default:
		return nil, fail("this kind of parameter")
	}
	if cp.out && p.kind != pkPointer {
		return nil, fail("an output that is not a pointer")
	}
	return cp, nil
}

// pointee is the C type a shim gives the target of a pointer parameter:
// a number or a handle (uintptr_t); "" for anything else (void *).
func (g *coreGen) pointee(el cc.Type) string {
	switch el.Kind() {
	case cc.Ptr:
		if el.Typedef() != nil && g.m.goTypeOf[el.Typedef().Name()] != "" {
			return "uintptr_t" // a handle
		}
		return ""
	case cc.Void, cc.Struct, cc.Union, cc.Array, cc.Function:
		return ""
	}
	ct := g.m.cType(el)
	if cgoType(ct) == "C." {
		return ""
	}
	return ct
}

// qualify names the bindings package's types in Go type t: *Stream ->
// *driver.Stream (core), *cublas.Handle (a layer's cuBLAS calls).
func (g *coreGen) qualify(t string) string {
	if g.pkg == "" {
		return qualify(t)
	}
	return qualifyIn(t, g.pkg)
}

// qualify names bindings/driver's types in Go type t: *Stream -> *driver.Stream.
func qualify(t string) string { return qualifyIn(t, "driver") }

// qualifyIn names package pkg's types in Go type t. A type of another
// package (cublas.Status) or a predeclared one (complex64) stays as it is.
func qualifyIn(t, pkg string) string {
	prefix := ""
	for {
		switch {
		case strings.HasPrefix(t, "*"):
			prefix += "*"
			t = t[1:]
			continue
		case strings.HasPrefix(t, "["):
			i := strings.Index(t, "]")
			prefix += t[:i+1]
			t = t[i+1:]
			continue
		}
		break
	}
	if strings.Contains(t, ".") || t == "" || !unicode.IsUpper(rune(t[0])) {
		return prefix + t
	}
	return prefix + pkg + "." + t
}

func (g *coreGen) emitGoCall(b *bytes.Buffer, c *coreCall, f *funcDef, params []*coreParam) {
	var ins, outs, args []string
	if c.flags&inCtx != 0 {
		ins = append(ins, "ctx driver.Context")
		args = append(args, "C.uintptr_t(ctx)")
	}
	for _, p := range params {
		if p.out {
			outs = append(outs, p.name+" "+p.goType)
		} else {
			ins = append(ins, p.name+" "+p.goType)
		}
		args = append(args, p.arg)
	}
	doc := fmt.Sprintf("// %s calls %s", c.name, c.name)
	if f.decl != f.cname {
		doc += " (" + f.decl + ")"
	}
	if c.flags&inCtx != 0 {
		doc += " in context ctx"
	}
	fmt.Fprintf(b, "\n%s; see driver.%s.\n", doc, f.goName)
	call := fmt.Sprintf("C.cgx_%s(%s)", c.name, strings.Join(args, ", "))
	if len(outs) == 0 && !hasPre(params) {
		fmt.Fprintf(b, "func %s(%s) error {\n\treturn cerr(%s)\n}\n", c.name, strings.Join(ins, ", "), call)
		return
	}
	fmt.Fprintf(b, "func %s(%s) (%s) {\n", c.name, strings.Join(ins, ", "), strings.Join(append(outs, "err error"), ", "))
	for _, p := range params {
		b.WriteString(p.pre)
	}
	fmt.Fprintf(b, "\terr = cerr(%s)\n", call)
	for _, p := range params {
		b.WriteString(p.post)
	}
	b.WriteString("\treturn\n}\n")
}

func hasPre(params []*coreParam) bool {
	for _, p := range params {
		if p.pre != "" || p.post != "" {
			return true
		}
	}
	return false
}

// consts returns the configured constants as #defines.
func (g *coreGen) consts() ([]string, error) {
	vals := map[string]string{}
	for _, e := range g.m.enums {
		for _, c := range e.consts {
			vals[c.cname] = fmt.Sprint(c.value)
		}
	}
	for _, c := range g.m.consts {
		vals[c.cname] = c.value
	}
	var out []string
	for _, n := range g.cfg.consts {
		v, ok := vals[n]
		if !ok {
			return nil, fmt.Errorf("core constant %s: no such enumerator or integer macro in the headers", n)
		}
		out = append(out, fmt.Sprintf("#define %s %s\n", n, v))
	}
	return out, nil
}

// mirrorGen writes C definitions of header structs with the header's
// field names and layout, from primitive types.
type mirrorGen struct {
	m     *model
	done  map[string]bool
	ptr   map[string]bool // mirrored on request: pointers to them are typed
	order []string
	defs  map[string]string
	kw    map[string]string
	byVal []string // passed by value from Go: sizes checked in Go too
}

func (g *mirrorGen) byValue(name string) {
	for _, n := range g.byVal {
		if n == name {
			return
		}
	}
	g.byVal = append(g.byVal, name)
}

// define writes the mirror of typedef name, after those it embeds.
func (g *mirrorGen) define(name string) error {
	if g.done[name] {
		return nil
	}
	g.done[name] = true
	dr := g.m.typedefs[name]
	if dr == nil {
		return fmt.Errorf("core struct %s: no such typedef in the headers", name)
	}
	t := dr.Type()
	kw := "struct"
	switch t.Kind() {
	case cc.Struct:
	case cc.Union:
		kw = "union"
	default:
		return fmt.Errorf("core struct %s is not a struct or union", name)
	}
	if t.IsIncomplete() {
		return fmt.Errorf("core struct %s is incomplete in the headers", name)
	}
	body, err := g.fields(name, t, "\t")
	if err != nil {
		return err
	}
	if g.defs == nil {
		g.defs, g.kw = map[string]string{}, map[string]string{}
	}
	mn := "cgx_" + name
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s {\n%s};\n", kw, mn, body)
	fmt.Fprintf(&b, "_Static_assert(sizeof(%s) == %d && _Alignof(%s) == %d, \"%s: size or alignment differs from the header's\");\n", mn, t.Size(), mn, t.Align(), mn)
	type fielder interface {
		NumFields() int
		FieldByIndex(int) *cc.Field
	}
	ft := t.(fielder)
	for i := 0; i < ft.NumFields(); i++ {
		f := ft.FieldByIndex(i)
		if f.Name() == "" {
			continue
		}
		fmt.Fprintf(&b, "_Static_assert(offsetof(%s, %s) == %d, \"%s.%s: offset differs from the header's\");\n", mn, f.Name(), f.Offset(), mn, f.Name())
	}
	g.order = append(g.order, name)
	g.defs[name] = b.String()
	g.kw[name] = kw
	return nil
}

func (g *mirrorGen) fields(owner string, t cc.Type, indent string) (string, error) {
	type fielder interface {
		NumFields() int
		FieldByIndex(int) *cc.Field
	}
	ft := t.(fielder)
	var b strings.Builder
	for i := 0; i < ft.NumFields(); i++ {
		f := ft.FieldByIndex(i)
		if f.IsBitfield() {
			return "", fmt.Errorf("core struct %s: bit-field %s cannot be mirrored", owner, f.Name())
		}
		typ := f.Type()
		dims := ""
		for typ.Kind() == cc.Array {
			at := typ.(*cc.ArrayType)
			dims += fmt.Sprintf("[%d]", at.Len())
			typ = at.Elem()
		}
		ct, err := g.fieldType(owner, typ, indent)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s%s%s;\n", indent, cDecl(ct, f.Name()), dims)
	}
	return b.String(), nil
}

func (g *mirrorGen) fieldType(owner string, t cc.Type, indent string) (string, error) {
	switch t.Kind() {
	case cc.Struct, cc.Union:
		if td := t.Typedef(); td != nil && g.m.typedefs[td.Name()] != nil {
			if err := g.define(td.Name()); err != nil {
				return "", err
			}
			return "cgx_" + td.Name(), nil
		}
		kw := "struct"
		if t.Kind() == cc.Union {
			kw = "union"
		}
		body, err := g.fields(owner, t, indent+"\t")
		if err != nil {
			return "", err
		}
		return kw + " {\n" + body + indent + "}", nil
	case cc.Ptr:
		if t.Typedef() != nil {
			return "uintptr_t", nil // a handle or a function pointer
		}
		el := t.(*cc.PointerType).Elem()
		if td := el.Typedef(); td != nil && g.ptr[td.Name()] {
			return "cgx_" + td.Name() + " *", nil
		}
		return "void *", nil
	case cc.Function:
		return "", fmt.Errorf("core struct %s: a function member cannot be mirrored", owner)
	}
	return g.m.cType(t), nil
}

// goChecks are Go declarations that fail to compile unless each mirror
// passed by value has the size of its bindings/driver type.
func (g *mirrorGen) goChecks() []string {
	names := append([]string{}, g.byVal...)
	sort.Strings(names)
	var out []string
	for _, n := range names {
		goName := g.m.goTypeOf[n]
		if goName == "" {
			continue
		}
		out = append(out, fmt.Sprintf("\t_ = [1]struct{}{}[unsafe.Sizeof(C.cgx_%s{})-unsafe.Sizeof(driver.%s{})]\n", n, goName))
	}
	return out
}

// fnTypedef writes the C type of entry point name, cgx_<name>_t, which
// CGX_CALL casts the table's pointer to: handles are uintptr_t, other
// pointers void *.
func fnTypedef(h *bytes.Buffer, ret, name string, params []*coreParam) {
	var ps []string
	for _, p := range params {
		ps = append(ps, cDecl(p.fnC, p.name))
	}
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	fmt.Fprintf(h, "typedef %s (*cgx_%s_t)(%s);\n", ret, name, strings.Join(ps, ", "))
}
