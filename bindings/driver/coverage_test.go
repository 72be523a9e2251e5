package driver

import (
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/testing/seeds"
)

// TestSeedFunctions proves that every driver function of the reference list
// has a Go function (or a var naming one) in this package.
func TestSeedFunctions(t *testing.T) {
	seeds.Need(t)
	want, err := seeds.Lines("driver-functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 419 {
		t.Fatalf("driver-functions.txt has %d names, want 419", len(want))
	}
	decl, err := seeds.Declared(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		g, ok := Functions[c]
		if !ok {
			t.Errorf("%s: no Go function", c)
			continue
		}
		if k := decl[g]; k != "func" && k != "var" {
			t.Errorf("%s: Functions says %s, which the package does not declare", c, g)
		}
	}
}

// TestSeedTypes proves that every driver type of the reference list has a
// Go type.
func TestSeedTypes(t *testing.T) {
	seeds.Need(t)
	want, err := seeds.Lines("driver-types.txt")
	if err != nil {
		t.Fatal(err)
	}
	decl, err := seeds.Declared(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		g, ok := Types[c]
		if !ok {
			t.Errorf("%s: no Go type", c)
			continue
		}
		if decl[g] != "type" {
			t.Errorf("%s: Types says %s, which the package does not declare as a type", c, g)
		}
	}
	t.Logf("%d types covered", len(want))
}

// TestProcVersions checks what cuGetProcAddress will be asked for: the
// revision each name stands for must come with the version of that revision.
func TestProcVersions(t *testing.T) {
	want := map[string]int{
		"cuMemAlloc":        3020,  // cuMemAlloc_v2
		"cuCtxCreate":       12050, // cuCtxCreate_v4
		"cuCtxCreate_v3":    11040,
		"cuStreamGetCtx":    9020,
		"cuGraphAddNode":    12030, // cuGraphAddNode_v2
		"cuMemAdvise":       12020, // cuMemAdvise_v2
		"cuLaunchKernel":    4000,
		"cuGetErrorName":    6000,
		"cuLibraryLoadData": 12000,
	}
	for name, v := range want {
		i := procs.Index(name)
		if i < 0 {
			t.Errorf("%s: not in the table", name)
			continue
		}
		if got := procs.Proc(i).Version; got != v {
			t.Errorf("%s: version %d, want %d", name, got, v)
		}
	}
	if got := baseName("cuCtxCreate_v3"); got != "cuCtxCreate" {
		t.Errorf("baseName(cuCtxCreate_v3) = %q", got)
	}
	if got := baseName("cuMemAlloc"); got != "cuMemAlloc" {
		t.Errorf("baseName(cuMemAlloc) = %q", got)
	}
}

// Shapes the generator must get right: outputs as results (a returned C
// string too), string arrays as []string, handles by value.
var (
	_ func(Function) (string, error)                                        = FuncGetName
	_ func(Kernel) (string, error)                                          = KernelGetName
	_ func(Result) (string, error)                                          = GetErrorString
	_ func(uint64) (Deviceptr, error)                                       = MemAlloc
	_ func() (uint64, uint64, error)                                        = MemGetInfo
	_ func(Library, string) (Kernel, error)                                 = LibraryGetKernel
	_ func(Deviceptr, unsafe.Pointer, uint64) error                         = MemcpyHtoD
	_ func(*LaunchConfig, Function, *unsafe.Pointer, *unsafe.Pointer) error = LaunchKernelEx
)
