package core

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// A Buffer holds bytes, as cuda.core's Buffer does; Alloc, AllocFrom, Len
// and View allocate, count and view one in elements of a type T, so that
// a program never sizes memory with unsafe.Sizeof or n*4 itself. They
// return plain Buffers, which Launch, the copies and the library packages
// take as they are: the type lives in the call, not in the Buffer. T may
// be any type of nonzero size that holds no Go pointers, as for the
// copies: float32, complex128, blas.BFloat16, a struct of numbers.
// NewStridedView makes a typed, strided view.

// Alloc allocates n elements of T from dev's default memory resource
// (Device.Allocate), ordered on stream (nil: the legacy default stream):
//
//	x, err := core.Alloc[float32](dev, n, s) // n float32s, 4n bytes
//
// A negative n, a size past the largest int, or a T that cannot be an
// element is an error before anything is allocated.
func Alloc[T any](dev *Device, n int, stream *Stream) (*Buffer, error) {
	size, err := elemBytes[T]("Alloc", n)
	if err != nil {
		return nil, err
	}
	if dev == nil {
		return nil, errors.New("core: Alloc: nil *Device")
	}
	return dev.Allocate(size, stream)
}

// AllocFrom allocates n elements of T from mr, ordered on stream as mr's
// Allocate is; it fails as Alloc does.
func AllocFrom[T any](mr MemoryResource, n int, stream *Stream) (*Buffer, error) {
	size, err := elemBytes[T]("AllocFrom", n)
	if err != nil {
		return nil, err
	}
	if mr == nil || reflect.ValueOf(mr).Kind() == reflect.Pointer && reflect.ValueOf(mr).IsNil() {
		return nil, errors.New("core: AllocFrom: nil MemoryResource")
	}
	return mr.Allocate(size, stream)
}

// Len returns the number of elements of T that b holds: b.Size() divided
// by T's size. A size that is not a whole number of elements is an error,
// as in HostSlice.
func Len[T any](b *Buffer) (int, error) {
	sz, err := elemSize[T]("Len")
	if err != nil {
		return 0, err
	}
	if b == nil {
		return 0, errors.New("core: Len: nil *Buffer")
	}
	if b.size%sz != 0 {
		return 0, fmt.Errorf("core: Len: a %d-byte buffer is not a whole number of %d-byte %v", b.size, sz, reflect.TypeFor[T]())
	}
	return b.size / sz, nil
}

// View returns a view of the n elements of T that start at element off
// of b: b.View(off*sizeof(T), n*sizeof(T)), with the bounds checked in
// elements, of which b holds Size()/sizeof(T) whole ones. Element 0 must
// be aligned for T, as it is in any allocated Buffer; a byte view at an
// odd offset is refused. The view shares b's memory and owns nothing, as
// Buffer.View's do: copy into part of a buffer with
//
//	part, err := core.View[float32](x, 1024, 256)
//	err = core.CopyToDevice(part, host[:256])
func View[T any](b *Buffer, off, n int) (*Buffer, error) {
	sz, err := elemSize[T]("View")
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("core: View: nil *Buffer")
	}
	if b.closed() {
		return nil, ErrClosed
	}
	t := reflect.TypeFor[T]()
	whole := b.size / sz
	if off < 0 || n < 0 || off > whole || n > whole-off {
		return nil, fmt.Errorf("core: View: %d %v at element %d do not fit in a buffer of %d (%d bytes)", n, t, off, whole, b.size)
	}
	if a := uint64(t.Align()); uint64(b.ptr)%a != 0 {
		return nil, fmt.Errorf("core: View: address %#x is not aligned for %v (%d bytes)", uint64(b.ptr), t, a)
	}
	return b.View(off*sz, n*sz) // within b.size: no overflow
}

// elemSize returns T's size, or an error naming fn when T cannot be an
// element: it holds Go pointers, or it has size 0 (no count of which
// makes a size).
func elemSize[T any](fn string) (int, error) {
	if err := checkElem[T](fn); err != nil {
		return 0, err
	}
	var z T
	sz := int(unsafe.Sizeof(z))
	if sz == 0 {
		return 0, fmt.Errorf("core: %s: element type %v has size 0", fn, reflect.TypeFor[T]())
	}
	return sz, nil
}

// elemBytes returns the size in bytes of n elements of T.
func elemBytes[T any](fn string, n int) (int, error) {
	sz, err := elemSize[T](fn)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("core: %s: negative element count %d", fn, n)
	}
	if n > math.MaxInt/sz {
		return 0, fmt.Errorf("core: %s: %d elements of %v (%d bytes each) are more than %d bytes", fn, n, reflect.TypeFor[T](), sz, math.MaxInt)
	}
	return n * sz, nil
}
