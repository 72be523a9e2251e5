package core

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// sizeMR is a fake resource that records the sizes asked of it.
type sizeMR struct {
	fakeMR
	sizes []int
}

func (m *sizeMR) Allocate(size int, stream *Stream) (*Buffer, error) {
	m.sizes = append(m.sizes, size)
	return NewBuffer(0x1000, size, m, stream), nil
}

type pair struct {
	a int8
	b int32
}

// TestAllocSizes: AllocFrom asks the resource for n times T's size.
func TestAllocSizes(t *testing.T) {
	mr := &sizeMR{}
	check := func(b *Buffer, err error, want int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if b.Size() != want || mr.sizes[len(mr.sizes)-1] != want {
			t.Errorf("size %d (asked %v), want %d", b.Size(), mr.sizes, want)
		}
		b.Close()
	}
	b, err := AllocFrom[float32](mr, 10, nil)
	check(b, err, 40)
	b, err = AllocFrom[complex128](mr, 3, nil)
	check(b, err, 48)
	b, err = AllocFrom[pair](mr, 5, nil) // padded to 8 bytes
	check(b, err, 40)
	b, err = AllocFrom[[3]uint16](mr, 7, nil)
	check(b, err, 42)
	b, err = AllocFrom[uint8](mr, 0, nil)
	check(b, err, 0)
	b, err = AllocFrom[float64](mr, math.MaxInt/8, nil) // the largest count that fits
	check(b, err, math.MaxInt/8*8)
}

// TestAllocRejects: bad counts and element types are errors that name
// what was wrong, before the resource is asked.
func TestAllocRejects(t *testing.T) {
	mr := &sizeMR{}
	var nilPinned *PinnedMemoryResource
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"negative", func() error { _, err := AllocFrom[float32](mr, -1, nil); return err }(), "core: AllocFrom: negative element count -1"},
		{"overflow", func() error { _, err := AllocFrom[float64](mr, math.MaxInt/8+1, nil); return err }(), "elements of float64 (8 bytes each) are more than"},
		{"overflow big elements", func() error { _, err := AllocFrom[[1 << 20]byte](mr, math.MaxInt/(1<<20)+1, nil); return err }(), "(1048576 bytes each) are more than"},
		{"pointer", func() error { _, err := AllocFrom[*int](mr, 1, nil); return err }(), "core: AllocFrom: element type *int holds Go pointers"},
		{"string", func() error { _, err := AllocFrom[struct{ s string }](mr, 1, nil); return err }(), "holds Go pointers"},
		{"zero size", func() error { _, err := AllocFrom[struct{}](mr, 4, nil); return err }(), "core: AllocFrom: element type struct {} has size 0"},
		{"nil resource", func() error { _, err := AllocFrom[float32](nil, 4, nil); return err }(), "core: AllocFrom: nil MemoryResource"},
		{"typed nil resource", func() error { _, err := AllocFrom[float32](nilPinned, 4, nil); return err }(), "core: AllocFrom: nil MemoryResource"},
		{"nil device", func() error { _, err := Alloc[float32](nil, 4, nil); return err }(), "core: Alloc: nil *Device"},
		{"negative before device", func() error { _, err := Alloc[float32](nil, -4, nil); return err }(), "core: Alloc: negative element count -4"},
		{"overflow before device", func() error { _, err := Alloc[complex128](nil, math.MaxInt/16+1, nil); return err }(), "core: Alloc: "},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}
	if len(mr.sizes) != 0 {
		t.Errorf("the resource was asked for %v", mr.sizes)
	}
}

// TestLen counts whole elements and refuses a partial one.
func TestLen(t *testing.T) {
	mr := &fakeMR{}
	b := NewBuffer(0x1000, 40, mr, nil)
	defer b.Close()
	for _, c := range []struct {
		typ  string
		len  func(*Buffer) (int, error)
		want int
	}{
		{"float32", Len[float32], 10},
		{"float64", Len[float64], 5},
		{"byte", Len[byte], 40},
		{"pair", Len[pair], 5},
		{"[5]int16", Len[[5]int16], 4},
	} {
		if n, err := c.len(b); err != nil || n != c.want {
			t.Errorf("Len[%s] of 40 bytes = %d, %v, want %d", c.typ, n, err, c.want)
		}
	}
	if _, err := Len[complex128](b); err == nil || !strings.Contains(err.Error(), "core: Len: a 40-byte buffer is not a whole number of 16-byte complex128") {
		t.Errorf("Len[complex128] of 40 bytes: %v", err)
	}
	if _, err := Len[float32](nil); err == nil || !strings.Contains(err.Error(), "core: Len: nil *Buffer") {
		t.Errorf("Len of nil: %v", err)
	}
	if _, err := Len[struct{}](b); err == nil || !strings.Contains(err.Error(), "size 0") {
		t.Errorf("Len[struct{}]: %v", err)
	}
	if _, err := Len[[]float32](b); err == nil || !strings.Contains(err.Error(), "holds Go pointers") {
		t.Errorf("Len[[]float32]: %v", err)
	}
	if n, err := Len[float64](NewBuffer(0, 0, mr, nil)); n != 0 || err != nil {
		t.Errorf("Len of an empty buffer = %d, %v", n, err)
	}
}

// TestView: a typed view is the byte view of its elements, with bounds in
// elements and the alignment of T checked.
func TestView(t *testing.T) {
	mr := &fakeMR{}
	b := NewBuffer(0x1000, 42, mr, nil) // 10 whole float32s, 5 float64s
	v, err := View[float32](b, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v.Ptr() != 0x1008 || v.Size() != 12 {
		t.Errorf("View[float32](b, 2, 3) = %d bytes at %#x, want 12 at 0x1008", v.Size(), v.Ptr())
	}
	vv, err := View[float32](v, 1, 2) // a view of a view
	if err != nil || vv.Ptr() != 0x100c || vv.Size() != 8 {
		t.Errorf("View of a view = %v, %v", vv, err)
	}
	if e, err := View[float32](b, 10, 0); err != nil || e.Ptr() != 0x1028 || e.Size() != 0 {
		t.Errorf("empty view at the end = %v, %v", e, err)
	}
	if w, err := View[float64](b, 4, 1); err != nil || w.Ptr() != 0x1020 || w.Size() != 8 {
		t.Errorf("View[float64](b, 4, 1) = %v, %v", w, err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"past the end", func() error { _, err := View[float32](b, 8, 3); return err }(), "core: View: 3 float32 at element 8 do not fit in a buffer of 10 (42 bytes)"},
		{"partial element", func() error { _, err := View[float64](b, 5, 1); return err }(), "1 float64 at element 5 do not fit in a buffer of 5 (42 bytes)"},
		{"offset past the end", func() error { _, err := View[float32](b, 11, 0); return err }(), "at element 11 do not fit"},
		{"negative offset", func() error { _, err := View[float32](b, -1, 1); return err }(), "at element -1 do not fit"},
		{"negative count", func() error { _, err := View[float32](b, 0, -1); return err }(), "-1 float32 at element 0"},
		{"huge", func() error { _, err := View[float32](b, 1, math.MaxInt); return err }(), "do not fit"},
		{"nil", func() error { _, err := View[float32](nil, 0, 1); return err }(), "core: View: nil *Buffer"},
		{"pointers", func() error { _, err := View[map[int]int](b, 0, 1); return err }(), "holds Go pointers"},
		{"zero size", func() error { _, err := View[[0]int](b, 0, 1); return err }(), "has size 0"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}

	// A byte view at an odd offset holds no aligned float32.
	odd, err := b.View(2, 16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := View[float32](odd, 0, 1); err == nil || !strings.Contains(err.Error(), "core: View: address 0x1002 is not aligned for float32 (4 bytes)") {
		t.Errorf("View[float32] at 0x1002: %v", err)
	}
	if h, err := View[uint16](odd, 1, 7); err != nil || h.Ptr() != 0x1004 || h.Size() != 14 {
		t.Errorf("View[uint16] at 0x1002 = %v, %v", h, err)
	}

	// Closing the buffer ends its typed views, and no new one is made.
	b.Close()
	if v.Ptr() != 0 {
		t.Error("a view of a closed buffer still has an address")
	}
	if err := CopyFromDevice(make([]float32, 3), v); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFromDevice from a view of a closed buffer: %v", err)
	}
	if _, err := View[float32](b, 0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("View of a closed buffer: %v", err)
	}
}

// TestCheckElemNamesCaller: the answer for a type is cached, but each
// error names the function that was called, not the first that asked.
func TestCheckElemNamesCaller(t *testing.T) {
	type withPtr struct{ p *float32 }
	for _, fn := range []string{"CopyToDevice", "AllocFrom", "View"} {
		if err := checkElem[withPtr](fn); err == nil || !strings.HasPrefix(err.Error(), "core: "+fn+": ") {
			t.Errorf("checkElem(%s): %v", fn, err)
		}
	}
	type plain struct{ a, b float32 }
	for range 2 {
		if err := checkElem[plain]("Alloc"); err != nil {
			t.Errorf("checkElem of a pointer-free struct: %v", err)
		}
	}
}
