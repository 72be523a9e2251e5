package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var driverModel struct {
	once sync.Once
	m    *model
	err  error
}

// coreModel is the driver's model, built once for the core tests.
func coreModel(t *testing.T) *model {
	t.Helper()
	headers := headersFor(t, "driver")
	driverModel.once.Do(func() { driverModel.m, driverModel.err = buildModel(configs["driver"], headers) })
	if driverModel.err != nil {
		t.Fatal(driverModel.err)
	}
	return driverModel.m
}

// TestCoreCallsConfig checks core's list (core/calls.go) against the
// header model: every name is a driver function returning CUresult, listed
// once, with valid flags, and every constant and struct exists.
func TestCoreCallsConfig(t *testing.T) {
	m := coreModel(t)
	cfg, err := readCoreList(filepath.Join("..", "..", "core"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*funcDef{}
	for _, f := range m.funcs {
		funcs[f.cname] = f
	}
	seen := map[string]bool{}
	generated := 0
	for _, c := range cfg.calls {
		f, ok := funcs[c.name]
		if !ok {
			t.Errorf("%s is not a function of the driver headers", c.name)
			continue
		}
		if !f.retIsStatus {
			t.Errorf("%s does not return CUresult", c.name)
		}
		if seen[c.name] {
			t.Errorf("%s is listed twice", c.name)
		}
		seen[c.name] = true
		if c.flags&cOnly != 0 && c.flags != cOnly {
			t.Errorf("%s: cOnly with other flags", c.name)
		}
		if c.flags&cOnly == 0 {
			generated++
		}
	}
	for _, need := range []string{"cuCtxGetCurrent", "cuCtxSetCurrent", "cuGetErrorString", "cuInit"} {
		if !seen[need] {
			t.Errorf("%s is not listed; core needs it", need)
		}
	}
	if generated < 50 {
		t.Errorf("only %d generated calls", generated)
	}
	if _, err := (&coreGen{m: m, cfg: cfg}).consts(); err != nil {
		t.Error(err)
	}
	for _, s := range cfg.structs {
		if m.typedefs[s] == nil {
			t.Errorf("struct %s is not in the driver headers", s)
		}
	}
}

// TestCoreCallsRejects checks that a wrong list is an error, not bad code.
func TestCoreCallsRejects(t *testing.T) {
	m := coreModel(t)
	base := []coreCall{{name: "cuCtxGetCurrent", flags: cOnly}, {name: "cuCtxSetCurrent"}}
	for _, tc := range []struct {
		name string
		cfg  coreConfig
		want string
	}{
		{"unknown function", coreConfig{calls: append(base, coreCall{name: "cuNoSuchThing"})}, "no such function"},
		{"twice", coreConfig{calls: append(base, coreCall{name: "cuCtxSetCurrent"})}, "listed twice"},
		{"bad output", coreConfig{calls: append(base, coreCall{name: "cuStreamQuery", flags: inCtx, outs: []string{"nope"}})}, "no pointer parameter nope"},
		{"value output", coreConfig{calls: append(base, coreCall{name: "cuStreamQuery", flags: inCtx, outs: []string{"hStream"}})}, "cannot be an output"},
		{"cOnly with flags", coreConfig{calls: append(base, coreCall{name: "cuStreamQuery", flags: cOnly | inCtx})}, "cOnly takes no other flag"},
		{"context without helpers", coreConfig{calls: []coreCall{{name: "cuStreamQuery", flags: inCtx}}}, "need cuCtxGetCurrent"},
		{"unknown constant", coreConfig{calls: base, consts: []string{"CU_NO_SUCH_CONSTANT"}}, "CU_NO_SUCH_CONSTANT"},
		{"unknown struct", coreConfig{calls: base, structs: []string{"CUnoSuchStruct"}}, "CUnoSuchStruct"},
		{"not a struct", coreConfig{calls: base, structs: []string{"CUstream"}}, "not a struct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := m.emitCore(&tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("emitCore: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestCoreCallShapes checks a few generated signatures: outputs become
// results, handles are driver types, the context comes first.
func TestCoreCallShapes(t *testing.T) {
	m := coreModel(t)
	cfg := &coreConfig{
		calls: []coreCall{
			{name: "cuCtxGetCurrent", flags: cOnly},
			{name: "cuCtxSetCurrent"},
			{name: "cuMemAlloc", flags: inCtx | noEscape | noCallback},
			{name: "cuStreamEndCapture", flags: inCtx, outs: []string{"phGraph"}},
			{name: "cuIpcOpenEventHandle", flags: inCtx},
			{name: "cuGetErrorString"},
			{name: "cuEventElapsedTime", flags: inCtx, outs: []string{"pMilliseconds"}, fallback: 2000},
		},
		consts:  []string{"CU_LAUNCH_ATTRIBUTE_COOPERATIVE"},
		structs: []string{"CUlaunchConfig", "CUlaunchAttribute"},
	}
	files, n, err := m.emitCore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("%d generated calls, want 6 (cOnly has none)", n)
	}
	goSrc, h, c := string(files[coreGoFile]), string(files[coreHFile]), string(files[coreCFile])
	containsAll(t, "the Go file", goSrc,
		"func cuMemAlloc(ctx driver.Context, bytesize uint64) (dptr driver.Deviceptr, err error) {",
		"func cuStreamEndCapture(ctx driver.Context, hStream driver.Stream) (phGraph driver.Graph, err error) {",
		"func cuIpcOpenEventHandle(ctx driver.Context, handle driver.IpcEventHandle) (phEvent driver.Event, err error) {",
		"func cuGetErrorString(error_ driver.Result) (pStr string, err error) {",
		"func cuEventElapsedTime(ctx driver.Context, hStart driver.Event, hEnd driver.Event) (pMilliseconds float32, err error) {",
		"func cuCtxSetCurrent(ctx driver.Context) error {",
		"#cgo noescape cgx_cuMemAlloc\n",
		"#cgo nocallback cgx_cuMemAlloc\n",
		`{"cuEventElapsedTime", 2000},`,
		"unsafe.Sizeof(C.cgx_CUipcEventHandle{})-unsafe.Sizeof(driver.IpcEventHandle{})",
	)
	if strings.Contains(goSrc, "func cuCtxGetCurrent(") {
		t.Error("a cOnly entry has a Go function")
	}
	containsAll(t, "the header", h,
		"#define CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2\n",
		"\tcgx_CUlaunchAttribute *attrs;\n",
		"_Static_assert(offsetof(cgx_CUlaunchConfig, hStream) == 32,",
		"CGX_cuCtxGetCurrent,\n",
		"typedef cgx_result (*cgx_cuMemAlloc_t)(void *dptr, unsigned long bytesize);",
		"cg_ret cgx_cuMemAlloc(uintptr_t ctx, unsigned long long *dptr, unsigned long bytesize);",
	)
	containsAll(t, "the C file", c,
		"cg_ret cgx_cuMemAlloc(uintptr_t ctx, unsigned long long *dptr, unsigned long bytesize) {\n\tCGX_ENTER(ctx);\n\tCGX_CALL(cuMemAlloc, dptr, bytesize);\n\treturn 0;\n}",
		"cg_ret cgx_cuCtxSetCurrent(uintptr_t ctx) {\n\tCGX_CALL(cuCtxSetCurrent, ctx);",
	)
}

func TestQualify(t *testing.T) {
	for in, want := range map[string]string{
		"Stream":          "driver.Stream",
		"*LaunchConfig":   "*driver.LaunchConfig",
		"uint64":          "uint64",
		"unsafe.Pointer":  "unsafe.Pointer",
		"*unsafe.Pointer": "*unsafe.Pointer",
		"[16]byte":        "[16]byte",
		"*[4]Uuid":        "*[4]driver.Uuid",
	} {
		if got := qualify(in); got != want {
			t.Errorf("qualify(%q) = %q, want %q", in, got, want)
		}
	}
}
