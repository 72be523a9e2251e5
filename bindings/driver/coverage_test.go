package driver

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/testing/seeds"
)

// TestSeedFunctions proves that every driver function of the reference list
// has a Go function (or a var naming one) in this package.
func TestSeedFunctions(t *testing.T) {
	if n := seedCovered(t, "driver-functions.txt", "Functions", Functions, "func", "var"); n != 419 {
		t.Errorf("driver-functions.txt has %d names, want 419", n)
	}
}

// TestSeedTypes proves that every driver type of the reference list has a
// Go type.
func TestSeedTypes(t *testing.T) {
	n := seedCovered(t, "driver-types.txt", "Types", Types, "type")
	t.Logf("%d types covered", n)
}

// seedCovered checks that each C name of the reference list file has an
// entry in table (Functions or Types, called name) whose Go name the
// package declares as one of kinds ("func", "var", "type"). It returns
// the number of names in the list.
func seedCovered(t *testing.T, file, name string, table map[string]string, kinds ...string) int {
	t.Helper()
	seeds.Need(t)
	want, err := seeds.Lines(file)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := seeds.Declared(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		g, ok := table[c]
		if !ok {
			t.Errorf("%s: not in %s", c, name)
			continue
		}
		if !slices.Contains(kinds, decl[g]) {
			t.Errorf("%s: %s says %s, which the package does not declare as a %s", c, name, g, strings.Join(kinds, " or "))
		}
	}
	return len(want)
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
