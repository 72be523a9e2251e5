package cusparse

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/pathfinder"
)

// TestCount checks that every function of cusparse.h is bound: 448 that C
// sees in the 13.0 and 12.4 headers together (counted with gcc -E from
// both) and the 12 that the header declares for C++ only.
func TestCount(t *testing.T) {
	bindtest.Count(t, procs, Functions, 460)
	bindtest.Names(t, "Functions", Functions, map[string]string{"cusparseSpMV": "SpMV", "cusparseHpruneDense2csr": "HpruneDense2csr", "cusparseCreateCsr": "CreateCsr"})
	// cusparseStatus_t: 12 codes.
	bindtest.Codes[Status](t, "cusparseStatus_t", 64, 12)
}

// notExported are functions that cusparse.h declares (deprecated, the
// _bufferSizeExt forms of the bsr and csric02/csrilu02 routines, and
// cusparseXgebsr2csr) but libcusparse 12.3.1 (CUDA 12.4) does not export.
var notExported = []string{
	"cusparseCbsric02_bufferSizeExt", "cusparseCbsrilu02_bufferSizeExt",
	"cusparseCbsrsm2_bufferSizeExt", "cusparseCbsrsv2_bufferSizeExt",
	"cusparseCcsr2gebsr_bufferSizeExt", "cusparseCcsric02_bufferSizeExt",
	"cusparseCcsrilu02_bufferSizeExt", "cusparseCgebsr2gebsc_bufferSizeExt",
	"cusparseCgebsr2gebsr_bufferSizeExt", "cusparseDbsric02_bufferSizeExt",
	"cusparseDbsrilu02_bufferSizeExt", "cusparseDbsrsm2_bufferSizeExt",
	"cusparseDbsrsv2_bufferSizeExt", "cusparseDcsr2gebsr_bufferSizeExt",
	"cusparseDcsric02_bufferSizeExt", "cusparseDcsrilu02_bufferSizeExt",
	"cusparseDgebsr2gebsc_bufferSizeExt", "cusparseDgebsr2gebsr_bufferSizeExt",
	"cusparseSbsric02_bufferSizeExt", "cusparseSbsrilu02_bufferSizeExt",
	"cusparseSbsrsm2_bufferSizeExt", "cusparseSbsrsv2_bufferSizeExt",
	"cusparseScsr2gebsr_bufferSizeExt", "cusparseScsric02_bufferSizeExt",
	"cusparseScsrilu02_bufferSizeExt", "cusparseSgebsr2gebsc_bufferSizeExt",
	"cusparseSgebsr2gebsr_bufferSizeExt", "cusparseXgebsr2csr", "cusparseZbsric02_bufferSizeExt",
	"cusparseZbsrilu02_bufferSizeExt", "cusparseZbsrsm2_bufferSizeExt",
	"cusparseZbsrsv2_bufferSizeExt", "cusparseZcsr2gebsr_bufferSizeExt",
	"cusparseZcsric02_bufferSizeExt", "cusparseZcsrilu02_bufferSizeExt",
	"cusparseZgebsr2gebsc_bufferSizeExt", "cusparseZgebsr2gebsr_bufferSizeExt",
}

// TestEntryPoints resolves every function in the local cuSPARSE: a wrong
// symbol name fails here.
func TestEntryPoints(t *testing.T) {
	if n := bindtest.Resolves(t, pathfinder.CuSPARSE, procs, notExported...); n < 460-len(notExported) {
		t.Errorf("only %d of %d functions found", n, procs.Len())
	}
}

// TestVersion checks that the library reports its version through the
// bindings, the same as pathfinder reads it (cusparseGetVersion needs a
// handle, which needs a GPU: without one, it is the documented invalid
// value for a NULL handle).
func TestVersion(t *testing.T) {
	if p := bindtest.Version(t, pathfinder.CuSPARSE, GetProperty, MajorVersion, MinorVersion, PatchLevel); p[0] != 12 {
		t.Fatalf("cuSPARSE %v, want 12.x", p)
	}
	LoggerSetLevel(0) // no "On entry to ..." lines on stderr for the bad calls below
	var v int32
	if err := GetVersion(0, &v); !errors.Is(err, StatusInvalidValue) {
		t.Errorf("GetVersion(NULL) = %v, want CUSPARSE_STATUS_INVALID_VALUE", err)
	}
	if s, err := GetErrorName(StatusNotSupported); err != nil || s != "CUSPARSE_STATUS_NOT_SUPPORTED" {
		t.Errorf("GetErrorName = %q, %v", s, err)
	}
}

// TestCreateWithoutGPU: without a GPU, cusparseCreate fails with
// CUSPARSE_STATUS_NOT_INITIALIZED ("the CUDA Runtime initialization
// failed"), not a crash.
func TestCreateWithoutGPU(t *testing.T) {
	bindtest.Load(t, pathfinder.CuSPARSE)
	LoggerSetLevel(0)
	_, err := bindtest.Create(t, pathfinder.CuSPARSE, Create, func(h Handle) {
		var v int32
		if err := GetVersion(h, &v); err != nil || v < 12000 {
			t.Errorf("GetVersion = %d, %v", v, err)
		}
	}, Destroy)
	if err == nil {
		return // with a GPU
	}
	if e := bindtest.Failed(t, err, "cusparseCreate", StatusNotInitialized); e.Message == "" {
		t.Fatalf("Create without a GPU = %v: no message", err)
	}
}

// TestMatDescr needs no GPU: a legacy matrix descriptor keeps what is set
// on it, and a bad value is the documented invalid value.
func TestMatDescr(t *testing.T) {
	bindtest.Load(t, pathfinder.CuSPARSE)
	LoggerSetLevel(0)
	var d MatDescr
	if err := CreateMatDescr(&d); err != nil {
		t.Fatal(err)
	}
	defer DestroyMatDescr(d)
	if b, err := GetMatIndexBase(d); err != nil || b != IndexBaseZero {
		t.Fatalf("new descriptor's base = %v, %v; want zero", b, err)
	}
	if err := SetMatIndexBase(d, IndexBaseOne); err != nil {
		t.Fatal(err)
	}
	if err := SetMatType(d, MatrixTypeSymmetric); err != nil {
		t.Fatal(err)
	}
	b, err := GetMatIndexBase(d)
	mt, err2 := GetMatType(d)
	if err != nil || err2 != nil || b != IndexBaseOne || mt != MatrixTypeSymmetric {
		t.Fatalf("base %v (%v), type %v (%v)", b, err, mt, err2)
	}
	if err := SetMatIndexBase(d, IndexBase(7)); !errors.Is(err, StatusInvalidValue) {
		t.Fatalf("SetMatIndexBase(7) = %v, want CUSPARSE_STATUS_INVALID_VALUE", err)
	}
}
