package calltest

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/curand"
	"github.com/cudago/cudago/bindings/cusolver"
	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// pairs are every generated call and the bindings function it calls.
var pairs = []struct{ gen, bind any }{
	{cublasCreate, cublas.Create}, {cublasDestroy, cublas.Destroy}, {cublasGetVersion, cublas.GetVersion},
	{cublasSetStream, cublas.SetStream}, {cublasSgemm, cublas.Sgemm}, {cublasSgemm64, cublas.Sgemm64},
	{cublasLoggerConfigure, cublas.LoggerConfigure},
	{cublasLtCreate, cublaslt.Create}, {cublasLtDestroy, cublaslt.Destroy},
	{cublasLtMatmulDescCreate, cublaslt.MatmulDescCreate}, {cublasLtMatmul, cublaslt.Matmul},
	{curandCreateGenerator, curand.CreateGenerator}, {curandCreateGeneratorHost, curand.CreateGeneratorHost},
	{curandDestroyGenerator, curand.DestroyGenerator}, {curandSetPseudoRandomGeneratorSeed, curand.SetPseudoRandomGeneratorSeed},
	{curandGenerateUniform, curand.GenerateUniform}, {curandGenerateBinomial, curand.GenerateBinomial},
	{curandGetVersion, curand.GetVersion},
	{cufftCreate, cufft.Create}, {cufftDestroy, cufft.Destroy}, {cufftMakePlan1d, cufft.MakePlan1d},
	{cufftExecC2C, cufft.ExecC2C}, {cufftEstimate1d, cufft.Estimate1d},
	{cusparseCreate, cusparse.Create}, {cusparseDestroy, cusparse.Destroy},
	{cusparseCreateMatDescr, cusparse.CreateMatDescr}, {cusparseDestroyMatDescr, cusparse.DestroyMatDescr},
	{cusparseCcsr2csrCompress, cusparse.Ccsr2csrCompress},
	{cusolverDnCreate, cusolver.DnCreate}, {cusolverDnDestroy, cusolver.DnDestroy},
	{cusolverDnSgetrfBufferSize, cusolver.DnSgetrfBufferSize}, {cusolverDnSgetrf, cusolver.DnSgetrf},
	{nvvmCreateProgram, nvvm.CreateProgram}, {nvvmAddModuleToProgram, nvvm.AddModuleToProgram},
	{nvvmDestroyProgram, nvvm.DestroyProgram},
	{cuFileGetVersion, cufile.GetVersion}, {cuFileDriverOpen, cufile.DriverOpen}, {cuFileUseCount, cufile.UseCount},
	{cuFileHandleDeregister, cufile.HandleDeregister}, {cuFileRead, cufile.Read},
}

// funcName is the package-qualified name of a function value.
func funcName(f any) (pkg, name string) {
	full := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	i := strings.LastIndex(full, ".")
	return full[strings.LastIndex(full[:i], "/")+1 : i], full[i+1:]
}

// TestSignatures checks, through reflect, that each generated call has
// exactly the type of its bindings function with a driver.Context first,
// and the name <C prefix><the bindings' Go name>; and that pairs lists
// every function of calls_gen.go.
func TestSignatures(t *testing.T) {
	prefix := map[string]string{"cublas": "cublas", "cublaslt": "cublasLt", "curand": "curand", "cufft": "cufft",
		"cusparse": "cusparse", "cusolver": "cusolver", "nvvm": "nvvm", "cufile": "cuFile"}
	ctxType := reflect.TypeFor[driver.Context]()
	listed := map[string]bool{}
	for _, p := range pairs {
		gt, bt := reflect.TypeOf(p.gen), reflect.TypeOf(p.bind)
		gpkg, gname := funcName(p.gen)
		bpkg, bname := funcName(p.bind)
		listed[gname] = true
		if gpkg != "calltest" || gname != prefix[bpkg]+bname {
			t.Errorf("%s.%s calls %s.%s: want the name %s%s", gpkg, gname, bpkg, bname, prefix[bpkg], bname)
		}
		ins := []reflect.Type{ctxType}
		for i := range bt.NumIn() {
			ins = append(ins, bt.In(i))
		}
		var outs []reflect.Type
		for i := range bt.NumOut() {
			outs = append(outs, bt.Out(i))
		}
		if want := reflect.FuncOf(ins, outs, bt.IsVariadic()); gt != want {
			t.Errorf("%s: %v, want %v", gname, gt, want)
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "calls_gen.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			n++
			if !listed[fd.Name.Name] {
				t.Errorf("%s is not in pairs", fd.Name.Name)
			}
		}
	}
	if n != len(pairs) {
		t.Errorf("calls_gen.go has %d functions, pairs %d", n, len(pairs))
	}
}

// same fails unless the generated call's error is the bindings call's:
// the same type and value (both nil included).
func same(t *testing.T, what string, got, want error) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: in context %v (%T), bindings %v (%T)", what, got, got, want, want)
	}
}

// create runs a handle-creating call in context 0 and through the
// bindings: with a GPU both succeed and destroy destroys both handles;
// without one both fail alike, and the error must be a want (the status
// the bindings' own tests establish for no GPU).
func create[H any](t *testing.T, what string, gen func(driver.Context, *H) error, bind func(*H) error, destroy func(H) error, want ...error) {
	t.Helper()
	var h1, h2 H
	err1, err2 := gen(0, &h1), bind(&h2)
	same(t, what, err1, err2)
	if testenv.GPUError() == nil {
		if err1 != nil {
			t.Fatalf("%s with a GPU: %v", what, err1)
		}
		if err := destroy(h1); err != nil {
			t.Error(err)
		}
		if err := destroy(h2); err != nil {
			t.Error(err)
		}
		return
	}
	ok := false
	for _, w := range want {
		ok = ok || errors.Is(err1, w)
	}
	if !ok {
		t.Errorf("%s without a GPU: %v, want one of %v", what, err1, want)
	}
	t.Logf("%s without a GPU: %v", what, err1)
}

// TestSameAsBindings makes calls of every library in context 0, without a
// GPU as with one, next to the same calls through the bindings: the same
// results, and the same errors, typed by library (*cublas.Error, ...),
// count checks and missing entry points included.
func TestSameAsBindings(t *testing.T) {
	for _, lib := range []pathfinder.Lib{pathfinder.CuBLAS, pathfinder.CuBLASLt, pathfinder.CuRAND, pathfinder.CuFFT, pathfinder.CuSPARSE, pathfinder.CuSOLVER, pathfinder.NVVM} {
		bindtest.Load(t, lib)
	}

	t.Run("cublas", func(t *testing.T) {
		var v1, v2 int32
		same(t, "GetVersion", cublasGetVersion(0, 0, &v1), cublas.GetVersion(0, &v2))
		if v1 != v2 || v1 < 120000 {
			t.Errorf("versions %d and %d", v1, v2)
		}
		create(t, "cublasCreate", cublasCreate, cublas.Create, cublas.Destroy, cublas.StatusNotInitialized)
		var e *cublas.Error
		var h cublas.Handle
		if err := cublasCreate(0, &h); err != nil && (!errors.As(err, &e) || e.Func != "cublasCreate" || e.Message == "") {
			t.Errorf("cublasCreate: %#v, want a *cublas.Error with the library's message", err)
		} else if err == nil {
			cublasDestroy(0, h)
		}
	})
	t.Run("cublaslt", func(t *testing.T) {
		create(t, "cublasLtCreate", cublasLtCreate, cublaslt.Create, cublaslt.Destroy, cublas.StatusNotInitialized)
	})
	t.Run("curand", func(t *testing.T) {
		var v1, v2 int32
		same(t, "GetVersion", curandGetVersion(0, &v1), curand.GetVersion(&v2))
		if v1 != v2 || v1 < 10000 {
			t.Errorf("versions %d and %d", v1, v2)
		}
		gen := func(ctx driver.Context, g *curand.Generator) error {
			return curandCreateGenerator(ctx, g, curand.RngPseudoDefault)
		}
		bind := func(g *curand.Generator) error { return curand.CreateGenerator(g, curand.RngPseudoDefault) }
		create(t, "curandCreateGenerator", gen, bind, curand.DestroyGenerator, curand.StatusInitializationFailed)

		// A host generator works without a GPU: the same seed gives the
		// same numbers through both.
		var g1, g2 curand.Generator
		same(t, "CreateGeneratorHost", curandCreateGeneratorHost(0, &g1, curand.RngPseudoDefault), curand.CreateGeneratorHost(&g2, curand.RngPseudoDefault))
		if g1 == 0 || g2 == 0 {
			t.Fatal("no host generator")
		}
		defer curandDestroyGenerator(0, g1)
		defer curand.DestroyGenerator(g2)
		same(t, "SetPseudoRandomGeneratorSeed", curandSetPseudoRandomGeneratorSeed(0, g1, 42), curand.SetPseudoRandomGeneratorSeed(g2, 42))
		x1, x2 := make([]float32, 257), make([]float32, 257)
		same(t, "GenerateUniform", curandGenerateUniform(0, g1, &x1[0], uint64(len(x1))), curand.GenerateUniform(g2, &x2[0], uint64(len(x2))))
		if !reflect.DeepEqual(x1, x2) || x1[0] == 0 || x1[0] == x1[1] {
			t.Errorf("uniform numbers differ or are not random: %v... and %v...", x1[:3], x2[:3])
		}
		// A generator type that does not exist: the status error of either.
		var g3, g4 curand.Generator
		err1 := curandCreateGeneratorHost(0, &g3, 12345)
		same(t, "CreateGeneratorHost(type 12345)", err1, curand.CreateGeneratorHost(&g4, 12345))
		var e *curand.Error
		if !errors.As(err1, &e) || e.Func != "curandCreateGeneratorHost" {
			t.Errorf("CreateGeneratorHost(type 12345): %v, want a *curand.Error", err1)
		}

		// libcurand 10.3.5 (CUDA 12.4) lacks the binomial generator that
		// curand.h declares: the same *MissingFunctionError. Not called
		// where present: a NULL generator is not a documented input.
		if _, err := curand.Proc("curandGenerateBinomial"); err != nil {
			err1 := curandGenerateBinomial(0, 0, nil, 0, 1, 0.5)
			var mf *curand.MissingFunctionError
			if !errors.As(err1, &mf) || mf.Func != "curandGenerateBinomial" || err1 != curand.GenerateBinomial(0, nil, 0, 1, 0.5) {
				t.Errorf("curandGenerateBinomial: %v, want the bindings' *MissingFunctionError", err1)
			}
		}
	})
	t.Run("cufft", func(t *testing.T) {
		create(t, "cufftCreate", cufftCreate, cufft.Create, cufft.Destroy, cufft.InternalError, cufft.SetupFailed)
		w1, err1 := cufftEstimate1d(0, 1000, cufft.C2C, 3)
		w2, err2 := cufft.Estimate1d(1000, cufft.C2C, 3)
		same(t, "Estimate1d", err1, err2)
		if w1 != w2 {
			t.Errorf("Estimate1d: work sizes %d and %d", w1, w2)
		}
		// No plan (cufftCreate failed): CUFFT_INVALID_PLAN from both, as
		// the bindings' test has it.
		if testenv.GPUError() == nil {
			return
		}
		_, err1 = cufftMakePlan1d(0, 0, 1024, cufft.C2C, 1)
		_, err2 = cufft.MakePlan1d(0, 1024, cufft.C2C, 1)
		same(t, "MakePlan1d(no plan)", err1, err2)
		if !errors.Is(err1, cufft.InvalidPlan) {
			t.Errorf("MakePlan1d(no plan): %v, want CUFFT_INVALID_PLAN", err1)
		}
	})
	t.Run("cusparse", func(t *testing.T) {
		create(t, "cusparseCreate", cusparseCreate, cusparse.Create, cusparse.Destroy, cusparse.StatusNotInitialized)
		// A matrix descriptor needs no GPU.
		var d cusparse.MatDescr
		if err := cusparseCreateMatDescr(0, &d); err != nil || d == 0 {
			t.Fatalf("cusparseCreateMatDescr: %v", err)
		}
		if err := cusparseDestroyMatDescr(0, d); err != nil {
			t.Error(err)
		}
	})
	t.Run("cusolver", func(t *testing.T) {
		create(t, "cusolverDnCreate", cusolverDnCreate, cusolver.DnCreate, cusolver.DnDestroy, cusolver.StatusNotInitialized)
	})
	t.Run("nvvm", func(t *testing.T) {
		p1, err1 := nvvmCreateProgram(0)
		p2, err2 := nvvm.CreateProgram()
		same(t, "CreateProgram", err1, err2)
		if err1 != nil {
			t.Fatal(err1)
		}
		defer nvvmDestroyProgram(0, &p1)
		defer nvvm.DestroyProgram(&p2)
		// A size past the string: the same *CountError, before any call.
		err1 = nvvmAddModuleToProgram(0, p1, "abc", 5, "m")
		same(t, "AddModuleToProgram(size 5 of 3 bytes)", err1, nvvm.AddModuleToProgram(p2, "abc", 5, "m"))
		var ce *dl.CountError
		if !errors.As(err1, &ce) || ce.Count != "size" || ce.Value != 5 || ce.Len != 4 {
			t.Errorf("AddModuleToProgram(size 5 of 3 bytes): %v, want a *CountError", err1)
		}
		same(t, "AddModuleToProgram", nvvmAddModuleToProgram(0, p1, "abc", 3, "m"), nvvm.AddModuleToProgram(p2, "abc", 3, "m"))
	})
}

// TestSameAsBindingsCuFile does the same for cuFile, whose status is a
// struct (CUfileError_t) that the shims pack into 32 bits, whose
// cuFileRead returns a byte count (or -1 and errno), and whose
// cuFileHandleDeregister returns nothing.
func TestSameAsBindingsCuFile(t *testing.T) {
	bindtest.Load(t, pathfinder.CuFile)
	// cuFile logs its errors to cufile.log in the current directory
	// unless told otherwise; it reads the variable at each driver open.
	t.Setenv("CUFILE_LOGFILE_PATH", filepath.Join(t.TempDir(), "cufile.log"))
	// cuFile dlopens libcuda.so.1 itself: loading the driver first makes
	// it find the one cudago uses (by soname) rather than fail without.
	gpuErr := driver.Init(0)

	var v1, v2 int32
	same(t, "GetVersion", cuFileGetVersion(0, &v1), cufile.GetVersion(&v2))
	if v1 != v2 || v1 < 1000 {
		t.Errorf("versions %d and %d, want 1000*major+10*minor", v1, v2)
	}
	n1, err1 := cuFileUseCount(0)
	n2, err2 := cufile.UseCount()
	same(t, "UseCount", err1, err2)
	if n1 != n2 || n1 < 0 {
		t.Errorf("use counts %d and %d", n1, n2)
	}
	if gpuErr == nil {
		// Both open the driver (or fail alike: no nvidia-fs and no
		// compatibility mode), which counts its users; both close it.
		err1, err2 := cuFileDriverOpen(0), cufile.DriverOpen()
		same(t, "DriverOpen", err1, err2)
		if err1 != nil {
			t.Logf("DriverOpen with a GPU: %v", err1)
			return
		}
		if n, err := cufile.UseCount(); err != nil || n < 1 {
			t.Errorf("UseCount after two opens: %d, %v", n, err)
		}
		for range 2 {
			if err := cufile.DriverCloseV2(); err != nil {
				t.Error(err)
			}
		}
		return
	}
	// Without a GPU (with libcuda loaded) the driver does not open:
	// CU_FILE_CUDA_DRIVER_ERROR carrying cuInit's CUDA_ERROR_NO_DEVICE,
	// unpacked from the shim's 32 bits into the bindings' own error.
	err1 = cuFileDriverOpen(0)
	same(t, "DriverOpen", err1, cufile.DriverOpen())
	var e *cufile.Error
	if !errors.As(err1, &e) || e.Func != "cuFileDriverOpen" || e.Code != cufile.CudaDriverError || e.CUCode != uint32(driver.ErrorNoDevice) ||
		!errors.Is(err1, cufile.CudaDriverError) || !errors.Is(err1, driver.ErrorNoDevice) {
		t.Errorf("DriverOpen without a GPU: %#v, want CU_FILE_CUDA_DRIVER_ERROR with CUDA_ERROR_NO_DEVICE", err1)
	}
	if got, want := err1.Error(), "cufile: cuFileDriverOpen: CU_FILE_CUDA_DRIVER_ERROR (CUDA_ERROR_NO_DEVICE)"; got != want {
		t.Errorf("DriverOpen without a GPU: %q, want %q", got, want)
	}
	// No handle: -1 from both; the generated call adds the errno.
	r1, err1 := cuFileRead(0, 0, nil, 10, 0, 0)
	r2, err2 := cufile.Read(0, nil, 10, 0, 0)
	if r1 != -1 || r2 != -1 || err2 != nil {
		t.Errorf("Read(no handle): %d and %d (%v), want -1", r1, r2, err2)
	}
	if err1 != nil {
		if _, ok := err1.(syscall.Errno); !ok {
			t.Errorf("Read(no handle): %#v, want nil or a syscall.Errno", err1)
		}
	}
	t.Logf("Read(no handle) without a GPU: %d, errno %v", r1, err1)
	same(t, "HandleDeregister(no handle)", cuFileHandleDeregister(0, 0), cufile.HandleDeregister(0))
	if ents, err := os.ReadDir("."); err == nil {
		for _, d := range ents {
			if d.Name() == "cufile.log" {
				t.Error("cuFile wrote cufile.log into the package directory")
			}
		}
	}
}

// TestContextFailure: a context that cannot be made current gives the
// *driver.Error of the driver call that failed, the one bindings/driver
// returns for it, and the library is not called. It runs where the driver
// is not initialized (no GPU): cuCtxGetCurrent fails before the context
// is looked at, so the bogus handle is never used.
func TestContextFailure(t *testing.T) {
	if testenv.GPUError() == nil {
		t.Skip("the driver works here: TestGPUContext covers the context")
	}
	_, want := driver.CtxGetCurrent()
	if want == nil {
		t.Skip("cuCtxGetCurrent works without a GPU here")
	}
	const bogus = driver.Context(1) // never looked at: see above
	var h cublas.Handle
	err := cublasCreate(bogus, &h)
	same(t, "cublasCreate(bogus context)", err, want)
	var e *driver.Error
	if errors.As(err, &e) && e.Func != "cuCtxGetCurrent" {
		t.Errorf("the error names %s, want cuCtxGetCurrent", e.Func)
	}
	if h != 0 {
		t.Error("the library was called")
	}
	t.Logf("without a GPU: %v", err)
}

// TestGPUContext: each call makes its context current on the calling
// thread, whatever was current there before, and a context of 0 leaves
// the current one as it is.
func TestGPUContext(t *testing.T) {
	testenv.RequireGPU(t)
	bindtest.Load(t, pathfinder.CuBLAS)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := driver.DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := driver.DevicePrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer driver.DevicePrimaryCtxRelease(dev)
	other, err := driver.CtxCreateV2(0, dev) // in every driver; it becomes current
	if err != nil {
		t.Fatal(err)
	}
	defer driver.CtxDestroy(other)
	current := func() driver.Context {
		t.Helper()
		c, err := driver.CtxGetCurrent()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, before := range []driver.Context{0, other, ctx} {
		if err := driver.CtxSetCurrent(before); err != nil {
			t.Fatal(err)
		}
		var h cublas.Handle
		if err := cublasCreate(ctx, &h); err != nil {
			t.Fatalf("cublasCreate in the primary context (%#x current before): %v", before, err)
		}
		if c := current(); c != ctx {
			t.Errorf("after cublasCreate(ctx) with %#x current: %#x is current, want ctx %#x", before, c, ctx)
		}
		var s cublas.Stream
		if err := driver.CtxSetCurrent(other); err != nil {
			t.Fatal(err)
		}
		if err := cublasSetStream(ctx, h, s); err != nil {
			t.Error(err)
		}
		var v int32
		if err := cublasGetVersion(0, h, &v); err != nil || v < 120000 {
			t.Errorf("cublasGetVersion(0): %d, %v", v, err)
		}
		if c := current(); c != ctx {
			t.Errorf("after cublasGetVersion(0): %#x is current, want ctx %#x, which the call before made current", c, ctx)
		}
		if err := cublasDestroy(ctx, h); err != nil {
			t.Error(err)
		}
	}
}
