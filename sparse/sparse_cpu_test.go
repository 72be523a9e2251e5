package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/internal/testing/libtest"
	"github.com/cudago/cudago/lib"
)

// The checks of NewCSR and NewCOO are pure Go: every rule is tested here,
// without a GPU.

func TestCheckCSRValid(t *testing.T) {
	for _, c := range []struct {
		name       string
		rows, cols int
		off, col   []int32
	}{
		{"1x1", 1, 1, []int32{0, 1}, []int32{0}},
		{"1x1 empty", 1, 1, []int32{0, 0}, nil},
		{"no nonzeros", 3, 4, []int32{0, 0, 0, 0}, nil},
		{"empty rows", 4, 3, []int32{0, 0, 2, 2, 3}, []int32{0, 2, 1}},
		{"full row", 2, 3, []int32{0, 3, 3}, []int32{0, 1, 2}},
		{"last column", 2, 5, []int32{0, 1, 2}, []int32{4, 4}},
	} {
		if err := checkCSR("NewCSR", c.rows, c.cols, c.off, c.col, len(c.col)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		// The same with 64-bit indices.
		if err := checkCSR("NewCSR", c.rows, c.cols, widen(c.off), widen(c.col), len(c.col)); err != nil {
			t.Errorf("%s (int64): %v", c.name, err)
		}
	}
}

func widen(s []int32) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}

func TestCheckCSRErrors(t *testing.T) {
	for _, c := range []struct {
		name       string
		rows, cols int
		off, col   []int32
		nvals      int
		want       string
	}{
		{"zero rows", 0, 3, []int32{0}, nil, 0, "a 0×3 matrix: rows and cols must be at least 1"},
		{"zero cols", 2, 0, []int32{0, 0, 0}, nil, 0, "a 2×0 matrix"},
		{"negative rows", -1, 3, nil, nil, 0, "a -1×3 matrix"},
		{"values vs colInd", 2, 2, []int32{0, 1, 2}, []int32{0, 1}, 3, "colInd has 2 entries and values 3"},
		{"short offsets", 3, 3, []int32{0, 1, 2}, []int32{0, 1}, 2, "rowOffsets has 3 entries, want rows+1 = 4"},
		{"long offsets", 1, 3, []int32{0, 1, 2}, []int32{0, 1}, 2, "rowOffsets has 3 entries, want rows+1 = 2"},
		{"nil offsets", 1, 3, nil, nil, 0, "rowOffsets has 0 entries, want rows+1 = 2"},
		{"first offset", 2, 3, []int32{1, 1, 2}, []int32{0, 1}, 2, "rowOffsets[0] = 1, want 0"},
		{"negative first offset", 2, 3, []int32{-1, 1, 2}, []int32{0, 1}, 2, "rowOffsets[0] = -1, want 0"},
		{"decreasing", 3, 3, []int32{0, 2, 1, 2}, []int32{0, 1}, 2, "rowOffsets decrease after row 1: rowOffsets[1] = 2, rowOffsets[2] = 1"},
		{"nnz too small", 2, 3, []int32{0, 1, 1}, []int32{0, 1}, 2, "rowOffsets[2] = 1, but there are 2 nonzeros"},
		{"nnz too large", 2, 3, []int32{0, 1, 3}, []int32{0, 1}, 2, "rowOffsets[2] = 3, but there are 2 nonzeros"},
		{"column negative", 2, 3, []int32{0, 1, 2}, []int32{0, -1}, 2, "colInd[1] = -1 (row 1) is outside [0, 3)"},
		{"column too large", 2, 3, []int32{0, 1, 2}, []int32{3, 0}, 2, "colInd[0] = 3 (row 0) is outside [0, 3)"},
		{"unsorted", 1, 5, []int32{0, 3}, []int32{0, 3, 2}, 3, "colInd[2] = 2 (row 0) does not follow colInd[1] = 3"},
		{"duplicate", 2, 5, []int32{0, 1, 3}, []int32{4, 2, 2}, 3, "colInd[2] = 2 (row 1) does not follow colInd[1] = 2"},
	} {
		err := checkCSR("NewCSR", c.rows, c.cols, c.off, c.col, c.nvals)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Columns may repeat across rows: only within a row must they increase.
	if err := checkCSR("NewCSR", 2, 3, []int32{0, 2, 4}, []int32{1, 2, 0, 1}, 4); err != nil {
		t.Errorf("columns repeated across rows: %v", err)
	}
}

func TestCheckDimsIndexRange(t *testing.T) {
	big := math.MaxInt32 + 1
	if err := checkCSR[int32]("NewCSR", big, 1, nil, nil, 0); err == nil || !strings.Contains(err.Error(), "2147483648 rows do not fit int32 indices") {
		t.Errorf("rows over int32: %v", err)
	}
	if err := checkCOO[int32]("NewCOO", 1, big, nil, nil, 0); err == nil || !strings.Contains(err.Error(), "2147483648 cols do not fit int32 indices") {
		t.Errorf("cols over int32: %v", err)
	}
	if err := checkDims[int32]("NewCSR", 1, 1, big); err == nil || !strings.Contains(err.Error(), "2147483648 nonzeros do not fit int32 indices") {
		t.Errorf("nonzeros over int32: %v", err)
	}
	if err := checkDims[int64]("NewCSR", big, big, big); err != nil {
		t.Errorf("int64 indices: %v", err)
	}
}

func TestCheckCOO(t *testing.T) {
	ok := []struct {
		name       string
		rows, cols int
		r, c       []int32
	}{
		{"1x1", 1, 1, []int32{0}, []int32{0}},
		{"no nonzeros", 4, 4, nil, nil},
		{"empty rows", 5, 3, []int32{1, 1, 4}, []int32{0, 2, 2}},
		{"column goes back on a new row", 3, 3, []int32{0, 1}, []int32{2, 0}},
	}
	for _, c := range ok {
		if err := checkCOO("NewCOO", c.rows, c.cols, c.r, c.c, len(c.r)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := checkCOO("NewCOO", c.rows, c.cols, widen(c.r), widen(c.c), len(c.r)); err != nil {
			t.Errorf("%s (int64): %v", c.name, err)
		}
	}
	for _, c := range []struct {
		name       string
		rows, cols int
		r, c       []int32
		nvals      int
		want       string
	}{
		{"zero rows", 0, 1, nil, nil, 0, "a 0×1 matrix"},
		{"zero cols", 1, 0, nil, nil, 0, "a 1×0 matrix"},
		{"lengths", 2, 2, []int32{0, 1}, []int32{0}, 2, "rowInd has 2 entries, colInd 1 and values 2"},
		{"values length", 2, 2, []int32{0, 1}, []int32{0, 1}, 1, "rowInd has 2 entries, colInd 2 and values 1"},
		{"row negative", 2, 2, []int32{-1}, []int32{0}, 1, "rowInd[0] = -1 is outside [0, 2)"},
		{"row too large", 2, 2, []int32{0, 2}, []int32{0, 0}, 2, "rowInd[1] = 2 is outside [0, 2)"},
		{"column negative", 2, 2, []int32{0}, []int32{-3}, 1, "colInd[0] = -3 is outside [0, 2)"},
		{"column too large", 2, 2, []int32{1}, []int32{2}, 1, "colInd[0] = 2 is outside [0, 2)"},
		{"rows unsorted", 3, 3, []int32{1, 0}, []int32{0, 0}, 2, "entry 1 (row 0, column 0) does not follow entry 0 (row 1, column 0)"},
		{"columns unsorted", 3, 3, []int32{1, 1}, []int32{2, 1}, 2, "entry 1 (row 1, column 1) does not follow entry 0 (row 1, column 2)"},
		{"duplicate", 3, 3, []int32{2, 2}, []int32{1, 1}, 2, "entry 1 (row 2, column 1) does not follow entry 0 (row 2, column 1)"},
	} {
		err := checkCOO("NewCOO", c.rows, c.cols, c.r, c.c, c.nvals)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestNewMatrixArgs: the constructors check the slices before the stream,
// and name themselves in the error.
func TestNewMatrixArgs(t *testing.T) {
	_, err := NewCSR[float32](nil, 2, 2, []int32{0, 1, 5}, []int32{0}, []float32{1})
	if err == nil || !strings.HasPrefix(err.Error(), "sparse: NewCSR: rowOffsets[2] = 5") {
		t.Errorf("NewCSR with bad offsets: %v", err)
	}
	_, err = NewCSR[float64](nil, 2, 2, []int64{0, 1, 1}, []int64{0}, []float64{1})
	if err == nil || err.Error() != "sparse: NewCSR: nil *core.Stream" {
		t.Errorf("NewCSR with a nil stream: %v", err)
	}
	_, err = NewCOO[complex64](nil, 2, 2, []int32{0, 0}, []int32{1, 0}, []complex64{1, 2})
	if err == nil || !strings.HasPrefix(err.Error(), "sparse: NewCOO: entry 1") {
		t.Errorf("NewCOO unsorted: %v", err)
	}
	_, err = NewCOO[complex128](nil, 2, 2, []int64{1}, []int64{1}, []complex128{1})
	if err == nil || err.Error() != "sparse: NewCOO: nil *core.Stream" {
		t.Errorf("NewCOO with a nil stream: %v", err)
	}
	_, err = New(nil, nil)
	var ae *lib.ArgError
	if !errors.As(err, &ae) || ae.Arg != "stream" || !strings.HasPrefix(err.Error(), "sparse: New: nil *core.Stream") {
		t.Errorf("New(nil): %v", err)
	}
	if !errors.As(checkCSR("NewCSR", 1, 1, []int32{1, 1}, nil, 0), &ae) || ae.Func != "NewCSR" || ae.Arg != "rowOffsets" {
		t.Errorf("checkCSR's error is not an ArgError for rowOffsets: %v", ae)
	}
}

func TestCheckSpMV(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	a := &Matrix[float32]{rows: 5, cols: 3}
	b := libtest.Fakes(3*4, 5*4, 2*4, 4*4, 64)
	x, y, short, short2, big := b[0], b[1], b[2], b[3], b[4]
	if err := checkSpMV(h, NoTrans, a, x, y); err != nil {
		t.Errorf("valid NoTrans: %v", err)
	}
	// Transposed, x has 5 elements and y 3: y's 20 bytes serve as x.
	if err := checkSpMV(h, Trans, a, y, x); err != nil {
		t.Errorf("valid Trans: %v", err)
	}
	if err := checkSpMV(h, NoTrans, a, big, y); err != nil {
		t.Errorf("a larger x: %v", err)
	}
	root := core.NewBuffer(0, 1024, nil, nil)
	v0, _ := root.View(0, 64)
	v8, _ := root.View(8, 64)
	v12, _ := root.View(12, 64)
	v2, _ := root.View(2, 64)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil handle", checkSpMV(nil, NoTrans, a, x, y), "sparse: SpMV: nil *Handle"},
		{"nil matrix", checkSpMV[float32](h, NoTrans, nil, x, y), "sparse: SpMV: nil *Matrix"},
		{"bad op", checkSpMV(h, Transpose(3), a, x, y), "sparse: SpMV: op = Transpose(3) is not NoTrans, Trans or ConjTrans"},
		{"nil x", checkSpMV(h, NoTrans, a, nil, y), "sparse: SpMV: nil *core.Buffer for x"},
		{"nil y", checkSpMV(h, NoTrans, a, x, nil), "sparse: SpMV: nil *core.Buffer for y"},
		{"short x", checkSpMV(h, NoTrans, a, short, y), "sparse: SpMV: x holds 8 bytes, want 3×1 elements of float32 = 12 bytes"},
		{"short y", checkSpMV(h, NoTrans, a, x, short2), "sparse: SpMV: y holds 16 bytes, want 5×1 elements of float32 = 20 bytes"},
		{"short x transposed", checkSpMV(h, Trans, a, short2, x), "sparse: SpMV: x holds 16 bytes, want 5×1 elements"},
		{"short y transposed", checkSpMV(h, ConjTrans, a, y, short), "sparse: SpMV: y holds 8 bytes, want 3×1 elements"},
		{"overlap", checkSpMV(h, NoTrans, a, v0, v8), "sparse: SpMV: x and y overlap"},
		{"same buffer", checkSpMV(h, NoTrans, a, big, big), "sparse: SpMV: x and y overlap"},
		{"misaligned", SpMV(h, NoTrans, 1, a, v2, 0, y), "sparse: SpMV: x's address 0x2 is not aligned to its 4-byte float32 elements"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, c.err, c.want)
		}
	}
	// x uses bytes [0, 12) and y [12, 32): adjacent, not overlapping.
	if err := checkSpMV(h, NoTrans, a, v0, v12); err != nil {
		t.Errorf("adjacent x and y: %v", err)
	}
	// complex128 wants 16-byte alignment (cuDoubleComplex is aligned so).
	az := &Matrix[complex128]{rows: 1, cols: 1}
	if err := SpMV(h, NoTrans, 1, az, v8, 0, y); err == nil || !strings.Contains(err.Error(), "not aligned to its 16-byte complex128 elements") {
		t.Errorf("misaligned complex128: %v", err)
	}
	// A closed buffer: core.ErrClosed, also through SpMV itself.
	xc := libtest.Fakes(12)[0]
	xc.Close()
	if err := SpMV(h, NoTrans, 1, a, xc, 0, y); !errors.Is(err, core.ErrClosed) {
		t.Errorf("SpMV with a closed x: %v, want core.ErrClosed", err)
	}
	if err := SpMV(h, NoTrans, 1, a, short, 0, y); err == nil || !strings.Contains(err.Error(), "x holds 8 bytes") {
		t.Errorf("SpMV with a short x: %v", err)
	}
}

func TestCheckSpMM(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	a := &Matrix[float64]{rows: 4, cols: 3}
	// B is 3×2 (48 bytes), C 4×2 (64 bytes); transposed B is 4×2, C 3×2.
	b := libtest.Fakes(48, 64, 40, 56)
	B, C, shortB, shortC := b[0], b[1], b[2], b[3]
	if err := checkSpMM(h, NoTrans, a, B, 2, C); err != nil {
		t.Errorf("valid: %v", err)
	}
	if err := checkSpMM(h, Trans, a, C, 2, B); err != nil {
		t.Errorf("valid transposed: %v", err)
	}
	if err := checkSpMM(h, NoTrans, a, B, 1, C); err != nil {
		t.Errorf("one column: %v", err)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil handle", checkSpMM(nil, NoTrans, a, B, 2, C), "sparse: SpMM: nil *Handle"},
		{"nil matrix", checkSpMM[float64](h, NoTrans, nil, B, 2, C), "sparse: SpMM: nil *Matrix"},
		{"bad op", checkSpMM(h, Transpose(9), a, B, 2, C), "sparse: SpMM: op = Transpose(9)"},
		{"zero n", checkSpMM(h, NoTrans, a, B, 0, C), "sparse: SpMM: n = 0: B and C need at least one column"},
		{"negative n", checkSpMM(h, NoTrans, a, B, -2, C), "sparse: SpMM: n = -2"},
		{"nil B", checkSpMM(h, NoTrans, a, nil, 2, C), "sparse: SpMM: nil *core.Buffer for B"},
		{"nil C", checkSpMM(h, NoTrans, a, B, 2, nil), "sparse: SpMM: nil *core.Buffer for C"},
		{"short B", checkSpMM(h, NoTrans, a, shortB, 2, C), "sparse: SpMM: B holds 40 bytes, want 3×2 elements of float64 = 48 bytes"},
		{"short C", checkSpMM(h, NoTrans, a, B, 2, shortC), "sparse: SpMM: C holds 56 bytes, want 4×2 elements of float64 = 64 bytes"},
		{"n too large", checkSpMM(h, NoTrans, a, B, 3, C), "sparse: SpMM: B holds 48 bytes, want 3×3 elements"},
		{"short B transposed", checkSpMM(h, Trans, a, B, 2, C), "sparse: SpMM: B holds 48 bytes, want 4×2 elements"},
		{"huge n", checkSpMM(h, NoTrans, a, B, math.MaxInt/4, C), "sparse: SpMM: B of 3×2305843009213693951 elements is too large"},
		{"same buffer", checkSpMM(h, NoTrans, a, C, 2, C), "sparse: SpMM: B and C overlap"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, c.err, c.want)
		}
	}
	if err := SpMM(h, NoTrans, 1, a, B, 0, 0, C); err == nil || !strings.Contains(err.Error(), "n = 0") {
		t.Errorf("SpMM with n = 0: %v", err)
	}
}

func TestLibOpAndDataType(t *testing.T) {
	if g := libOp[float32](ConjTrans); g != cusparse.OperationTranspose {
		t.Errorf("ConjTrans of float32 = %v, want the plain transpose", g)
	}
	if g := libOp[complex64](ConjTrans); g != cusparse.OperationConjugateTranspose {
		t.Errorf("ConjTrans of complex64 = %v", g)
	}
	if g := libOp[float64](Trans); g != cusparse.OperationTranspose {
		t.Errorf("Trans = %v", g)
	}
	if g := libOp[complex128](NoTrans); g != cusparse.OperationNonTranspose {
		t.Errorf("NoTrans = %v", g)
	}
	if dataType[float32]() != cusparse.R32F || dataType[float64]() != cusparse.R64F ||
		dataType[complex64]() != cusparse.C32F || dataType[complex128]() != cusparse.C64F {
		t.Error("dataType maps a type to the wrong cudaDataType")
	}
	if NoTrans.String() != "NoTrans" || ConjTrans.String() != "ConjTrans" || Transpose(5).String() != "Transpose(5)" {
		t.Error("Op.String")
	}
	if CSR.String() != "CSR" || COO.String() != "COO" || Format(7).String() != "Format(7)" {
		t.Error("Format.String")
	}
}

// TestClosedHandle: operations on a closed Handle give core.ErrClosed,
// and closing twice is not an error. A Handle that never ran an operation
// owns nothing on the GPU, so this needs none.
func TestClosedHandle(t *testing.T) {
	for _, h := range []*Handle{nil, {}} { // nil and zero: closed, never a panic
		if h.Close() != nil || h.Stream() != nil || h.WorkspaceSize() != 0 {
			t.Errorf("%#v", h)
		}
	}
	if err := SpMV[float32](&Handle{}, NoTrans, 1, nil, nil, 0, nil); err == nil {
		t.Error("SpMV on a zero Handle succeeded")
	}
	var m *Matrix[float32]
	if m.Close() != nil {
		t.Error("nil *Matrix Close")
	}
	st := new(libhandle.State[cusparse.Handle])
	h := &Handle{st: st}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := st.Begin(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("begin after Close: %v, want core.ErrClosed", err)
	}
	a := &Matrix[float32]{rows: 1, cols: 1}
	x := libtest.Fakes(4, 4)
	if err := SpMV(h, NoTrans, 1, a, x[0], 0, x[1]); !errors.Is(err, core.ErrClosed) {
		t.Errorf("SpMV on a closed Handle: %v, want core.ErrClosed", err)
	}
	if h.WorkspaceSize() != 0 {
		t.Errorf("WorkspaceSize = %d, want 0", h.WorkspaceSize())
	}
}

// TestClosedMatrix: a closed Matrix gives core.ErrClosed.
func TestClosedMatrix(t *testing.T) {
	h := &Handle{} // acts closed: the checks run, then core.ErrClosed
	a := &Matrix[float64]{rows: 2, cols: 2, closed: true}
	b := libtest.Fakes(32, 32)
	if err := SpMV(h, NoTrans, 1, a, b[0], 0, b[1]); !errors.Is(err, core.ErrClosed) {
		t.Errorf("SpMV: %v, want core.ErrClosed", err)
	}
	if err := SpMM(h, NoTrans, 1, a, b[0], 2, 0, b[1]); !errors.Is(err, core.ErrClosed) {
		t.Errorf("SpMM: %v, want core.ErrClosed", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close of a closed Matrix: %v", err)
	}
}

// TestRandomSparse checks the GPU tests' matrix maker: its CSR and COO
// arrays pass the constructors' checks and match the dense form, and it
// makes the empty rows it promises.
func TestRandomSparse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, sh := range shapes {
		hm := randomSparse[complex64](r, sh.rows, sh.cols, sh.density)
		if err := checkCSR("NewCSR", hm.rows, hm.cols, hm.off, hm.colInd, len(hm.vals)); err != nil {
			t.Errorf("%d×%d CSR: %v", sh.rows, sh.cols, err)
		}
		if err := checkCOO("NewCOO", hm.rows, hm.cols, hm.rowInd, hm.colInd, len(hm.vals)); err != nil {
			t.Errorf("%d×%d COO: %v", sh.rows, sh.cols, err)
		}
		nz := 0
		for i := range hm.rows {
			for j := range hm.cols {
				if v := hm.dense[i*hm.cols+j]; v != 0 {
					if hm.rowInd[nz] != int64(i) || hm.colInd[nz] != int64(j) || hm.vals[nz] != v {
						t.Fatalf("%d×%d: entry %d does not match the dense form", sh.rows, sh.cols, nz)
					}
					nz++
				}
			}
			if hm.rows > 2 && i%4 == 1 && hm.off[i+1] != hm.off[i] {
				t.Errorf("%d×%d: row %d is not empty", sh.rows, sh.cols, i)
			}
		}
		if nz != len(hm.vals) || nz == 0 {
			t.Errorf("%d×%d: %d nonzeros in the dense form, %d stored", sh.rows, sh.cols, nz, len(hm.vals))
		}
	}
}

// TestReference checks the GPU tests' CPU reference on a 2×3 complex
// matrix worked by hand, with every Op.
func TestReference(t *testing.T) {
	// A = [[1+i, 0, 2], [0, 3i, 0]]
	hm := hostMatrix[complex128]{rows: 2, cols: 3, dense: []complex128{1 + 1i, 0, 2, 0, 3i, 0}}
	for _, c := range []struct {
		op   Transpose
		x, y []complex128
		want []complex128
	}{
		// 2·A·x + 1·y, x = (1, 1, 1), y = (1, 1): (2(3+i)+1, 2(3i)+1)
		{NoTrans, []complex128{1, 1, 1}, []complex128{1, 1}, []complex128{7 + 2i, 1 + 6i}},
		// 2·Aᵀ·x + y, x = (1, i), y = 0: Aᵀx = (1+i, 3i·i, 2) = (1+i, -3, 2)
		{Trans, []complex128{1, 1i}, []complex128{0, 0, 0}, []complex128{2 + 2i, -6, 4}},
		// 2·Aᴴ·x, x = (1, i): Aᴴx = (1-i, -3i·i, 2) = (1-i, 3, 2)
		{ConjTrans, []complex128{1, 1i}, []complex128{0, 0, 0}, []complex128{2 - 2i, 6, 4}},
	} {
		ref, tol := hm.reference(c.op, 2, c.x, 1, 1, c.y)
		for i := range c.want {
			if ref[i] != c.want[i] {
				t.Errorf("%v: element %d = %v, want %v", c.op, i, ref[i], c.want[i])
			}
			if tol[i] <= 0 || tol[i] > 1e-13 {
				t.Errorf("%v: tolerance %g of element %d is not a few ulps", c.op, tol[i], i)
			}
		}
	}
	// B = [[1, 0], [0, 1], [1, 0]] (row-major): A·B = [[3+i, 0], [0, 3i]].
	ref, _ := hm.reference(NoTrans, 1, []complex128{1, 0, 0, 1, 1, 0}, 2, 0, make([]complex128, 4))
	if want := []complex128{3 + 1i, 0, 0, 3i}; fmt.Sprint(ref) != fmt.Sprint(want) {
		t.Errorf("two columns: %v, want %v", ref, want)
	}
}
