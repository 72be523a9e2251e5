package core

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Tensor maps: the descriptors with which Hopper's (compute capability
// 9.0) Tensor Memory Accelerator copies tiles of a tensor in global
// memory to and from shared memory (cp.async.bulk.tensor in PTX).
//
// A TensorMap describes a tensor in a Buffer: its element type, its
// dimensions and strides, and the box (the tile) a TMA copy moves. It is
// encoded by the driver (cuTensorMapEncodeTiled or
// cuTensorMapEncodeIm2col) after every rule of their documentation has
// been checked here, so that a bad field is an error naming it rather
// than the driver's CUDA_ERROR_INVALID_VALUE. A kernel takes it by value,
// as a 128-byte `const __grid_constant__ CUtensorMap` parameter: pass the
// *TensorMap to Launch.

// tensorMapSize is sizeof(CUtensorMap).
const tensorMapSize = int(unsafe.Sizeof(driver.TensorMap{}))

var _ = [1]struct{}{}[tensorMapSize-128]

// TensorMapTiledOptions describe a tiled tensor map
// (cuTensorMapEncodeTiled). Dimensions are listed innermost (contiguous)
// first: a row-major rows x cols matrix has Dims {cols, rows}.
type TensorMapTiledOptions struct {
	// DataType is the element type.
	DataType driver.TensorMapDataType
	// Dims are the tensor's sizes in elements, 1 to 5 of them (the
	// rank), each 1 to 2^32.
	Dims []uint64
	// Strides are the byte strides of dimensions 1 to rank-1 (the
	// innermost dimension is contiguous): rank-1 of them, multiples of
	// 16 (of 32 with Interleave32B or the ALIGN16B packed types), below
	// 2^40.
	Strides []uint64
	// Box is the size of the tile in elements per dimension, each 1 to
	// 256; without interleave the innermost one must span a multiple of
	// 16 bytes, and at most the swizzle's span.
	Box []uint32
	// ElementStrides are the steps of the traversal per dimension, 1 to
	// 8; nil means all 1. The innermost is ignored without interleave.
	ElementStrides []uint32
	Interleave     driver.TensorMapInterleave
	// Swizzle is the shared-memory bank swizzle: none, 32, 64 or 128
	// bytes (and the 128-byte atom variants of compute capability 10).
	Swizzle     driver.TensorMapSwizzle
	L2Promotion driver.TensorMapL2promotion
	// OOBFill: zeros, or (floating-point types only) NaN for the
	// elements of a box outside the tensor.
	OOBFill driver.TensorMapFloatOOBfill
}

// TensorMapIm2colOptions describe an im2col tensor map
// (cuTensorMapEncodeIm2col) of a tensor of rank 3 to 5 laid out NWC, NHWC
// or NDHWC: Dims (innermost first) are {C, W, N}, {C, W, H, N} or
// {C, W, H, D, N}.
type TensorMapIm2colOptions struct {
	DataType driver.TensorMapDataType
	Dims     []uint64 // as TensorMapTiledOptions.Dims, 3 to 5 of them
	Strides  []uint64 // as TensorMapTiledOptions.Strides
	// LowerCorner and UpperCorner are the offsets of the bounding box of
	// the pixels from the tensor's first and last ones, one per spatial
	// dimension (rank-2 of them, W first): within -32768..32767 at rank
	// 3, -128..127 at rank 4, -16..15 at rank 5. The box must hold at
	// least one pixel in every spatial dimension.
	LowerCorner []int32
	UpperCorner []int32
	// ChannelsPerPixel is the number of elements read along C, 1 to 256;
	// PixelsPerColumn the number of pixels read, 1 to 1024.
	ChannelsPerPixel uint32
	PixelsPerColumn  uint32
	ElementStrides   []uint32 // as TensorMapTiledOptions.ElementStrides
	Interleave       driver.TensorMapInterleave
	Swizzle          driver.TensorMapSwizzle
	L2Promotion      driver.TensorMapL2promotion
	OOBFill          driver.TensorMapFloatOOBfill
}

// TensorMap is an encoded tensor map of a Buffer's memory: 128 bytes that
// hold the buffer's address. It keeps the Buffer referenced; once the
// Buffer (or, for a view, the buffer it views) is closed, a Launch with
// the TensorMap fails with ErrClosed. A TensorMap is immutable and may be
// used by several goroutines at once; WithBuffer makes one for another
// buffer.
type TensorMap struct {
	desc   [tensorMapSize]byte
	buf    *Buffer
	im2col bool
	rank   int
	dtype  driver.TensorMapDataType
	align  uint64 // the address alignment it needs
	extent uint64 // the bytes of the buffer the tensor spans
}

// Buffer returns the buffer the tensor map describes.
func (m *TensorMap) Buffer() *Buffer { return m.buf }

// Descriptor returns the encoded CUtensorMap.
func (m *TensorMap) Descriptor() driver.TensorMap {
	var d driver.TensorMap
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&d)), tensorMapSize), m.desc[:])
	return d
}

// Rank returns the number of dimensions.
func (m *TensorMap) Rank() int { return m.rank }

// DataType returns the element type.
func (m *TensorMap) DataType() driver.TensorMapDataType { return m.dtype }

// IsIm2col reports whether the map was made by NewTensorMapIm2col.
func (m *TensorMap) IsIm2col() bool { return m.im2col }

// The limits of cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col.
const (
	tmMaxRank          = 5
	tmMaxDim           = 1 << 32
	tmMaxStride        = 1 << 40
	tmMaxBox           = 256
	tmMaxElementStride = 8
	tmMaxChannels      = 256
	tmMaxPixels        = 1024
)

// tmPacked16 reports whether t is one of the packed types aligned to 16
// bytes, which have stricter rules.
func tmPacked16(t driver.TensorMapDataType) bool {
	return t == driver.TensorMapDataType16U4Align16B || t == driver.TensorMapDataType16U6Align16B
}

func tmPacked(t driver.TensorMapDataType) bool {
	return tmPacked16(t) || t == driver.TensorMapDataType16U4Align8B
}

// tmBytes returns the bytes that n elements of type t take: packed U4
// values two to a byte (ALIGN8B), or one to a byte with the gaps of their
// 16-byte granules (ALIGN16B, and U6).
func tmBytes(t driver.TensorMapDataType, n uint64) uint64 {
	switch t {
	case driver.TensorMapDataTypeUint8, driver.TensorMapDataType16U4Align16B, driver.TensorMapDataType16U6Align16B:
		return n
	case driver.TensorMapDataType16U4Align8B:
		return (n + 1) / 2
	case driver.TensorMapDataTypeUint16, driver.TensorMapDataTypeFloat16, driver.TensorMapDataTypeBfloat16:
		return 2 * n
	case driver.TensorMapDataTypeUint64, driver.TensorMapDataTypeInt64, driver.TensorMapDataTypeFloat64:
		return 8 * n
	}
	return 4 * n // the 32-bit types
}

func tmFloat(t driver.TensorMapDataType) bool {
	switch t {
	case driver.TensorMapDataTypeFloat16, driver.TensorMapDataTypeFloat32, driver.TensorMapDataTypeFloat64,
		driver.TensorMapDataTypeBfloat16, driver.TensorMapDataTypeFloat32Ftz,
		driver.TensorMapDataTypeTfloat32, driver.TensorMapDataTypeTfloat32Ftz:
		return true
	}
	return false
}

// swizzleSpan is the bytes a swizzle mode permutes within (0: none).
func swizzleSpan(s driver.TensorMapSwizzle) uint64 {
	switch s {
	case driver.TensorMapSwizzle32B:
		return 32
	case driver.TensorMapSwizzle64B:
		return 64
	case driver.TensorMapSwizzleNone:
		return 0
	}
	return 128
}

// tmCommon is what both kinds of tensor map share, for validation.
type tmCommon struct {
	what        string // the options type, for messages
	dtype       driver.TensorMapDataType
	dims        []uint64
	strides     []uint64
	elemStrides []uint32
	interleave  driver.TensorMapInterleave
	swizzle     driver.TensorMapSwizzle
	l2          driver.TensorMapL2promotion
	oob         driver.TensorMapFloatOOBfill
	minRank     int
}

func (c *tmCommon) errf(field, format string, args ...any) error {
	return fmt.Errorf("core: %s.%s: %s", c.what, field, fmt.Sprintf(format, args...))
}

// validate checks the rules the two encoders share for a tensor at addr
// in a buffer of size bytes, and returns the address alignment the map
// needs and the bytes the tensor spans.
func (c *tmCommon) validate(addr uint64, size int) (align, extent uint64, err error) {
	t := c.dtype
	switch {
	case t > driver.TensorMapDataType16U6Align16B:
		return 0, 0, c.errf("DataType", "unknown type %d", t)
	case c.interleave > driver.TensorMapInterleave32B:
		return 0, 0, c.errf("Interleave", "unknown mode %d", c.interleave)
	case c.swizzle > driver.TensorMapSwizzle128BAtom64B:
		return 0, 0, c.errf("Swizzle", "unknown mode %d", c.swizzle)
	case c.l2 > driver.TensorMapL2PromotionL2256B:
		return 0, 0, c.errf("L2Promotion", "unknown mode %d", c.l2)
	case c.oob > driver.TensorMapFloatOobFillNanRequestZeroFma:
		return 0, 0, c.errf("OOBFill", "unknown mode %d", c.oob)
	}
	rank := len(c.dims)
	if rank < c.minRank || rank > tmMaxRank {
		return 0, 0, c.errf("Dims", "rank %d, want %d to %d dimensions", rank, c.minRank, tmMaxRank)
	}
	if c.interleave != driver.TensorMapInterleaveNone && rank < 3 {
		return 0, 0, c.errf("Dims", "rank %d: interleaved layouts need at least 3 dimensions", rank)
	}
	// The address.
	align = 16
	if c.interleave == driver.TensorMapInterleave32B || tmPacked16(t) {
		align = 32
	}
	if addr == 0 {
		return 0, 0, fmt.Errorf("core: %s: the buffer has no memory (address 0)", c.what)
	}
	if addr%align != 0 {
		return 0, 0, fmt.Errorf("core: %s: the buffer's address %#x is not a multiple of %d bytes", c.what, addr, align)
	}
	// The dimensions.
	for i, d := range c.dims {
		if d == 0 || d > tmMaxDim {
			return 0, 0, c.errf(fmt.Sprintf("Dims[%d]", i), "%d elements, want 1 to 2^32", d)
		}
	}
	switch {
	case tmPacked16(t) && c.dims[0]%128 != 0:
		return 0, 0, c.errf("Dims[0]", "%d: the ALIGN16B packed types need a multiple of 128", c.dims[0])
	case t == driver.TensorMapDataType16U4Align8B && c.dims[0]%2 != 0:
		return 0, 0, c.errf("Dims[0]", "%d: the 16U4_ALIGN8B type needs a multiple of 2", c.dims[0])
	}
	// The strides.
	if len(c.strides) != rank-1 {
		return 0, 0, c.errf("Strides", "%d strides for %d dimensions, want %d (the innermost dimension has none)", len(c.strides), rank, rank-1)
	}
	for i, s := range c.strides {
		if s%align != 0 || s >= tmMaxStride {
			return 0, 0, c.errf(fmt.Sprintf("Strides[%d]", i), "%d bytes, want a multiple of %d below 2^40", s, align)
		}
	}
	// The element strides.
	if c.elemStrides != nil && len(c.elemStrides) != rank {
		return 0, 0, c.errf("ElementStrides", "%d for %d dimensions, want %d (or none)", len(c.elemStrides), rank, rank)
	}
	for i, e := range c.elemStrides {
		if e < 1 || e > tmMaxElementStride {
			return 0, 0, c.errf(fmt.Sprintf("ElementStrides[%d]", i), "%d, want 1 to 8", e)
		}
	}
	// The modes.
	if c.interleave == driver.TensorMapInterleave32B && c.swizzle != driver.TensorMapSwizzle32B {
		return 0, 0, c.errf("Swizzle", "mode %d: Interleave32B needs Swizzle32B", c.swizzle)
	}
	switch t {
	case driver.TensorMapDataType16U6Align16B:
		if c.interleave != driver.TensorMapInterleaveNone {
			return 0, 0, c.errf("Interleave", "the 16U6_ALIGN16B type takes no interleave")
		}
		switch c.swizzle {
		case driver.TensorMapSwizzleNone, driver.TensorMapSwizzle128B, driver.TensorMapSwizzle128BAtom32B, driver.TensorMapSwizzle128BAtom64B:
		default:
			return 0, 0, c.errf("Swizzle", "mode %d: the 16U6_ALIGN16B type takes none, 128B, 128B_ATOM_32B or 128B_ATOM_64B", c.swizzle)
		}
	case driver.TensorMapDataType16U4Align16B:
		switch c.swizzle {
		case driver.TensorMapSwizzleNone, driver.TensorMapSwizzle128B, driver.TensorMapSwizzle128BAtom32B:
		default:
			return 0, 0, c.errf("Swizzle", "mode %d: the 16U4_ALIGN16B type takes none, 128B or 128B_ATOM_32B", c.swizzle)
		}
	}
	if c.oob == driver.TensorMapFloatOobFillNanRequestZeroFma && (!tmFloat(t) || tmPacked(t)) {
		return 0, 0, c.errf("OOBFill", "NaN fill needs a floating-point type, not type %d", t)
	}
	// The tensor must lie in the buffer: its last byte is at the
	// innermost row's end plus every other dimension's last step.
	extent = tmBytes(t, c.dims[0])
	for i, s := range c.strides {
		hi, lo := bits.Mul64(c.dims[i+1]-1, s)
		var carry uint64
		extent, carry = bits.Add64(extent, lo, 0)
		if hi != 0 || carry != 0 {
			return 0, 0, fmt.Errorf("core: %s: the tensor spans more than 2^64 bytes", c.what)
		}
	}
	if size < 0 || extent > uint64(size) {
		return 0, 0, fmt.Errorf("core: %s: the tensor spans %d bytes (Dims and Strides), the buffer has %d", c.what, extent, size)
	}
	return align, extent, nil
}

// tmOptions are the options of one kind of tensor map: what validation
// and encoding need of them beyond tmCommon.
type tmOptions interface {
	common() *tmCommon
	// check checks the rules of the kind beyond the shared ones.
	check(c *tmCommon) error
	// smemBytes is the shared memory one box takes.
	smemBytes() uint64
	// encode encodes the map of the tensor at addr into dst, in context
	// h, with element strides es.
	encode(h driver.Context, dst *driver.TensorMap, addr unsafe.Pointer, es *uint32) error
}

// validateTensorMap checks every rule of o's kind for a tensor at addr in
// a buffer of size bytes, and returns the address alignment the map needs
// and the bytes the tensor spans.
func validateTensorMap(o tmOptions, addr uint64, size int) (align, extent uint64, err error) {
	c := o.common()
	if align, extent, err = c.validate(addr, size); err != nil {
		return 0, 0, err
	}
	if err := o.check(c); err != nil {
		return 0, 0, err
	}
	return align, extent, nil
}

// Validate checks every rule of cuTensorMapEncodeTiled's documentation
// for a tensor at device address addr in a buffer of size bytes, and that
// the tensor lies within the buffer. NewTensorMapTiled calls it.
func (o *TensorMapTiledOptions) Validate(addr driver.Deviceptr, size int) error {
	_, _, err := validateTensorMap(o, uint64(addr), size)
	return err
}

func (o *TensorMapTiledOptions) check(c *tmCommon) error {
	if len(o.Box) != len(o.Dims) {
		return c.errf("Box", "%d sizes for %d dimensions", len(o.Box), len(o.Dims))
	}
	for i, b := range o.Box {
		if b < 1 || b > tmMaxBox {
			return c.errf(fmt.Sprintf("Box[%d]", i), "%d elements, want 1 to 256", b)
		}
	}
	inner := tmBytes(o.DataType, uint64(o.Box[0]))
	if tmPacked16(o.DataType) && o.Box[0] != 128 {
		return c.errf("Box[0]", "%d: the ALIGN16B packed types need 128", o.Box[0])
	}
	if o.Interleave == driver.TensorMapInterleaveNone {
		if inner%16 != 0 {
			return c.errf("Box[0]", "%d elements are %d bytes, want a multiple of 16", o.Box[0], inner)
		}
		if span := swizzleSpan(o.Swizzle); span != 0 && inner > span {
			return c.errf("Box[0]", "%d elements are %d bytes, more than the %d bytes the swizzle spans", o.Box[0], inner, span)
		}
	}
	return nil
}

func (o *TensorMapTiledOptions) common() *tmCommon {
	return &tmCommon{what: "TensorMapTiledOptions", dtype: o.DataType, dims: o.Dims, strides: o.Strides,
		elemStrides: o.ElementStrides, interleave: o.Interleave, swizzle: o.Swizzle, l2: o.L2Promotion, oob: o.OOBFill, minRank: 1}
}

// smemBytes is the shared memory one box takes.
func (o *TensorMapTiledOptions) smemBytes() uint64 {
	n := uint64(1)
	for i, b := range o.Box {
		e := uint64(1)
		if o.ElementStrides != nil && (i > 0 || o.Interleave != driver.TensorMapInterleaveNone) {
			e = uint64(o.ElementStrides[i])
		}
		n *= (uint64(b) + e - 1) / e
	}
	return tmBytes(o.DataType, n)
}

func (o *TensorMapTiledOptions) encode(h driver.Context, dst *driver.TensorMap, addr unsafe.Pointer, es *uint32) error {
	var strides *uint64 // none at rank 1
	if len(o.Strides) > 0 {
		strides = &o.Strides[0]
	}
	return cuTensorMapEncodeTiled(h, dst, o.DataType, uint32(len(o.Dims)), addr, &o.Dims[0], strides, &o.Box[0], es,
		o.Interleave, o.Swizzle, o.L2Promotion, o.OOBFill)
}

// Validate checks every rule of cuTensorMapEncodeIm2col's documentation
// for a tensor at device address addr in a buffer of size bytes, and that
// the tensor lies within the buffer. NewTensorMapIm2col calls it.
func (o *TensorMapIm2colOptions) Validate(addr driver.Deviceptr, size int) error {
	_, _, err := validateTensorMap(o, uint64(addr), size)
	return err
}

func (o *TensorMapIm2colOptions) check(c *tmCommon) error {
	rank := len(o.Dims)
	spatial := rank - 2
	lim := int32(1 << 4) // the corners' range: -lim to lim-1
	switch rank {
	case 3:
		lim = 1 << 15
	case 4:
		lim = 1 << 7
	}
	for _, f := range []struct {
		name string
		v    []int32
	}{{"LowerCorner", o.LowerCorner}, {"UpperCorner", o.UpperCorner}} {
		if len(f.v) != spatial {
			return c.errf(f.name, "%d offsets, want %d (one per spatial dimension at rank %d)", len(f.v), spatial, rank)
		}
		for i, v := range f.v {
			if v < -lim || v > lim-1 {
				return c.errf(fmt.Sprintf("%s[%d]", f.name, i), "%d, want %d to %d at rank %d", v, -lim, lim-1, rank)
			}
		}
	}
	for i := range spatial {
		// The box spans LowerCorner to the last pixel plus UpperCorner.
		if n := int64(o.Dims[i+1]) + int64(o.UpperCorner[i]) - int64(o.LowerCorner[i]); n < 1 {
			return c.errf("LowerCorner", "the bounding box is empty in spatial dimension %d (%d pixels, corners %d and %d)",
				i, o.Dims[i+1], o.LowerCorner[i], o.UpperCorner[i])
		}
	}
	if o.ChannelsPerPixel < 1 || o.ChannelsPerPixel > tmMaxChannels {
		return c.errf("ChannelsPerPixel", "%d, want 1 to 256", o.ChannelsPerPixel)
	}
	if tmPacked16(o.DataType) && o.ChannelsPerPixel != 128 {
		return c.errf("ChannelsPerPixel", "%d: the ALIGN16B packed types need 128", o.ChannelsPerPixel)
	}
	if o.PixelsPerColumn < 1 || o.PixelsPerColumn > tmMaxPixels {
		return c.errf("PixelsPerColumn", "%d, want 1 to 1024", o.PixelsPerColumn)
	}
	if o.Interleave == driver.TensorMapInterleaveNone {
		inner := tmBytes(o.DataType, uint64(o.ChannelsPerPixel))
		if span := swizzleSpan(o.Swizzle); span != 0 && inner > span {
			return c.errf("ChannelsPerPixel", "%d elements are %d bytes, more than the %d bytes the swizzle spans", o.ChannelsPerPixel, inner, span)
		}
	}
	return nil
}

func (o *TensorMapIm2colOptions) common() *tmCommon {
	return &tmCommon{what: "TensorMapIm2colOptions", dtype: o.DataType, dims: o.Dims, strides: o.Strides,
		elemStrides: o.ElementStrides, interleave: o.Interleave, swizzle: o.Swizzle, l2: o.L2Promotion, oob: o.OOBFill, minRank: 3}
}

func (o *TensorMapIm2colOptions) smemBytes() uint64 {
	return tmBytes(o.DataType, uint64(o.ChannelsPerPixel)*uint64(o.PixelsPerColumn))
}

func (o *TensorMapIm2colOptions) encode(h driver.Context, dst *driver.TensorMap, addr unsafe.Pointer, es *uint32) error {
	return cuTensorMapEncodeIm2col(h, dst, o.DataType, uint32(len(o.Dims)), addr, &o.Dims[0], &o.Strides[0],
		&o.LowerCorner[0], &o.UpperCorner[0], o.ChannelsPerPixel, o.PixelsPerColumn, es,
		o.Interleave, o.Swizzle, o.L2Promotion, o.OOBFill)
}

// checkTensorMapDevice checks what the device must support: tensor maps
// (compute capability 9.0), and, as CCCL's make_tma_descriptor does, the
// 128-byte atom swizzles and packed sub-byte types only from 10.0.
func checkTensorMapDevice(what string, dev *Device, t driver.TensorMapDataType, s driver.TensorMapSwizzle, smem uint64) error {
	major, minor := dev.ComputeCapability()
	if major < 9 {
		return fmt.Errorf("core: %s: tensor maps need compute capability 9.0, %v is %d.%d", what, dev, major, minor)
	}
	if major < 10 {
		if s >= driver.TensorMapSwizzle128BAtom32B {
			return fmt.Errorf("core: %s.Swizzle: the 128-byte atom swizzles need compute capability 10.0, %v is %d.%d", what, dev, major, minor)
		}
		if tmPacked(t) {
			return fmt.Errorf("core: %s.DataType: the packed sub-byte types need compute capability 10.0, %v is %d.%d", what, dev, major, minor)
		}
	}
	if limit := uint64(dev.MaxSharedMemoryPerBlockOptin()); limit > 0 && smem > limit {
		return fmt.Errorf("core: %s: a box is %d bytes, more than the %d bytes of shared memory a block may have on %v", what, smem, limit, dev)
	}
	return nil
}

// tmBuffer checks the buffer of a tensor map and holds it for the
// encoding (release it with b.release); it returns its device.
func tmBuffer(what string, b *Buffer) (*Device, error) {
	if b == nil {
		return nil, fmt.Errorf("core: %s: nil *Buffer", what)
	}
	if b.mr == nil || !b.mr.DeviceAccessible() {
		return nil, fmt.Errorf("core: %s: %T memory is not device-accessible", what, b.mr)
	}
	dev := b.mr.Device()
	if dev == nil {
		return nil, fmt.Errorf("core: %s: the buffer's %T has no device", what, b.mr)
	}
	if !b.acquire() {
		return nil, ErrClosed
	}
	return dev, nil
}

// tmScratch is 64-byte-aligned room for a CUtensorMap, which the driver
// requires and Go cannot declare: the map is at the first multiple of 64
// inside. newScratch puts it on the heap, where Go never moves it.
type tmScratch [tensorMapSize + 63]byte

// newScratch is not inlined so that the scratch escapes to the heap: the
// calls it is passed to are noescape, which would let it stay on a stack
// that may move.
//
//go:noinline
func newScratch() *tmScratch { return new(tmScratch) }

func (s *tmScratch) ptr() *driver.TensorMap {
	off := (64 - uintptr(unsafe.Pointer(&s[0]))%64) % 64
	return (*driver.TensorMap)(unsafe.Pointer(&s[off]))
}

func (s *tmScratch) bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s.ptr())), tensorMapSize)
}

// NewTensorMapTiled encodes a tiled tensor map of b's memory
// (cuTensorMapEncodeTiled), after checking opts (Validate) and the
// device (compute capability 9.0; a box must fit in a block's shared
// memory).
func NewTensorMapTiled(b *Buffer, options *TensorMapTiledOptions) (*TensorMap, error) {
	if options == nil {
		return nil, errors.New("core: NewTensorMapTiled: nil *TensorMapTiledOptions: the tensor map's shape and box are required")
	}
	opts := *options
	return newTensorMap("NewTensorMapTiled", b, &opts)
}

// NewTensorMapIm2col encodes an im2col tensor map of b's memory
// (cuTensorMapEncodeIm2col), after checking opts (Validate) and the
// device (compute capability 9.0).
func NewTensorMapIm2col(b *Buffer, options *TensorMapIm2colOptions) (*TensorMap, error) {
	if options == nil {
		return nil, errors.New("core: NewTensorMapIm2col: nil *TensorMapIm2colOptions: the tensor map's shape and box are required")
	}
	opts := *options
	return newTensorMap("NewTensorMapIm2col", b, &opts)
}

// newTensorMap encodes a tensor map of b's memory for constructor what,
// after checking o (a copy of the caller's options) and the device.
func newTensorMap(what string, b *Buffer, o tmOptions) (*TensorMap, error) {
	dev, err := tmBuffer(what, b)
	if err != nil {
		return nil, err
	}
	defer b.release()
	align, extent, err := validateTensorMap(o, uint64(b.ptr), b.size)
	if err != nil {
		return nil, err
	}
	c := o.common()
	if err := checkTensorMapDevice(c.what, dev, c.dtype, c.swizzle, o.smemBytes()); err != nil {
		return nil, err
	}
	es := c.elemStrides
	if es == nil {
		es = []uint32{1, 1, 1, 1, 1}
	}
	s := newScratch()
	err = dev.primary.call(func(h driver.Context) error {
		if err := o.encode(h, s.ptr(), hostPtr(b.ptr), &es[0]); err != nil {
			return fmt.Errorf("core: %s: %w", what, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, im2col := o.(*TensorMapIm2colOptions)
	m := &TensorMap{buf: b, im2col: im2col, rank: len(c.dims), dtype: c.dtype, align: align, extent: extent}
	copy(m.desc[:], s.bytes())
	return m, nil
}

// WithBuffer returns a tensor map that differs from m only in its buffer
// (cuTensorMapReplaceAddress): b must be on m's device, aligned as m's
// was, and large enough for the tensor. m is left as it is.
func (m *TensorMap) WithBuffer(b *Buffer) (*TensorMap, error) {
	const what = "TensorMap.WithBuffer"
	if m == nil || m.buf == nil {
		return nil, fmt.Errorf("core: %s: the TensorMap was not made by NewTensorMapTiled or NewTensorMapIm2col", what)
	}
	dev, err := tmBuffer(what, b)
	if err != nil {
		return nil, err
	}
	defer b.release()
	switch {
	case dev != m.buf.Device():
		return nil, fmt.Errorf("core: %s: the buffer is on %v, the tensor map's on %v", what, dev, m.buf.Device())
	case uint64(b.ptr)%m.align != 0 || b.ptr == 0:
		return nil, fmt.Errorf("core: %s: the buffer's address %#x is not a multiple of %d bytes", what, uint64(b.ptr), m.align)
	case uint64(b.size) < m.extent:
		return nil, fmt.Errorf("core: %s: the tensor spans %d bytes, the buffer has %d", what, m.extent, b.size)
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	s := newScratch()
	copy(s.bytes(), m.desc[:])
	if err := cuTensorMapReplaceAddress(h, s.ptr(), hostPtr(b.ptr)); err != nil {
		return nil, fmt.Errorf("core: %s: %w", what, err)
	}
	n := *m
	n.buf = b
	copy(n.desc[:], s.bytes())
	return &n, nil
}

// packTensorMap writes m into d, a kernel parameter of its size, for
// packArgs.
func packTensorMap(d []byte, m *TensorMap) error {
	if m == nil {
		return errors.New("is a nil *TensorMap")
	}
	if m.buf == nil || m.buf.closed() {
		return fmt.Errorf("is a TensorMap of a closed Buffer: %w", ErrClosed)
	}
	copy(d, m.desc[:])
	return nil
}
