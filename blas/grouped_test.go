package blas

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/dl"
)

// wantGroupedAccepted checks that err is what valid arguments give on the
// zero Handle: core.ErrClosed, or, where the library lacks the function
// (or is absent), the error resolving it gave.
func wantGroupedAccepted(t *testing.T, what string, err error, e elem) {
	t.Helper()
	if missing := missingCall(groupedCall(e)); missing != nil {
		if !errors.Is(err, missing) {
			t.Errorf("%s: %v, want %v (%s cannot be called here)", what, err, missing, groupedCall(e))
		}
		return
	}
	wantClosed(t, what, err)
}

func TestGroupedChecks(t *testing.T) {
	// Group 0: two 4×5·5×3 GEMMs; group 1: one 2×6ᵀ·... (Trans A) GEMM.
	g0 := GemmGroup{TransA: NoTrans, TransB: NoTrans, M: 4, N: 3, K: 5, Alpha: 1, LdA: 4, LdB: 5, LdC: 4,
		A: []*core.Buffer{f32(20), f32(20)}, B: []*core.Buffer{f32(15), f32(15)}, C: []*core.Buffer{f32(12), f32(12)}}
	g1 := GemmGroup{TransA: Trans, TransB: NoTrans, M: 2, N: 6, K: 3, Alpha: 2, Beta: 1, LdA: 3, LdB: 3, LdC: 2,
		A: []*core.Buffer{f32(6)}, B: []*core.Buffer{f32(18)}, C: []*core.Buffer{f32(12)}}
	fn := "GemmGrouped"
	s := elemOf[float32]()
	wantGroupedAccepted(t, "two groups", GemmGrouped[float32](zero, []GemmGroup{g0, g1}), s)
	if err := GemmGrouped[float32](zero, nil); err != nil {
		t.Errorf("no groups: %v, want nil", err)
	}
	if err := GemmGrouped[float32](zero, []GemmGroup{{M: 3, N: 3, K: 3, LdA: 3, LdB: 3, LdC: 3}}); err != nil {
		t.Errorf("an empty group: %v, want nil", err)
	}
	if err := GemmGrouped[float32](nil, []GemmGroup{g0}); err == nil || !strings.Contains(err.Error(), "nil *Handle") {
		t.Errorf("nil Handle: %v", err)
	}
	bad := g1
	bad.TransB = 9
	wantArgErr(t, "transpose", GemmGrouped[float32](zero, []GemmGroup{g0, bad}), fn, "groups[1].TransB", "groups[1].TransB = ")
	bad = g1
	bad.K = -1
	wantArgErr(t, "negative K", GemmGrouped[float32](zero, []GemmGroup{g0, bad}), fn, "groups[1].K", "groups[1].K = -1 is negative")
	bad = g0
	bad.B = bad.B[:1]
	wantArgErr(t, "B short", GemmGrouped[float32](zero, []GemmGroup{bad}), fn, "groups[0].C", "groups[0].C has 2 Buffers, A 2 and B 1")
	bad = g0
	bad.A = []*core.Buffer{f32(20), f32(19)}
	wantArgErr(t, "A[1] short", GemmGrouped[float32](zero, []GemmGroup{bad}), fn, "groups[0].A[1]", "groups[0].A[1] holds 76 bytes, but A (4×5 float32, column-major, groups[0].LdA 4) needs 80 bytes")
	bad = g1
	bad.LdA = 2
	wantArgErr(t, "LdA", GemmGrouped[float32](zero, []GemmGroup{g0, bad}), fn, "groups[1].LdA", "groups[1].LdA = 2 must be at least 3: A is 3×2, column-major")
	bad = g0
	bad.C = []*core.Buffer{f32(12), nil}
	wantArgErr(t, "nil C", GemmGrouped[float32](zero, []GemmGroup{bad}), fn, "groups[0].C[1]", "groups[0].C[1] is nil")
	// Row-major: LdA is A's row length.
	wantArgErr(t, "row-major LdA", GemmGroupedRowMajor[float32](zero, []GemmGroup{g0}), "GemmGroupedRowMajor", "groups[0].LdA", "groups[0].LdA = 4 must be at least 5: A is 4×5, row-major")
	// Overlapping C, within a group and across groups (checked where the
	// function can be called: after the checks, before the GPU).
	if missingCall(groupedCall(s)) == nil {
		shared := f32(32)
		v, _ := shared.View(16, 64) // 4 elements into shared: inside the first C's 12
		over := g0
		over.C = []*core.Buffer{shared, v}
		wantArgErr(t, "C overlapping", GemmGrouped[float32](zero, []GemmGroup{over}), fn, "groups", "the C Buffers of GEMMs 0 and 1")
		first, other := g0, g1
		first.C = []*core.Buffer{f32(12), v}
		other.C = []*core.Buffer{shared}
		wantArgErr(t, "C of two groups overlapping", GemmGrouped[float32](zero, []GemmGroup{first, other}), fn, "groups", "the C Buffers of GEMMs 2 and 1")
	}
	wantGroupedAccepted(t, "float64", GemmGrouped[float64](zero, []GemmGroup{{M: 2, N: 2, K: 2, Alpha: 1, LdA: 2, LdB: 2, LdC: 2,
		A: []*core.Buffer{fake(32)}, B: []*core.Buffer{fake(32)}, C: []*core.Buffer{fake(32)}}}), elemOf[float64]())
}

func TestOverlappingSpans(t *testing.T) {
	for _, c := range []struct {
		addrs, spans []uint64
		ok           bool
	}{
		{[]uint64{0, 100, 200}, []uint64{100, 100, 100}, false},
		{[]uint64{200, 0, 100}, []uint64{100, 100, 100}, false},
		{[]uint64{0, 100, 150}, []uint64{100, 100, 100}, true},
		{[]uint64{0, 10, 500}, []uint64{1000, 10, 10}, true}, // a long one covers a later one
		{[]uint64{0, 0}, []uint64{8, 8}, true},
		{[]uint64{}, []uint64{}, false},
	} {
		if _, _, ok := overlappingSpans(c.addrs, c.spans); ok != c.ok {
			t.Errorf("%v spans %v: overlap %v, want %v", c.addrs, c.spans, ok, c.ok)
		}
	}
}

// TestGroupedMissingFunction: Half and BFloat16 grouped GEMMs need
// cublasGemmGroupedBatchedEx (cuBLAS 12.5); on a library without it (CI's
// and this repository's local CUDA 12.4) GemmGrouped returns the
// missing-function error before anything is queued.
func TestGroupedMissingFunction(t *testing.T) {
	if err := missingCall("cublasCreate"); err != nil {
		t.Skipf("no cuBLAS to load here: %v", err)
	}
	g := GemmGroup{M: 2, N: 2, K: 2, Alpha: 1, LdA: 2, LdB: 2, LdC: 2, A: []*core.Buffer{fake(8)}, B: []*core.Buffer{fake(8)}, C: []*core.Buffer{fake(8)}}
	err := GemmGrouped[Half](zero, []GemmGroup{g})
	missing := missingCall("cublasGemmGroupedBatchedEx")
	if missing == nil {
		t.Logf("this cuBLAS has cublasGemmGroupedBatchedEx")
		wantClosed(t, "Half", err)
		return
	}
	var mf *dl.MissingFunctionError
	if !errors.As(err, &mf) || mf.Func != "cublasGemmGroupedBatchedEx" || !strings.HasPrefix(err.Error(), "blas: GemmGrouped: ") {
		t.Fatalf("Half on a cuBLAS without cublasGemmGroupedBatchedEx: %v, want a *dl.MissingFunctionError naming it", err)
	}
	t.Logf("%v", err)
	if err := GemmGroupedRowMajor[BFloat16](zero, []GemmGroup{g}); !errors.As(err, &mf) {
		t.Errorf("BFloat16: %v, want the missing-function error", err)
	}
	// float32 and float64 take cublas[SD]gemmGroupedBatched, which cuBLAS
	// 12.4 has.
	wantGroupedAccepted(t, "float32", GemmGrouped[float32](zero, []GemmGroup{{M: 2, N: 2, K: 2, Alpha: 1, LdA: 2, LdB: 2, LdC: 2, A: []*core.Buffer{f32(4)}, B: []*core.Buffer{f32(4)}, C: []*core.Buffer{f32(4)}}}), elemOf[float32]())
}
