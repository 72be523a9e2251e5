package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cudago/cudago/internal/cudaheaders"
	"github.com/cudago/cudago/internal/version"
	"modernc.org/cc/v4"
)

// unit is one parsed header.
type unit struct {
	hdr  header
	path string
	ast  *cc.AST
	// lines of every file read, for doc comments
	files map[string][]string
	// since is the version a function first declared here needs: the
	// CUDA version of the header, or the library's own (verMacro).
	since string
}

var ccConfig *cc.Config

func parseHeader(hs *cudaheaders.Set, cfg *libConfig, h header) (*unit, error) {
	if ccConfig == nil {
		c, err := cc.NewConfig(runtime.GOOS, runtime.GOARCH)
		if err != nil {
			return nil, fmt.Errorf("C front end: %v", err)
		}
		c.Header = true
		c.EvalAllMacros = true
		ccConfig = c
	}
	var path string
	var incs []string
	switch {
	case h.extra:
		// Extra declarations shipped with the generator (newer than the
		// headers read) include the primary header's folder.
		_, self, _, _ := runtime.Caller(0)
		path = filepath.Join(filepath.Dir(self), "extra", h.file)
		if d, ok := hs.Dir(cfg.primary.version, cfg.primary.file); ok {
			incs = []string{d}
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("extra header %s: %v", h.file, err)
		}
	case cfg.localHeaders && h.version == localVersion:
		// From the full 12.4 include tree, which has what it includes.
		d, ok := hs.Dir(localVersion, localMarker, h.file)
		if !ok {
			return nil, hs.Check(cudaheaders.Header{Version: localVersion, File: localMarker}, cudaheaders.Header{Version: localVersion, File: h.file})
		}
		path, incs = filepath.Join(d, h.file), []string{d}
	default:
		d, ok := hs.Dir(h.version, h.file)
		if !ok {
			return nil, hs.Check(cudaheaders.Header{Version: h.version, File: h.file})
		}
		path, incs = filepath.Join(d, h.file), []string{d}
	}
	var predef string
	if cfg.localHeaders {
		predef = localPredefined
		if h.version != localVersion || h.extra {
			// Last: only what the newer folder lacks (cuda_fp16.h,
			// cudalibxt.h in shared/cuda-headers/13.0) comes from 12.4.
			local, ok := hs.Dir(localVersion, localMarker)
			if !ok {
				return nil, hs.Check(cudaheaders.Header{Version: localVersion, File: localMarker})
			}
			incs = append(incs, local)
		}
	}
	c := *ccConfig
	c.IncludePaths = append(append([]string{}, ccConfig.IncludePaths...), incs...)
	c.SysIncludePaths = append(append([]string{}, ccConfig.SysIncludePaths...), incs...)
	srcs := []cc.Source{
		{Name: "<predefined>", Value: c.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: "<cudago>", Value: predef},
		{Name: path},
	}
	ast, err := cc.Translate(&c, srcs)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %v", path, err)
	}
	u := &unit{hdr: h, path: path, ast: ast, files: map[string][]string{}, since: h.version}
	if cfg.verMacro != "" && !h.extra {
		if u.since = u.versionFromMacros(cfg.verMacro); u.since == "" {
			return nil, fmt.Errorf("%s: no %s_MAJOR, _MINOR and _PATCH macros", path, cfg.verMacro)
		}
	}
	if cfg.libVersion != "" && !h.extra {
		u.since = cfg.libVersion
	}
	return u, nil
}

func (u *unit) lines(file string) []string {
	if l, ok := u.files[file]; ok {
		return l
	}
	b, _ := os.ReadFile(file)
	l := strings.Split(string(b), "\n")
	u.files[file] = l
	return l
}

// ---- the model ----

type enumConst struct {
	cname, goName, doc string
	value              int64
}

type enumDef struct {
	cname, goName, doc string
	goBase             string // int32 or uint32
	consts             []*enumConst
}

type fieldDef struct {
	cname, goName, goType, doc string
	offset                     int64
	synthetic                  bool // padding, not in C
}

type structDef struct {
	cname, goName, doc string // cname: the C type expression for the layout test ("" for anonymous)
	size, align        int64
	union              bool
	fields             []*fieldDef
	members            []*fieldDef // union members, exposed through accessors
	layoutPath         string      // C expression base for offsetof checks
}

type aliasDef struct {
	goName, target, doc, cname string
	concrete                   bool // a new named type, not an alias
}

type paramDef struct {
	cname, goName string
	ct            cc.Type
	goType        string // Go parameter type (after conversions)
	kind          paramKind
	cType         string // C type in the shim
	out           bool
	outGoType     string
}

type paramKind int

const (
	pkValue   paramKind = iota // passed as is (scalar, named type)
	pkString                   // const char* <- Go string
	pkStrings                  // const char* const* <- []string
	pkPointer                  // typed Go pointer or unsafe.Pointer
	pkStruct                   // struct by value
)

type funcDef struct {
	cname, goName, decl, doc string // cname: the API name; decl: as declared
	params                   []*paramDef
	ret                      cc.Type
	retC, retGo              string
	retIsStatus              bool
	syms                     []string
	since                    string // first CUDA version whose header declares it
	removed                  string // the primary header's version, when only older ones declare it
	procVersion              int    // cuGetProcAddress version (driver)
	index                    int
	ft                       *cc.FunctionType
	checks                   []*countCheck // count parameters checked against slices
}

// funcAlias is another C name of a generated function: the explicit
// revision (cuMemAdvise_v2) or a macro (cuGraphInstantiate).
type funcAlias struct {
	cname, goName string
	target        *funcDef
}

type constDef struct {
	cname, goName string
	value         string
}

type model struct {
	cfg         *libConfig
	enums       []*enumDef
	structs     []*structDef
	aliases     []*aliasDef
	funcs       []*funcDef
	funcAliases []*funcAlias
	consts      []*constDef
	cstructs    map[string]string // C struct definitions needed by the shims, by name
	cstructOr   []string
	names       map[string]string // Go identifier -> what claimed it
	goTypeOf    map[string]string // C typedef -> Go type name
	typedefs    map[string]*cc.Declarator
	baseSince   string                  // the oldest unit's since
	abiSkipped  []string                // older declarations left out for their ABI (abiCheck)
	usedForeign map[string]*foreignType // cfg.foreign entries the package uses, by C name
}

func (m *model) claim(goName, what string) string {
	if prev, ok := m.names[goName]; ok && prev != what {
		if os.Getenv("BINDGEN_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "clash: %s wanted by %s and %s\n", goName, prev, what)
		}
		n := 2
		for {
			cand := goName + "_" + strconv.Itoa(n)
			if _, ok := m.names[cand]; !ok {
				goName = cand
				break
			}
			n++
		}
	}
	m.names[goName] = what
	return goName
}

func (m *model) owned(file string) bool {
	base := filepath.Base(file)
	for _, f := range m.cfg.ownedFiles {
		if f == base {
			return true
		}
	}
	return false
}

// reserved names that the hand-written part of every package defines, and
// the lookups emitLookups writes.
var reserved = []string{"Error", "MissingFunctionError", "CountError", "Proc", "StatusError"}

func buildModel(cfg *libConfig, hs *cudaheaders.Set) (*model, error) {
	if err := hs.Check(cfg.needs()...); err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.name, err)
	}
	setGenLines(cfg, false)
	m := &model{cfg: cfg, names: map[string]string{}, goTypeOf: map[string]string{},
		typedefs: map[string]*cc.Declarator{}, cstructs: map[string]string{}}
	for _, r := range reserved {
		m.names[r] = "hand-written"
	}
	for _, f := range cfg.foreign {
		if f.goName != "" {
			m.names[f.goName] = "foreign type " + f.goName // one claim for all its C names
		}
	}
	prim, err := parseHeader(hs, cfg, cfg.primary)
	if err != nil {
		return nil, err
	}
	prims := []*unit{prim}
	for _, h := range cfg.also {
		u, err := parseHeader(hs, cfg, h)
		if err != nil {
			return nil, err
		}
		prims = append(prims, u)
	}
	var others []*unit
	m.baseSince = prim.since
	for _, h := range cfg.others {
		u, err := parseHeader(hs, cfg, h)
		if err != nil {
			return nil, err
		}
		others = append(others, u)
		if !h.extra && version.Less(u.since, m.baseSince) {
			m.baseSince = u.since
		}
	}
	// Functions get the plain names (cuMemcpy2D -> Memcpy2D); a type or
	// constant that would clash is named differently.
	for _, prim := range prims {
		declarations(prim, func(d *cc.Declaration, dr *cc.Declarator) {
			if dr == nil || dr.IsTypename() || !m.owned(dr.Position().Filename) || dr.IsStatic() || dr.IsInline() {
				return
			}
			if _, ok := dr.Type().(*cc.FunctionType); !ok {
				return
			}
			if cfg.skipped(dr.Name()) {
				return
			}
			api, _ := cfg.symbolCandidates(dr.Name())
			if cur := currentDecl(prim, api); cur != "" && cur != dr.Name() || cur == "" && api != dr.Name() && cfg.macroRevisions {
				return
			}
			name := exportName(stripPrefix(api, cfg.funcPrefix))
			if r, ok := cfg.rename[api]; ok {
				name = r
			}
			m.claim(name, "func "+api)
		})
	}
	for _, prim := range prims {
		define := func() {}
		if cfg.tagged {
			define = m.collectTagged(prim)
		}
		m.collectTypes(prim, "")
		define()
		m.collectConsts(prim)
	}
	for _, u := range others {
		if u.hdr.extra {
			m.collectTypes(u, u.path)
		}
	}
	// Functions are keyed by their API name. Where a header declares several
	// ABI revisions of one API (cuStreamGetCtx and cuStreamGetCtx_v2), the
	// one its macros select keeps the plain name and the others keep their
	// explicit names. Revisions only older headers declare are added too.
	byName := map[string]*funcDef{}
	byDecl := map[string]*funcDef{}
	all := append(append([]*unit{}, prims...), others...)
	var primTypes map[string]cc.Type
	if cfg.abiCheck {
		primTypes = primaryTypes(prim)
	}
	for _, u := range all {
		for _, f := range m.collectFuncs(u) {
			if cfg.abiCheck && !slices.Contains(prims, u) && !u.hdr.extra {
				v, err := version.Parse(cfg.primary.version)
				if err != nil {
					return nil, err
				}
				if !m.abiAccept(u, f, byName, byDecl, primTypes, v.Major()*1000+v.Minor()*10) {
					continue
				}
			}
			if prev, ok := byDecl[f.decl]; ok {
				// The same symbol under another API name in an older header.
				if version.Less(u.since, prev.since) {
					prev.since = u.since
				}
				continue
			}
			if prev, ok := byName[f.cname]; ok {
				if prev.decl == f.decl || !m.cfg.procAddr {
					// Libraries other than the driver keep one ABI per name;
					// older headers only add symbols to try.
					for _, s := range f.syms {
						if !contains(prev.syms, s) {
							prev.syms = append(prev.syms, s)
						}
					}
					if version.Less(u.since, prev.since) {
						prev.since = u.since
					}
					continue
				}
				// Another revision under the same API name: keep it by
				// its explicit name, unless that is taken too.
				if _, taken := byName[f.decl]; taken || f.decl == f.cname {
					continue
				}
				f.cname = f.decl
				f.goName = exportName(stripPrefix(f.decl, m.cfg.funcPrefix))
			}
			if !slices.Contains(prims, u) && !u.hdr.extra {
				f.doc = fmt.Sprintf("Declared by the CUDA %s header; the %s header no longer declares it.\n\n%s", u.hdr.version, cfg.primary.version, f.doc)
				f.removed = cfg.primary.version
			}
			byName[f.cname] = f
			byDecl[f.decl] = f
			m.funcs = append(m.funcs, f)
		}
	}
	for _, prim := range prims {
		m.aliasFuncs(prim, byName)
	}
	if cfg.procAddr {
		if err := m.procVersions(hs); err != nil {
			return nil, err
		}
	}
	if err := m.applySince(); err != nil {
		return nil, err
	}
	sort.Slice(m.funcs, func(i, j int) bool { return m.funcs[i].cname < m.funcs[j].cname })
	for i, f := range m.funcs {
		f.index = i
		f.goName = m.claim(f.goName, "func "+f.cname)
	}
	for _, a := range m.funcAliases {
		a.goName = m.claim(a.goName, "func "+a.cname)
	}
	return m, nil
}

// skipped reports whether the C function name is not to be generated.
func (c *libConfig) skipped(name string) bool {
	if c.skip[name] {
		return true
	}
	for _, p := range c.skipPrefix {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// applySince sets the configured versions of functions (cfg.since),
// which must be newer than the oldest header read and no newer than the
// first header that declares the function.
func (m *model) applySince() error {
	byName := map[string]*funcDef{}
	for _, f := range m.funcs {
		byName[f.cname] = f
	}
	var names []string
	for n := range m.cfg.since {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := m.cfg.since[n]
		f := byName[n]
		switch {
		case f == nil:
			return fmt.Errorf("since: %s is not a function of %s", n, m.cfg.name)
		case !version.Less(m.baseSince, v) || version.Less(f.since, v):
			return fmt.Errorf("since: %s %s is not after %s (the oldest header) and at most %s (the first that declares it)", n, v, m.baseSince, f.since)
		}
		f.since = v
	}
	return nil
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// declarations yields the file-scope declarators of a unit.
func declarations(u *unit, fn func(d *cc.Declaration, dr *cc.Declarator)) {
	for l := u.ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed.Case != cc.ExternalDeclarationDecl {
			continue
		}
		d := ed.Declaration
		if d.InitDeclaratorList == nil {
			fn(d, nil)
			continue
		}
		for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			fn(d, il.InitDeclarator.Declarator)
		}
	}
}

// plainDeclarator reports whether a typedef's declarator is its name
// alone: no pointer, array or function derivation.
func plainDeclarator(dr *cc.Declarator) bool {
	return dr.Pointer == nil && dr.DirectDeclarator != nil && dr.DirectDeclarator.Case == cc.DirectDeclaratorIdent
}

// tagKey names the tagged struct, union or enum type t is ("" if none).
func tagKey(t cc.Type) string {
	type tagged interface{ Tag() cc.Token }
	if tt, ok := t.(tagged); ok {
		tok := tt.Tag()
		if tag := tok.SrcStr(); tag != "" {
			return t.Kind().String() + " " + tag
		}
	}
	return ""
}

// typedefTarget returns the typedef name used in the declaration's
// specifiers (typedef CUdevice_v1 CUdevice; -> CUdevice_v1), if any.
func typedefTarget(d *cc.Declaration) string {
	for ds := d.DeclarationSpecifiers; ds != nil; ds = ds.DeclarationSpecifiers {
		if ds.Case == cc.DeclarationSpecifiersTypeSpec && ds.TypeSpecifier.Case == cc.TypeSpecifierTypeName {
			return ds.TypeSpecifier.Token.SrcStr()
		}
	}
	return ""
}

func (m *model) goTypeName(cname string) string {
	if r, ok := m.cfg.rename[cname]; ok {
		return r
	}
	return exportName(strings.TrimSuffix(stripPrefix(cname, m.cfg.typePrefix), "_t"))
}

// collectTypes records the owned typedefs of u; with onlyFile set, only
// those declared in that file (an extra header that includes cuda.h).
func (m *model) collectTypes(u *unit, onlyFile string) {
	// Group typedefs by the typedef they name, so each C type gets one Go
	// type and its other names become aliases.
	type td struct {
		dr     *cc.Declarator
		target string
		doc    string
	}
	var tds []*td
	byName := map[string]*td{}
	byTag := map[string]string{} // "enum cudaDataType_t" -> its first typedef
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr == nil || !dr.IsTypename() || !m.owned(dr.Position().Filename) || plainTypedefs[dr.Name()] != "" || m.cfg.foreign[dr.Name()] != nil {
			return
		}
		if onlyFile != "" && dr.Position().Filename != onlyFile {
			return
		}
		if _, dup := m.goTypeOf[dr.Name()]; dup {
			return
		}
		t := &td{dr: dr, target: typedefTarget(d), doc: docAbove(u, d.Position())}
		if t.doc == "" && dr.Position().Line == d.Position().Line {
			// typedef struct CUstream_st *CUstream; /**< CUDA stream */
			t.doc = sentence(docOfLine(u, d.Position()))
		}
		if t.target == dr.Name() || !plainDeclarator(dr) {
			// typedef double X; typedef X *Y: Y is another type than X.
			t.target = ""
		}
		if g := m.foreignGoType(t.target); g != "" {
			// typedef cuComplex cufftComplex: another name of a foreign type.
			an := m.claim(m.goTypeName(dr.Name()), "type "+dr.Name())
			m.goTypeOf[dr.Name()] = an
			m.aliases = append(m.aliases, &aliasDef{goName: an, target: g, cname: dr.Name(),
				doc: fmt.Sprintf("%s is the C type %s, which is %s.", an, dr.Name(), t.target)})
			return
		}
		if t.target == "" && plainDeclarator(dr) {
			// typedef enum E {...} A; typedef enum E B;: B is A.
			if key := tagKey(dr.Type()); key != "" {
				if first, ok := byTag[key]; ok {
					t.target = first
				} else {
					byTag[key] = dr.Name()
				}
			}
		}
		tds = append(tds, t)
		byName[dr.Name()] = t
		m.typedefs[dr.Name()] = dr
	})
	root := func(t *td) *td {
		for i := 0; i < 20; i++ {
			p, ok := byName[t.target]
			if !ok {
				return t
			}
			t = p
		}
		return t
	}
	groups := map[*td][]*td{}
	var order []*td
	for _, t := range tds {
		r := root(t)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], t)
	}
	// The package's own types are named first: a shared header's type
	// yields its short name on a clash (cudaEmulationStrategy is
	// CudaEmulationStrategy where cublasEmulationStrategy_t is
	// EmulationStrategy).
	sort.SliceStable(order, func(i, j int) bool {
		return !m.shared(order[i].dr.Position().Filename) && m.shared(order[j].dr.Position().Filename)
	})
	type named struct {
		prim   *td
		goName string
		alias  map[*td]string
	}
	var all []*named
	for _, r := range order {
		g := groups[r]
		prim := g[0]
		for _, t := range g {
			// Prefer the plain name over its _vN revisions.
			if versioned(t.dr.Name()) == t.dr.Name() && versioned(prim.dr.Name()) != prim.dr.Name() {
				prim = t
			}
		}
		want := m.goTypeName(prim.dr.Name())
		if _, taken := m.names[want]; taken {
			if m.shared(prim.dr.Position().Filename) {
				want = fullTypeName(prim.dr.Name())
			} else {
				// Clashes with a function: cuMemcpy2D takes a CUDA_MEMCPY2D.
				want += "Params"
			}
		}
		n := &named{prim: prim, goName: m.claim(want, "type "+prim.dr.Name()), alias: map[*td]string{}}
		for _, t := range g {
			m.goTypeOf[t.dr.Name()] = n.goName
		}
		// The struct/enum tag (CUDA_MEMCPY2D_st) names the same type.
		type tagged interface{ Tag() cc.Token }
		if tt, ok := prim.dr.Type().(tagged); ok {
			if tok := tt.Tag(); tok.SrcStr() != "" {
				tag := tok.SrcStr()
				if _, ok := m.goTypeOf[tag]; !ok {
					m.goTypeOf[tag] = n.goName
				}
			}
		}
		for _, t := range g {
			if t == prim || m.goTypeName(t.dr.Name()) == n.goName || fullTypeName(t.dr.Name()) == n.goName {
				continue
			}
			an := m.claim(m.goTypeName(t.dr.Name()), "type "+t.dr.Name())
			if an == n.goName {
				continue
			}
			m.goTypeOf[t.dr.Name()] = an
			n.alias[t] = an
		}
		all = append(all, n)
	}
	for _, n := range all {
		doc := n.prim.doc
		if doc == "" {
			doc = root(n.prim).doc
		}
		m.defineType(u, n.prim.dr, n.goName, doc)
		for _, t := range groups[root(n.prim)] {
			an, ok := n.alias[t]
			if !ok {
				continue
			}
			m.aliases = append(m.aliases, &aliasDef{goName: an, target: n.goName, cname: t.dr.Name(),
				doc: fmt.Sprintf("%s is the C type %s, the same as %s.", an, t.dr.Name(), n.goName)})
		}
	}
}

func (m *model) defineType(u *unit, dr *cc.Declarator, goName, doc string) {
	m.defineTypeOf(u, dr.Type(), dr.Name(), dr.Position().Filename, goName, doc)
}

// defineTypeOf records the Go type goName for the C type t named cname (a
// typedef, or a tag: "struct cudaDeviceProp"), declared in file.
func (m *model) defineTypeOf(u *unit, t cc.Type, cname, file, goName, doc string) {
	if doc == "" {
		doc = fmt.Sprintf("%s is the C type %s.", goName, cname)
	} else {
		doc = fmt.Sprintf("%s is the C type %s.\n\n%s", goName, cname, doc)
	}
	switch x := t.(type) {
	case *cc.EnumType:
		e := &enumDef{cname: cname, goName: goName, doc: doc, goBase: "int32"}
		if x.Min() >= 0 {
			e.goBase = "uint32"
		}
		if x.Size() == 8 {
			e.goBase = "int64"
		}
		for _, en := range x.Enumerators() {
			name := en.Token.SrcStr()
			var v int64
			switch val := en.Value().(type) {
			case cc.Int64Value:
				v = int64(val)
			case cc.UInt64Value:
				v = int64(val)
			}
			c := &enumConst{cname: name, value: v, doc: docOfLine(u, en.Position())}
			want := exportName(stripPrefix(name, m.cfg.constPref))
			if _, taken := m.names[want]; taken {
				if m.shared(file) {
					want = exportName(name) // CudaEmulationStrategyDefault
				} else {
					// Clashes with a type or function: qualify it by its enum.
					want = goName + "_" + strings.TrimPrefix(want, goName)
				}
			}
			c.goName = m.claim(want, "const "+name)
			e.consts = append(e.consts, c)
		}
		m.enums = append(m.enums, e)
	case *cc.StructType, *cc.UnionType:
		if t.IsIncomplete() {
			m.aliases = append(m.aliases, &aliasDef{goName: goName, target: "struct{}", doc: doc + "\n\nIts layout is private to the library: use it only through pointers.", cname: cname, concrete: true})
			return
		}
		path := "(*(" + cname + "*)0)"
		if u.hdr.extra {
			path = "" // no real header to check it against
		}
		m.structFrom(u, t, goName, doc, cname, path)
	case *cc.PointerType:
		base := "uintptr"
		what := "a handle (an opaque C pointer)"
		if x.Elem().Kind() == cc.Function {
			what = "a C function pointer"
		}
		m.aliases = append(m.aliases, &aliasDef{goName: goName, target: base, concrete: true, cname: cname,
			doc: doc + "\n\nIt is " + what + "; the zero value is NULL."})
	case *cc.ArrayType:
		// The element type, not t: t's typedef is the type being defined.
		target := fmt.Sprintf("[%d]%s", x.Len(), m.goType(x.Elem(), true))
		m.aliases = append(m.aliases, &aliasDef{goName: goName, target: target, concrete: true, cname: cname, doc: doc})
	case *cc.FunctionType:
		// A function type (not a pointer): only used through pointers.
		m.aliases = append(m.aliases, &aliasDef{goName: goName, target: "uintptr", concrete: true, cname: cname, doc: doc + "\n\nIt is a C function; pointers to it are C function pointers."})
	default:
		m.aliases = append(m.aliases, &aliasDef{goName: goName, target: m.primitive(t), concrete: true, cname: cname, doc: doc})
	}
}

// structFrom records a Go struct mirroring a C struct or union. path is a C
// lvalue expression of the type for the layout test ("" where none exists).
func (m *model) structFrom(u *unit, t cc.Type, goName, doc, cname, path string) {
	if t.Align() > 8 {
		doc += fmt.Sprintf("\n\nC aligns it to %d bytes, which a Go type cannot declare: pass the driver a value at such an address (for example inside a larger buffer, at an offset that aligns it).", t.Align())
	}
	s := &structDef{cname: cname, goName: goName, doc: doc, size: t.Size(), align: int64(t.Align()), layoutPath: path}
	_, s.union = t.(*cc.UnionType)
	type fielder interface {
		NumFields() int
		FieldByIndex(int) *cc.Field
	}
	ft := t.(fielder)
	var off int64
	pad := 0
	for i := 0; i < ft.NumFields(); i++ {
		f := ft.FieldByIndex(i)
		fname := f.Name()
		gname := exportName(fname)
		if fname == "" {
			gname = fmt.Sprintf("Anon%d", i)
		}
		var gtype string
		switch f.Type().(type) {
		case *cc.StructType, *cc.UnionType:
			if f.Type().Typedef() == nil || !m.owned(f.Type().Typedef().Position().Filename) {
				// anonymous (or tagged but untypedef'd) nested type
				sub := goName + gname
				subPath := ""
				if path != "" && fname != "" {
					subPath = "(" + path + ")." + fname
				}
				m.structFrom(u, f.Type(), m.claim(sub, "type "+sub), fmt.Sprintf("%s is the type of %s.%s.", sub, goName, gname), "", subPath)
				gtype = sub
			}
		case *cc.ArrayType:
			el := f.Type().(*cc.ArrayType).Elem()
			if (el.Kind() == cc.Struct || el.Kind() == cc.Union) && (el.Typedef() == nil || !m.owned(el.Typedef().Position().Filename)) {
				sub := goName + gname
				m.structFrom(u, el, m.claim(sub, "type "+sub), fmt.Sprintf("%s is the element type of %s.%s.", sub, goName, gname), "", "")
				gtype = fmt.Sprintf("[%d]%s", f.Type().(*cc.ArrayType).Len(), sub)
			}
		}
		if gtype == "" {
			gtype = m.goType(f.Type(), true)
		}
		fd := &fieldDef{cname: fname, goName: gname, goType: gtype, offset: f.Offset(), doc: docOfLine(u, f.Declarator().Position())}
		if s.union {
			s.members = append(s.members, fd)
			continue
		}
		if f.Offset() > off {
			// Go inserts the same padding as C on amd64 for naturally
			// aligned fields; explicit padding only where C packs differently.
			if f.Offset() != alignUp(off, int64(f.Type().FieldAlign())) {
				s.fields = append(s.fields, &fieldDef{goName: fmt.Sprintf("_pad%d", pad), goType: fmt.Sprintf("[%d]byte", f.Offset()-off), synthetic: true})
				pad++
			}
		}
		s.fields = append(s.fields, fd)
		off = f.Offset() + f.Type().Size()
	}
	if !s.union && s.align <= 8 {
		// __align__(8) on float2: C aligns the struct more than its fields;
		// a leading zero-size field gives the Go struct that alignment.
		natural := int64(1)
		for i := 0; i < ft.NumFields(); i++ {
			natural = max(natural, int64(ft.FieldByIndex(i).Type().Align()))
		}
		if s.align > natural {
			word := map[int64]string{2: "uint16", 4: "uint32", 8: "uint64"}[s.align]
			s.fields = append([]*fieldDef{{goName: "_", goType: "[0]" + word, synthetic: true}}, s.fields...)
		}
	}
	if s.union {
		// A union is its bytes, aligned like its most aligned member; members
		// are reached through accessor methods.
		words := "uint64"
		w := int64(8)
		switch s.align {
		case 4:
			words, w = "uint32", 4
		case 2:
			words, w = "uint16", 2
		case 1:
			words, w = "byte", 1
		}
		s.fields = []*fieldDef{{goName: "raw", goType: fmt.Sprintf("[%d]%s", s.size/w, words), synthetic: true}}
	} else if off < s.size && alignUp(off, s.align) != s.size {
		s.fields = append(s.fields, &fieldDef{goName: "_padEnd", goType: fmt.Sprintf("[%d]byte", s.size-off), synthetic: true})
	}
	m.structs = append(m.structs, s)
}

func alignUp(x, a int64) int64 {
	if a <= 1 {
		return x
	}
	return (x + a - 1) / a * a
}

// goType maps a C type to the Go type used in structs and signatures.
// plainTypedefs are the headers' names for fixed-width integers.
var plainTypedefs = map[string]string{"cuuint32_t": "uint32", "cuuint64_t": "uint64", "size_t": "uint64", "uint32_t": "uint32", "uint64_t": "uint64", "int32_t": "int32", "int64_t": "int64", "uint8_t": "uint8", "uint16_t": "uint16", "int8_t": "int8", "int16_t": "int16", "ssize_t": "int64", "off_t": "int64"}

func (m *model) goType(t cc.Type, inStruct bool) string {
	if g := m.taggedGoType(t); g != "" {
		return g
	}
	if td := t.Typedef(); td != nil {
		if g, ok := plainTypedefs[td.Name()]; ok {
			return g
		}
		if g, ok := m.goTypeOf[td.Name()]; ok {
			return g
		}
		if g := m.foreignGoType(td.Name()); g != "" {
			return g
		}
	}
	switch x := t.(type) {
	case *cc.PointerType:
		el := x.Elem()
		if inStruct || el.Kind() == cc.Void || el.Kind() == cc.Function {
			return "unsafe.Pointer"
		}
		if el.Kind() == cc.Ptr && el.Typedef() == nil {
			inner := el.(*cc.PointerType).Elem()
			if inner.Kind() == cc.Void || inner.Kind() == cc.Char {
				return "*unsafe.Pointer"
			}
		}
		if (el.Kind() == cc.Struct || el.Kind() == cc.Union) && m.taggedGoType(el) == "" {
			if el.Typedef() == nil || m.goTypeOf[el.Typedef().Name()] == "" && m.foreignGoType(el.Typedef().Name()) == "" {
				return "unsafe.Pointer"
			}
		}
		return "*" + m.goType(el, false)
	case *cc.ArrayType:
		return fmt.Sprintf("[%d]%s", x.Len(), m.goType(x.Elem(), true))
	case *cc.EnumType:
		if x.Min() < 0 {
			return "int32"
		}
		return "uint32"
	case *cc.StructType, *cc.UnionType:
		return fmt.Sprintf("[%d]byte", t.Size())
	}
	return m.primitive(t)
}

func (m *model) primitive(t cc.Type) string {
	switch t.Kind() {
	case cc.Char:
		return "byte"
	case cc.SChar:
		return "int8"
	case cc.UChar:
		return "uint8"
	case cc.Bool:
		return "bool"
	case cc.Short:
		return "int16"
	case cc.UShort:
		return "uint16"
	case cc.Int:
		return "int32"
	case cc.UInt:
		return "uint32"
	case cc.Long, cc.LongLong:
		return "int64"
	case cc.ULong, cc.ULongLong:
		return "uint64"
	case cc.Float:
		return "float32"
	case cc.Double:
		return "float64"
	case cc.Ptr:
		return "uintptr"
	case cc.Enum:
		return "int32"
	}
	if t.Size() == 16 {
		return "[16]byte"
	}
	return fmt.Sprintf("[%d]byte /* %s */", t.Size(), t)
}

// cType is the C type a shim uses for a value of type t: primitives only,
// pointers as void*, structs by value through definitions the generator writes.
func (m *model) cType(t cc.Type) string {
	switch t.Kind() {
	case cc.Void:
		return "void"
	case cc.Char:
		return "char"
	case cc.SChar:
		return "signed char"
	case cc.UChar:
		return "unsigned char"
	case cc.Bool:
		return "_Bool"
	case cc.Short:
		return "short"
	case cc.UShort:
		return "unsigned short"
	case cc.Int:
		return "int"
	case cc.UInt:
		return "unsigned int"
	case cc.Long:
		return "long"
	case cc.ULong:
		return "unsigned long"
	case cc.LongLong:
		return "long long"
	case cc.ULongLong:
		return "unsigned long long"
	case cc.Float:
		return "float"
	case cc.Double:
		return "double"
	case cc.Ptr, cc.Array, cc.Function:
		return "void*"
	case cc.Enum:
		if t.(*cc.EnumType).Min() < 0 {
			return "int"
		}
		return "unsigned int"
	case cc.Struct, cc.Union:
		return m.cStructDef(t)
	}
	return "int"
}

// cStructDef writes a C definition with the same layout as t, from
// primitive types, and returns its name.
func (m *model) cStructDef(t cc.Type) string {
	name := "cg_anon"
	if td := t.Typedef(); td != nil {
		name = "cg_" + td.Name()
	} else if tag := tagName(t); tag != "" {
		name = "cg_" + tag // struct cudaChannelFormatDesc
	}
	kw := "struct"
	if t.Kind() == cc.Union {
		kw = "union"
	}
	full := kw + " " + name
	if _, ok := m.cstructs[full]; ok {
		return full
	}
	type fielder interface {
		NumFields() int
		FieldByIndex(int) *cc.Field
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s {\n", full)
	ft := t.(fielder)
	for i := 0; i < ft.NumFields(); i++ {
		f := ft.FieldByIndex(i)
		ftp := f.Type()
		arr := ""
		for ftp.Kind() == cc.Array {
			arr += fmt.Sprintf("[%d]", ftp.(*cc.ArrayType).Len())
			ftp = ftp.(*cc.ArrayType).Elem()
		}
		fmt.Fprintf(&b, "\t%s f%d%s;\n", m.cType(ftp), i, arr)
	}
	b.WriteString("};\n")
	m.cstructs[full] = b.String()
	m.cstructOr = append(m.cstructOr, full)
	return full
}

func (m *model) collectConsts(u *unit) {
	var names []string
	for n, mac := range u.ast.Macros {
		if mac.IsFnLike || !m.owned(mac.Position().Filename) || strings.HasPrefix(n, "_") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mac := u.ast.Macros[n]
		var val string
		switch v := mac.Value().(type) {
		case cc.Int64Value:
			val = strconv.FormatInt(int64(v), 10)
		case cc.UInt64Value:
			val = strconv.FormatUint(uint64(v), 10)
		default:
			continue
		}
		rl := mac.ReplacementList()
		if len(rl) == 1 && rl[0].Ch == rune(cc.IDENTIFIER) {
			continue // a rename (cuMemAlloc -> cuMemAlloc_v2) or an alias of an enumerator
		}
		if strings.HasSuffix(n, "_H") || strings.HasSuffix(n, "_INCLUDED") || strings.HasSuffix(n, "_H_") {
			continue
		}
		goName := exportName(stripPrefix(n, m.cfg.constPref))
		if _, taken := m.names[goName]; taken {
			continue
		}
		m.claim(goName, "macro "+n)
		m.consts = append(m.consts, &constDef{cname: n, goName: goName, value: val})
	}
}

func (m *model) collectFuncs(u *unit) []*funcDef {
	var out []*funcDef
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr == nil || dr.IsTypename() || !m.owned(dr.Position().Filename) {
			return
		}
		ft, ok := dr.Type().(*cc.FunctionType)
		if !ok || dr.IsStatic() || dr.IsInline() {
			return
		}
		if u.hdr.extra && dr.Position().Filename != u.path {
			return // what the extra header includes is not its own
		}
		decl := dr.Name()
		if m.cfg.skipped(decl) {
			return
		}
		api, syms := m.cfg.symbolCandidates(decl)
		if cur := currentDecl(u, api); cur != "" && cur != decl {
			api = decl // an explicit revision; the macros select another
		} else if cur == "" && api != decl && m.cfg.macroRevisions {
			api = decl // a revision no macro selects
		}
		f := &funcDef{cname: api, decl: decl, syms: syms, ret: ft.Result(), since: u.since, ft: ft}
		f.goName = exportName(stripPrefix(api, m.cfg.funcPrefix))
		if r, ok := m.cfg.rename[api]; ok {
			f.goName = r
		}
		f.doc = docAbove(u, d.Position())
		if f.doc == "" && m.cfg.groupDocs {
			f.doc = docOfGroup(u, d.Position())
		} else if f.doc == "" {
			f.doc = docBelow(u, d.Position())
		}
		paramDocs := parseParamDocs(f.doc)
		for i, p := range ft.Parameters() {
			if p.Type().Kind() == cc.Void {
				continue
			}
			name := p.Name()
			if name == "" {
				name = fmt.Sprintf("arg%d", i)
			}
			pd := &paramDef{cname: name, goName: goIdent(name), ct: p.Type()}
			force, forced := m.cfg.outParams[api+"."+name]
			m.classifyParam(pd, paramDocs[name], force)
			if forced && !force && pd.out {
				pd.out, pd.outGoType = false, "" // configured: the doc says output, but the call reads it too
			}
			f.params = append(f.params, pd)
		}
		keepBuffers(f)
		m.pairCounts(f)
		f.retC = m.cType(f.ret)
		if td := f.ret.Typedef(); td != nil && td.Name() == m.cfg.resultType {
			f.retIsStatus = true
		}
		if !f.retIsStatus && f.ret.Kind() != cc.Void {
			f.retGo = m.goType(f.ret, false)
			if f.ret.Kind() == cc.Ptr && f.ret.(*cc.PointerType).Elem().Kind() == cc.Char {
				f.retGo = "string"
			}
		}
		out = append(out, f)
	})
	return out
}

// macroTarget returns the function a macro names: "cuMemAlloc_v2" for
// #define cuMemAlloc cuMemAlloc_v2 and for __CUDA_API_PTDS(cuMemAlloc_v2)
// (the runtime's: __CUDART_API_PTSZ(cudaStreamGetCaptureInfo_v2)).
func macroTarget(u *unit, name string) string {
	mac, ok := u.ast.Macros[name]
	if !ok || mac.IsFnLike {
		return ""
	}
	var ids []string
	for _, t := range mac.ReplacementList() {
		if t.Ch == rune(cc.IDENTIFIER) {
			ids = append(ids, t.SrcStr())
		}
	}
	switch {
	case len(ids) == 1:
		return ids[0]
	case len(ids) == 2 && (strings.HasPrefix(ids[0], "__CUDA_API_PT") || strings.HasPrefix(ids[0], "__CUDART_API_PT")):
		return ids[1]
	}
	return ""
}

// currentDecl is the revision of api that the header's macros select, or ""
// when no macro names api.
func currentDecl(u *unit, api string) string {
	t := macroTarget(u, api)
	if t == api {
		return ""
	}
	return t
}

// aliasFuncs records the other C names of generated functions: explicit
// revisions that the plain name already binds, and macros naming functions.
func (m *model) aliasFuncs(prim *unit, byName map[string]*funcDef) {
	byDecl := map[string]*funcDef{}
	for _, f := range m.funcs {
		byDecl[f.decl] = f
	}
	add := func(name string, f *funcDef) {
		if _, ok := byName[name]; ok || name == f.cname {
			return
		}
		byName[name] = f
		m.funcAliases = append(m.funcAliases, &funcAlias{cname: name, goName: exportName(stripPrefix(name, m.cfg.funcPrefix)), target: f})
	}
	for _, f := range m.funcs {
		if f.decl != f.cname && !strings.HasPrefix(f.decl, "__") {
			add(f.decl, f)
		}
	}
	var names []string
	for n := range prim.ast.Macros {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !m.owned(prim.ast.Macros[n].Position().Filename) {
			continue
		}
		if f, ok := byDecl[macroTarget(prim, n)]; ok && len(m.cfg.funcPrefix) > 0 && strings.HasPrefix(n, m.cfg.funcPrefix[0]) {
			add(n, f)
		}
	}
	sort.Slice(m.funcAliases, func(i, j int) bool { return m.funcAliases[i].cname < m.funcAliases[j].cname })
}

func isCharPtr(t cc.Type) bool {
	p, ok := t.(*cc.PointerType)
	return ok && p.Elem().Kind() == cc.Char
}

func isConst(t cc.Type) bool {
	return t.Attributes() != nil && false
}

func (m *model) classifyParam(p *paramDef, doc string, forceOut bool) {
	t := p.ct
	p.cType = m.cType(t)
	p.goType = m.goType(t, false)
	switch t.Kind() {
	case cc.Struct, cc.Union:
		p.kind = pkStruct
		return
	case cc.Ptr:
		if !strings.HasPrefix(p.goType, "*") && p.goType != "unsafe.Pointer" {
			// A handle or function pointer typedef: an integer in Go.
			p.kind, p.cType = pkValue, "uintptr_t"
			return
		}
	default:
		p.kind = pkValue
		return
	}
	pt := t.(*cc.PointerType)
	el := pt.Elem()
	constEl := isConstType(el)
	// const char* -> string; const char* const* / const char** -> []string.
	if el.Kind() == cc.Char && el.Typedef() == nil && constEl {
		p.kind, p.goType = pkString, "string"
		return
	}
	if el.Kind() == cc.Ptr && el.Typedef() == nil && isCharPtr(el) && isConstType(el.(*cc.PointerType).Elem()) {
		// An array of strings in (options, headers), or one string out
		// (cuFuncGetName). cc/v4 drops the qualifier of the middle pointer,
		// so the docs decide.
		l := strings.ToLower(doc)
		if (looksOut(doc) || strings.Contains(l, "returned")) && !strings.Contains(l, "array") && !strings.HasPrefix(l, "[in]") {
			p.kind, p.out, p.outGoType = pkPointer, true, "string"
		} else {
			p.kind, p.goType = pkStrings, "[]string"
		}
		return
	}
	p.kind = pkPointer
	if forceOut && !constEl {
		// A configured override: the header's doc is wrong or missing.
		p.out = true
		p.outGoType = strings.TrimPrefix(p.goType, "*")
		return
	}
	// Output parameter: a non-const pointer to one value that the docs say
	// the call writes (not a buffer, not an array, not optional), or, where
	// no doc says what it is, whose name says so (nvvmSizeRet).
	if constEl || !(looksOut(doc) || outByName(p.cname, el, doc)) || versionedStruct(el) {
		return
	}
	switch el.Kind() {
	case cc.Void, cc.Char, cc.Array, cc.Function:
		return
	}
	if el.Kind() == cc.Ptr && el.Typedef() == nil {
		inner := el.(*cc.PointerType).Elem()
		if isCharPtr(el) {
			p.out, p.outGoType = true, "string"
			return
		}
		if inner.Kind() != cc.Void {
			return
		}
	}
	p.out = true
	p.outGoType = strings.TrimPrefix(p.goType, "*")
}

// outByName reports whether a non-const pointer parameter is an output by
// its name alone: it points to one integer or floating-point value, its
// name ends in Ret or Size (nvrtcGetNVVMSize's nvvmSizeRet), and no doc
// describes the parameter as anything else.
func outByName(name string, el cc.Type, doc string) bool {
	if !strings.HasSuffix(name, "Ret") && !strings.HasSuffix(name, "Size") {
		return false
	}
	if !isIntegerType(el) && el.Kind() != cc.Float && el.Kind() != cc.Double {
		return false
	}
	return strings.TrimSpace(doc) == ""
}

// keepBuffers undoes the output classification of arrays: where a pointer
// to an integer count is among a function's parameters (infoCount of
// nvmlDeviceGetComputeRunningProcesses, read as the size of the infos
// array and written with the number of entries), the others that the docs
// call outputs are arrays it counts, and the count is read too: all stay
// pointers. A count that is the only output (nvmlDeviceGetMemoryErrorCounter)
// stays a result.
func keepBuffers(f *funcDef) {
	isCount := func(p *paramDef) bool {
		if p.kind != pkPointer || !strings.Contains(strings.ToLower(p.cname), "count") {
			return false
		}
		pt, ok := p.ct.(*cc.PointerType)
		return ok && isIntegerType(pt.Elem())
	}
	counted, other := false, false
	for _, p := range f.params {
		switch {
		case isCount(p):
			counted = true
		case p.out && p.outGoType != "string":
			other = true
		}
	}
	if !counted || !other {
		return
	}
	for _, p := range f.params {
		if p.out && p.outGoType != "string" {
			p.out, p.outGoType = false, ""
		}
	}
}

// versionedStruct reports whether t is a struct whose first field is
// version, which the caller sets before the call (NVML's nvmlMemory_v2_t,
// nvmlSystemDriverBranchInfo_t): a pointer to it is read and written, never
// an output alone.
func versionedStruct(t cc.Type) bool {
	st, ok := t.(*cc.StructType)
	return ok && !st.IsIncomplete() && st.NumFields() > 0 && st.FieldByIndex(0).Name() == "version"
}

func isConstType(t cc.Type) bool {
	// cc/v4 reports qualifiers through the type's String form.
	return strings.HasPrefix(t.String(), "const ")
}

func looksOut(doc string) bool {
	d := strings.TrimSpace(doc)
	l := strings.ToLower(d)
	if strings.Contains(l, "array of") || strings.Contains(l, "an array") || strings.Contains(l, "list of") || strings.Contains(l, "optional") || strings.Contains(l, "[in,out]") || strings.Contains(l, "[in, out]") || strings.Contains(l, "in/out") {
		return false
	}
	for _, p := range []string{"[out]", "Returned", "Returns ", "Address of", "Reference in which to return"} {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}

// procVersions reads cudaTypedefs.h for the version each driver entry point
// must be requested at through cuGetProcAddress (PFN_cuMemAlloc_v3020).
func (m *model) procVersions(hs *cudaheaders.Set) error {
	u, err := parseHeader(hs, m.cfg, header{"13.0", "cudaTypedefs.h", false})
	if err != nil {
		return err
	}
	type pfn struct {
		version int
		ft      *cc.FunctionType
	}
	byBase := map[string][]pfn{}
	declarations(u, func(d *cc.Declaration, dr *cc.Declarator) {
		if dr == nil || !dr.IsTypename() || !strings.HasPrefix(dr.Name(), "PFN_") {
			return
		}
		n := strings.TrimPrefix(dr.Name(), "PFN_")
		i := strings.LastIndex(n, "_v")
		if i < 0 {
			return
		}
		v, err := strconv.Atoi(n[i+2:])
		if err != nil {
			return // _ptds/_ptsz variants
		}
		pt, ok := dr.Type().(*cc.PointerType)
		if !ok {
			return
		}
		ft, ok := pt.Elem().(*cc.FunctionType)
		if !ok {
			return
		}
		byBase[n[:i]] = append(byBase[n[:i]], pfn{v, ft})
	})
	// The plain revision gets the newest matching version; an explicit
	// older one the newest version below that.
	for pass := 0; pass < 2; pass++ {
		for _, f := range m.funcs {
			explicit := f.cname == f.decl && versioned(f.cname) != f.cname
			if explicit != (pass == 1) {
				continue
			}
			base := versioned(f.cname)
			limit := 1 << 30
			if explicit {
				for _, g := range m.funcs {
					if g.cname == base && g.procVersion > 0 {
						limit = g.procVersion
					}
				}
			}
			for _, c := range byBase[base] {
				if c.version > f.procVersion && c.version < limit && sameSignature(c.ft, f.ft) {
					f.procVersion = c.version
				}
			}
			if f.procVersion == 0 && explicit {
				// An explicit revision that is also the newest one.
				for _, c := range byBase[base] {
					if c.version > f.procVersion && sameSignature(c.ft, f.ft) {
						f.procVersion = c.version
					}
				}
			}
		}
	}
	return nil
}

func sameSignature(a, b *cc.FunctionType) bool {
	pa, pb := a.Parameters(), b.Parameters()
	if len(pa) != len(pb) {
		return false
	}
	class := func(t cc.Type) string {
		switch t.Kind() {
		case cc.Ptr, cc.Array:
			return "p"
		case cc.Struct, cc.Union:
			return "s" + strconv.FormatInt(t.Size(), 10)
		case cc.Float, cc.Double:
			return "f" + strconv.FormatInt(t.Size(), 10)
		}
		return "i" + strconv.FormatInt(t.Size(), 10)
	}
	for i := range pa {
		if class(pa[i].Type()) != class(pb[i].Type()) {
			return false
		}
	}
	return true
}
