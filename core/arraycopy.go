package core

import (
	"fmt"
	"reflect"
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Copies between CUDA arrays and Go slices or Buffers: the whole array at
// once, its elements packed (row after row, slice or layer after slice,
// x fastest), with cuMemcpy3DAsync, which takes every kind of array, and
// a wait. A Go slice is pinned (runtime.Pinner) from the copy to the
// wait, since the copy's descriptor points to it.

// formatKind is the Go kind of one channel of format f: a Go type T
// holds an element (or a channel) of f when its numbers are of this
// kind. Half channels are IEEE binary16 bits, a uint16 in Go.
func formatKind(f driver.ArrayFormat) reflect.Kind {
	switch f {
	case driver.AdFormatUnsignedInt8:
		return reflect.Uint8
	case driver.AdFormatUnsignedInt16, driver.AdFormatHalf:
		return reflect.Uint16
	case driver.AdFormatUnsignedInt32:
		return reflect.Uint32
	case driver.AdFormatSignedInt8:
		return reflect.Int8
	case driver.AdFormatSignedInt16:
		return reflect.Int16
	case driver.AdFormatSignedInt32:
		return reflect.Int32
	case driver.AdFormatFloat:
		return reflect.Float32
	}
	return reflect.Invalid
}

// scalarKind returns the kind of the numbers T is made of: T's own for a
// number, its element's for an array, its fields' for a struct whose
// fields are all of one kind; Invalid otherwise.
func scalarKind(t reflect.Type) reflect.Kind {
	switch t.Kind() {
	case reflect.Array:
		if t.Len() == 0 {
			return reflect.Invalid
		}
		return scalarKind(t.Elem())
	case reflect.Struct:
		k := reflect.Invalid
		for i := 0; i < t.NumField(); i++ {
			fk := scalarKind(t.Field(i).Type)
			if fk == reflect.Invalid || i > 0 && fk != k {
				return reflect.Invalid
			}
			k = fk
		}
		return k
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Float32:
		return t.Kind()
	}
	return reflect.Invalid
}

// checkArrayElem checks that T holds one channel or one whole element of
// s: its size is the channel's or the element's, and its numbers are of
// the format's kind (float32 for AdFormatFloat, uint16 for
// AdFormatHalf, ...).
func checkArrayElem[T any](fn string, s *arrayShape) error {
	t := reflect.TypeFor[T]()
	sz := int(t.Size())
	ch := formatBytes(s.format)
	if sz != ch && sz != ch*s.channels || scalarKind(t) != formatKind(s.format) {
		want := formatKind(s.format).String()
		if s.channels > 1 {
			want = fmt.Sprintf("%s (one channel) or a %d-byte type of %d %ss (one element)", want, ch*s.channels, s.channels, want)
		}
		return fmt.Errorf("core: %s: element type %v does not fit the %s: want %s", fn, t, s.what(), want)
	}
	return nil
}

// copyParams returns the descriptor of a copy of the whole array a into
// (toArray) or from memory of type other, packed, at host or dev.
func (a *Array) copyParams(toArray bool, other driver.Memorytype, host unsafe.Pointer, dev driver.Deviceptr) driver.Memcpy3DParams {
	s := &a.shape
	p := driver.Memcpy3DParams{
		WidthInBytes: uint64(s.ext.Width * s.elemBytes()),
		Height:       uint64(s.rows()),
		Depth:        uint64(s.slices()),
	}
	if toArray {
		p.DstMemoryType, p.DstArray = driver.MemorytypeArray, a.handle
		p.SrcMemoryType, p.SrcHost, p.SrcDevice, p.SrcPitch, p.SrcHeight = other, host, dev, p.WidthInBytes, p.Height
	} else {
		p.SrcMemoryType, p.SrcArray = driver.MemorytypeArray, a.handle
		p.DstMemoryType, p.DstHost, p.DstDevice, p.DstPitch, p.DstHeight = other, host, dev, p.WidthInBytes, p.Height
	}
	return p
}

// copyOn runs the copy p in a's context on stream s (held by the caller,
// or the legacy default stream when nil) and waits for it; pin, when not
// nil, is unpinned after the wait.
func (a *Array) copyOn(fn string, s *Stream, p *driver.Memcpy3DParams, pin *runtime.Pinner) error {
	if pin != nil {
		defer pin.Unpin() // after the wait: the driver reads p's host pointer until then
	}
	if !a.acquire() {
		return ErrClosed
	}
	defer a.release()
	ctx := a.dev.primary
	h, err := ctx.acquire()
	if err != nil {
		return err
	}
	defer ctx.release()
	st := streamLegacy
	if s != nil {
		st = s.handle
	}
	if err := cuMemcpy3DAsync(h, p, st); err != nil {
		return fmt.Errorf("core: %s: %w", fn, err)
	}
	return cuStreamSynchronize(h, st)
}

// CopyToArray copies src, all the elements of dst in order (x fastest,
// then rows, then slices or layers), into dst and waits. T is one
// channel (float32 for a float array; uint16 for half) or one whole
// element ([4]float32 or a struct of four float32 for a 4-channel float
// array), and src must hold exactly dst.Size() bytes. The copy is
// ordered on the legacy default stream: it follows the work queued on
// the device's blocking streams.
func CopyToArray[T any](dst *Array, src []T) error {
	return hostArrayCopy("CopyToArray", dst, src, true)
}

// CopyFromArray fills dst with all the elements of src, in the order
// CopyToArray takes them, and waits. T is as for CopyToArray, and dst
// must hold exactly src.Size() bytes.
func CopyFromArray[T any](dst []T, src *Array) error {
	return hostArrayCopy("CopyFromArray", src, dst, false)
}

// hostArrayCopy copies host, all the elements of a, into a (toArray) or
// from it, and waits: the body of CopyToArray and CopyFromArray.
func hostArrayCopy[T any](fn string, a *Array, host []T, toArray bool) error {
	if err := checkElem[T](fn); err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("core: %s: nil *Array", fn)
	}
	if err := checkArrayElem[T](fn, &a.shape); err != nil {
		return err
	}
	ptr, n := sliceBytes(host)
	if n != a.shape.bytes() {
		return fmt.Errorf("core: %s: %d bytes (%d %v) for a %s of %d bytes", fn, n, len(host), reflect.TypeFor[T](), a.shape.what(), a.shape.bytes())
	}
	pin := new(runtime.Pinner)
	pin.Pin(ptr)
	p := a.copyParams(toArray, driver.MemorytypeHost, ptr, 0)
	return a.copyOn(fn, nil, &p, pin)
}

// CopyFromBuffer copies the first a.Size() bytes of src, the array's
// elements packed as CopyToArray takes them, into a and waits. It runs on
// src's stream (see Buffer), after the work queued there; src must be
// memory of a's device, or host memory.
func (a *Array) CopyFromBuffer(src *Buffer) error {
	return a.bufferCopy("Array.CopyFromBuffer", src, true)
}

// CopyToBuffer copies all of a into the first a.Size() bytes of dst,
// packed as CopyFromArray gives them, and waits. It runs on dst's stream,
// after the work queued there.
func (a *Array) CopyToBuffer(dst *Buffer) error {
	return a.bufferCopy("Array.CopyToBuffer", dst, false)
}

func (a *Array) bufferCopy(fn string, b *Buffer, toArray bool) error {
	if a == nil {
		return fmt.Errorf("core: %s: nil *Array", fn)
	}
	if b == nil {
		return fmt.Errorf("core: %s: nil *Buffer", fn)
	}
	if b.closed() {
		return ErrClosed
	}
	if n := a.shape.bytes(); b.size < n {
		return fmt.Errorf("core: %s: the %s is %d bytes, the buffer %d", fn, a.shape.what(), n, b.size)
	}
	if d := b.Device(); d != nil && d != a.dev {
		return fmt.Errorf("core: %s: the buffer is memory of %v, the array is on %v", fn, d, a.dev)
	}
	p := a.copyParams(toArray, driver.MemorytypeUnified, nil, b.ptr)
	// Hold the buffer and its stream; the stream must be of a's context
	// for the copy to be queued on it.
	_, s, err := b.acquireWith(nil)
	if err != nil {
		return err
	}
	defer b.releaseWith(s)
	if s.ctx != a.dev.primary {
		s = nil // another context's stream: the legacy default stream of a's
	}
	return a.copyOn(fn, s, &p, nil)
}
