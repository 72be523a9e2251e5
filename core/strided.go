package core

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// MaxViewRank is the most dimensions a StridedView has. Shapes and strides
// live in fixed arrays, so that a view, and the sub-views Transpose, Slice
// and Flip make, allocate nothing for them; eight is past what kernels
// index (a CUDA tensor map takes at most five dimensions).
const MaxViewRank = 8

// StridedView is a typed, strided view of a Buffer's memory, as cuda.core's
// StridedMemoryView made from a Buffer and a StridedLayout: a shape, strides
// in elements, the byte offset of element (0, …, 0) in the buffer, and a
// read-only flag. Strides may be zero (a broadcast dimension) or negative
// (Flip); every element must lie inside the buffer, element (0, …, 0) must
// be aligned for T, and T must hold no Go pointers. A view owns nothing:
// once its Buffer is closed, every operation on it returns ErrClosed.
//
// Launch takes a *StridedView as a pointer argument (8 bytes): the address
// of element (0, …, 0). The kernel indexes with the strides, which the
// program passes as further arguments (Strides). Read-only is enforced by
// core's copies only: a kernel handed a read-only view can still write it.
//
// Copies between views and Go slices (CopyToView, CopyFromView) take the
// host side as a contiguous slice in the view's logical C order (the last
// index varies fastest); CopyView copies between views. A C-contiguous
// view is copied as one block, with core's fast copies. Other layouts are
// mapped onto the driver's 3-D copies (cuMemcpy3D): once dimensions of
// size 1 are dropped and those contiguous in each other merged, rows (the
// last dimension when its stride is 1, else single elements) at a pitch
// no smaller than a row, then slices of rows (a stride that is a positive
// multiple of the pitch), make a box, one driver call; one more dimension,
// at any stride, repeats the box. A layout that is one box (sub-matrices
// and boxes of 2-D and 3-D arrays, strided rows and columns) is copied so.
// Otherwise a copy with Go memory goes through a host copy of the view's
// extent (Size bytes), when that is exact and cheap: a read copies the
// extent whole and gathers the elements, if the extent is at most twice
// their bytes (or, when no boxes can, at most 256 MiB); a write scatters them into a host copy of the extent and
// writes it whole, only when the view covers its extent exactly
// (transposed and reversed arrays do), so that no byte outside the view
// is rewritten. Failing that, the boxes are copied one by one (a box per
// column of a transposed sub-matrix, per element of a reversed column:
// slow for big ones, where a kernel does better), and what does not map
// at all is refused with an error. CopyView copies box by box or refuses.
// Writes to a view whose elements may overlap (IsUnique false) are
// refused. The driver limits pitches to CU_DEVICE_ATTRIBUTE_MAX_PITCH
// (2 GiB less a byte on current GPUs): a copy whose rows lie further apart
// fails with its CUDA_ERROR_INVALID_VALUE.
//
// The synchronous copies run on the buffer's stream and wait for it, as
// CopyToDevice does: the Go memory is used only within one cgo call, which
// waits for the copy, so it needs no pinning. There are no asynchronous
// host copies: the pageable Go memory would have to stay pinned until a
// completion callback, over several driver calls, for no gain in speed
// (the driver copies pageable memory through its own staging anyway).
// CopyViewAsync queues device-to-device copies.
type StridedView[T any] struct {
	buf      *Buffer
	lay      layout
	readOnly bool
}

// layout is a view's geometry without its buffer: pure, tested and fuzzed
// on its own.
type layout struct {
	rank    int
	shape   [MaxViewRank]int64
	strides [MaxViewRank]int64 // in elements
	elem    int64              // bytes per element
	off     int64              // byte offset of element (0, …, 0)
	n       int64              // elements
	lo, hi  int64              // the bytes [lo, hi) the elements cover; lo == hi == off when empty
}

// NewStridedView makes a view of b with the given shape and strides in
// elements of T (nil strides: C order, contiguous), element (0, …, 0) at
// the start of b; Slice, Flip and Transpose make views of parts of it, and
// a view of b.View(off, n) starts at off. readOnly makes core's copies
// refuse to write it.
//
// The rank is 1 to MaxViewRank (a single element is a Buffer.View); sizes
// are at least 0; the strides' count is the rank's. Every element must lie inside b (computed without
// overflow), and b's address must be aligned for T, so that every element
// is.
func NewStridedView[T any](b *Buffer, shape []int, strides []int, readOnly bool) (*StridedView[T], error) {
	const fn = "NewStridedView"
	if err := checkElem[T](fn); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("core: NewStridedView: nil *Buffer")
	}
	if b.closed() {
		return nil, ErrClosed
	}
	var z T
	lay, err := makeLayout(fn, shape, strides, int(unsafe.Sizeof(z)), 0, b.size)
	if err != nil {
		return nil, err
	}
	if a := uint64(unsafe.Alignof(z)); uint64(b.ptr)%a != 0 {
		return nil, fmt.Errorf("core: NewStridedView: address %#x is not aligned for %v (%d bytes)", uint64(b.ptr), reflect.TypeFor[T](), a)
	}
	return &StridedView[T]{buf: b, lay: lay, readOnly: readOnly}, nil
}

// makeLayout checks shape and strides (nil: C order) for elem-byte elements
// with element (0, …, 0) at byte off of a size-byte buffer.
func makeLayout(fn string, shape, strides []int, elem int, off int64, size int) (layout, error) {
	var l layout
	r := len(shape)
	if r < 1 || r > MaxViewRank {
		return l, fmt.Errorf("core: %s: rank %d: a view has 1 to %d dimensions", fn, r, MaxViewRank)
	}
	if strides != nil && len(strides) != r {
		return l, fmt.Errorf("core: %s: %d strides for %d dimensions", fn, len(strides), r)
	}
	if elem <= 0 {
		return l, fmt.Errorf("core: %s: elements of %d bytes", fn, elem)
	}
	l.rank, l.elem, l.off = r, int64(elem), off
	for i, n := range shape {
		if n < 0 {
			return l, fmt.Errorf("core: %s: size %d of dimension %d is negative", fn, n, i)
		}
		l.shape[i] = int64(n)
	}
	if strides != nil {
		for i, s := range strides {
			l.strides[i] = int64(s)
		}
	} else {
		st := int64(1)
		for i := r - 1; i >= 0; i-- {
			l.strides[i] = st
			var ok bool
			if st, ok = mulOK(st, max(l.shape[i], 1)); !ok && i > 0 {
				return l, fmt.Errorf("core: %s: the C-order strides of shape %v overflow", fn, shape)
			}
		}
	}
	return l, l.finish(fn, int64(size))
}

// finish computes l's element count and extent from its shape, strides,
// element size and offset, and checks that the extent lies in [0, size).
func (l *layout) finish(fn string, size int64) error {
	l.n = 1
	for i := 0; i < l.rank; i++ {
		// Every stride in bytes must fit, sizes of 1 included: ByteStrides
		// reports them, and they are what a kernel is given.
		if _, ok := mulOK(abs64(l.strides[i]), l.elem); !ok || l.strides[i] == math.MinInt64 {
			return fmt.Errorf("core: %s: stride %d of dimension %d overflows in bytes", fn, l.strides[i], i)
		}
		var ok bool
		if l.n, ok = mulOK(l.n, l.shape[i]); !ok {
			return fmt.Errorf("core: %s: shape %v has too many elements", fn, l.shapeInts())
		}
	}
	if _, ok := mulOK(l.n, l.elem); !ok {
		return fmt.Errorf("core: %s: shape %v has more than %d bytes", fn, l.shapeInts(), int64(math.MaxInt64))
	}
	if l.n == 0 {
		if l.off < 0 || l.off > size {
			return fmt.Errorf("core: %s: offset %d is outside the buffer of %d bytes", fn, l.off, size)
		}
		l.lo, l.hi = l.off, l.off
		return nil
	}
	var neg, pos int64 // the byte offsets of the lowest and highest element from element 0
	for i := 0; i < l.rank; i++ {
		s := l.strides[i]
		span, ok := mulOK(l.shape[i]-1, abs64(s))
		if ok {
			span, ok = mulOK(span, l.elem)
		}
		if ok && s < 0 {
			neg, ok = addOK(neg, -span)
		} else if ok {
			pos, ok = addOK(pos, span)
		}
		if !ok {
			return fmt.Errorf("core: %s: the extent of shape %v with strides %v overflows", fn, l.shapeInts(), l.stridesInts())
		}
	}
	lo, ok1 := addOK(l.off, neg)
	hi, ok2 := addOK(l.off, pos)
	if ok2 {
		hi, ok2 = addOK(hi, l.elem)
	}
	if !ok1 || !ok2 {
		return fmt.Errorf("core: %s: the extent of shape %v with strides %v at offset %d overflows", fn, l.shapeInts(), l.stridesInts(), l.off)
	}
	if lo < 0 {
		return fmt.Errorf("core: %s: shape %v with strides %v at offset %d reaches %d bytes before the buffer's start", fn, l.shapeInts(), l.stridesInts(), l.off, -lo)
	}
	if hi > size {
		return fmt.Errorf("core: %s: shape %v with strides %v at offset %d needs %d bytes, more than the buffer's %d", fn, l.shapeInts(), l.stridesInts(), l.off, hi, size)
	}
	l.lo, l.hi = lo, hi
	return nil
}

// mulOK returns a*b for a, b >= 0, and whether it did not overflow.
func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}

// addOK returns a+b and whether it did not overflow.
func addOK(a, b int64) (int64, bool) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, false
	}
	return c, true
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func (l *layout) shapeInts() []int   { return ints(l.shape[:l.rank]) }
func (l *layout) stridesInts() []int { return ints(l.strides[:l.rank]) }

func ints(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// contiguousC reports whether the elements are laid out in C order with
// no gaps (sizes of 1 and empty views aside): the last stride is 1 and
// each other is the product of the sizes after it.
func (l *layout) contiguousC() bool {
	if l.n == 0 {
		return true
	}
	want := int64(1)
	for i := l.rank - 1; i >= 0; i-- {
		if l.shape[i] != 1 && l.strides[i] != want {
			return false
		}
		want *= l.shape[i]
	}
	return true
}

// contiguousF is contiguousC in Fortran order: the first index varies
// fastest.
func (l *layout) contiguousF() bool {
	if l.n == 0 {
		return true
	}
	want := int64(1)
	for i := 0; i < l.rank; i++ {
		if l.shape[i] != 1 && l.strides[i] != want {
			return false
		}
		want *= l.shape[i]
	}
	return true
}

// unique reports whether no two elements share memory, by the sufficient
// test cuda.core's is_unique makes too: ordered by stride, every
// dimension's stride steps over everything the smaller ones span. A
// zero stride (broadcast) fails it; so may layouts that interleave
// dimensions without overlapping.
func (l *layout) unique() bool {
	if l.n <= 1 {
		return true
	}
	var dims [MaxViewRank][2]int64 // size, |stride|
	k := 0
	for i := 0; i < l.rank; i++ {
		if l.shape[i] > 1 {
			dims[k] = [2]int64{l.shape[i], abs64(l.strides[i])}
			k++
		}
	}
	d := dims[:k]
	slices.SortFunc(d, func(a, b [2]int64) int { return cmp.Compare(a[1], b[1]) })
	span := int64(1) // elements from the lowest to the highest reached so far, plus one
	for _, x := range d {
		if x[1] < span {
			return false
		}
		span += (x[0] - 1) * x[1] // within the extent: no overflow
	}
	return true
}

// exact reports whether the elements cover their extent exactly, each
// byte of [lo, hi) belonging to one element: writing the extent whole then
// writes the view's elements and nothing else.
func (l *layout) exact() bool {
	return l.unique() && l.hi-l.lo == l.n*l.elem
}

// byteStrides returns the strides in bytes (finish checked that they fit).
func (l *layout) byteStrides() []int64 {
	out := make([]int64, l.rank)
	for i := range out {
		out[i] = l.strides[i] * l.elem
	}
	return out
}

// cStrides returns the byte strides of a contiguous C-order array of
// shape: the host side of a copy.
func cStrides(shape []int64, elem int64) []int64 {
	out := make([]int64, len(shape))
	st := elem
	for i := len(shape) - 1; i >= 0; i-- {
		out[i] = st
		st *= max(shape[i], 1) // at most the host slice's length in bytes
	}
	return out
}

// ---- accessors ----

// Buffer returns the buffer the view is of.
func (v *StridedView[T]) Buffer() *Buffer { return v.buf }

// Rank returns the number of dimensions.
func (v *StridedView[T]) Rank() int { return v.lay.rank }

// Shape returns the size of each dimension (a copy).
func (v *StridedView[T]) Shape() []int { return v.lay.shapeInts() }

// Strides returns the strides in elements (a copy): element (i, j, …) is
// at Ptr() + (i*Strides()[0] + j*Strides()[1] + …) * ElemSize().
func (v *StridedView[T]) Strides() []int { return v.lay.stridesInts() }

// ByteStrides returns the strides in bytes.
func (v *StridedView[T]) ByteStrides() []int {
	out := v.lay.stridesInts()
	for i := range out {
		out[i] *= int(v.lay.elem) // finish checked that they fit
	}
	return out
}

// Len returns the number of elements: the product of the sizes.
func (v *StridedView[T]) Len() int { return int(v.lay.n) }

// ElemSize returns the size of an element (of T) in bytes.
func (v *StridedView[T]) ElemSize() int { return int(v.lay.elem) }

// ElemType names T, as Go spells it ("float32", "blas.Half"): the view's
// data type, as cuda.core's dtype.
func (v *StridedView[T]) ElemType() string { return reflect.TypeFor[T]().String() }

// ReadOnly reports whether core's copies refuse to write the view.
func (v *StridedView[T]) ReadOnly() bool { return v.readOnly }

// Offset returns the byte offset of element (0, …, 0) from the start of
// the buffer; with negative strides it is not the lowest address.
func (v *StridedView[T]) Offset() int { return int(v.lay.off) }

// Size returns the bytes from the lowest to the end of the highest
// element: the memory the view spans, gaps included (0 when empty).
func (v *StridedView[T]) Size() int { return int(v.lay.hi - v.lay.lo) }

// IsContiguousC reports whether the elements are contiguous in C order
// (the last index varies fastest), with no gaps.
func (v *StridedView[T]) IsContiguousC() bool { return v.lay.contiguousC() }

// IsContiguousF reports whether the elements are contiguous in Fortran
// order (the first index varies fastest), with no gaps.
func (v *StridedView[T]) IsContiguousF() bool { return v.lay.contiguousF() }

// IsUnique reports whether every element has memory of its own, by a
// sufficient test (as cuda.core's is_unique): false for broadcast views
// (a zero stride), and possibly for hand-made layouts that interleave
// dimensions without overlapping. Copies refuse to write views that are
// not unique.
func (v *StridedView[T]) IsUnique() bool { return v.lay.unique() }

// Ptr returns the device address of element (0, …, 0), or 0 once the
// buffer is closed.
func (v *StridedView[T]) Ptr() driver.Deviceptr {
	if v.buf.closed() {
		return 0
	}
	return v.at(v.lay.off)
}

// String describes the view: "StridedView[float32](shape [3 4], strides [8 1], offset 16)".
func (v *StridedView[T]) String() string {
	ro := ""
	if v.readOnly {
		ro = ", read-only"
	}
	return fmt.Sprintf("StridedView[%s](shape %v, strides %v, offset %d%s)", v.ElemType(), v.Shape(), v.Strides(), v.lay.off, ro)
}

// launchPtr is what Launch passes for the view: see launchPointer.
func (v *StridedView[T]) launchPtr() (driver.Deviceptr, error) {
	if v == nil {
		return 0, fmt.Errorf("nil *core.StridedView[%v]", reflect.TypeFor[T]())
	}
	if v.buf.closed() {
		return 0, ErrClosed
	}
	return v.at(v.lay.off), nil
}

// ---- sub-views ----

// Transpose returns a view with the dimensions permuted: dimension i of
// the result is dimension perm[i] of v. Without perm the order is
// reversed (the transpose of a matrix).
func (v *StridedView[T]) Transpose(perm ...int) (*StridedView[T], error) {
	if err := v.usable("Transpose"); err != nil {
		return nil, err
	}
	r := v.lay.rank
	if len(perm) == 0 {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	if len(perm) != r {
		return nil, fmt.Errorf("core: StridedView.Transpose: %d axes for %d dimensions", len(perm), r)
	}
	var seen [MaxViewRank]bool
	w := *v
	for i, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return nil, fmt.Errorf("core: StridedView.Transpose: %v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
		w.lay.shape[i], w.lay.strides[i] = v.lay.shape[p], v.lay.strides[p]
	}
	return &w, nil // same elements: the extent and count stay
}

// Slice returns a view of the elements start, start+step, … before stop
// of dimension dim (Go's s[start:stop] with a step), 0 <= start <= stop <=
// the size, step >= 1. Flip reverses a dimension.
func (v *StridedView[T]) Slice(dim, start, stop, step int) (*StridedView[T], error) {
	if err := v.usable("Slice"); err != nil {
		return nil, err
	}
	if dim < 0 || dim >= v.lay.rank {
		return nil, fmt.Errorf("core: StridedView.Slice: dimension %d of a view of rank %d", dim, v.lay.rank)
	}
	n := v.lay.shape[dim]
	if start < 0 || stop < start || int64(stop) > n || step < 1 {
		return nil, fmt.Errorf("core: StridedView.Slice: [%d:%d] step %d of a dimension of size %d", start, stop, step, n)
	}
	w := *v
	var m int64 // ceil((stop-start)/step), without overflow for a huge step
	if stop > start {
		m = int64(stop-start-1)/int64(step) + 1
	}
	w.lay.shape[dim] = m
	if m > 0 && v.lay.n > 0 { // an empty view's offset stays: its strides were never checked
		s := v.lay.strides[dim]
		// start and (m-1)*step are below n, whose span is within the
		// extent: neither product overflows.
		w.lay.off += int64(start) * s * v.lay.elem
		if m > 1 {
			w.lay.strides[dim] = s * int64(step)
		}
	}
	if err := w.lay.finish("StridedView.Slice", int64(v.buf.size)); err != nil {
		return nil, err
	}
	return &w, nil
}

// Flip returns a view with dimension dim reversed: its stride negated and
// element (0, …, 0) moved to its last index.
func (v *StridedView[T]) Flip(dim int) (*StridedView[T], error) {
	if err := v.usable("Flip"); err != nil {
		return nil, err
	}
	if dim < 0 || dim >= v.lay.rank {
		return nil, fmt.Errorf("core: StridedView.Flip: dimension %d of a view of rank %d", dim, v.lay.rank)
	}
	w := *v
	if n := v.lay.shape[dim]; n > 1 && v.lay.n > 0 {
		s := v.lay.strides[dim]
		w.lay.off += (n - 1) * s * v.lay.elem // the dimension's span: within the extent
		w.lay.strides[dim] = -s
	}
	if err := w.lay.finish("StridedView.Flip", int64(v.buf.size)); err != nil {
		return nil, err
	}
	return &w, nil
}

// AsReadOnly returns the view with the read-only flag set.
func (v *StridedView[T]) AsReadOnly() *StridedView[T] {
	w := *v
	w.readOnly = true
	return &w
}

// usable refuses a nil view and a view of a closed buffer.
func (v *StridedView[T]) usable(fn string) error {
	if v == nil {
		return fmt.Errorf("core: StridedView.%s: nil *StridedView", fn)
	}
	if v.buf.closed() {
		return ErrClosed
	}
	return nil
}

// ---- copies ----

// CopyToView copies src, the view's elements in C order (len(src) ==
// dst.Len()), into dst and waits; see StridedView for how. A read-only
// view, and one whose elements may overlap, are refused.
func CopyToView[T any](dst *StridedView[T], src []T) error {
	if dst == nil {
		return errors.New("core: CopyToView: nil *StridedView")
	}
	if err := dst.checkWrite("CopyToView"); err != nil {
		return err
	}
	if len(src) != dst.Len() {
		return fmt.Errorf("core: CopyToView: %d elements for %v, which has %d", len(src), dst, dst.Len())
	}
	l := &dst.lay
	mode, plan := l.hostCopy(true)
	if mode == copyNone {
		return fmt.Errorf("core: CopyToView: %v cannot be written: the driver's 3-D copies cannot express its layout, and it does not cover its extent exactly", dst)
	}
	return dst.withBuffer(func(h driver.Context, s *Stream) error {
		p, n := sliceBytes(src)
		switch mode {
		case copyWhole:
			return copyHtoD(s.ctx.dev, h, dst.at(l.off), p, n, s.handle) // staging.go
		case copyBoxes:
			return cMemcpy3D(h, &plan, 0, dst.at(l.off), p, nil, s.handle, true)
		}
		ext := make([]T, (l.hi-l.lo)/l.elem)
		gatherScatter(l, ext, src, false)
		ep, en := sliceBytes(ext)
		return copyHtoD(s.ctx.dev, h, dst.at(l.lo), ep, en, s.handle)
	})
}

// CopyFromView copies the elements of src into dst in C order (len(dst)
// == src.Len()) and waits; see StridedView for how.
func CopyFromView[T any](dst []T, src *StridedView[T]) error {
	if src == nil {
		return errors.New("core: CopyFromView: nil *StridedView")
	}
	if len(dst) != src.Len() {
		return fmt.Errorf("core: CopyFromView: %d elements for %v, which has %d", len(dst), src, src.Len())
	}
	l := &src.lay
	mode, plan := l.hostCopy(false)
	if mode == copyNone {
		return fmt.Errorf("core: CopyFromView: %v cannot be read: the driver's 3-D copies cannot express its layout, and its extent (%d bytes) is more than twice its elements' %d bytes and more than %d", src, l.hi-l.lo, l.n*l.elem, maxReadExtent)
	}
	return src.withBuffer(func(h driver.Context, s *Stream) error {
		p, n := sliceBytes(dst)
		switch mode {
		case copyWhole:
			return copyDtoH(s.ctx.dev, h, p, src.at(l.off), n, s.handle) // staging.go
		case copyBoxes:
			return cMemcpy3D(h, &plan, src.at(l.off), 0, nil, p, s.handle, true)
		}
		ext := make([]T, (l.hi-l.lo)/l.elem)
		ep, en := sliceBytes(ext)
		if err := copyDtoH(s.ctx.dev, h, ep, src.at(l.lo), en, s.handle); err != nil {
			return err
		}
		gatherScatter(l, ext, dst, true)
		return nil
	})
}

// withBuffer calls do with the view's buffer and its stream acquired,
// unless the view is empty: the frame of the copies between a view and a
// Go slice.
func (v *StridedView[T]) withBuffer(do func(h driver.Context, s *Stream) error) error {
	h, s, err := v.buf.acquireWith(nil)
	if err != nil {
		return err
	}
	defer v.buf.releaseWith(s)
	if v.lay.n == 0 {
		return nil
	}
	return do(h, s)
}

// at is the device address of byte off of the view's buffer.
func (v *StridedView[T]) at(off int64) driver.Deviceptr { return v.buf.ptr + driver.Deviceptr(off) }

// copyMode is how a copy between a view and a Go slice goes.
type copyMode int

const (
	copyWhole  copyMode = iota // C-contiguous: one block, core's fast copies
	copyBoxes                  // the driver's 3-D copies (a copyPlan)
	copyExtent                 // through a host copy of the view's extent
	copyNone                   // refused
)

// hostCopy decides how l is copied from (toDevice) or to a C-order Go
// slice. Through the extent, a write must cover it exactly (else bytes
// outside the view would be rewritten with what they held, racing with
// other writers), and a read may move at most twice its elements' bytes.
func (l *layout) hostCopy(toDevice bool) (copyMode, copyPlan) {
	if l.contiguousC() {
		return copyWhole, copyPlan{}
	}
	src, dst := l.byteStrides(), cStrides(l.shape[:l.rank], l.elem)
	if toDevice {
		src, dst = dst, src
	}
	// One box is one driver call; several boxes cost a call each, which
	// one copy of the extent and a gather or scatter on the host beat.
	pl, ok := planCopy(l.shape[:l.rank], src, dst, l.elem)
	switch {
	case ok && pl.count <= 1:
		return copyBoxes, pl
	case toDevice && l.exact() || !toDevice && (l.hi-l.lo)/2 <= l.n*l.elem:
		return copyExtent, copyPlan{}
	case ok:
		return copyBoxes, pl
	case !toDevice && l.hi-l.lo <= maxReadExtent:
		// Nothing else can: reading more than the elements is harmless,
		// within a bound on the host copy.
		return copyExtent, copyPlan{}
	}
	return copyNone, copyPlan{}
}

// maxReadExtent bounds the host copy of a read that only the extent can
// serve (more than twice its elements' bytes, and no boxes).
const maxReadExtent = 256 << 20

// CopyView copies the elements of src into those of dst, views of the same
// shape on one device, and waits. It runs on dst's buffer's stream (see
// Buffer) and sees the work queued there before it; work on src's stream
// must be ordered with it by the caller. Views of one buffer whose extents
// overlap are refused, even where their elements interleave without
// sharing memory (the left and right halves of a matrix): the check is
// the extents'. Layouts the driver's 3-D copies cannot express are refused
// too (see StridedView).
func CopyView[T any](dst, src *StridedView[T]) error { return copyView(nil, dst, src, true) }

// CopyViewAsync queues the copy of CopyView on stream and returns.
func CopyViewAsync[T any](stream *Stream, dst, src *StridedView[T]) error {
	if stream == nil {
		return errors.New("core: CopyViewAsync: nil stream")
	}
	return copyView(stream, dst, src, false)
}

func copyView[T any](stream *Stream, dst, src *StridedView[T], sync bool) error {
	if dst == nil || src == nil {
		return errors.New("core: CopyView: nil *StridedView")
	}
	if err := dst.checkWrite("CopyView"); err != nil {
		return err
	}
	dl, sl := &dst.lay, &src.lay
	if !slices.Equal(dl.shape[:dl.rank], sl.shape[:sl.rank]) {
		return fmt.Errorf("core: CopyView: shapes differ: %v and %v", dst.Shape(), src.Shape())
	}
	if dst.buf.root() == src.buf.root() && dl.n > 0 {
		a, b := int64(dst.buf.ptr)+dl.lo, int64(src.buf.ptr)+sl.lo
		if a < b+(sl.hi-sl.lo) && b < a+(dl.hi-dl.lo) {
			return fmt.Errorf("core: CopyView: the views' memory overlaps (%v and %v of one buffer)", dst, src)
		}
	}
	if dd, sd := dst.buf.mr.Device(), src.buf.mr.Device(); dd != sd {
		return fmt.Errorf("core: CopyView: views of %v and %v: copy between devices with Buffer.CopyFrom", dd, sd)
	}
	direct := dl.contiguousC() && sl.contiguousC()
	plan, ok := copyPlan{}, false
	if !direct {
		if plan, ok = planCopy(dl.shape[:dl.rank], sl.byteStrides(), dl.byteStrides(), dl.elem); !ok {
			return fmt.Errorf("core: CopyView: the driver's 3-D copies cannot express the copy from %v to %v", src, dst)
		}
	}
	h, s, err := dst.buf.acquireWith(stream)
	if err != nil {
		return err
	}
	defer dst.buf.releaseWith(s)
	if !src.buf.acquire() {
		return ErrClosed
	}
	defer src.buf.release()
	if dl.n == 0 {
		return nil
	}
	dp, sp := dst.at(dl.off), src.at(sl.off)
	if direct {
		if err := cuMemcpyDtoDAsync(h, dp, sp, uint64(dl.n*dl.elem), s.handle); err != nil {
			return err
		}
		return syncIf(sync, h, s)
	}
	return cMemcpy3D(h, &plan, sp, dp, nil, nil, s.handle, sync)
}

// checkWrite refuses to write a read-only view, or one whose elements may
// share memory (the result would depend on the copy's order).
func (v *StridedView[T]) checkWrite(fn string) error {
	if v.readOnly {
		return fmt.Errorf("core: %s: %v is read-only", fn, v)
	}
	if !v.lay.unique() {
		return fmt.Errorf("core: %s: the elements of %v may overlap: writing it is ambiguous", fn, v)
	}
	return nil
}

// gatherScatter moves the elements of l between ext, its extent (ext[0]
// is the element at byte lo), and host, in C order: into host when toHost,
// else out of it.
func gatherScatter[T any](l *layout, ext, host []T, toHost bool) {
	if l.n == 0 {
		return
	}
	r := l.rank
	var idx [MaxViewRank]int64
	base := (l.off - l.lo) / l.elem
	inner, is := l.shape[r-1], l.strides[r-1]
	h := 0
	for {
		p := base
		for i := 0; i < r-1; i++ {
			p += idx[i] * l.strides[i]
		}
		for range inner {
			if toHost {
				host[h] = ext[p]
			} else {
				ext[p] = host[h]
			}
			h++
			p += is
		}
		i := r - 2
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < l.shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// ---- mapping copies onto cuMemcpy3D ----

// copyPlan is a strided copy as cg_memcpy3d takes it (fastpath.h): count
// boxes of width bytes by height rows by depth slices; rows are pitch
// bytes apart, slices height-rows-of-pitch apart, on each side; box k
// starts k*step bytes after the first, which starts at element (0, …, 0).
type copyPlan struct {
	width, height, depth, count int64
	srcPitch, srcHeight         int64
	dstPitch, dstHeight         int64
	srcStep, dstStep            int64
}

// planCopy maps a copy of an array of shape between two layouts, given by
// their byte strides (sizes of 1 may have any), onto a copyPlan; ok is
// false when it does not fit one (StridedView says which do). Nothing is
// copied for an empty shape.
func planCopy(shape, src, dst []int64, elem int64) (pl copyPlan, ok bool) {
	type dim struct{ n, s, d int64 }
	var dims [MaxViewRank]dim
	k := 0
	for i, n := range shape {
		switch {
		case n == 0:
			return copyPlan{}, true // count 0
		case n == 1:
			continue // never stepped over
		case k > 0 && steps(dims[k-1].s, n, src[i]) && steps(dims[k-1].d, n, dst[i]):
			// The previous (outer) dimension steps over this one whole on
			// both sides: one dimension.
			dims[k-1] = dim{dims[k-1].n * n, src[i], dst[i]}
		default:
			dims[k] = dim{n, src[i], dst[i]}
			k++
		}
	}
	pl.width, pl.height, pl.depth, pl.count = elem, 1, 1, 1
	if k > 0 && dims[k-1].s == elem && dims[k-1].d == elem {
		pl.width = dims[k-1].n * elem // contiguous rows
		k--
	}
	outer := dims[:k]
	if len(outer) > 3 {
		return copyPlan{}, false
	}
	// Rows: the innermost dimension left, when its pitch is at least the
	// width on both sides (the driver's rows may not overlap); else one
	// row, and that dimension is stepped over by slices or boxes.
	rows := dim{1, pl.width, pl.width}
	if r := len(outer) - 1; r >= 0 && outer[r].s >= pl.width && outer[r].d >= pl.width {
		rows, outer = outer[r], outer[:r]
	}
	pl.height, pl.srcPitch, pl.dstPitch = rows.n, rows.s, rows.d
	pl.srcHeight, pl.dstHeight = rows.n, rows.n
	// Slices: the next, when its stride is a whole number of rows, at
	// least height of them, on both sides.
	if len(outer) > 0 {
		sl := outer[len(outer)-1]
		if sl.s%pl.srcPitch == 0 && sl.d%pl.dstPitch == 0 && sl.s/pl.srcPitch >= pl.height && sl.d/pl.dstPitch >= pl.height {
			pl.depth, pl.srcHeight, pl.dstHeight = sl.n, sl.s/pl.srcPitch, sl.d/pl.dstPitch
			outer = outer[:len(outer)-1]
		}
	}
	// Boxes: the outermost one left, at any step.
	switch len(outer) {
	case 0:
	case 1:
		pl.count, pl.srcStep, pl.dstStep = outer[0].n, outer[0].s, outer[0].d
	default:
		return copyPlan{}, false
	}
	return pl, true
}

// steps reports whether outer == n*inner, computed without overflow.
func steps(outer, n, inner int64) bool {
	if inner == 0 {
		return outer == 0
	}
	return outer%inner == 0 && outer/inner == n
}
