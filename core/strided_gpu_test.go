package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// GPU tests of StridedView: copies of every kind (one box, several boxes,
// through the extent) checked element by element against a model of the
// whole buffer, device-to-device copies, a kernel reading a transposed
// view by its strides, read-only views and closed buffers.

// refIndex returns the element index in the whole buffer of each element
// of l, in C order.
func refIndex(l *layout) []int64 {
	out := make([]int64, 0, l.n)
	if l.n == 0 {
		return out
	}
	var idx [MaxViewRank]int64
	for {
		p := l.off / l.elem
		for i := 0; i < l.rank; i++ {
			p += idx[i] * l.strides[i]
		}
		out = append(out, p)
		i := l.rank - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < l.shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out
		}
	}
}

// checkViewCopies fills b with val(i), reads v and compares, then writes
// new values into v (when core allows it) and compares the whole buffer
// with the model: the view's elements changed, every other one not.
func checkViewCopies[T comparable](t *testing.T, b *Buffer, v *StridedView[T], val func(i int) T) {
	t.Helper()
	var z T
	total := b.Size() / v.ElemSize()
	full := make([]T, total)
	for i := range full {
		full[i] = val(i)
	}
	if err := CopyToDevice(b, full); err != nil {
		t.Fatal(err)
	}
	idx := refIndex(&v.lay)
	got := make([]T, v.Len())
	if err := CopyFromView(got, v); err != nil {
		t.Fatalf("CopyFromView %v: %v", v, err)
	}
	for i, p := range idx {
		if got[i] != full[p] {
			t.Fatalf("CopyFromView %v: element %d = %v, want %v", v, i, got[i], full[p])
		}
	}

	vals := make([]T, v.Len())
	for i := range vals {
		vals[i] = val(total + 3*i + 1)
	}
	mode, _ := v.lay.hostCopy(true)
	err := CopyToView(v, vals)
	want := full
	switch {
	case !v.IsUnique():
		if err == nil || !strings.Contains(err.Error(), "may overlap") {
			t.Fatalf("CopyToView %v (not unique): %v", v, err)
		}
	case mode == copyNone:
		if err == nil || !strings.Contains(err.Error(), "cannot be written") {
			t.Fatalf("CopyToView %v (cannot be written): %v", v, err)
		}
	case err != nil:
		t.Fatalf("CopyToView %v: %v", v, err)
	default:
		want = append([]T(nil), full...)
		for i, p := range idx {
			want[p] = vals[i]
		}
	}
	after := make([]T, total)
	if err := CopyFromDevice(after, b); err != nil {
		t.Fatal(err)
	}
	for i := range after {
		if after[i] != want[i] {
			t.Fatalf("CopyToView %v (%T): buffer element %d = %v, want %v (was %v)", v, z, i, after[i], want[i], full[i])
		}
	}
}

// matrixViews returns views of a rows x cols matrix at the start of b
// covering every copy path: the name says which.
func matrixViews[T any](t *testing.T, b *Buffer, rows, cols int) map[string]*StridedView[T] {
	t.Helper()
	m, err := NewStridedView[T](b, []int{rows, cols}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	must := func(v *StridedView[T], err error) *StridedView[T] {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	sub := must(must(m.Slice(0, 3, rows-7, 1)).Slice(1, 5, cols-7, 1))
	views := map[string]*StridedView[T]{
		"whole":                         m,
		"sub-matrix":                    sub,
		"every other row, third column": must(must(m.Slice(0, 1, rows, 2)).Slice(1, 2, cols, 3)),
		"column":                        must(m.Slice(1, 7, 8, 1)),
		"row":                           must(m.Slice(0, 4, 5, 1)),
		"transposed":                    must(m.Transpose()),
		"transposed sub-matrix":         must(sub.Transpose()),
		"columns reversed":              must(m.Flip(1)),
		"sub-matrix, rows reversed":     must(sub.Flip(0)),
		"sub-matrix, columns reversed":  must(sub.Flip(1)),
		"reversed column":               must(must(m.Slice(1, 2, 3, 1)).Flip(0)),
		"empty":                         must(m.Slice(1, 3, 3, 1)),
	}
	bc, err := NewStridedView[T](b, []int{5, cols}, []int{0, 1}, false)
	views["broadcast row"] = must(bc, err)
	return views
}

// checkMatrixViews runs checkViewCopies on each of matrixViews' views of
// b, in subtests named prefix and the view's name: one element type's
// share of TestGPUStridedMatrixCopies.
func checkMatrixViews[T comparable](t *testing.T, prefix string, b *Buffer, rows, cols int, val func(i int) T) {
	t.Helper()
	for name, v := range matrixViews[T](t, b, rows, cols) {
		t.Run(prefix+name, func(t *testing.T) {
			checkViewCopies(t, b, v, val)
		})
	}
}

func TestGPUStridedMatrixCopies(t *testing.T) {
	dev := requireGPU(t)
	const rows, cols = 37, 53 // odd: pitches are not multiples of anything
	for _, mr := range []MemoryResource{dev.MemoryResource(), NewPinnedMemoryResource(dev), NewManagedMemoryResource(dev)} {
		t.Run(strings.TrimPrefix(typeName(mr), "*core."), func(t *testing.T) {
			b := try(mr.Allocate(rows*cols*4, nil)).must(t)
			defer b.Close()
			checkMatrixViews(t, "", b, rows, cols, func(i int) float32 { return float32(i)*0.25 - 100 })
		})
	}
	// Other element sizes.
	b2 := try(dev.Allocate(rows*cols*2, nil)).must(t)
	defer b2.Close()
	checkMatrixViews(t, "int16/", b2, rows, cols, func(i int) int16 { return int16(i*7 - 5000) })
	b16 := try(dev.Allocate(rows*cols*16, nil)).must(t)
	defer b16.Close()
	checkMatrixViews(t, "complex128/", b16, rows, cols, func(i int) complex128 { return complex(float64(i), -float64(i)/3) })
}

func TestGPUStrided3DCopies(t *testing.T) {
	dev := requireGPU(t)
	const d, h, w = 7, 9, 12
	b := try(dev.Allocate(d*h*w*4, nil)).must(t)
	defer b.Close()
	a := try(NewStridedView[int32](b, []int{d, h, w}, nil, false)).must(t)
	slice := func(v *StridedView[int32], dim, start, stop, step int) *StridedView[int32] {
		t.Helper()
		s := try(v.Slice(dim, start, stop, step)).must(t)
		return s
	}
	box := slice(slice(slice(a, 0, 1, 6, 1), 1, 2, 8, 1), 2, 3, 10, 1)
	perm := try(a.Transpose(2, 0, 1)).must(t)
	boxPerm := try(box.Transpose(1, 2, 0)).must(t)
	views := map[string]*StridedView[int32]{
		"box":                     box,                                                            // one 3-D box
		"box, every other column": slice(slice(slice(a, 0, 1, 6, 1), 1, 2, 8, 1), 2, 0, w, 2),     // five boxes of single elements
		"every third slice":       slice(a, 0, 0, d, 3),                                           // merged rows: one 2-D box
		"one slice":               slice(a, 0, 4, 5, 1),                                           // contiguous
		"permuted":                perm,                                                           // through the extent
		"box permuted":            boxPerm,                                                        // reads through the extent, writes refused
		"box, slices reversed":    func() *StridedView[int32] { f, _ := box.Flip(0); return f }(), // reads through the extent, writes five boxes
	}
	for name, v := range views {
		t.Run(name, func(t *testing.T) {
			checkViewCopies(t, b, v, func(i int) int32 { return int32(i*13 - 777) })
		})
	}
}

func TestGPUStridedCopyView(t *testing.T) {
	dev := requireGPU(t)
	s := testStream(t, dev)
	const ar, ac, br, bc = 37, 53, 44, 60
	ab := try(dev.Allocate(ar*ac*4, nil)).must(t)
	defer ab.Close()
	bb := try(dev.Allocate(br*bc*4, nil)).must(t)
	defer bb.Close()
	av, _ := NewStridedView[float32](ab, []int{ar, ac}, nil, true) // a read-only source
	bv, _ := NewStridedView[float32](bb, []int{br, bc}, nil, false)
	sl := func(v *StridedView[float32], r0, r1, c0, c1 int) *StridedView[float32] {
		t.Helper()
		x, err := v.Slice(0, r0, r1, 1)
		if err == nil {
			x, err = x.Slice(1, c0, c1, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	aFull := make([]float32, ar*ac)
	for i := range aFull {
		aFull[i] = float32(i) + 0.5
	}
	subA := sl(av, 3, 30, 5, 46) // 27 x 41
	trA, _ := subA.Transpose()   // 41 x 27
	cases := []struct {
		name     string
		dst, src *StridedView[float32]
		async    bool
	}{
		{"sub-matrix to sub-matrix", sl(bv, 2, 29, 10, 51), subA, false},
		{"sub-matrix async", sl(bv, 10, 37, 1, 42), subA, true},
		{"transposed, box per column", sl(bv, 1, 42, 30, 57), trA, false},
		{"transposed async", sl(bv, 0, 41, 0, 27), trA, true},
		{"rows to a column", func() *StridedView[float32] { x := sl(bv, 0, 41, 3, 4); y, _ := x.Transpose(); return y }(), sl(av, 9, 10, 0, 41), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := CopyToDevice(ab, aFull); err != nil {
				t.Fatal(err)
			}
			bFull := make([]float32, br*bc)
			for i := range bFull {
				bFull[i] = -float32(i)
			}
			if err := CopyToDevice(bb, bFull); err != nil {
				t.Fatal(err)
			}
			if c.async {
				if err := CopyViewAsync(s, c.dst, c.src); err != nil {
					t.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
			} else if err := CopyView(c.dst, c.src); err != nil {
				t.Fatal(err)
			}
			di, si := refIndex(&c.dst.lay), refIndex(&c.src.lay)
			for i := range di {
				bFull[di[i]] = aFull[si[i]]
			}
			wantSlice(t, "b", readBack[float32](t, bb, br*bc), bFull)
		})
	}

	// Within one buffer: apart, and overlapping (refused).
	if err := CopyToDevice(ab, aFull); err != nil {
		t.Fatal(err)
	}
	aw, _ := NewStridedView[float32](ab, []int{ar, ac}, nil, false)
	if err := CopyView(sl(aw, 20, 30, 40, 50), sl(aw, 0, 10, 0, 10)); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "a after a copy within it", readBack[float32](t, ab, ar*ac), func(i int) float32 {
		if r, c := i/ac, i%ac; r >= 20 && r < 30 && c >= 40 && c < 50 {
			return aFull[(r-20)*ac+c-40]
		}
		return aFull[i]
	})
	if err := CopyView(sl(aw, 5, 15, 5, 15), sl(aw, 0, 10, 0, 10)); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping views: %v", err)
	}
	if err := CopyView(sl(av, 20, 30, 40, 50), sl(aw, 0, 10, 0, 10)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("into a read-only view: %v", err)
	}
}

var stridedKernels testKernelSet

// gather2dKernel compiles stridedKernelSource for dev once per test binary.
func gather2dKernel(t *testing.T, dev *Device) *Kernel {
	t.Helper()
	return stridedKernels.get(t, "the strided kernel", stridedKernelSource, &ProgramOptions{Arch: "sm_" + dev.Arch()}, "gather2d")["gather2d"]
}

const stridedKernelSource = `
// gather2d writes the rows x cols view at src, with strides s0 and s1 in
// elements, to out in C order.
extern "C" __global__ void gather2d(const float* src, long long s0, long long s1, int rows, int cols, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < rows * cols) {
		int r = i / cols, c = i % cols;
		out[i] = src[r * s0 + c * s1];
	}
}
`

func TestGPUStridedKernel(t *testing.T) {
	dev := requireGPU(t)
	k := gather2dKernel(t, dev)
	s := try(dev.NewStream(nil)).must(t)
	defer s.Close()
	const rows, cols = 37, 53
	mb := try(dev.Allocate(rows*cols*4, nil)).must(t)
	defer mb.Close()
	full := make([]float32, rows*cols)
	for i := range full {
		full[i] = float32(i)*1.5 + 2
	}
	if err := CopyToDevice(mb, full); err != nil {
		t.Fatal(err)
	}
	m, _ := NewStridedView[float32](mb, []int{rows, cols}, nil, true) // read-only: still passed
	tr, _ := m.Transpose()
	trFlipped, _ := tr.Flip(0)
	sub, _ := tr.Slice(0, 4, 40, 3)
	out := try(dev.Allocate(rows*cols*4, nil)).must(t)
	defer out.Close()
	for name, v := range map[string]*StridedView[float32]{"transposed": tr, "transposed, flipped": trFlipped, "transposed, strided rows": sub} {
		t.Run(name, func(t *testing.T) {
			sh, st := v.Shape(), v.Strides()
			n := v.Len()
			if err := Launch(s, LaunchConfig{Grid: Dim(uint32((n + 127) / 128)), Block: Dim(128)}, k,
				v, int64(st[0]), int64(st[1]), int32(sh[0]), int32(sh[1]), out); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			ref := refIndex(&v.lay)
			wantEach(t, "out", readBack[float32](t, out, n), func(i int) float32 { return full[ref[i]] })
		})
	}
}

func TestGPUStridedMisuse(t *testing.T) {
	dev := requireGPU(t)
	b := try(dev.Allocate(64*4, nil)).must(t)
	v, _ := NewStridedView[float32](b, []int{8, 8}, nil, false)
	ro := v.AsReadOnly()
	if err := CopyToView(ro, make([]float32, 64)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("CopyToView into a read-only view: %v", err)
	}
	if err := CopyFromView(make([]float32, 64), ro); err != nil {
		t.Errorf("CopyFromView of a read-only view: %v", err)
	}
	sub, _ := v.Slice(0, 0, 4, 1)
	other, _ := v.Slice(0, 4, 8, 1)
	b.Close()
	for name, err := range map[string]error{
		"CopyToView":   CopyToView(sub, make([]float32, 32)),
		"CopyFromView": CopyFromView(make([]float32, 32), sub),
		"CopyView":     CopyView(other, sub),
		"Slice":        func() error { _, err := v.Slice(0, 0, 1, 1); return err }(),
		"Launch":       launchClosedView(t, dev, sub),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if v.Ptr() != 0 {
		t.Errorf("Ptr after Close: %#x", v.Ptr())
	}
}

// launchClosedView launches gather2d with v, whose buffer is closed.
func launchClosedView(t *testing.T, dev *Device, v *StridedView[float32]) error {
	k := gather2dKernel(t, dev)
	out := try(dev.Allocate(64*4, nil)).must(t)
	defer out.Close()
	err := Launch(dev.primary.DefaultStream(), LaunchConfig{Grid: Dim(1), Block: Dim(64)}, k, v, int64(8), int64(1), int32(4), int32(8), out)
	if err != nil && !strings.Contains(err.Error(), "argument 0") {
		return fmt.Errorf("unexpected error: %w", err)
	}
	return err
}
