package sparse

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cusparse"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/enum"
	"github.com/cudago/cudago/internal/libhandle"
)

// Scalar is the element type of a sparse matrix and of the dense vectors
// and matrices it multiplies: cuSPARSE's CUDA_R_32F, CUDA_R_64F,
// CUDA_C_32F and CUDA_C_64F.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// Index is the type of a matrix's row offsets and indices: cuSPARSE's
// CUSPARSE_INDEX_32I and CUSPARSE_INDEX_64I.
type Index interface {
	int32 | int64
}

// Format is the storage format of a Matrix.
type Format int

const (
	CSR Format = iota // compressed sparse rows: row offsets, column indices, values
	COO               // coordinates: row indices, column indices, values
)

func (f Format) String() string { return enum.Name(f, "Format", "CSR", "COO") }

// Matrix is a sparse matrix in device memory, in CSR or COO format, with
// zero-based indices. It owns its device copies of the indices and values
// (made by NewCSR or NewCOO from Go slices) and its cuSPARSE descriptor;
// Close frees them, and a forgotten Matrix is freed when it is collected.
// A Matrix may be used by several Handles and goroutines at once.
type Matrix[T Scalar] struct {
	format     Format
	rows, cols int
	nnz        int
	index      cusparse.IndexType
	stream     *core.Stream // where the buffers were allocated, and are freed

	mu      sync.RWMutex // operations read-lock it, Close locks it
	closed  bool
	rowBuf  *core.Buffer // CSR: rows+1 offsets; COO: nnz row indices
	colBuf  *core.Buffer
	valBuf  *core.Buffer
	desc    cusparse.SpMatDescr
	cleanup runtime.Cleanup
}

// NewCSR copies a rows×cols matrix in CSR format to the device, allocating
// on stream and copying there (the call waits for the copies): rowOffsets
// has rows+1 entries, starting at 0 and never decreasing, and row i holds
// the entries colInd[rowOffsets[i]:rowOffsets[i+1]] with values at the
// same positions. Within a row the column indices must increase strictly
// (sorted, no duplicates), each in [0, cols). All of this is checked on
// the CPU first; rows and cols must be at least 1. Empty rows, and a
// matrix without nonzeros, are allowed.
func NewCSR[T Scalar, I Index](stream *core.Stream, rows, cols int, rowOffsets, colInd []I, values []T) (*Matrix[T], error) {
	if err := checkCSR("NewCSR", rows, cols, rowOffsets, colInd, len(values)); err != nil {
		return nil, err
	}
	return newMatrix("NewCSR", stream, CSR, rows, cols, rowOffsets, colInd, values)
}

// NewCOO copies a rows×cols matrix in COO format to the device, allocating
// on stream and copying there (the call waits for the copies): entry i is
// values[i] at row rowInd[i], column colInd[i]. The entries must be sorted
// by row, then by column, without duplicates, with indices in [0, rows)
// and [0, cols); this is checked on the CPU first. rows and cols must be
// at least 1; a matrix without nonzeros is allowed.
func NewCOO[T Scalar, I Index](stream *core.Stream, rows, cols int, rowInd, colInd []I, values []T) (*Matrix[T], error) {
	if err := checkCOO("NewCOO", rows, cols, rowInd, colInd, len(values)); err != nil {
		return nil, err
	}
	return newMatrix("NewCOO", stream, COO, rows, cols, rowInd, colInd, values)
}

// checkDims checks a matrix's shape and number of nonzeros against the
// index type.
func checkDims[I Index](fn string, rows, cols, nnz int) error {
	if rows < 1 || cols < 1 {
		return argErr(fn, "rows", "a %d×%d matrix: rows and cols must be at least 1", rows, cols)
	}
	maxIdx := math.MaxInt64
	var zero I
	if unsafe.Sizeof(zero) == 4 {
		maxIdx = math.MaxInt32
	}
	for _, d := range []struct {
		what, arg string
		n         int
	}{{"rows", "rows", rows}, {"cols", "cols", cols}, {"nonzeros", "values", nnz}} {
		if d.n > maxIdx {
			return argErr(fn, d.arg, "%d %s do not fit %T indices", d.n, d.what, zero)
		}
	}
	return nil
}

// checkCSR checks a CSR matrix with nvals values.
func checkCSR[I Index](fn string, rows, cols int, rowOffsets, colInd []I, nvals int) error {
	if len(colInd) != nvals {
		return argErr(fn, "colInd", "colInd has %d entries and values %d: both have one per nonzero", len(colInd), nvals)
	}
	nnz := nvals
	if err := checkDims[I](fn, rows, cols, nnz); err != nil {
		return err
	}
	if len(rowOffsets) != rows+1 {
		return argErr(fn, "rowOffsets", "rowOffsets has %d entries, want rows+1 = %d", len(rowOffsets), rows+1)
	}
	if rowOffsets[0] != 0 {
		return argErr(fn, "rowOffsets", "rowOffsets[0] = %d, want 0", rowOffsets[0])
	}
	for i := range rows {
		if rowOffsets[i+1] < rowOffsets[i] {
			return argErr(fn, "rowOffsets", "rowOffsets decrease after row %d: rowOffsets[%d] = %d, rowOffsets[%d] = %d", i, i, rowOffsets[i], i+1, rowOffsets[i+1])
		}
	}
	if int64(rowOffsets[rows]) != int64(nnz) {
		return argErr(fn, "rowOffsets", "rowOffsets[%d] = %d, but there are %d nonzeros (len(values))", rows, rowOffsets[rows], nnz)
	}
	for i := range rows {
		for j := rowOffsets[i]; j < rowOffsets[i+1]; j++ {
			c := colInd[j]
			if c < 0 || int64(c) >= int64(cols) {
				return argErr(fn, "colInd", "colInd[%d] = %d (row %d) is outside [0, %d)", j, c, i, cols)
			}
			if j > rowOffsets[i] && c <= colInd[j-1] {
				return argErr(fn, "colInd", "colInd[%d] = %d (row %d) does not follow colInd[%d] = %d: the columns of a row must increase (sorted, no duplicates)", j, c, i, j-1, colInd[j-1])
			}
		}
	}
	return nil
}

// checkCOO checks a COO matrix with nvals values.
func checkCOO[I Index](fn string, rows, cols int, rowInd, colInd []I, nvals int) error {
	if len(rowInd) != nvals || len(colInd) != nvals {
		return argErr(fn, "rowInd", "rowInd has %d entries, colInd %d and values %d: all have one per nonzero", len(rowInd), len(colInd), nvals)
	}
	if err := checkDims[I](fn, rows, cols, nvals); err != nil {
		return err
	}
	for i := range nvals {
		r, c := rowInd[i], colInd[i]
		if r < 0 || int64(r) >= int64(rows) {
			return argErr(fn, "rowInd", "rowInd[%d] = %d is outside [0, %d)", i, r, rows)
		}
		if c < 0 || int64(c) >= int64(cols) {
			return argErr(fn, "colInd", "colInd[%d] = %d is outside [0, %d)", i, c, cols)
		}
		if i > 0 && (r < rowInd[i-1] || r == rowInd[i-1] && c <= colInd[i-1]) {
			return argErr(fn, "rowInd", "entry %d (row %d, column %d) does not follow entry %d (row %d, column %d): entries must be sorted by row, then column, without duplicates", i, r, c, i-1, rowInd[i-1], colInd[i-1])
		}
	}
	return nil
}

// newMatrix uploads checked arrays on stream, which it checks for fn,
// and creates the descriptor: rowArr is CSR's offsets or COO's row
// indices.
func newMatrix[T Scalar, I Index](fn string, stream *core.Stream, f Format, rows, cols int, rowArr, colInd []I, values []T) (*Matrix[T], error) {
	if stream == nil {
		return nil, argErr(fn, "stream", "nil *core.Stream")
	}
	var zi I
	a := &Matrix[T]{format: f, rows: rows, cols: cols, nnz: len(values), index: cusparse.Index32I, stream: stream}
	if unsafe.Sizeof(zi) == 8 {
		a.index = cusparse.Index64I
	}
	var err error
	// A matrix without nonzeros still gets one element of each array:
	// cuSPARSE is never given a NULL array.
	if a.rowBuf, err = upload(stream, rowArr); err == nil {
		if a.colBuf, err = upload(stream, colInd); err == nil {
			a.valBuf, err = upload(stream, values)
		}
	}
	if err == nil {
		err = a.createDesc()
	}
	if err != nil {
		a.freeBuffers()
		return nil, err
	}
	a.cleanup = runtime.AddCleanup(a, destroyDesc, descRef{stream, a.desc})
	return a, nil
}

// upload allocates a buffer for s (at least one element) on stream and
// copies s into it.
func upload[E any](stream *core.Stream, s []E) (*core.Buffer, error) {
	var zero E
	b, err := stream.Device().Allocate(max(len(s), 1)*int(unsafe.Sizeof(zero)), stream)
	if err != nil {
		return nil, err
	}
	if err := core.CopyToDevice(b, s); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// createDesc creates the cuSPARSE descriptor of a's buffers.
func (a *Matrix[T]) createDesc() error {
	ctx, _, err := a.stream.Acquire()
	if err != nil {
		return err
	}
	defer a.stream.Release()
	ops := libhandle.Operands{Package: "sparse", Func: "New" + a.format.String()}
	defer ops.Release()
	rp, err := ops.Add("rows", a.rowBuf, 1, "")
	if err != nil {
		return err
	}
	cp, err := ops.Add("cols", a.colBuf, 1, "")
	if err != nil {
		return err
	}
	vp, err := ops.Add("values", a.valBuf, 1, "")
	if err != nil {
		return err
	}
	rows, cols, nnz := int64(a.rows), int64(a.cols), int64(a.nnz)
	if a.format == CSR {
		return cusparseCreateCsr(ctx, &a.desc, rows, cols, nnz, rp, cp, vp, a.index, a.index, cusparse.IndexBaseZero, dataType[T]())
	}
	return cusparseCreateCoo(ctx, &a.desc, rows, cols, nnz, rp, cp, vp, a.index, cusparse.IndexBaseZero, dataType[T]())
}

func (a *Matrix[T]) freeBuffers() error {
	var errs []error
	for _, b := range []*core.Buffer{a.rowBuf, a.colBuf, a.valBuf} {
		if b != nil {
			if err := b.Close(); err != nil && !errors.Is(err, core.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	a.rowBuf, a.colBuf, a.valBuf = nil, nil, nil
	return errors.Join(errs...)
}

// descRef is what the cleanup of a forgotten Matrix needs; its Buffers
// have cleanups of their own.
type descRef struct {
	stream *core.Stream
	desc   cusparse.SpMatDescr
}

func destroyDesc(r descRef) {
	_ = libhandle.InContext(r.stream, func(ctx driver.Context, _ bool) error {
		return cusparseDestroySpMat(ctx, cusparse.ConstSpMatDescr(r.desc))
	})
}

// Close destroys the descriptor and frees the device arrays, on the stream
// the matrix was made on: work that uses the matrix on other streams must
// be done (or that stream waited for) first. Later operations return
// core.ErrClosed; closing twice is not an error.
func (a *Matrix[T]) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	a.cleanup.Stop()
	err := libhandle.InContext(a.stream, func(ctx driver.Context, _ bool) error {
		return cusparseDestroySpMat(ctx, cusparse.ConstSpMatDescr(a.desc))
	})
	a.desc = 0
	return errors.Join(err, a.freeBuffers())
}

// Format returns the matrix's storage format.
func (a *Matrix[T]) Format() Format { return a.format }

// Rows returns the number of rows.
func (a *Matrix[T]) Rows() int { return a.rows }

// Cols returns the number of columns.
func (a *Matrix[T]) Cols() int { return a.cols }

// NNZ returns the number of stored entries.
func (a *Matrix[T]) NNZ() int { return a.nnz }

// dataType is cuSPARSE's name of T.
func dataType[T Scalar]() cusparse.DataType {
	var z T
	switch any(z).(type) {
	case float32:
		return cusparse.R32F
	case float64:
		return cusparse.R64F
	case complex64:
		return cusparse.C32F
	default:
		return cusparse.C64F
	}
}
