package cublaslt

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every exported function of cublasLt.h is bound:
// 50 in the 13.0 and 12.4 headers together (counted with gcc -E from both;
// the five static inline ones are in cublaslt.go).
func TestCount(t *testing.T) {
	bindtest.Count(t, procs, Functions, 50)
	bindtest.Names(t, "Types", Types, map[string]string{"cublasStatus_t": "Status", "cudaDataType_t": "DataType", "cublasLtMatmulAlgo_t": "MatmulAlgo", "cublasLtEpilogue_t": "Epilogue"})
	bindtest.Codes[Epilogue](t, "cublasLtEpilogue_t", 1<<12, 16)
}

// TestEntryPoints resolves every function in the local cuBLASLt: a wrong
// symbol name fails here. The 12.4 header declares
// cublasLtDisableCpuInstructionsSetMask, but libcublasLt 12.4.5 does not
// export it.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CuBLASLt, procs, "cublasLtDisableCpuInstructionsSetMask"); n < 40 {
		t.Errorf("only %d of %d functions found", n, procs.Len())
	}
}

// TestVersion checks that the library reports its version through the
// bindings, the same as pathfinder reads it.
func TestVersion(t *testing.T) {
	p := bindtest.Version(t, pathfinder.CuBLASLt, GetProperty, cublas.MajorVersion, cublas.MinorVersion, cublas.PatchLevel)
	if v, err := GetVersion(); err != nil || v != uint64(p[0])*10000+uint64(p[1])*100+uint64(p[2]) || p[0] < 12 {
		t.Fatalf("GetVersion = %d, %v; GetProperty says %v", v, err, p)
	}
	if s, err := GetStatusName(cublas.StatusNotSupported); err != nil || s != "CUBLAS_STATUS_NOT_SUPPORTED" {
		t.Errorf("GetStatusName = %q, %v", s, err)
	}
}

// TestCreateWithoutGPU: without a GPU, cublasLtCreate fails with
// CUBLAS_STATUS_NOT_INITIALIZED ("the CUDA Runtime initialization
// failed"), not a crash.
func TestCreateWithoutGPU(t *testing.T) {
	_, err := bindtest.Create(t, pathfinder.CuBLASLt, Create, nil, Destroy)
	if err == nil {
		return // with a GPU
	}
	if e := bindtest.Failed(t, err, "cublasLtCreate", cublas.StatusNotInitialized); e.Message == "" {
		t.Fatalf("Create without a GPU = %v: no message", err)
	}
}

// TestDescriptors needs no GPU: a matmul descriptor made by the library
// and one initialized in Go memory (the inline Init) keep the attributes
// set on them.
func TestDescriptors(t *testing.T) {
	bindtest.Load(t, pathfinder.CuBLASLt)
	var d MatmulDesc
	if err := MatmulDescCreate(&d, cublas.Compute32F, cublas.R32F); err != nil {
		t.Fatal(err)
	}
	defer MatmulDescDestroy(d)
	var opaque MatmulDescOpaque
	inGo := MatmulDesc(uintptr(unsafe.Pointer(&opaque)))
	if err := MatmulDescInit(inGo, cublas.Compute32F, cublas.R32F); err != nil {
		t.Fatal(err)
	}
	for _, desc := range []MatmulDesc{d, inGo} {
		op := cublas.OpT
		if err := MatmulDescSetAttribute(desc, MatmulDescTransa, unsafe.Pointer(&op), uint64(unsafe.Sizeof(op))); err != nil {
			t.Fatal(err)
		}
		var got cublas.Operation
		n, err := MatmulDescGetAttribute(desc, MatmulDescTransa, unsafe.Pointer(&got), uint64(unsafe.Sizeof(got)))
		if err != nil || got != cublas.OpT || n != 4 {
			t.Fatalf("TRANSA = %v (%d bytes), %v; want CUBLAS_OP_T", got, n, err)
		}
		var ct cublas.ComputeType
		if _, err := MatmulDescGetAttribute(desc, MatmulDescComputeType, unsafe.Pointer(&ct), 4); err != nil || ct != cublas.Compute32F {
			t.Fatalf("COMPUTE_TYPE = %v, %v", ct, err)
		}
	}
	runtime.KeepAlive(&opaque)
	// A buffer too small for the attribute is the documented invalid value.
	var small uint8
	_, err := MatmulDescGetAttribute(d, MatmulDescTransa, unsafe.Pointer(&small), 1)
	if !errors.Is(err, cublas.StatusInvalidValue) {
		t.Fatalf("GetAttribute into 1 byte = %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
}
