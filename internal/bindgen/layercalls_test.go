package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/internal/cudaheaders"
)

var libModels sync.Map // library name -> *modelOnce

type modelOnce struct {
	once sync.Once
	m    *model
	err  error
}

// libModel is library lib's model, built once for the tests.
func libModel(t *testing.T, lib string) *model {
	t.Helper()
	if lib == "driver" {
		return coreModel(t)
	}
	headers := headersFor(t, lib)
	v, _ := libModels.LoadOrStore(lib, &modelOnce{})
	mo := v.(*modelOnce)
	mo.once.Do(func() {
		cfg, ok := configs[lib]
		if !ok {
			mo.err = os.ErrNotExist
			return
		}
		mo.m, mo.err = buildModel(cfg, headers)
	})
	if mo.err != nil {
		t.Fatalf("model of %s: %v", lib, mo.err)
	}
	return mo.m
}

// callModels returns the models a list needs: the driver's and its
// libraries'.
func callModels(t *testing.T, list *callList) map[string]*model {
	t.Helper()
	ms := map[string]*model{"driver": libModel(t, "driver")}
	for _, lib := range list.libs {
		if _, ok := configs[lib]; ok {
			ms[lib] = libModel(t, lib)
		}
	}
	return ms
}

// TestLayerCallSignatures parses every package's generated calls and the
// bindings they call: each function is named <C prefix><Go name> and takes
// ctx driver.Context and then the bindings function's own parameters, with
// the same names and types (package-qualified), and its results.
func TestLayerCallSignatures(t *testing.T) {
	for key, list := range layerLists(t) {
		gen := parseFuncs(t, filepath.Join("..", "..", filepath.FromSlash(key), callsGoFile), "")
		n := 0
		for _, lib := range list.libs {
			cfg := configs[lib]
			bind := parseFuncs(t, filepath.Join("..", "..", "bindings", lib, "funcs_gen.go"), lib)
			m := libModel(t, lib)
			for _, name := range list.calls {
				f := findFunc(m, name)
				if f == nil {
					continue
				}
				n++
				want, ok := bind[f.goName]
				if !ok {
					t.Errorf("%s: bindings/%s has no function %s", name, lib, f.goName)
					continue
				}
				genName := cfg.funcPrefix[0] + f.goName
				got, ok := gen[genName]
				if !ok {
					t.Errorf("%s: %s has no function %s", name, key, genName)
					continue
				}
				if params := strings.TrimPrefix(want, "("); strings.HasPrefix(params, ")") {
					want = "(ctx driver.Context" + params
				} else {
					want = "(ctx driver.Context, " + params
				}
				if got != want {
					t.Errorf("%s.%s:\n got %s\nwant %s", key, genName, got, want)
				}
			}
		}
		if n != len(list.calls) || len(gen) != n {
			t.Errorf("%s: %d calls listed, %d found in the libraries, %d generated functions", key, len(list.calls), n, len(gen))
		}
	}
}

// parseFuncs returns the signatures of a file's top-level functions by
// name, as source text, with the package's own exported types qualified by
// pkg ("" for none).
func parseFuncs(t *testing.T, file, pkg string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		if pkg != "" {
			ast.Inspect(fd.Type, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					return false // already qualified
				case *ast.Field:
					x.Type = qualifyExpr(x.Type, pkg)
				}
				return true
			})
		}
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, fd.Type); err != nil {
			t.Fatal(err)
		}
		out[fd.Name.Name] = strings.TrimPrefix(b.String(), "func")
	}
	return out
}

// qualifyExpr qualifies the exported identifiers of a type expression.
func qualifyExpr(e ast.Expr, pkg string) ast.Expr {
	switch x := e.(type) {
	case *ast.Ident:
		if x.IsExported() {
			return &ast.SelectorExpr{X: ast.NewIdent(pkg), Sel: x}
		}
	case *ast.StarExpr:
		x.X = qualifyExpr(x.X, pkg)
	case *ast.ArrayType:
		x.Elt = qualifyExpr(x.Elt, pkg)
	}
	return e
}

// TestLayerCallsRejects checks that a wrong list is an error, not bad code.
func TestLayerCallsRejects(t *testing.T) {
	ms := callModels(t, &callList{libs: []string{"cublas", "nvrtc"}})
	for _, tc := range []struct {
		name string
		list callList
		want string
	}{
		{"empty", callList{libs: []string{"cublas"}}, "no calls"},
		{"unknown", callList{libs: []string{"cublas"}, calls: []string{"cublasNoSuch"}}, "no function of cublas"},
		{"symbol name", callList{libs: []string{"cublas"}, calls: []string{"cublasSgemm_v2"}}, "C API name"},
		{"twice", callList{libs: []string{"cublas"}, calls: []string{"cublasCreate", "cublasCreate"}}, "listed twice"},
		{"no status", callList{libs: []string{"cublas"}, calls: []string{"cublasGetStatusString"}}, "returns void*, not cublasStatus_t, an integer or nothing"},
		{"errno on a status", callList{libs: []string{"cublas"}, calls: []string{"cublasCreate"}, errno: []string{"cublasCreate"}}, "does not return an integer"},
		{"errno unlisted", callList{libs: []string{"cublas"}, calls: []string{"cublasCreate"}, errno: []string{"cublasDestroy"}}, "not in its calls"},
		{"log", callList{libs: []string{"nvrtc"}, calls: []string{"nvrtcCompileProgram"}}, "log"},
		{"strings", callList{libs: []string{"nvrtc"}, calls: []string{"nvrtcCreateProgram"}}, "array of strings"},
		{"noEscape", callList{libs: []string{"cublas"}, calls: []string{"cublasCreate"}, noEscape: []string{"cublasDestroy"}}, "not in its calls"},
		{"no model", callList{libs: []string{"cufft"}, calls: []string{"cufftCreate"}}, "no model"},
		{"driver", callList{libs: []string{"driver"}, calls: []string{"cuInit"}}, "core's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := emitCalls("x", &tc.list, ms)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("emitCalls: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestGenerateCallsUnlisted: -calls in a folder without //cudago:call
// lines says so.
func TestGenerateCallsUnlisted(t *testing.T) {
	dir := t.TempDir()
	err := generateCalls(dir, dir, buildLoader(&cudaheaders.Set{}))
	if err == nil || !strings.Contains(err.Error(), "has no //cudago:call lines") {
		t.Errorf("generateCalls(an unlisted folder): %v", err)
	}
}

// TestLayerCallShapes checks what a small list generates: the shim makes
// the context current unless it is 0, table and shims carry the package's
// name (one binary links several packages' C), noEscape marks both.
func TestLayerCallShapes(t *testing.T) {
	list := &callList{libs: []string{"cublaslt", "curand"}, calls: []string{"cublasLtMatmulDescCreate", "curandGenerateUniform"}, noEscape: []string{"curandGenerateUniform"}}
	files, err := emitCalls("some/where/blas", list, callModels(t, list))
	if err != nil {
		t.Fatal(err)
	}
	goSrc, h, c := string(files[callsGoFile]), string(files[callsHFile]), string(files[callsCFile])
	containsAll(t, "the Go file", goSrc,
		"package blas\n",
		"func cublasLtMatmulDescCreate(ctx driver.Context, matmulDesc *cublaslt.MatmulDesc, computeType cublaslt.ComputeType, scaleType cublaslt.DataType) (err error) {",
		"func curandGenerateUniform(ctx driver.Context, generator curand.Generator, outputPtr *float32, num uint64) (err error) {",
		"#cgo noescape cgx_blas_curandGenerateUniform\n",
		"#cgo nocallback cgx_blas_curandGenerateUniform\n",
		"\t{Name: \"cuCtxGetCurrent\", Lib: cgxDriver},\n",
		"\t{Name: \"cublasLtMatmulDescCreate\", Lib: cgxCublaslt},\n",
		"cgxCublaslt = cgx.NewLib(\"libcublaslt\", cublaslt.Proc, cublaslt.StatusError)",
		"\"github.com/cudago/cudago/bindings/cublaslt\"\n",
	)
	if strings.Contains(goSrc, "cgo noescape cgx_blas_cublasLtMatmulDescCreate") {
		t.Error("a call not in noEscape is marked")
	}
	containsAll(t, "the header", h,
		"#include \"../../../internal/cgx/cgx.h\"",
		"#define CGX_TABLE cgx_blas_fn\n",
		"extern void *cgx_blas_fn[CGX_N];",
		"\tCGX_cuCtxGetCurrent,\n\tCGX_cuCtxSetCurrent,\n\tCGX_cublasLtMatmulDescCreate,\n",
		"typedef unsigned int (*cgx_cuCtxGetCurrent_t)(void *pctx);",
	)
	if want := "cg_ret cgx_blas_curandGenerateUniform(uintptr_t ctx, uintptr_t generator, float *outputPtr, unsigned long num) {\n\tCGX_ENTER_LIB(ctx);\n\tCGX_CALL(curandGenerateUniform, generator, outputPtr, num);\n\treturn 0;\n}"; !strings.Contains(c, want) {
		t.Errorf("the C file lacks %q", want)
	}
	if strings.Contains(c, "cgx_blas_cuCtxGetCurrent(") {
		t.Error("the context helpers have shims")
	}
}

// TestLayerCallUnchecked checks what the word unchecked changes in
// cublasLtMatmul's call: its void * and struct pointer inputs cross as
// unsigned char *, which cgo does not check, and the shim passes them on.
func TestLayerCallUnchecked(t *testing.T) {
	for _, raw := range []bool{false, true} {
		list := &callList{libs: []string{"cublaslt"}, calls: []string{"cublasLtMatmul"}}
		if raw {
			list.unchecked = list.calls
		}
		files, err := emitCalls("some/where/blas", list, callModels(t, list))
		if err != nil {
			t.Fatal(err)
		}
		goSrc, c := string(files[callsGoFile]), string(files[callsCFile])
		typed := []string{"(*C.uchar)(unsafe.Pointer(alpha))", "(*C.uchar)(unsafe.Pointer(a))", "(*C.uchar)(unsafe.Pointer(d))", "(*C.uchar)(unsafe.Pointer(algo))", "(*C.uchar)(unsafe.Pointer(workspace))"}
		shim := "const unsigned char *alpha, const unsigned char *a, uintptr_t adesc"
		for _, s := range typed {
			if strings.Contains(goSrc, s) != raw {
				t.Errorf("unchecked %v: the Go file has %q: %v", raw, s, !raw)
			}
		}
		if strings.Contains(c, shim) != raw {
			t.Errorf("unchecked %v: the shim takes %q: %v", raw, shim, !raw)
		}
		if !strings.Contains(c, "CGX_CALL(cublasLtMatmul, lightHandle, computeDesc, alpha, a, adesc,") {
			t.Errorf("unchecked %v: the shim does not pass its arguments on:\n%s", raw, c)
		}
		if !strings.Contains(goSrc, "func cublasLtMatmul(ctx driver.Context, lightHandle cublaslt.Handle, computeDesc cublaslt.MatmulDesc, alpha unsafe.Pointer, a unsafe.Pointer,") {
			t.Errorf("unchecked %v: the Go signature changed", raw)
		}
	}
	// An output stays checked; an untyped input that is not void or a
	// struct (cublasGemmBatchedEx's arrays of matrices) is refused.
	out := &callList{libs: []string{"cublaslt"}, calls: []string{"cublasLtMatmulAlgoCheck"}, unchecked: []string{"cublasLtMatmulAlgoCheck"}}
	files, err := emitCalls("some/where/blas", out, callModels(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if c := string(files[callsCFile]); !strings.Contains(c, "unsigned char *algo, void *result)") {
		t.Errorf("cublasLtMatmulAlgoCheck unchecked: want its algo unchecked and its result (an output) as it was:\n%s", c)
	}
	arrays := &callList{libs: []string{"cublas"}, calls: []string{"cublasGemmBatchedEx"}, unchecked: []string{"cublasGemmBatchedEx"}}
	if _, err := emitCalls("some/where/blas", arrays, callModels(t, arrays)); err == nil || !strings.Contains(err.Error(), "an unchecked pointer to something other than void or a struct") {
		t.Errorf("cublasGemmBatchedEx unchecked: %v, want a refusal", err)
	}
	list := &callList{libs: []string{"cublaslt"}, calls: []string{"cublasLtMatmul"}, unchecked: []string{"cublasLtCreate"}}
	if _, err := emitCalls("some/where/blas", list, callModels(t, list)); err == nil || !strings.Contains(err.Error(), "unchecked names cublasLtCreate, which is not in its calls") {
		t.Errorf("unchecked naming an unlisted call: %v", err)
	}
}

// TestLayerCallShapesCuFile checks what cuFile's calls generate: a struct
// status packed by the header's cgx_pack_cufile and unpacked by
// cufile.PackedStatusError, an integer result stored through ret_ (with
// errno cleared before the call and read by cgo after it where asked), and
// a call that returns nothing.
func TestLayerCallShapesCuFile(t *testing.T) {
	list := &callList{libs: []string{"cufile"}, calls: []string{"cuFileDriverOpen", "cuFileRead", "cuFileUseCount", "cuFileHandleDeregister"}, errno: []string{"cuFileRead"}}
	ms := callModels(t, list)
	files, err := emitCalls("gds", list, ms)
	if err != nil {
		t.Fatal(err)
	}
	goSrc, h, c := string(files[callsGoFile]), string(files[callsHFile]), string(files[callsCFile])
	containsAll(t, "the Go file", goSrc,
		"cgxCufile = cgx.NewLib(\"libcufile\", cufile.Proc, cufile.PackedStatusError)",
		"func cuFileDriverOpen(ctx driver.Context) (err error) {",
		"func cuFileRead(ctx driver.Context, fh cufile.Handle, bufPtrBase unsafe.Pointer, size uint64, fileOffset int64, bufPtrOffset int64) (ret int64, err error) {",
		"\tr_, e_ := C.cgx_gds_cuFileRead(C.uintptr_t(ctx), C.uintptr_t(fh), bufPtrBase, C.ulong(size), C.long(fileOffset), C.long(bufPtrOffset), (*C.long)(unsafe.Pointer(&ret)))\n\terr = cgxCalls.Err(uint64(r_))\n\tif err == nil && ret == -1 && e_ != nil {\n\t\terr = e_\n\t}\n",
		"func cuFileUseCount(ctx driver.Context) (ret int64, err error) {\n\tcgxCalls.Load()\n\terr = cgxCalls.Err(uint64(C.cgx_gds_cuFileUseCount(C.uintptr_t(ctx), (*C.long)(unsafe.Pointer(&ret)))))\n",
		"func cuFileHandleDeregister(ctx driver.Context, fh cufile.Handle) (err error) {",
	)
	containsAll(t, "the header", h,
		"struct cg_CUfileError_t {\n\tunsigned int f0;\n\tunsigned int f1;\n};\nstatic inline unsigned cgx_pack_cufile(struct cg_CUfileError_t s) {",
		"typedef struct cg_CUfileError_t (*cgx_cuFileDriverOpen_t)(void);",
		"typedef long (*cgx_cuFileRead_t)(uintptr_t fh, void *bufPtrBase, unsigned long size, long fileOffset, long bufPtrOffset);",
		"cg_ret cgx_gds_cuFileRead(uintptr_t ctx, uintptr_t fh, void *bufPtrBase, unsigned long size, long fileOffset, long bufPtrOffset, long *ret_);",
	)
	containsAll(t, "the C file", c,
		"#include <errno.h>\n",
		"\tstruct cg_CUfileError_t s_ = ((cgx_cuFileDriverOpen_t)f_)();\n\tif (s_.f0 || s_.f1) return CG_RET(CGX_cuFileDriverOpen, cgx_pack_cufile(s_));\n",
		"\tif (!f_) return CG_RET(CGX_cuFileRead, CG_MISSING);\n\terrno = 0;\n\t*ret_ = ((cgx_cuFileRead_t)f_)(fh, bufPtrBase, size, fileOffset, bufPtrOffset);\n\treturn 0;\n",
		"\t*ret_ = ((cgx_cuFileUseCount_t)f_)();\n\treturn 0;\n",
		"\t((cgx_cuFileHandleDeregister_t)f_)(fh);\n\treturn 0;\n",
	)
	if strings.Count(c, "errno = 0;") != 1 {
		t.Error("errno is cleared for a call not in errno")
	}

	// A struct status needs the library's packedStatus.
	m := *ms["cufile"]
	cfg := *m.cfg
	cfg.packedStatus = ""
	m.cfg = &cfg
	ms2 := map[string]*model{"driver": ms["driver"], "cufile": &m}
	if _, err := emitCalls("gds", &callList{libs: []string{"cufile"}, calls: []string{"cuFileDriverOpen"}}, ms2); err == nil || !strings.Contains(err.Error(), "no packedStatus") {
		t.Errorf("a struct status without packedStatus: %v", err)
	}
}

// TestCallName checks the names of the generated functions.
func TestCallName(t *testing.T) {
	var got []string
	for _, c := range []struct{ lib, fn string }{{"cublas", "cublasSgemm_64"}, {"cublaslt", "cublasLtMatmul"}, {"cufft", "cufftExecC2C"}, {"cusolver", "cusolverDnSgetrf"}, {"cusparse", "cusparseCcsr2csr_compress"}} {
		m := libModel(t, c.lib)
		got = append(got, callName(&layerEntry{m: m, f: findFunc(m, c.fn)}))
	}
	sort.Strings(got)
	if want := "cublasLtMatmul cublasSgemm64 cufftExecC2C cusolverDnSgetrf cusparseCcsr2csrCompress"; strings.Join(got, " ") != want {
		t.Errorf("names %v, want %s", got, want)
	}
}
