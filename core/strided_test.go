package core

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// Layout math, validation, sub-views and the mapping of copies onto the
// driver's 3-D copies, without a GPU: copy plans are run by runPlan, a Go
// model of cuMemcpy3D, and compared with an element-by-element copy.

func TestStridedLayoutValidation(t *testing.T) {
	const big = math.MaxInt64
	cases := []struct {
		name           string
		shape, strides []int
		elem           int
		off            int64
		size           int
		err            string
	}{
		{"rank 0", []int{}, nil, 4, 0, 64, "rank 0: a view has 1 to 8 dimensions"},
		{"rank 9", []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, nil, 4, 0, 64, "rank 9: a view has 1 to 8 dimensions"},
		{"strides count", []int{2, 3}, []int{3}, 4, 0, 64, "1 strides for 2 dimensions"},
		{"negative size", []int{2, -1}, nil, 4, 0, 64, "size -1 of dimension 1 is negative"},
		{"zero-size elements", []int{2}, nil, 0, 0, 64, "elements of 0 bytes"},
		{"past the end", []int{4, 5}, nil, 4, 0, 79, "needs 80 bytes, more than the buffer's 79"},
		{"pitched past the end", []int{3, 4}, []int{7, 1}, 4, 0, 71, "needs 72 bytes"},
		{"before the start", []int{3}, []int{-1}, 4, 0, 64, "reaches 8 bytes before the buffer's start"},
		{"offset past the end", []int{0}, nil, 4, 65, 64, "offset 65 is outside"},
		{"stride bytes overflow", []int{1}, []int{big / 2}, 4, 0, 64, "stride 4611686018427387903 of dimension 0 overflows in bytes"},
		{"min stride", []int{1}, []int{math.MinInt64}, 1, 0, 64, "overflows in bytes"},
		{"elements overflow", []int{1 << 32, 1 << 32}, []int{0, 0}, 1, 0, 64, "has too many elements"},
		{"bytes overflow", []int{1 << 62}, []int{0}, 4, 0, 64, "has more than"},
		{"extent overflow", []int{3, 3}, []int{1 << 61, 1 << 61}, 1, 0, 64, "the extent of shape [3 3] with strides [2305843009213693952 2305843009213693952] overflows"},
		{"C strides overflow", []int{1 << 40, 1 << 40}, nil, 1, 0, 64, "too many elements"},
		{"C strides overflow 3", []int{2, 1 << 40, 1 << 40}, nil, 1, 0, 64, "C-order strides of shape"},
	}
	for _, c := range cases {
		_, err := makeLayout("NewStridedView", c.shape, c.strides, c.elem, c.off, c.size)
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "core: NewStridedView: ") {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}

	ok := []struct {
		name           string
		shape, strides []int
		elem           int
		off            int64
		size           int
		n, lo, hi      int64
		wantStrides    []int
	}{
		{"C order", []int{3, 4, 5}, nil, 4, 0, 240, 60, 0, 240, []int{20, 5, 1}},
		{"exactly full", []int{4, 5}, nil, 8, 0, 160, 20, 0, 160, []int{5, 1}},
		{"pitched", []int{3, 4}, []int{7, 1}, 4, 0, 72, 12, 0, 72, []int{7, 1}},
		{"broadcast", []int{1000, 4}, []int{0, 1}, 4, 0, 16, 4000, 0, 16, []int{0, 1}},
		{"negative", []int{3}, []int{-2}, 4, 16, 20, 3, 0, 20, []int{-2}},
		{"empty", []int{3, 0}, nil, 4, 0, 0, 0, 0, 0, []int{1, 1}},
		{"empty at the end", []int{0}, []int{5}, 4, 64, 64, 0, 64, 64, []int{5}},
		{"size 1 any stride", []int{1, 4}, []int{1 << 40, 1}, 4, 0, 16, 4, 0, 16, []int{1 << 40, 1}},
		{"C strides with zero size", []int{2, 0, 3}, nil, 1, 0, 0, 0, 0, 0, []int{3, 3, 1}},
	}
	for _, c := range ok {
		l, err := makeLayout("NewStridedView", c.shape, c.strides, c.elem, c.off, c.size)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if l.n != c.n || l.lo != c.lo || l.hi != c.hi || !slices.Equal(l.stridesInts(), c.wantStrides) {
			t.Errorf("%s: n %d [%d, %d) strides %v, want n %d [%d, %d) strides %v", c.name, l.n, l.lo, l.hi, l.stridesInts(), c.n, c.lo, c.hi, c.wantStrides)
		}
	}
}

func mustLayout(t testing.TB, shape, strides []int, elem int, off int64, size int) layout {
	t.Helper()
	l, err := makeLayout("test", shape, strides, elem, off, size)
	if err != nil {
		t.Fatalf("makeLayout(%v, %v): %v", shape, strides, err)
	}
	return l
}

// flippedOffset is the smallest offset at which a layout of shape and
// strides (in elements of elem bytes) stays in its buffer: negative
// strides walk back from it.
func flippedOffset(shape, strides []int, elem int) int64 {
	off := int64(0)
	for i, s := range strides {
		if s < 0 && shape[i] > 0 {
			off += int64(-s) * int64(shape[i]-1) * int64(elem)
		}
	}
	return off
}

func TestStridedLayoutProperties(t *testing.T) {
	const big = 1 << 20
	cases := []struct {
		shape, strides   []int
		c, f, uniq, exct bool
	}{
		{[]int{3, 4}, nil, true, false, true, true},
		{[]int{3, 4}, []int{1, 3}, false, true, true, true},         // Fortran order
		{[]int{3, 4, 5}, []int{1, 15, 3}, false, false, true, true}, // another order, still exact
		{[]int{3, 4}, []int{8, 1}, false, false, true, false},       // pitched rows: a gap
		{[]int{4}, []int{1}, true, true, true, true},
		{[]int{1, 4}, []int{99, 1}, true, true, true, true},     // size 1: its stride does not matter
		{[]int{4, 1}, []int{1, 99}, true, true, true, true},     // likewise
		{[]int{4}, []int{2}, false, false, true, false},         // every other element
		{[]int{4}, []int{0}, false, false, false, false},        // broadcast
		{[]int{3, 4}, []int{2, 1}, false, false, false, false},  // overlapping rows
		{[]int{2, 2}, []int{3, 2}, false, false, true, false},   // offsets 0 2 3 5: unique, a gap
		{[]int{2, 3}, []int{1, 2}, false, true, true, true},     // Fortran order
		{[]int{3, 2}, []int{2, 3}, false, false, false, false},  // offsets 0 3 2 5 4 7: interleaved, unique, reported not (as cuda.core)
		{[]int{0, 3}, []int{7, 5}, true, true, true, true},      // empty
		{[]int{3}, []int{-1}, false, false, true, true},         // reversed
		{[]int{2, 3}, []int{3, -1}, false, false, true, true},   // rows reversed
		{[]int{big, 2}, []int{1, big}, false, true, true, true}, // Fortran
	}
	for _, c := range cases {
		l := mustLayout(t, c.shape, c.strides, 4, flippedOffset(c.shape, c.strides, 4), 1<<40)
		if l.contiguousC() != c.c || l.contiguousF() != c.f || l.unique() != c.uniq || l.exact() != c.exct {
			t.Errorf("shape %v strides %v: C %v F %v unique %v exact %v, want %v %v %v %v", c.shape, c.strides,
				l.contiguousC(), l.contiguousF(), l.unique(), l.exact(), c.c, c.f, c.uniq, c.exct)
		}
	}
}

// testBuffer is a Buffer of fakeMR (no driver) at 0x1000.
func testBuffer(t testing.TB, size int) *Buffer {
	t.Helper()
	b, err := (&fakeMR{}).Allocate(size, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewStridedView(t *testing.T) {
	b := testBuffer(t, 4*12*10)
	v, err := NewStridedView[float32](b, []int{12, 10}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if v.Rank() != 2 || !slices.Equal(v.Shape(), []int{12, 10}) || !slices.Equal(v.Strides(), []int{10, 1}) ||
		!slices.Equal(v.ByteStrides(), []int{40, 4}) || v.Len() != 120 || v.ElemSize() != 4 || v.ElemType() != "float32" ||
		v.Offset() != 0 || v.Size() != 480 || v.ReadOnly() || v.Buffer() != b || v.Ptr() != 0x1000 ||
		!v.IsContiguousC() || v.IsContiguousF() || !v.IsUnique() {
		t.Errorf("view: %v len %d elem %d %s offset %d size %d ptr %#x", v, v.Len(), v.ElemSize(), v.ElemType(), v.Offset(), v.Size(), v.Ptr())
	}
	v.Shape()[0] = 99 // a copy
	if v.Shape()[0] != 12 {
		t.Error("Shape returned the view's own array")
	}
	if s := v.String(); s != "StridedView[float32](shape [12 10], strides [10 1], offset 0)" {
		t.Errorf("String: %s", s)
	}
	if s := v.AsReadOnly().String(); !strings.HasSuffix(s, ", read-only)") || v.ReadOnly() {
		t.Errorf("AsReadOnly: %s (original read-only %v)", s, v.ReadOnly())
	}

	type pair struct{ A, B int32 }
	pv, err := NewStridedView[pair](b, []int{4, 3}, []int{12, 1}, true)
	if err != nil || pv.ElemType() != "core.pair" || pv.ElemSize() != 8 || !pv.ReadOnly() || pv.Size() != 3*12*8+3*8 {
		t.Errorf("struct view: %v, %v", pv, err)
	}

	if _, err := NewStridedView[float32](nil, []int{1}, nil, false); err == nil || !strings.Contains(err.Error(), "nil *Buffer") {
		t.Errorf("nil buffer: %v", err)
	}
	if _, err := NewStridedView[*int](b, []int{1}, nil, false); err == nil || !strings.Contains(err.Error(), "holds Go pointers") {
		t.Errorf("pointer elements: %v", err)
	}
	if _, err := NewStridedView[struct{}](b, []int{1}, nil, false); err == nil || !strings.Contains(err.Error(), "elements of 0 bytes") {
		t.Errorf("zero-size elements: %v", err)
	}
	if _, err := NewStridedView[float64](b, []int{61}, nil, false); err == nil || !strings.Contains(err.Error(), "needs 488 bytes, more than the buffer's 480") {
		t.Errorf("too big: %v", err)
	}
	odd, _ := b.View(2, 400)
	if _, err := NewStridedView[float32](odd, []int{4}, nil, false); err == nil || !strings.Contains(err.Error(), "address 0x1002 is not aligned for float32 (4 bytes)") {
		t.Errorf("misaligned: %v", err)
	}
	if v16, err := NewStridedView[uint16](odd, []int{4}, nil, false); err != nil || v16.Ptr() != 0x1002 {
		t.Errorf("aligned for uint16: %v", err)
	}
	// A view of a view starts at its offset and ends at its end.
	part, _ := b.View(40, 80)
	if pv, err := NewStridedView[float32](part, []int{2, 10}, nil, false); err != nil || pv.Ptr() != 0x1000+40 {
		t.Errorf("view of a part: %v", err)
	}
	if _, err := NewStridedView[float32](part, []int{3, 10}, nil, false); err == nil {
		t.Error("a view past the end of a Buffer.View: no error")
	}
}

func TestStridedSubViews(t *testing.T) {
	b := testBuffer(t, 4*6*8)
	m, _ := NewStridedView[float32](b, []int{6, 8}, nil, false)

	// A huge step takes the first element only, without overflowing.
	if one, err := m.Slice(1, 0, 2, math.MaxInt); err != nil || !slices.Equal(one.Shape(), []int{6, 1}) {
		t.Errorf("Slice(1, 0, 2, MaxInt): %v, %v", one, err)
	}
	tr, err := m.Transpose()
	if err != nil || !slices.Equal(tr.Shape(), []int{8, 6}) || !slices.Equal(tr.Strides(), []int{1, 8}) || !tr.IsContiguousF() || tr.Size() != m.Size() {
		t.Errorf("Transpose: %v, %v", tr, err)
	}
	b3 := testBuffer(t, 2*3*4*4)
	c, _ := NewStridedView[float32](b3, []int{2, 3, 4}, nil, true)
	p, err := c.Transpose(2, 0, 1)
	if err != nil || !slices.Equal(p.Shape(), []int{4, 2, 3}) || !slices.Equal(p.Strides(), []int{1, 12, 4}) || !p.ReadOnly() {
		t.Errorf("Transpose(2, 0, 1): %v, %v", p, err)
	}
	for _, perm := range [][]int{{0, 1}, {0, 0, 1}, {0, 1, 3}, {-1, 0, 1}} {
		if _, err := c.Transpose(perm...); err == nil {
			t.Errorf("Transpose(%v): no error", perm)
		}
	}

	// Rows 1..4 every other one, columns 2..6: a pitched sub-matrix.
	s, err := m.Slice(0, 1, 5, 2)
	if err == nil {
		s, err = s.Slice(1, 2, 7, 1)
	}
	if err != nil || !slices.Equal(s.Shape(), []int{2, 5}) || !slices.Equal(s.Strides(), []int{16, 1}) || s.Offset() != (8+2)*4 || s.Size() != (16+5)*4 {
		t.Fatalf("Slice: %v, %v", s, err)
	}
	if e, err := m.Slice(1, 8, 8, 1); err != nil || e.Len() != 0 || e.Offset() != 0 {
		t.Errorf("empty slice: %v, %v", e, err)
	}
	if e, err := m.Slice(0, 3, 4, 100); err != nil || !slices.Equal(e.Shape(), []int{1, 8}) || !slices.Equal(e.Strides(), []int{8, 1}) || e.Offset() != 3*8*4 {
		t.Errorf("one row with a big step: %v, %v", e, err)
	}
	for _, a := range [][4]int{{2, 0, 1, 1}, {0, -1, 2, 1}, {0, 3, 2, 1}, {0, 0, 7, 1}, {0, 0, 2, 0}, {1, 0, 9, 1}} {
		if _, err := m.Slice(a[0], a[1], a[2], a[3]); err == nil {
			t.Errorf("Slice%v: no error", a)
		}
	}

	f, err := s.Flip(1)
	if err != nil || !slices.Equal(f.Strides(), []int{16, -1}) || f.Offset() != (8+6)*4 || f.Size() != s.Size() || f.IsContiguousC() {
		t.Errorf("Flip: %v, %v", f, err)
	}
	ff, _ := f.Flip(1)
	if ff.Offset() != s.Offset() || !slices.Equal(ff.Strides(), s.Strides()) {
		t.Errorf("Flip twice: %v, want %v", ff, s)
	}
	if _, err := s.Flip(2); err == nil {
		t.Error("Flip(2) of a matrix: no error")
	}

	// A closed buffer ends its views and their sub-views.
	part, _ := b.View(0, b.Size())
	pv, _ := NewStridedView[float32](part, []int{6, 8}, nil, false)
	sub, _ := pv.Slice(0, 0, 3, 1)
	rest, _ := pv.Slice(0, 3, 6, 1)
	part.Close()
	if _, err := NewStridedView[float32](part, []int{1}, nil, false); !errors.Is(err, ErrClosed) {
		t.Errorf("NewStridedView of a closed buffer: %v", err)
	}
	for name, err := range map[string]error{
		"Transpose": func() error { _, err := pv.Transpose(); return err }(),
		"Slice":     func() error { _, err := sub.Slice(0, 0, 1, 1); return err }(),
		"Flip":      func() error { _, err := sub.Flip(0); return err }(),
		"CopyTo":    CopyToView(sub, make([]float32, 24)),
		"CopyFrom":  CopyFromView(make([]float32, 24), sub),
		"CopyView":  CopyView(sub, rest),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if sub.Ptr() != 0 {
		t.Errorf("Ptr after Close: %#x", sub.Ptr())
	}
	var nilView *StridedView[float32]
	if _, err := nilView.Slice(0, 0, 1, 1); err == nil {
		t.Error("Slice of a nil view: no error")
	}
}

// The checks copies make before any driver call.
func TestStridedCopyChecks(t *testing.T) {
	b := testBuffer(t, 4*6*8)
	m, _ := NewStridedView[float32](b, []int{6, 8}, nil, false)
	ro := m.AsReadOnly()
	bc, _ := NewStridedView[float32](b, []int{6, 8}, []int{0, 1}, false)
	left, _ := m.Slice(1, 0, 4, 1)
	right, _ := m.Slice(1, 4, 8, 1)
	mid, _ := m.Slice(1, 2, 6, 1)
	sparse, _ := NewStridedView[float32](b, []int{2, 2}, []int{20, 3}, false)
	sparseF, _ := sparse.Flip(0)
	sparseF, _ = sparseF.Flip(1)
	other := testBuffer(t, 4*6*8)
	om, _ := NewStridedView[float32](other, []int{6, 8}, nil, false)
	flipped, _ := m.Flip(1)
	gappy, _ := m.Slice(1, 0, 7, 1)
	gappyF, _ := gappy.Flip(1)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"write read-only", CopyToView(ro, make([]float32, 48)), "is read-only"},
		{"write broadcast", CopyToView(bc, make([]float32, 48)), "may overlap: writing it is ambiguous"},
		{"write too few", CopyToView(m, make([]float32, 47)), "47 elements for StridedView[float32](shape [6 8], strides [8 1], offset 0), which has 48"},
		{"read too many", CopyFromView(make([]float32, 49), m), "49 elements for"},
		{"nil view", CopyToView(nil, []float32{}), "nil *StridedView"},
		{"nil view read", CopyFromView([]float32{}, nil), "nil *StridedView"},
		{"copy into read-only", CopyView(ro, om), "is read-only"},
		{"copy into broadcast", CopyView(bc, om), "may overlap"},
		{"copy shapes", CopyView(left, om), "shapes differ: [6 4] and [6 8]"},
		{"copy overlapping", CopyView(mid, left), "the views' memory overlaps"},
		{"copy async nil stream", CopyViewAsync(nil, left, right), "nil stream"},
		{"copy nil", CopyView(nil, m), "nil *StridedView"},
		{"write gappy flipped", CopyToView(gappyF, make([]float32, 42)), "cannot be written"},
		{"copy flipped", CopyView(om, flipped), "cannot express the copy"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || !strings.HasPrefix(c.err.Error(), "core: ") {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

func TestStridedLaunchArgument(t *testing.T) {
	b := testBuffer(t, 4*6*8)
	m, _ := NewStridedView[float32](b, []int{6, 8}, nil, false)
	s, _ := m.Slice(0, 2, 6, 1)
	f, _ := s.Flip(1)
	params := []ArgumentInfo{{0, 8}, {8, 8}, {16, 4}}
	buf := make([]byte, 20)
	if err := packArgs(buf, "k", params, []any{f, m.AsReadOnly(), int32(5)}); err != nil {
		t.Fatal(err)
	}
	if got := driver.Deviceptr(leUint64(buf)); got != 0x1000+driver.Deviceptr((2*8+7)*4) {
		t.Errorf("flipped view passed as %#x", got)
	}
	if got := leUint64(buf[8:]); got != 0x1000 {
		t.Errorf("view passed as %#x", got)
	}
	var nilView *StridedView[int32]
	if err := packArgs(make([]byte, 20), "k", params, []any{nilView, m, int32(5)}); err == nil || !strings.Contains(err.Error(), "argument 0: nil *core.StridedView[int32]") {
		t.Errorf("nil view: %v", err)
	}
	if err := packArgs(make([]byte, 20), "k", params, []any{m, m, m}); err == nil || !strings.Contains(err.Error(), "argument 2 is *core.StridedView[float32] (8 bytes) but parameter 2 takes 4 bytes") {
		t.Errorf("view for an int: %v", err)
	}
	part, _ := b.View(0, 64)
	pv, _ := NewStridedView[float32](part, []int{16}, nil, false)
	part.Close()
	if err := packArgs(make([]byte, 20), "k", params, []any{pv, m, int32(5)}); !errors.Is(err, ErrClosed) {
		t.Errorf("view of a closed buffer: %v", err)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// runPlan runs pl as cuMemcpy3D does, on byte slices: the first box of
// each side starts at so in src and do in dst. It checks what the driver
// requires of the parameters, and the bounds, returning an error instead
// of panicking.
func runPlan(pl copyPlan, src []byte, so int64, dst []byte, do int64) error {
	switch {
	case pl.count == 0:
		return nil
	case pl.width <= 0 || pl.height < 1 || pl.depth < 1 || pl.count < 0:
		return fmt.Errorf("bad box %+v", pl)
	case pl.srcPitch < pl.width || pl.dstPitch < pl.width:
		return fmt.Errorf("pitch below the width: %+v", pl)
	case pl.depth > 1 && (pl.srcHeight < pl.height || pl.dstHeight < pl.height):
		return fmt.Errorf("slice height below the height: %+v", pl)
	}
	for k := int64(0); k < pl.count; k++ {
		for z := int64(0); z < pl.depth; z++ {
			for y := int64(0); y < pl.height; y++ {
				s := so + k*pl.srcStep + (z*pl.srcHeight+y)*pl.srcPitch
				d := do + k*pl.dstStep + (z*pl.dstHeight+y)*pl.dstPitch
				if s < 0 || s+pl.width > int64(len(src)) || d < 0 || d+pl.width > int64(len(dst)) {
					return fmt.Errorf("box %d row %d,%d out of bounds: src %d dst %d width %d (%d, %d bytes)", k, z, y, s, d, pl.width, len(src), len(dst))
				}
				copy(dst[d:d+pl.width], src[s:s+pl.width])
			}
		}
	}
	return nil
}

// refCopy copies element by element between two layouts of shape (byte
// strides), element 0 at so and do.
func refCopy(shape, ss, ds []int64, elem int64, src []byte, so int64, dst []byte, do int64) {
	var idx [MaxViewRank]int64
	r := len(shape)
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	for {
		s, d := so, do
		for i := 0; i < r; i++ {
			s += idx[i] * ss[i]
			d += idx[i] * ds[i]
		}
		copy(dst[d:d+elem], src[s:s+elem])
		i := r - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// checkHostPlans plans the copies of l to and from a Go slice and, when
// they plan, runs them against refCopy; it returns how each goes.
func checkHostPlans(t testing.TB, l *layout) (toDev, toHost copyMode) {
	t.Helper()
	shape := l.shape[:l.rank]
	dev, host := l.byteStrides(), cStrides(shape, l.elem)
	devMem := make([]byte, l.hi+3)
	hostMem := make([]byte, l.n*l.elem)
	for i := range devMem {
		devMem[i] = byte(i*7 + 1)
	}
	for i := range hostMem {
		hostMem[i] = byte(i*5 + 3)
	}
	var pl copyPlan
	toDev, pl = l.hostCopy(true)
	if toDev == copyBoxes {
		got, want := bytes.Clone(devMem), bytes.Clone(devMem)
		if err := runPlan(pl, hostMem, 0, got, l.off); err != nil {
			t.Fatalf("%v: the write plan %+v: %v", l.stridesInts(), pl, err)
		}
		refCopy(shape, host, dev, l.elem, hostMem, 0, want, l.off)
		if !bytes.Equal(got, want) {
			t.Fatalf("shape %v strides %v: the write plan %+v differs from an element copy", l.shapeInts(), l.stridesInts(), pl)
		}
	}
	toHost, pl = l.hostCopy(false)
	if toHost == copyBoxes {
		got, want := make([]byte, len(hostMem)), make([]byte, len(hostMem))
		if err := runPlan(pl, devMem, l.off, got, 0); err != nil {
			t.Fatalf("%v: the read plan %+v: %v", l.stridesInts(), pl, err)
		}
		refCopy(shape, dev, host, l.elem, devMem, l.off, want, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("shape %v strides %v: the read plan %+v differs from an element copy", l.shapeInts(), l.stridesInts(), pl)
		}
	}
	return toDev, toHost
}

func TestStridedCopyPlans(t *testing.T) {
	cases := []struct {
		name           string
		shape, strides []int
		toDev, toHost  copyMode
		boxes          int64 // count of the read plan, when it plans
	}{
		{"contiguous", []int{5, 7}, nil, copyWhole, copyWhole, 0},
		{"sub-matrix, odd pitch", []int{5, 7}, []int{13, 1}, copyBoxes, copyBoxes, 1},
		{"column", []int{9}, []int{11}, copyBoxes, copyBoxes, 1},
		{"every other column", []int{4, 3}, []int{10, 2}, copyBoxes, copyBoxes, 1},
		{"3-D box", []int{3, 4, 5}, []int{7 * 9, 9, 1}, copyBoxes, copyBoxes, 1},
		{"3-D box, slices not a multiple of rows", []int{3, 4, 5}, []int{50, 9, 1}, copyBoxes, copyBoxes, 3},
		{"3-D strided", []int{3, 4, 5}, []int{300, 70, 2}, copyBoxes, copyBoxes, 3},
		{"transposed", []int{6, 4}, []int{1, 6}, copyExtent, copyExtent, 0},
		{"transposed sub-matrix", []int{6, 4}, []int{1, 16}, copyBoxes, copyBoxes, 6},
		{"transposed 3-D", []int{2, 3, 4}, []int{1, 2, 6}, copyExtent, copyExtent, 0},
		{"merged 4-D", []int{2, 3, 4, 5}, []int{240, 60, 15, 1}, copyBoxes, copyBoxes, 1},
		{"4-D, slices not a multiple", []int{2, 3, 4, 5}, []int{200, 60, 15, 1}, copyBoxes, copyBoxes, 2},
		{"sparse 4-D box", []int{2, 3, 4, 5}, []int{400, 100, 20, 2}, copyNone, copyExtent, 0},
		{"4-D, not mergeable", []int{2, 2, 2, 2}, []int{15, 7, 3, 2}, copyNone, copyExtent, 0},
		{"columns flipped", []int{3, 4}, []int{4, -1}, copyExtent, copyExtent, 0},
		{"flipped rows of a pitched matrix", []int{3, 4}, []int{-9, 1}, copyBoxes, copyExtent, 0},
		{"broadcast rows", []int{3, 4}, []int{0, 1}, copyBoxes, copyExtent, 0}, // writes: refused as not unique
		{"broadcast columns", []int{3, 4}, []int{1, 0}, copyNone, copyExtent, 0},
		{"sliding windows", []int{5, 4}, []int{1, 1}, copyBoxes, copyExtent, 0}, // writes: refused as not unique
		{"sparse sliding windows", []int{5, 4}, []int{10, 9}, copyBoxes, copyBoxes, 5},
		{"flipped column", []int{5}, []int{-50}, copyBoxes, copyBoxes, 5},
		{"flipped strided columns", []int{5, 2}, []int{-50, 3}, copyBoxes, copyBoxes, 5},
		{"sparse, both flipped", []int{2, 2}, []int{-20, -3}, copyNone, copyExtent, 0},
		{"both flipped", []int{3, 4}, []int{-4, -1}, copyExtent, copyExtent, 0},
		{"rows flipped", []int{3, 4}, []int{-4, 1}, copyExtent, copyExtent, 0},
		{"rows of a pitched matrix flipped", []int{3, 4}, []int{-20, 1}, copyBoxes, copyBoxes, 3},
		{"size-1 dimensions", []int{1, 5, 1, 3, 1}, []int{0, 9, 77, 1, -3}, copyBoxes, copyBoxes, 1},
		{"empty", []int{3, 0, 2}, []int{1, 5, 9}, copyWhole, copyWhole, 0},
	}
	for _, c := range cases {
		l := mustLayout(t, c.shape, c.strides, 4, flippedOffset(c.shape, c.strides, 4), 1<<20)
		toDev, toHost := checkHostPlans(t, &l)
		if toDev != c.toDev || toHost != c.toHost {
			t.Errorf("%s: write %d read %d, want %d %d", c.name, toDev, toHost, c.toDev, c.toHost)
		}
		if _, pl := l.hostCopy(false); c.toHost == copyBoxes && pl.count != c.boxes {
			t.Errorf("%s: %d boxes (%+v), want %d", c.name, pl.count, pl, c.boxes)
		}
	}
}

// Device-to-device plans between two layouts of one shape.
func TestStridedCopyPlansBetweenViews(t *testing.T) {
	shape := []int64{4, 5, 6}
	cases := []struct {
		src, dst []int64 // in elements
		ok       bool
	}{
		{[]int64{30, 6, 1}, []int64{30, 6, 1}, true},
		{[]int64{100, 10, 1}, []int64{48, 8, 1}, true},
		{[]int64{1, 4, 20}, []int64{30, 6, 1}, false}, // a transposed source: rows of single elements, then no slices
		{[]int64{30, 1, 5}, []int64{30, 6, 1}, false}, // rows transposed: boxes per column, per row
		{[]int64{-30, 6, 1}, []int64{30, 6, 1}, true}, // slices reversed: a box each
		{[]int64{0, 6, 1}, []int64{30, 6, 1}, true},   // a slice repeated
		{[]int64{30, 6, -1}, []int64{30, 6, 1}, false},
	}
	for _, c := range cases {
		s := make([]int64, 3)
		d := make([]int64, 3)
		var so, hiS, hiD int64
		for i := range 3 {
			s[i], d[i] = c.src[i]*8, c.dst[i]*8
			if s[i] < 0 {
				so += -s[i] * (shape[i] - 1)
			}
			hiS += abs64(s[i]) * (shape[i] - 1)
			hiD += d[i] * (shape[i] - 1)
		}
		pl, ok := planCopy(shape, s, d, 8)
		if ok != c.ok {
			t.Errorf("%v to %v: planned %v, want %v", c.src, c.dst, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		src := make([]byte, hiS+8)
		for i := range src {
			src[i] = byte(i)
		}
		got, want := make([]byte, hiD+8), make([]byte, hiD+8)
		if err := runPlan(pl, src, so, got, 0); err != nil {
			t.Fatalf("%v to %v: %v", c.src, c.dst, err)
		}
		refCopy(shape, s, d, 8, src, so, want, 0)
		if !bytes.Equal(got, want) {
			t.Errorf("%v to %v: the plan %+v differs from an element copy", c.src, c.dst, pl)
		}
	}
}

func TestGatherScatter(t *testing.T) {
	// A 3x4 matrix transposed, flipped, and sliced, in a 40-element buffer.
	l := mustLayout(t, []int{4, 3}, []int{-1, 10}, 4, 3*4+2*4, 160)
	ext := make([]int32, (l.hi-l.lo)/l.elem)
	for i := range ext {
		ext[i] = int32(i)
	}
	host := make([]int32, l.n)
	gatherScatter(&l, ext, host, true)
	base := (l.off - l.lo) / 4
	want := []int32{}
	for i := int64(0); i < 4; i++ {
		for j := int64(0); j < 3; j++ {
			want = append(want, int32(base-i+10*j))
		}
	}
	if !slices.Equal(host, want) {
		t.Fatalf("gather: %v, want %v", host, want)
	}
	clear(ext)
	gatherScatter(&l, ext, host, false)
	for i, h := range host {
		p := base - int64(i/3) + 10*int64(i%3)
		if ext[p] != h {
			t.Fatalf("scatter: element %d at %d is %d, want %d", i, p, ext[p], h)
		}
	}
}

// FuzzStridedLayout checks the layout math against brute force, and the
// copy plans against element copies, for random small layouts.
func FuzzStridedLayout(f *testing.F) {
	f.Add([]byte{2, 2, 5, 7, 9, 1, 0, 0})
	f.Add([]byte{3, 3, 3, 4, 5, 20, 5, 1, 0, 0, 4})
	f.Add([]byte{2, 1, 6, 4, 0xff, 6, 40, 2})
	f.Add([]byte{1, 0, 4, 0x80, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		rank := int(data[0]%4) + 1
		elem := []int{1, 2, 4, 8}[data[1]%4]
		data = data[2:]
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(int8(b))
		}
		shape := make([]int, rank)
		strides := make([]int, rank)
		for i := range shape {
			shape[i] = next() % 7 // may be negative: refused
		}
		for i := range strides {
			strides[i] = next() % 40
		}
		off := int64(next()+128) * int64(elem)
		size := next() + 128 + int(off)
		l, err := makeLayout("fuzz", shape, strides, elem, off, size)
		// Brute force: every element's offset.
		var offs []int64
		neg := false
		for _, n := range shape {
			neg = neg || n < 0
		}
		if !neg {
			var idx [MaxViewRank]int
			n := 1
			for _, s := range shape {
				n *= s
			}
			for e := 0; e < n; e++ {
				o := off
				for i := range rank {
					o += int64(idx[i]*strides[i]) * int64(elem)
				}
				offs = append(offs, o)
				for i := rank - 1; i >= 0; i-- {
					if idx[i]++; idx[i] < shape[i] {
						break
					}
					idx[i] = 0
				}
			}
		}
		inside := !neg
		lo, hi := off, off
		if len(offs) > 0 {
			lo, hi = slices.Min(offs), slices.Max(offs)+int64(elem)
		}
		inside = inside && lo >= 0 && hi <= int64(size)
		if (err == nil) != inside {
			t.Fatalf("shape %v strides %v off %d size %d: error %v, elements inside %v", shape, strides, off, size, err, inside)
		}
		if err != nil {
			return
		}
		if l.lo != lo || l.hi != hi || l.n != int64(len(offs)) {
			t.Fatalf("shape %v strides %v: [%d, %d) n %d, brute force [%d, %d) n %d", shape, strides, l.lo, l.hi, l.n, lo, hi, len(offs))
		}
		distinct := len(slices.Compact(slices.Sorted(slices.Values(offs)))) == len(offs)
		if l.unique() && !distinct {
			t.Fatalf("shape %v strides %v: unique, but elements share memory", shape, strides)
		}
		if l.exact() && (!distinct || hi-lo != int64(len(offs)*elem)) {
			t.Fatalf("shape %v strides %v: exact, but it is not", shape, strides)
		}
		if l.contiguousC() {
			for i, o := range offs {
				if o != off+int64(i*elem) {
					t.Fatalf("shape %v strides %v: C-contiguous, but element %d is at %d", shape, strides, i, o)
				}
			}
		}
		toDev, toHost := checkHostPlans(t, &l)
		if toDev == copyExtent && !(distinct && hi-lo == int64(len(offs)*elem)) {
			t.Fatalf("shape %v strides %v: written through an extent it does not cover exactly", shape, strides)
		}
		if toHost == copyExtent && hi-lo > 2*int64(len(offs)*elem)+1 {
			t.Fatalf("shape %v strides %v: read through an extent of %d bytes for %d", shape, strides, hi-lo, len(offs)*elem)
		}
		if toHost == copyNone && hi-lo <= 2*int64(len(offs)*elem) {
			t.Fatalf("shape %v strides %v: a cheap read refused", shape, strides)
		}
		// Sub-views stay inside the view.
		v := &StridedView[uint8]{buf: testBuffer(t, size), lay: l}
		for d := range rank {
			fl, err := v.Flip(d)
			if err != nil || fl.lay.lo != l.lo || fl.lay.hi != l.hi || fl.lay.n != l.n {
				t.Fatalf("shape %v strides %v: Flip(%d): %v", shape, strides, d, err)
			}
			n := shape[d]
			start, stop, step := next()%(n+1), next()%(n+1), abs(next())%4+1
			start, stop = min(abs(start), n), min(abs(stop), n)
			start, stop = min(start, stop), max(start, stop)
			sl, err := v.Slice(d, start, stop, step)
			if err != nil || sl.lay.n > 0 && (sl.lay.lo < l.lo || sl.lay.hi > l.hi) || sl.lay.shape[d] != int64((stop-start+step-1)/step) {
				t.Fatalf("shape %v strides %v: Slice(%d, %d, %d, %d): %v", shape, strides, d, start, stop, step, err)
			}
			if sl.lay.n > 0 {
				checkHostPlans(t, &sl.lay)
			}
		}
		tr, err := v.Transpose()
		if err != nil || tr.lay.lo != l.lo || tr.lay.hi != l.hi || tr.lay.unique() != l.unique() {
			t.Fatalf("shape %v strides %v: Transpose: %v", shape, strides, err)
		}
		checkHostPlans(t, &tr.lay)
	})
}

// The GPU tests' views take every path of the copies, both ways.
func TestStridedGPUViewsCoverEveryPath(t *testing.T) {
	b := testBuffer(t, 37*53*4)
	seen := map[string]bool{}
	for _, v := range matrixViews[float32](t, b, 37, 53) {
		for _, toDev := range []bool{true, false} {
			if toDev && !v.IsUnique() {
				seen["write refused, not unique"] = true
				continue
			}
			mode, pl := v.lay.hostCopy(toDev)
			name := [...]string{"whole", "boxes", "extent", "refused"}[mode]
			if mode == copyBoxes && pl.count > 1 {
				name = "several boxes"
			}
			if mode == copyBoxes && pl.count > 1 && (pl.srcStep < 0 || pl.dstStep < 0) {
				seen[fmt.Sprintf("several boxes, negative step, %v", toDev)] = true
			}
			seen[fmt.Sprintf("%s, %v", name, toDev)] = true
		}
	}
	for _, want := range []string{"whole, true", "whole, false", "boxes, true", "boxes, false", "several boxes, true",
		"several boxes, false", "extent, true", "extent, false", "refused, true", "write refused, not unique",
		"several boxes, negative step, true", "several boxes, negative step, false"} {
		if !seen[want] {
			t.Errorf("no GPU test view copies by %q (seen %v)", want, seen)
		}
	}
}

// A read that no box plan serves goes through the host copy of its extent
// up to maxReadExtent, and is refused beyond.
func TestStridedReadExtentBound(t *testing.T) {
	// Two elements, far apart and reversed: no box, extent > 2x elements.
	small, err := makeLayout("test", []int{2, 2}, []int{-1 << 10, -1}, 4, 1<<13, 1<<14)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := small.hostCopy(false); m != copyExtent {
		t.Errorf("small sparse read: mode %v, want the extent", m)
	}
	huge, err := makeLayout("test", []int{2, 2}, []int{-1 << 28, -1}, 4, 1<<31, 1<<32)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := huge.hostCopy(false); m != copyNone {
		t.Errorf("read of a 1 GiB extent: mode %v, want refused", m)
	}
}
