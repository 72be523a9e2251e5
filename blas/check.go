package blas

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/core"
)

// The checks here are pure Go and run before any library call: every
// dimension, leading dimension, increment and batch stride is checked
// against the Buffers it describes, and an error names the argument.

// maxDim is the largest size cuBLAS's 32-bit API takes.
const maxDim = math.MaxInt32

// layout is how the caller stores its matrices.
type layout bool

const (
	colMajor layout = false
	rowMajor layout = true
)

func (l layout) String() string {
	if l == rowMajor {
		return "row-major"
	}
	return "column-major"
}

func checkDim(fn, name string, v int) error {
	if v < 0 {
		return argErr(fn, name, "%s = %d is negative", name, v)
	}
	if v > maxDim {
		return argErr(fn, name, "%s = %d is more than cuBLAS's 32-bit limit (%d)", name, v, maxDim)
	}
	return nil
}

func checkTrans(fn, name string, t Transpose) error {
	if !t.Valid() {
		return argErr(fn, name, "%s = %v is not NoTrans, Trans or ConjTrans", name, t)
	}
	return nil
}

func checkBatch(fn, name string, v int) error { return checkDim(fn, name, v) }

func checkStride(fn, name string, v int64) error {
	if v < 0 {
		return argErr(fn, name, "%s = %d is negative", name, v)
	}
	return nil
}

// bytesText says how many bytes n elements of size esz are.
func bytesText(n int64, esz int) string {
	if n > math.MaxInt64/int64(esz) {
		return fmt.Sprintf("%d elements of %d bytes", n, esz)
	}
	return fmt.Sprintf("%d bytes", n*int64(esz))
}

// mat is one matrix operand as the caller describes it: rows×cols stored
// in the caller's layout, ld elements between the starts of consecutive
// columns (column-major) or rows (row-major), stride elements between
// the matrices of a strided batch.
type mat struct {
	arg, ldArg, strideArg string // "a", "lda", "strideA"
	label                 string // "A"
	buf                   *core.Buffer
	rows, cols, ld        int
	stride                int64
}

// lines returns the length of the stored lines (columns for
// column-major, rows for row-major) and their number.
func (m *mat) lines(l layout) (inner, outer int64) {
	if l == rowMajor {
		return int64(m.cols), int64(m.rows)
	}
	return int64(m.rows), int64(m.cols)
}

// checkMat checks m's leading dimension and that its buffer holds batch
// matrices (batch 1 and stride 0 for a single one).
func checkMat(fn string, l layout, m *mat, e elem, batch int) error {
	if err := checkDim(fn, m.ldArg, m.ld); err != nil {
		return err
	}
	inner, outer := m.lines(l)
	if int64(m.ld) < max(1, inner) {
		return argErr(fn, m.ldArg, "%s = %d must be at least %d: %s is %d×%d, %v", m.ldArg, m.ld, max(1, inner), m.label, m.rows, m.cols, l)
	}
	if m.buf == nil {
		return argErr(fn, m.arg, "%s is nil", m.arg)
	}
	var need int64
	if inner > 0 && outer > 0 && batch > 0 {
		need = (outer-1)*int64(m.ld) + inner // < 2^62: all three are at most maxDim
		if batch > 1 {
			if m.stride > 0 && int64(batch-1) > (math.MaxInt64-need)/m.stride {
				return argErr(fn, m.strideArg, "%s = %d is too large: %d matrices %s would span more than 2^63 elements", m.strideArg, m.stride, batch, m.label)
			}
			need += int64(batch-1) * m.stride
		}
	}
	if need > int64(m.buf.Size())/int64(e.size) {
		if batch > 1 {
			return argErr(fn, m.arg, "%s holds %d bytes, but %d matrices %s (%d×%d %s, %v, %s %d, %s %d) need %s", m.arg, m.buf.Size(), batch, m.label, m.rows, m.cols, e.name, l, m.ldArg, m.ld, m.strideArg, m.stride, bytesText(need, e.size))
		}
		return argErr(fn, m.arg, "%s holds %d bytes, but %s (%d×%d %s, %v, %s %d) needs %s", m.arg, m.buf.Size(), m.label, m.rows, m.cols, e.name, l, m.ldArg, m.ld, bytesText(need, e.size))
	}
	return nil
}

// batchOverlaps reports whether two of batch matrices of lines of inner
// elements (outer lines, ld apart) stride apart share an element: then the
// batch's outputs race.
func batchOverlaps(inner, outer, ld, stride, batch int64) bool {
	if batch < 2 || inner == 0 || outer == 0 {
		return false
	}
	span := (outer-1)*ld + inner
	if stride >= span {
		return false
	}
	// Matrices d apart overlap when d·stride = i + j·ld for some |i| <
	// inner, |j| < outer; as ld >= inner, j is v/ld or v/ld + 1.
	for d := int64(1); d < batch && d*stride < span; d++ {
		v := d * stride
		j, i := v/ld, v%ld
		if j < outer && i < inner || j+1 < outer && ld-i < inner {
			return true
		}
	}
	return false
}

// gemmMats returns the three matrices of a GEMM as stored: op(A) is m×k,
// op(B) k×n, C m×n.
func gemmMats(tA, tB Transpose, m, n, k int, a *core.Buffer, lda int, b *core.Buffer, ldb int, c *core.Buffer, ldc int) (ma, mb, mc mat) {
	ma = mat{arg: "a", ldArg: "lda", strideArg: "strideA", label: "A", buf: a, rows: m, cols: k, ld: lda}
	if tA != NoTrans {
		ma.rows, ma.cols = k, m
	}
	mb = mat{arg: "b", ldArg: "ldb", strideArg: "strideB", label: "B", buf: b, rows: k, cols: n, ld: ldb}
	if tB != NoTrans {
		mb.rows, mb.cols = n, k
	}
	mc = mat{arg: "c", ldArg: "ldc", strideArg: "strideC", label: "C", buf: c, rows: m, cols: n, ld: ldc}
	return
}

// checkGemmDims checks what a GEMM's matrices share.
func checkGemmDims(fn string, h *Handle, tA, tB Transpose, m, n, k int) error {
	if h == nil {
		return argErr(fn, "h", "nil *Handle")
	}
	if err := checkTrans(fn, "tA", tA); err != nil {
		return err
	}
	if err := checkTrans(fn, "tB", tB); err != nil {
		return err
	}
	for _, d := range [...]struct {
		name string
		v    int
	}{{"m", m}, {"n", n}, {"k", k}} {
		if err := checkDim(fn, d.name, d.v); err != nil {
			return err
		}
	}
	return nil
}

// checkGemm checks a GEMM, or a strided batch of them (batch > 1 with
// the strides), in layout l.
func checkGemm(fn string, l layout, e elem, h *Handle, tA, tB Transpose, m, n, k int,
	a *core.Buffer, lda int, sa int64, b *core.Buffer, ldb int, sb int64, c *core.Buffer, ldc int, sc int64, batch int) error {
	if err := checkGemmDims(fn, h, tA, tB, m, n, k); err != nil {
		return err
	}
	ma, mb, mc := gemmMats(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	ma.stride, mb.stride, mc.stride = sa, sb, sc
	for _, x := range [...]*mat{&ma, &mb, &mc} {
		if err := checkMat(fn, l, x, e, batch); err != nil {
			return err
		}
	}
	if inner, outer := mc.lines(l); batchOverlaps(inner, outer, int64(ldc), sc, int64(batch)) {
		return argErr(fn, "strideC", "strideC = %d makes the %d matrices C (%d×%d, %v, ldc %d) overlap: their results would race", sc, batch, m, n, l, ldc)
	}
	return nil
}

// vec is one vector operand: n elements inc apart.
type vec struct {
	arg, incArg string
	buf         *core.Buffer
	n, inc      int
}

func checkVec(fn string, v vec, e elem) error {
	if v.inc <= 0 {
		return argErr(fn, v.incArg, "%s = %d must be positive", v.incArg, v.inc)
	}
	if err := checkDim(fn, v.incArg, v.inc); err != nil {
		return err
	}
	if v.buf == nil {
		return argErr(fn, v.arg, "%s is nil", v.arg)
	}
	var need int64
	if v.n > 0 {
		need = 1 + int64(v.n-1)*int64(v.inc)
	}
	if need > int64(v.buf.Size())/int64(e.size) {
		return argErr(fn, v.arg, "%s holds %d bytes, but %s (%d %s, %s %d) needs %s", v.arg, v.buf.Size(), v.arg, v.n, e.name, v.incArg, v.inc, bytesText(need, e.size))
	}
	return nil
}

// checkGemv checks y = alpha·op(A)·x + beta·y with A m×n in layout l.
func checkGemv(fn string, l layout, e elem, h *Handle, tA Transpose, m, n int, a *core.Buffer, lda int, x *core.Buffer, incx int, y *core.Buffer, incy int) error {
	if h == nil {
		return argErr(fn, "h", "nil *Handle")
	}
	if err := checkTrans(fn, "tA", tA); err != nil {
		return err
	}
	if err := checkDim(fn, "m", m); err != nil {
		return err
	}
	if err := checkDim(fn, "n", n); err != nil {
		return err
	}
	ma := mat{arg: "a", ldArg: "lda", label: "A", buf: a, rows: m, cols: n, ld: lda}
	if err := checkMat(fn, l, &ma, e, 1); err != nil {
		return err
	}
	nx, ny := n, m
	if tA != NoTrans {
		nx, ny = m, n
	}
	if err := checkVec(fn, vec{"x", "incx", x, nx, incx}, e); err != nil {
		return err
	}
	return checkVec(fn, vec{"y", "incy", y, ny, incy}, e)
}

// checkLevel1 checks the vectors of AXPY and DOT (y nil for NRM2).
func checkLevel1(fn string, e elem, h *Handle, n int, x *core.Buffer, incx int, y *core.Buffer, incy int, withY bool) error {
	if h == nil {
		return argErr(fn, "h", "nil *Handle")
	}
	if err := checkDim(fn, "n", n); err != nil {
		return err
	}
	if err := checkVec(fn, vec{"x", "incx", x, n, incx}, e); err != nil {
		return err
	}
	if !withY {
		return nil
	}
	return checkVec(fn, vec{"y", "incy", y, n, incy}, e)
}

// checkMatmul checks what Matmul adds to a GEMM's checks: the compute
// type against the element type.
func checkMatmul(fn string, e elem, ct ComputeType, k int) error {
	switch ct {
	case ComputeFloat32:
	case ComputeFloat16:
		if e.kind != 'h' {
			return argErr(fn, "compute", "compute = ComputeFloat16 needs Half matrices, not %s", e.name)
		}
	case ComputeTF32:
		if e.kind != 's' {
			return argErr(fn, "compute", "compute = ComputeTF32 needs float32 matrices, not %s", e.name)
		}
	default:
		return argErr(fn, "compute", "compute = %v is not ComputeFloat32, ComputeFloat16 or ComputeTF32", ct)
	}
	if k == 0 {
		return argErr(fn, "k", "k = 0: cuBLASLt needs at least one product per element (scale C by beta otherwise)")
	}
	return nil
}
