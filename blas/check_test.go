package blas

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// fakeMR makes Buffers that never reach the driver, so that the checks
// run without a GPU. Its Device is nil (no device check).
type fakeMR struct{ hostOnly bool }

func (m *fakeMR) Allocate(int, *core.Stream) (*core.Buffer, error) {
	return nil, errors.New("fakeMR: no allocations")
}
func (m *fakeMR) Deallocate(driver.Deviceptr, int, *core.Stream) error { return nil }
func (m *fakeMR) Device() *core.Device                                 { return nil }
func (m *fakeMR) DeviceAccessible() bool                               { return !m.hostOnly }
func (m *fakeMR) HostAccessible() bool                                 { return m.hostOnly }

var (
	fakeDev   = &fakeMR{}
	fakeHost  = &fakeMR{hostOnly: true}
	fakeAddrs atomic.Uint64
)

// fake returns a Buffer of n bytes at its own 1 MiB-aligned address.
func fake(n int) *core.Buffer {
	return core.NewBuffer(driver.Deviceptr(1<<40+fakeAddrs.Add(1<<20)), n, fakeDev, nil)
}

// f32 returns a fake Buffer of n float32s.
func f32(n int) *core.Buffer { return fake(4 * n) }

func bufs(n, size int) []*core.Buffer {
	out := make([]*core.Buffer, n)
	for i := range out {
		out[i] = fake(size)
	}
	return out
}

// zero is a Handle that is closed: every argument check runs, and valid
// arguments end in core.ErrClosed instead of a library call.
var zero = &Handle{}

// wantArgErr checks that err is an *ArgError of fn about arg whose
// message contains msg.
func wantArgErr(t *testing.T, what string, err error, fn, arg, msg string) {
	t.Helper()
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Errorf("%s: got %v, want an *ArgError about %s", what, err, arg)
		return
	}
	if ae.Func != fn || ae.Arg != arg || !strings.Contains(ae.Msg, msg) {
		t.Errorf("%s: got %q (Func %q, Arg %q), want Func %q, Arg %q and %q", what, err, ae.Func, ae.Arg, fn, arg, msg)
	}
	if !strings.HasPrefix(err.Error(), "blas: "+fn+": ") {
		t.Errorf("%s: %q lacks the prefix %q", what, err, "blas: "+fn+": ")
	}
}

// wantClosed checks that err is core.ErrClosed: the arguments passed.
func wantClosed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, core.ErrClosed) {
		t.Errorf("%s: got %v, want the arguments accepted (core.ErrClosed from the zero Handle)", what, err)
	}
}

func TestGemmChecks(t *testing.T) {
	const m, n, k = 4, 5, 7
	// Exact sizes: column-major A (m×k, lda m+1), B (k×n, ldb k), C (m×n, ldc m).
	a, b, c := f32((k-1)*(m+1)+m), f32(k*n), f32(m*n)
	wantClosed(t, "exact buffers", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m+1, b, k, float32(0), c, m))
	wantClosed(t, "transposed, exact buffers", Gemm(zero, Trans, ConjTrans, m, n, k, float32(1), f32((m-1)*k+k), k, f32((k-1)*n+n), n, float32(0), c, m))
	wantClosed(t, "empty", Gemm(zero, NoTrans, NoTrans, 0, 0, 0, 1.0, fake(0), 1, fake(0), 1, 0.0, fake(0), 1))
	wantClosed(t, "k = 0 reads neither A nor B", Gemm(zero, NoTrans, NoTrans, m, n, 0, complex64(1), fake(0), m, fake(0), 1, complex64(0), fake(8*m*n), m))

	cases := []struct {
		what, arg, msg string
		err            error
	}{
		{"nil handle", "h", "nil *Handle", Gemm(nil, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), c, m)},
		{"bad tA", "tA", "tA = Transpose(3) is not NoTrans, Trans or ConjTrans", Gemm(zero, Transpose(3), NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), c, m)},
		{"bad tB", "tB", "tB = Transpose(9)", Gemm(zero, NoTrans, Transpose(9), m, n, k, float32(1), a, m, b, k, float32(0), c, m)},
		{"negative m", "m", "m = -1 is negative", Gemm(zero, NoTrans, NoTrans, -1, n, k, float32(1), a, m, b, k, float32(0), c, m)},
		{"negative k", "k", "k = -2 is negative", Gemm(zero, NoTrans, NoTrans, m, n, -2, float32(1), a, m, b, k, float32(0), c, m)},
		{"huge n", "n", "more than cuBLAS's 32-bit limit", Gemm(zero, NoTrans, NoTrans, m, 1<<31, k, float32(1), a, m, b, k, float32(0), c, m)},
		{"lda < m", "lda", "lda = 3 must be at least 4: A is 4×7, column-major", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), a, 3, b, k, float32(0), c, m)},
		{"lda < k for Aᵀ", "lda", "lda = 4 must be at least 7: A is 7×4, column-major", Gemm(zero, Trans, NoTrans, m, n, k, float32(1), a, 4, b, k, float32(0), c, m)},
		{"ldb 0", "ldb", "ldb = 0 must be at least 7", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, 0, float32(0), c, m)},
		{"ld 0 with 0 rows", "ldc", "ldc = 0 must be at least 1", Gemm(zero, NoTrans, NoTrans, 0, n, k, float32(1), a, 1, b, k, float32(0), c, 0)},
		{"negative ldc", "ldc", "ldc = -4 is negative", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), c, -4)},
		{"nil a", "a", "a is nil", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), nil, m, b, k, float32(0), c, m)},
		{"a one short", "a", "a holds 132 bytes, but A (4×7 float32, column-major, lda 5) needs 136 bytes", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), f32((k-1)*(m+1)+m-1), m+1, b, k, float32(0), c, m)},
		{"b float64 short", "b", "b holds 140 bytes, but B (7×5 float64, column-major, ldb 7) needs 280 bytes", Gemm(zero, NoTrans, NoTrans, m, n, k, 1.0, fake(8*(k-1)*(m+1)+8*m), m+1, b, k, 0.0, fake(8*m*n), m)},
		{"c complex128 short", "c", "c holds 319 bytes, but C (4×5 complex128, column-major, ldc 4) needs 320 bytes", Gemm(zero, NoTrans, NoTrans, m, n, k, complex128(1), fake(16*(k-1)*(m+1)+16*m), m+1, fake(16*k*n), k, complex128(0), fake(16*m*n-1), m)},
		{"c with a larger ldc", "c", "needs 96 bytes", Gemm(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m+1, b, k, float32(0), c, m+1)},
	}
	for _, tc := range cases {
		wantArgErr(t, tc.what, tc.err, "Gemm", tc.arg, tc.msg)
	}
}

func TestGemmRowMajorChecks(t *testing.T) {
	const m, n, k = 4, 5, 7
	// Row-major: A m×k (lda k), B k×n (ldb n+2), C m×n (ldc n).
	a, b, c := f32(m*k), f32((k-1)*(n+2)+n), f32(m*n)
	wantClosed(t, "exact buffers", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, n+2, float32(0), c, n))
	wantClosed(t, "transposed, exact buffers", GemmRowMajor(zero, Trans, Trans, m, n, k, float32(1), f32(k*m), m, f32(n*k), k, float32(0), c, n))
	fn := "GemmRowMajor"
	wantArgErr(t, "lda < k", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, n, float32(0), c, n), fn, "lda", "lda = 4 must be at least 7: A is 4×7, row-major")
	wantArgErr(t, "lda < m for Aᵀ", GemmRowMajor(zero, Trans, NoTrans, m, n, k, float32(1), a, 3, b, n, float32(0), c, n), fn, "lda", "lda = 3 must be at least 4: A is 7×4, row-major")
	wantArgErr(t, "ldb < n", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, 4, float32(0), c, n), fn, "ldb", "ldb = 4 must be at least 5: B is 7×5, row-major")
	wantArgErr(t, "ldc < n", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, n, float32(0), c, m), fn, "ldc", "ldc = 4 must be at least 5: C is 4×5, row-major")
	wantArgErr(t, "b short", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, n+3, float32(0), c, n), fn, "b", "B (7×5 float32, row-major, ldb 8) needs 212 bytes")
	wantArgErr(t, "c short, ldc beyond n", GemmRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, n, float32(0), c, n+1), fn, "c", "C (4×5 float32, row-major, ldc 6) needs 92 bytes")
}

func TestStridedChecks(t *testing.T) {
	const m, n, k, batch = 3, 2, 4, 5
	// Column-major, tight: A 3×4 (12), B 4×2 (8), C 3×2 (6).
	sa, sb, sc := int64(12), int64(8), int64(6)
	a, b, c := f32(12*batch), f32(8*batch), f32(6*batch)
	fn := "GemmStridedBatched"
	wantClosed(t, "exact", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), c, m, sc, batch))
	wantClosed(t, "one B for all", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, f32(8), k, 0, float32(0), c, m, sc, batch))
	if err := GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), fake(0), m, sa, fake(0), k, sb, float32(0), fake(0), m, sc, 0); err != nil {
		t.Errorf("batch 0: %v, want nil: nothing to do", err)
	}
	// C interleaved: column j of C_i at i·m + j·(m·batch), no element shared.
	wantClosed(t, "interleaved C", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), f32(m*n*batch), m*batch, m, batch))
	wantArgErr(t, "negative strideB", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, -1, float32(0), c, m, sc, batch), fn, "strideB", "strideB = -1 is negative")
	wantArgErr(t, "negative batch", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), c, m, sc, -1), fn, "batch", "batch = -1 is negative")
	wantArgErr(t, "a one short", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), f32(12*batch-1), m, sa, b, k, sb, float32(0), c, m, sc, batch), fn, "a", "5 matrices A (3×4 float32, column-major, lda 3, strideA 12) need 240 bytes")
	wantArgErr(t, "c with strideC 7", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), c, m, 7, batch), fn, "c", "need 136 bytes")
	wantArgErr(t, "C overlap, stride 0", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), c, m, 0, batch), fn, "strideC", "strideC = 0 makes the 5 matrices C (3×2, column-major, ldc 3) overlap")
	wantArgErr(t, "C overlap, stride 4", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, k, sb, float32(0), c, m, 4, batch), fn, "strideC", "overlap")
	wantArgErr(t, "huge stride", GemmStridedBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, 1<<62, b, k, sb, float32(0), c, m, sc, batch), fn, "strideA", "too large")
	// Row-major: C 3×2 with ldc 2, rows interleaved with stride 2 and ldc 2·batch.
	fn = "GemmStridedBatchedRowMajor"
	wantClosed(t, "row-major exact", GemmStridedBatchedRowMajor(zero, NoTrans, Trans, m, n, k, float32(1), a, k, sa, b, k, sb, float32(0), c, n, sc, batch))
	wantClosed(t, "row-major interleaved", GemmStridedBatchedRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, sa, b, n, sb, float32(0), f32(m*n*batch), n*batch, n, batch))
	wantArgErr(t, "row-major overlap", GemmStridedBatchedRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, sa, b, n, sb, float32(0), c, n, 5, batch), fn, "strideC", "row-major")
	wantArgErr(t, "row-major lda", GemmStridedBatchedRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, sa, b, n, sb, float32(0), c, n, sc, batch), fn, "lda", "lda = 3 must be at least 4")
}

func TestBatchOverlaps(t *testing.T) {
	for _, tc := range []struct {
		inner, outer, ld, stride, batch int64
		want                            bool
	}{
		{3, 2, 3, 6, 5, false},  // tight
		{3, 2, 3, 5, 5, true},   // the last element of one is the first of the next
		{3, 2, 3, 0, 2, true},   // the same matrix
		{3, 2, 3, 0, 1, false},  // one matrix
		{3, 2, 15, 3, 5, false}, // interleaved columns
		{3, 2, 15, 3, 6, true},  // the sixth is the second column of the first
		{3, 2, 15, 2, 2, true},  // columns overlap
		{3, 2, 4, 1, 2, true},   // shifted by a row
		{1, 4, 2, 1, 2, false},  // rows of one element, interleaved
		{1, 4, 2, 1, 3, true},   // the third is the second row of the first
		{2, 3, 5, 13, 9, false}, // i·13 never within ±1 row of a line start, |j|<3
		{3, 2, 10, 7, 3, false}, // 7 = 0·10+7 (i ≥ inner) or 1·10-3 (|i| ≥ inner)
		{3, 2, 10, 8, 3, true},  // 8 = 1·10-2
		{0, 2, 10, 0, 3, false}, // empty
		{4, 4, 4, 16, 1 << 30, false},
	} {
		if got := batchOverlaps(tc.inner, tc.outer, tc.ld, tc.stride, tc.batch); got != tc.want {
			t.Errorf("batchOverlaps(%d, %d, %d, %d, %d) = %v, want %v", tc.inner, tc.outer, tc.ld, tc.stride, tc.batch, got, tc.want)
		}
	}
	// Against brute force on small cases.
	for inner := int64(1); inner <= 3; inner++ {
		for outer := int64(1); outer <= 3; outer++ {
			for ld := inner; ld <= inner+3; ld++ {
				for stride := int64(0); stride <= 12; stride++ {
					for batch := int64(1); batch <= 4; batch++ {
						seen := map[int64]bool{}
						want := false
						for bi := range batch {
							for j := range outer {
								for i := range inner {
									o := bi*stride + j*ld + i
									want = want || seen[o]
									seen[o] = true
								}
							}
						}
						if got := batchOverlaps(inner, outer, ld, stride, batch); got != want {
							t.Fatalf("batchOverlaps(%d, %d, %d, %d, %d) = %v, brute force %v", inner, outer, ld, stride, batch, got, want)
						}
					}
				}
			}
		}
	}
}

func TestBatchedChecks(t *testing.T) {
	const m, n, k = 3, 2, 4
	a, b, c := bufs(3, 4*m*k), bufs(3, 4*k*n), bufs(3, 4*m*n)
	fn := "GemmBatched"
	wantClosed(t, "exact", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), c, m))
	if err := GemmBatched[float64](zero, NoTrans, NoTrans, m, n, k, 1, nil, m, nil, k, 0, nil, m); err != nil {
		t.Errorf("no GEMMs: %v, want nil", err)
	}
	wantArgErr(t, "len(a)", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a[:2], m, b, k, float32(0), c, m), fn, "a", "a has 2 Buffers, c 3")
	wantArgErr(t, "len(b)", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), c[:1], m), fn, "a", "a has 3 Buffers, c 1")
	wantArgErr(t, "len(b)", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b[:2], k, float32(0), c, m), fn, "b", "b has 2 Buffers, c 3")
	short := []*core.Buffer{b[0], b[1], f32(k*n - 1)}
	wantArgErr(t, "b[2] short", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, short, k, float32(0), c, m), fn, "b[2]", "b[2] holds 28 bytes, but B (4×2 float32, column-major, ldb 4) needs 32 bytes")
	wantArgErr(t, "a[1] nil", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), []*core.Buffer{a[0], nil, a[2]}, m, b, k, float32(0), c, m), fn, "a[1]", "a[1] is nil")
	wantArgErr(t, "c twice", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a, m, b, k, float32(0), []*core.Buffer{c[0], c[1], c[0]}, m), fn, "c", "c[0] and c[2] overlap")
	big := f32(2 * m * n)
	v0, err0 := big.View(0, 4*m*n)
	v1, err1 := big.View(4*(m*n-1), 4*m*n) // shares one element with v0
	v2, err2 := big.View(4*m*n, 4*m*n)     // right after v0: fine
	if err0 != nil || err1 != nil || err2 != nil {
		t.Fatal(err0, err1, err2)
	}
	wantArgErr(t, "c partly overlapping", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a[:2], m, b[:2], k, float32(0), []*core.Buffer{v1, v0}, m), fn, "c", "c[1] and c[0] overlap")
	wantClosed(t, "c adjacent", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), a[:2], m, b[:2], k, float32(0), []*core.Buffer{v0, v2}, m))
	// The same A for every GEMM is fine.
	wantClosed(t, "one A", GemmBatched(zero, NoTrans, NoTrans, m, n, k, float32(1), []*core.Buffer{a[0], a[0], a[0]}, m, b, k, float32(0), c, m))
	fn = "GemmBatchedRowMajor"
	wantClosed(t, "row-major exact", GemmBatchedRowMajor(zero, NoTrans, NoTrans, m, n, k, complex64(1), bufs(3, 8*m*k), k, bufs(3, 8*k*n), n, complex64(0), bufs(3, 8*m*n), n))
	wantArgErr(t, "row-major ldc", GemmBatchedRowMajor(zero, NoTrans, NoTrans, m, n, k, float32(1), a, k, b, n, float32(0), c, 1), fn, "ldc", "ldc = 1 must be at least 2: C is 3×2, row-major")
}

func TestGemvChecks(t *testing.T) {
	const m, n = 5, 3
	a := f32(m * n)
	fn := "Gemv"
	wantClosed(t, "exact", Gemv(zero, NoTrans, m, n, float32(1), a, m, f32(n), 1, float32(0), f32(m), 1))
	wantClosed(t, "exact strided", Gemv(zero, NoTrans, m, n, float32(1), a, m, f32(2*(n-1)+1), 2, float32(0), f32(3*(m-1)+1), 3))
	wantClosed(t, "transposed", Gemv(zero, Trans, m, n, float32(1), a, m, f32(m), 1, float32(0), f32(n), 1))
	wantArgErr(t, "x short", Gemv(zero, NoTrans, m, n, float32(1), a, m, f32(n-1), 1, float32(0), f32(m), 1), fn, "x", "x holds 8 bytes, but x (3 float32, incx 1) needs 12 bytes")
	wantArgErr(t, "x short, transposed", Gemv(zero, Trans, m, n, float32(1), a, m, f32(n), 1, float32(0), f32(n), 1), fn, "x", "x (5 float32, incx 1) needs 20 bytes")
	wantArgErr(t, "y short, strided", Gemv(zero, NoTrans, m, n, 1.0, fake(8*m*n), m, fake(8*n), 1, 0.0, fake(8*(2*(m-1))), 2), fn, "y", "y (5 float64, incy 2) needs 72 bytes")
	wantArgErr(t, "incx 0", Gemv(zero, NoTrans, m, n, float32(1), a, m, f32(n), 0, float32(0), f32(m), 1), fn, "incx", "incx = 0 must be positive")
	wantArgErr(t, "incy -1", Gemv(zero, NoTrans, m, n, float32(1), a, m, f32(n), 1, float32(0), f32(m), -1), fn, "incy", "incy = -1 must be positive")
	wantArgErr(t, "lda", Gemv(zero, NoTrans, m, n, float32(1), a, n, f32(n), 1, float32(0), f32(m), 1), fn, "lda", "lda = 3 must be at least 5: A is 5×3, column-major")
	wantArgErr(t, "a short", Gemv(zero, NoTrans, m, n, float32(1), f32(m*n-1), m, f32(n), 1, float32(0), f32(m), 1), fn, "a", "needs 60 bytes")
	wantArgErr(t, "bad tA", Gemv(zero, Transpose(4), m, n, float32(1), a, m, f32(n), 1, float32(0), f32(m), 1), fn, "tA", "Transpose(4)")
	wantArgErr(t, "nil handle", Gemv(nil, NoTrans, m, n, float32(1), a, m, f32(n), 1, float32(0), f32(m), 1), fn, "h", "nil *Handle")
	fn = "GemvRowMajor"
	wantClosed(t, "row-major exact", GemvRowMajor(zero, NoTrans, m, n, float32(1), a, n, f32(n), 1, float32(0), f32(m), 1))
	wantClosed(t, "row-major conjugate", GemvRowMajor(zero, ConjTrans, m, n, complex64(1), fake(8*m*n), n, fake(8*m), 1, complex64(0), fake(8*n), 1))
	wantArgErr(t, "row-major lda", GemvRowMajor(zero, NoTrans, m, n, float32(1), a, 2, f32(n), 1, float32(0), f32(m), 1), fn, "lda", "lda = 2 must be at least 3: A is 5×3, row-major")
	wantArgErr(t, "row-major a short", GemvRowMajor(zero, NoTrans, m, n, float32(1), a, n+1, f32(n), 1, float32(0), f32(m), 1), fn, "a", "A (5×3 float32, row-major, lda 4) needs 76 bytes")
	wantArgErr(t, "row-major conjugate y", GemvRowMajor(zero, ConjTrans, m, n, complex128(1), fake(16*m*n), n, fake(16*m), 1, complex128(0), fake(16*n-1), 1), fn, "y", "y (3 complex128, incy 1) needs 48 bytes")
}

func TestLevel1Checks(t *testing.T) {
	x, y := f32(9), f32(5)
	wantClosed(t, "Axpy", Axpy(zero, 5, float32(2), x, 2, y, 1))
	wantClosed(t, "Axpy n 0", Axpy(zero, 0, float32(2), fake(0), 1, fake(0), 1))
	wantArgErr(t, "Axpy x", Axpy(zero, 5, float32(2), f32(8), 2, y, 1), "Axpy", "x", "x holds 32 bytes, but x (5 float32, incx 2) needs 36 bytes")
	wantArgErr(t, "Axpy y", Axpy(zero, 5, complex64(2), fake(8*5), 1, fake(8*4), 1), "Axpy", "y", "y (5 complex64, incy 1) needs 40 bytes")
	wantArgErr(t, "Axpy n", Axpy(zero, -3, float32(2), x, 1, y, 1), "Axpy", "n", "n = -3 is negative")
	wantArgErr(t, "Axpy incx", Axpy(zero, 5, float32(2), x, 0, y, 1), "Axpy", "incx", "incx = 0 must be positive")
	wantArgErr(t, "Axpy nil y", Axpy(zero, 5, float32(2), x, 1, nil, 1), "Axpy", "y", "y is nil")
	_, err := Dot[float64](zero, 5, fake(8*5), 1, fake(8*5), 1)
	wantClosed(t, "Dot", err)
	_, err = Dot[float64](zero, 5, fake(8*5), 1, fake(8*5), 2)
	wantArgErr(t, "Dot y", err, "Dot", "y", "y (5 float64, incy 2) needs 72 bytes")
	_, err = Dotc[complex128](zero, 2, fake(16*2), 1, fake(16*2), 1)
	wantClosed(t, "Dotc", err)
	_, err = Dotc[complex128](nil, 2, fake(16*2), 1, fake(16*2), 1)
	wantArgErr(t, "Dotc nil", err, "Dotc", "h", "nil *Handle")
	_, err = Nrm2[complex64](zero, 3, fake(8*3), 1)
	wantClosed(t, "Nrm2", err)
	_, err = Nrm2[float32](zero, 3, f32(3), 2)
	wantArgErr(t, "Nrm2 x", err, "Nrm2", "x", "x (3 float32, incx 2) needs 20 bytes")
	_, err = Nrm2[float32](zero, 1<<31, f32(3), 1)
	wantArgErr(t, "Nrm2 n", err, "Nrm2", "n", "more than cuBLAS's 32-bit limit")
}

func TestMatmulChecks(t *testing.T) {
	const m, n, k = 4, 5, 6
	a, b, c := fake(2*m*k), fake(2*k*n), fake(2*m*n)
	fn := "Matmul"
	wantClosed(t, "Half, ComputeFloat32", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil))
	wantClosed(t, "Half, ComputeFloat16", Matmul[Half](zero, ComputeFloat16, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil))
	wantClosed(t, "BFloat16", Matmul[BFloat16](zero, ComputeFloat32, Trans, Trans, m, n, k, 1, a, k, b, n, 0, c, m, nil))
	wantClosed(t, "float32, ComputeTF32", Matmul[float32](zero, ComputeTF32, NoTrans, NoTrans, m, n, k, 1, fake(4*m*k), m, fake(4*k*n), k, 0, fake(4*m*n), m, nil))
	if err := Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, 0, n, k, 1, a, 1, b, k, 0, c, 1, nil); err != nil {
		t.Errorf("m 0: %v, want nil: nothing to do", err)
	}
	wantArgErr(t, "no compute type", Matmul[Half](zero, 0, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil), fn, "compute", "compute = ComputeType(0) is not ComputeFloat32, ComputeFloat16 or ComputeTF32")
	wantArgErr(t, "ComputeFloat16 of BFloat16", Matmul[BFloat16](zero, ComputeFloat16, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil), fn, "compute", "needs Half matrices, not BFloat16")
	wantArgErr(t, "ComputeTF32 of Half", Matmul[Half](zero, ComputeTF32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil), fn, "compute", "needs float32 matrices, not Half")
	wantArgErr(t, "ComputeFloat16 of float32", Matmul[float32](zero, ComputeFloat16, NoTrans, NoTrans, m, n, k, 1, fake(4*m*k), m, fake(4*k*n), k, 0, fake(4*m*n), m, nil), fn, "compute", "not float32")
	wantArgErr(t, "k 0", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, 0, 1, a, m, b, 1, 0, c, m, nil), fn, "k", "k = 0")
	wantArgErr(t, "a short", Matmul[BFloat16](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, fake(2*m*k-1), m, b, k, 0, c, m, nil), fn, "a", "A (4×6 BFloat16, column-major, lda 4) needs 48 bytes")
	fn = "MatmulRowMajor"
	wantClosed(t, "row-major", MatmulRowMajor[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, b, n, 0, c, n, nil))
	wantArgErr(t, "row-major ldb", MatmulRowMajor[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, b, 4, 0, c, n, nil), fn, "ldb", "ldb = 4 must be at least 5: B is 6×5, row-major")
}

func TestOperandChecks(t *testing.T) {
	a, b, c := f32(4), f32(4), f32(4)
	// A view 2 bytes in is not aligned for float32.
	v, err := fake(64).View(2, 16)
	if err != nil {
		t.Fatal(err)
	}
	wantArgErr(t, "misaligned b", Gemm(zero, NoTrans, NoTrans, 2, 2, 2, float32(1), a, 2, v, 2, float32(0), c, 2), "Gemm", "b", "not aligned to its 4-byte float32 elements")
	v8, _ := fake(64).View(8, 32)
	wantArgErr(t, "complex128 at 8 bytes", Axpy(zero, 2, complex128(1), fake(32), 1, v8, 1), "Axpy", "y", "not aligned to its 16-byte complex128 elements")
	wantClosed(t, "float64 at 8 bytes", Axpy(zero, 2, 1.0, fake(32), 1, v8, 1))
	host := core.NewBuffer(1<<20, 64, fakeHost, nil)
	wantArgErr(t, "host memory", Gemm(zero, NoTrans, NoTrans, 2, 2, 2, float32(1), host, 2, b, 2, float32(0), c, 2), "Gemm", "a", "which the GPU cannot access")
	closed := f32(4)
	closed.Close()
	err = Gemm(zero, NoTrans, NoTrans, 2, 2, 2, float32(1), a, 2, b, 2, float32(0), closed, 2)
	if !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "blas: Gemm: c: ") {
		t.Errorf("closed c: %v, want core.ErrClosed naming c", err)
	}
	_, err = Nrm2[float32](zero, 4, closed, 1)
	if !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "blas: Nrm2: x: ") {
		t.Errorf("closed x: %v, want core.ErrClosed naming x", err)
	}
	err = GemmBatched(zero, NoTrans, NoTrans, 2, 2, 2, float32(1), []*core.Buffer{a, a}, 2, []*core.Buffer{b, closed}, 2, float32(0), []*core.Buffer{c, f32(4)}, 2)
	if !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "blas: GemmBatched: b[1]: ") {
		t.Errorf("closed b[1]: %v, want core.ErrClosed naming b[1]", err)
	}
	// The Buffers are released again: a closes at once.
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}

func TestHandleMisuse(t *testing.T) {
	if _, err := New(nil, nil); err == nil || !strings.Contains(err.Error(), "blas: New: nil *core.Stream") {
		t.Errorf("New(nil): %v", err)
	}
	var h Handle
	if err := h.Close(); err != nil {
		t.Errorf("Close of a zero Handle: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCheckAllocs: the checks and the operand bookkeeping of a GEMM
// allocate nothing (the GPU test checks the whole call).
func TestCheckAllocs(t *testing.T) {
	a, b, c := f32(64*64), f32(64*64), f32(64*64)
	allocs := testing.AllocsPerRun(100, func() {
		Gemm(zero, NoTrans, NoTrans, 64, 64, 64, float32(1), a, 64, b, 64, float32(0), c, 64)
		GemmRowMajor(zero, NoTrans, Trans, 64, 64, 64, float32(1), a, 64, b, 64, float32(0), c, 64)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Gemm check", allocs)
	}
}
