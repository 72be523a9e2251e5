package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// tmAddr is a device address as cuMemAllocAsync returns them: aligned far
// beyond what tensor maps need.
const tmAddr = 0x7f0000000000

// tiledBase is a valid tiled map: a row-major 256x192 float matrix in
// 64x32 tiles, exactly in a buffer of its size.
func tiledBase() TensorMapTiledOptions {
	return TensorMapTiledOptions{
		DataType: driver.TensorMapDataTypeFloat32,
		Dims:     []uint64{192, 256},
		Strides:  []uint64{192 * 4},
		Box:      []uint32{32, 64},
	}
}

const tiledBaseSize = 192 * 256 * 4

func TestTensorMapTiledValid(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(o *TensorMapTiledOptions)
		size int
	}{
		{"base", func(o *TensorMapTiledOptions) {}, tiledBaseSize},
		{"swizzle 128B with a 128-byte inner box", func(o *TensorMapTiledOptions) { o.Swizzle = driver.TensorMapSwizzle128B }, tiledBaseSize},
		{"swizzle 64B with a 64-byte inner box", func(o *TensorMapTiledOptions) {
			o.Swizzle, o.Box[0] = driver.TensorMapSwizzle64B, 16
		}, tiledBaseSize},
		{"swizzle 32B with a 32-byte inner box", func(o *TensorMapTiledOptions) {
			o.Swizzle, o.Box[0] = driver.TensorMapSwizzle32B, 8
		}, tiledBaseSize},
		{"padded rows", func(o *TensorMapTiledOptions) { o.Strides[0] = 200 * 4 }, 200*4*255 + 192*4},
		{"element strides", func(o *TensorMapTiledOptions) { o.ElementStrides = []uint32{1, 8} }, tiledBaseSize},
		{"NaN fill of floats", func(o *TensorMapTiledOptions) { o.OOBFill = driver.TensorMapFloatOobFillNanRequestZeroFma }, tiledBaseSize},
		{"L2 promotion", func(o *TensorMapTiledOptions) { o.L2Promotion = driver.TensorMapL2PromotionL2256B }, tiledBaseSize},
		{"rank 1 of 2^32 elements", func(o *TensorMapTiledOptions) {
			o.Dims, o.Strides, o.Box = []uint64{1 << 32}, nil, []uint32{256}
		}, 1 << 34},
		{"rank 5", func(o *TensorMapTiledOptions) {
			o.Dims = []uint64{4, 2, 2, 2, 2}
			o.Strides = []uint64{16, 32, 64, 128}
			o.Box = []uint32{4, 1, 1, 1, 1}
		}, 256},
		{"interleave 32B, rank 3", func(o *TensorMapTiledOptions) {
			o.DataType = driver.TensorMapDataTypeFloat16
			o.Dims = []uint64{16, 64, 64}
			o.Strides = []uint64{32 * 64, 32 * 64 * 64}
			o.Box = []uint32{16, 8, 8}
			o.Interleave, o.Swizzle = driver.TensorMapInterleave32B, driver.TensorMapSwizzle32B
		}, 32 * 64 * 64 * 64},
		{"packed 16U4 aligned to 8 bytes", func(o *TensorMapTiledOptions) {
			o.DataType = driver.TensorMapDataType16U4Align8B
			o.Dims, o.Strides, o.Box = []uint64{256, 4}, []uint64{128}, []uint32{32, 4}
		}, 512},
		{"packed 16U6 aligned to 16 bytes", func(o *TensorMapTiledOptions) {
			o.DataType = driver.TensorMapDataType16U6Align16B
			o.Dims, o.Strides, o.Box = []uint64{128, 4}, []uint64{128}, []uint32{128, 4}
			o.Swizzle = driver.TensorMapSwizzle128B
		}, 512},
	} {
		o := tiledBase()
		c.mod(&o)
		if err := o.Validate(tmAddr, c.size); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestTensorMapTiledRules(t *testing.T) {
	type mod = func(o *TensorMapTiledOptions) (addr uint64, size int)
	same := func(f func(o *TensorMapTiledOptions)) mod {
		return func(o *TensorMapTiledOptions) (uint64, int) { f(o); return tmAddr, tiledBaseSize }
	}
	rank3 := func(o *TensorMapTiledOptions) {
		o.Dims, o.Strides, o.Box = []uint64{192, 16, 16}, []uint64{768, 768 * 16}, []uint32{32, 4, 4}
	}
	for _, c := range []struct {
		mod  mod
		want string
	}{
		// The enums.
		{same(func(o *TensorMapTiledOptions) { o.DataType = 16 }), "TensorMapTiledOptions.DataType: unknown type 16"},
		{same(func(o *TensorMapTiledOptions) { o.Interleave = 3 }), "TensorMapTiledOptions.Interleave: unknown mode 3"},
		{same(func(o *TensorMapTiledOptions) { o.Swizzle = 7 }), "TensorMapTiledOptions.Swizzle: unknown mode 7"},
		{same(func(o *TensorMapTiledOptions) { o.L2Promotion = 4 }), "TensorMapTiledOptions.L2Promotion: unknown mode 4"},
		{same(func(o *TensorMapTiledOptions) { o.OOBFill = 2 }), "TensorMapTiledOptions.OOBFill: unknown mode 2"},
		// The rank.
		{same(func(o *TensorMapTiledOptions) { o.Dims, o.Strides, o.Box = nil, nil, nil }), "Dims: rank 0, want 1 to 5 dimensions"},
		{same(func(o *TensorMapTiledOptions) {
			o.Dims, o.Strides, o.Box = []uint64{4, 1, 1, 1, 1, 1}, []uint64{16, 16, 16, 16, 16}, []uint32{4, 1, 1, 1, 1, 1}
		}), "Dims: rank 6, want 1 to 5 dimensions"},
		{same(func(o *TensorMapTiledOptions) { o.Interleave = driver.TensorMapInterleave16B }), "Dims: rank 2: interleaved layouts need at least 3 dimensions"},
		// The address.
		{func(o *TensorMapTiledOptions) (uint64, int) { return 0, tiledBaseSize }, "the buffer has no memory (address 0)"},
		{func(o *TensorMapTiledOptions) (uint64, int) { return tmAddr + 8, tiledBaseSize }, "address 0x7f0000000008 is not a multiple of 16 bytes"},
		{func(o *TensorMapTiledOptions) (uint64, int) {
			rank3(o)
			o.Interleave, o.Swizzle, o.Strides = driver.TensorMapInterleave32B, driver.TensorMapSwizzle32B, []uint64{768, 768 * 16}
			return tmAddr + 16, tiledBaseSize
		}, "address 0x7f0000000010 is not a multiple of 32 bytes"},
		{func(o *TensorMapTiledOptions) (uint64, int) {
			o.DataType, o.Dims, o.Box = driver.TensorMapDataType16U4Align16B, []uint64{256, 256}, []uint32{128, 64}
			return tmAddr + 16, tiledBaseSize
		}, "not a multiple of 32 bytes"},
		// The dimensions.
		{same(func(o *TensorMapTiledOptions) { o.Dims[1] = 0 }), "TensorMapTiledOptions.Dims[1]: 0 elements, want 1 to 2^32"},
		{same(func(o *TensorMapTiledOptions) { o.Dims[0] = 1<<32 + 1 }), "Dims[0]: 4294967297 elements, want 1 to 2^32"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Box = driver.TensorMapDataType16U6Align16B, []uint64{192, 256}, []uint32{128, 64}
		}), "Dims[0]: 192: the ALIGN16B packed types need a multiple of 128"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Box = driver.TensorMapDataType16U4Align8B, []uint64{191, 256}, []uint32{32, 64}
		}), "Dims[0]: 191: the 16U4_ALIGN8B type needs a multiple of 2"},
		// The strides.
		{same(func(o *TensorMapTiledOptions) { o.Strides = nil }), "Strides: 0 strides for 2 dimensions, want 1"},
		{same(func(o *TensorMapTiledOptions) { o.Strides = []uint64{768, 768} }), "Strides: 2 strides for 2 dimensions, want 1"},
		{same(func(o *TensorMapTiledOptions) { o.Strides[0] = 770 }), "Strides[0]: 770 bytes, want a multiple of 16 below 2^40"},
		{same(func(o *TensorMapTiledOptions) { o.Strides[0] = 1 << 40 }), "Strides[0]: 1099511627776 bytes, want a multiple of 16 below 2^40"},
		{same(func(o *TensorMapTiledOptions) {
			rank3(o)
			o.Interleave, o.Swizzle, o.Strides = driver.TensorMapInterleave32B, driver.TensorMapSwizzle32B, []uint64{768, 784}
		}), "Strides[1]: 784 bytes, want a multiple of 32"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Strides, o.Box = driver.TensorMapDataType16U4Align16B, []uint64{128, 256}, []uint64{144}, []uint32{128, 64}
		}), "Strides[0]: 144 bytes, want a multiple of 32"},
		// The element strides.
		{same(func(o *TensorMapTiledOptions) { o.ElementStrides = []uint32{1} }), "ElementStrides: 1 for 2 dimensions, want 2 (or none)"},
		{same(func(o *TensorMapTiledOptions) { o.ElementStrides = []uint32{1, 9} }), "ElementStrides[1]: 9, want 1 to 8"},
		{same(func(o *TensorMapTiledOptions) { o.ElementStrides = []uint32{0, 1} }), "ElementStrides[0]: 0, want 1 to 8"},
		// The modes.
		{same(func(o *TensorMapTiledOptions) {
			rank3(o)
			o.Interleave = driver.TensorMapInterleave32B
		}), "Swizzle: mode 0: Interleave32B needs Swizzle32B"},
		{same(func(o *TensorMapTiledOptions) {
			rank3(o)
			o.DataType, o.Dims[0], o.Box[0], o.Interleave = driver.TensorMapDataType16U6Align16B, 128, 128, driver.TensorMapInterleave16B
		}), "Interleave: the 16U6_ALIGN16B type takes no interleave"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Box, o.Swizzle = driver.TensorMapDataType16U6Align16B, []uint64{128, 256}, []uint32{128, 64}, driver.TensorMapSwizzle64B
		}), "Swizzle: mode 2: the 16U6_ALIGN16B type takes none, 128B, 128B_ATOM_32B or 128B_ATOM_64B"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Box, o.Swizzle = driver.TensorMapDataType16U4Align16B, []uint64{128, 256}, []uint32{128, 64}, driver.TensorMapSwizzle128BAtom64B
		}), "Swizzle: mode 6: the 16U4_ALIGN16B type takes none, 128B or 128B_ATOM_32B"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.OOBFill = driver.TensorMapDataTypeInt32, driver.TensorMapFloatOobFillNanRequestZeroFma
		}), "OOBFill: NaN fill needs a floating-point type, not type 3"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.OOBFill = driver.TensorMapDataType16U4Align8B, driver.TensorMapFloatOobFillNanRequestZeroFma
		}), "OOBFill: NaN fill needs a floating-point type"},
		// The buffer.
		{func(o *TensorMapTiledOptions) (uint64, int) { return tmAddr, tiledBaseSize - 1 },
			"the tensor spans 196608 bytes (Dims and Strides), the buffer has 196607"},
		{same(func(o *TensorMapTiledOptions) { o.Strides[0] = 800 }), "the tensor spans 204768 bytes"},
		{same(func(o *TensorMapTiledOptions) {
			o.Dims, o.Strides, o.Box = []uint64{4, 1 << 32, 1 << 32}, []uint64{1<<40 - 16, 1<<40 - 16}, []uint32{4, 1, 1}
		}), "the tensor spans more than 2^64 bytes"},
		// The box.
		{same(func(o *TensorMapTiledOptions) { o.Box = []uint32{32} }), "Box: 1 sizes for 2 dimensions"},
		{same(func(o *TensorMapTiledOptions) { o.Box[1] = 257 }), "Box[1]: 257 elements, want 1 to 256"},
		{same(func(o *TensorMapTiledOptions) { o.Box[1] = 0 }), "Box[1]: 0 elements, want 1 to 256"},
		{same(func(o *TensorMapTiledOptions) { o.Box[0] = 2 }), "Box[0]: 2 elements are 8 bytes, want a multiple of 16"},
		{same(func(o *TensorMapTiledOptions) { o.Swizzle = driver.TensorMapSwizzle32B }), "Box[0]: 32 elements are 128 bytes, more than the 32 bytes the swizzle spans"},
		{same(func(o *TensorMapTiledOptions) { o.Swizzle = driver.TensorMapSwizzle64B }), "more than the 64 bytes the swizzle spans"},
		{same(func(o *TensorMapTiledOptions) { o.Swizzle, o.Box[0] = driver.TensorMapSwizzle128B, 64 }), "Box[0]: 64 elements are 256 bytes, more than the 128 bytes the swizzle spans"},
		{same(func(o *TensorMapTiledOptions) { o.Swizzle, o.Box[0] = driver.TensorMapSwizzle128BAtom32B, 64 }), "more than the 128 bytes the swizzle spans"},
		{same(func(o *TensorMapTiledOptions) {
			o.DataType, o.Dims, o.Box = driver.TensorMapDataType16U6Align16B, []uint64{128, 256}, []uint32{64, 64}
		}), "Box[0]: 64: the ALIGN16B packed types need 128"},
	} {
		o := tiledBase()
		addr, size := c.mod(&o)
		err := o.Validate(driver.Deviceptr(addr), size)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "core: ") {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}

// im2colBase is a valid im2col map: an NHWC float tensor of 2 images of
// 32x32 pixels and 64 channels.
func im2colBase() TensorMapIm2colOptions {
	return TensorMapIm2colOptions{
		DataType:         driver.TensorMapDataTypeFloat32,
		Dims:             []uint64{64, 32, 32, 2},
		Strides:          []uint64{64 * 4, 64 * 4 * 32, 64 * 4 * 32 * 32},
		LowerCorner:      []int32{-1, -1},
		UpperCorner:      []int32{-1, -1},
		ChannelsPerPixel: 64,
		PixelsPerColumn:  128,
	}
}

const im2colBaseSize = 64 * 4 * 32 * 32 * 2

func TestTensorMapIm2colValid(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(o *TensorMapIm2colOptions)
	}{
		{"base", func(o *TensorMapIm2colOptions) {}},
		{"swizzle 128B with 32 channels", func(o *TensorMapIm2colOptions) {
			o.Swizzle, o.ChannelsPerPixel = driver.TensorMapSwizzle128B, 32
		}},
		{"rank 3 corners", func(o *TensorMapIm2colOptions) {
			o.Dims, o.Strides = []uint64{64, 1024, 2}, []uint64{256, 256 * 1024}
			o.LowerCorner, o.UpperCorner = []int32{-32768}, []int32{32767}
		}},
		{"rank 5 corners", func(o *TensorMapIm2colOptions) {
			o.Dims, o.Strides = []uint64{64, 8, 8, 8, 2}, []uint64{256, 256 * 8, 256 * 64, 256 * 512}
			o.LowerCorner, o.UpperCorner = []int32{-16, -16, -16}, []int32{15, 15, 15}
		}},
		{"the most pixels and channels", func(o *TensorMapIm2colOptions) {
			o.DataType = driver.TensorMapDataTypeUint8
			o.Dims, o.Strides = []uint64{256, 32, 32, 2}, []uint64{256, 256 * 32, 256 * 32 * 32}
			o.ChannelsPerPixel, o.PixelsPerColumn = 256, 1024
		}},
	} {
		o := im2colBase()
		c.mod(&o)
		if err := o.Validate(tmAddr, im2colBaseSize); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestTensorMapIm2colRules(t *testing.T) {
	for _, c := range []struct {
		mod  func(o *TensorMapIm2colOptions)
		want string
	}{
		{func(o *TensorMapIm2colOptions) { o.Dims, o.Strides = []uint64{64, 32}, []uint64{256} }, "TensorMapIm2colOptions.Dims: rank 2, want 3 to 5 dimensions"},
		{func(o *TensorMapIm2colOptions) { o.Strides[2] = 100 }, "TensorMapIm2colOptions.Strides[2]: 100 bytes"},
		{func(o *TensorMapIm2colOptions) { o.LowerCorner = []int32{-1} }, "LowerCorner: 1 offsets, want 2 (one per spatial dimension at rank 4)"},
		{func(o *TensorMapIm2colOptions) { o.UpperCorner = nil }, "UpperCorner: 0 offsets, want 2"},
		{func(o *TensorMapIm2colOptions) { o.LowerCorner[1] = -129 }, "LowerCorner[1]: -129, want -128 to 127 at rank 4"},
		{func(o *TensorMapIm2colOptions) { o.UpperCorner[0] = 128 }, "UpperCorner[0]: 128, want -128 to 127 at rank 4"},
		{func(o *TensorMapIm2colOptions) {
			o.Dims, o.Strides = []uint64{64, 1024, 2}, []uint64{256, 256 * 1024}
			o.LowerCorner, o.UpperCorner = []int32{-32769}, []int32{0}
		}, "LowerCorner[0]: -32769, want -32768 to 32767 at rank 3"},
		{func(o *TensorMapIm2colOptions) {
			o.Dims, o.Strides = []uint64{64, 8, 8, 8, 2}, []uint64{256, 256 * 8, 256 * 64, 256 * 512}
			o.LowerCorner, o.UpperCorner = []int32{0, 0, 0}, []int32{0, 16, 0}
		}, "UpperCorner[1]: 16, want -16 to 15 at rank 5"},
		{func(o *TensorMapIm2colOptions) { o.LowerCorner, o.UpperCorner = []int32{0, 100}, []int32{0, -100} },
			"the bounding box is empty in spatial dimension 1 (32 pixels, corners 100 and -100)"},
		{func(o *TensorMapIm2colOptions) { o.ChannelsPerPixel = 0 }, "ChannelsPerPixel: 0, want 1 to 256"},
		{func(o *TensorMapIm2colOptions) { o.ChannelsPerPixel = 257 }, "ChannelsPerPixel: 257, want 1 to 256"},
		{func(o *TensorMapIm2colOptions) {
			o.DataType, o.Dims[0], o.Strides = driver.TensorMapDataType16U4Align16B, 256, []uint64{256, 256 * 32, 256 * 32 * 32}
		}, "ChannelsPerPixel: 64: the ALIGN16B packed types need 128"},
		{func(o *TensorMapIm2colOptions) { o.PixelsPerColumn = 0 }, "PixelsPerColumn: 0, want 1 to 1024"},
		{func(o *TensorMapIm2colOptions) { o.PixelsPerColumn = 1025 }, "PixelsPerColumn: 1025, want 1 to 1024"},
		{func(o *TensorMapIm2colOptions) { o.Swizzle = driver.TensorMapSwizzle128B },
			"ChannelsPerPixel: 64 elements are 256 bytes, more than the 128 bytes the swizzle spans"},
		{func(o *TensorMapIm2colOptions) { o.Swizzle, o.ChannelsPerPixel = driver.TensorMapSwizzle32B, 16 },
			"more than the 32 bytes the swizzle spans"},
		{func(o *TensorMapIm2colOptions) { o.ElementStrides = []uint32{1, 1, 1, 10} }, "ElementStrides[3]: 10, want 1 to 8"},
		{func(o *TensorMapIm2colOptions) { o.Dims[3] = 3 }, "the tensor spans 786432 bytes (Dims and Strides), the buffer has 524288"},
	} {
		o := im2colBase()
		c.mod(&o)
		err := o.Validate(tmAddr, im2colBaseSize)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "core: ") {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}

func TestTensorMapSizes(t *testing.T) {
	for _, c := range []struct {
		t    driver.TensorMapDataType
		n    uint64
		want uint64
	}{
		{driver.TensorMapDataTypeUint8, 3, 3},
		{driver.TensorMapDataTypeBfloat16, 3, 6},
		{driver.TensorMapDataTypeTfloat32Ftz, 3, 12},
		{driver.TensorMapDataTypeInt64, 3, 24},
		{driver.TensorMapDataType16U4Align8B, 32, 16},
		{driver.TensorMapDataType16U4Align16B, 32, 32},
		{driver.TensorMapDataType16U6Align16B, 128, 128},
	} {
		if got := tmBytes(c.t, c.n); got != c.want {
			t.Errorf("tmBytes(type %d, %d) = %d, want %d", c.t, c.n, got, c.want)
		}
	}
	o := tiledBase()
	if got := o.smemBytes(); got != 64*32*4 {
		t.Errorf("a 32x64 float box: %d bytes of shared memory, want %d", got, 64*32*4)
	}
	// Without interleave the innermost element stride is ignored.
	o.ElementStrides = []uint32{8, 2}
	if got := o.smemBytes(); got != 32*32*4 {
		t.Errorf("a 32x64 float box with element strides 8, 2: %d bytes, want %d", got, 32*32*4)
	}
}

func TestTensorMapDeviceRules(t *testing.T) {
	ampere := &Device{name: "fake A100", major: 8, maxSmemOptin: 166912}
	hopper := &Device{name: "fake H100", major: 9, maxSmemOptin: 232448}
	blackwell := &Device{name: "fake B200", major: 10, maxSmemOptin: 232448}
	f32 := driver.TensorMapDataTypeFloat32
	for _, c := range []struct {
		dev  *Device
		t    driver.TensorMapDataType
		s    driver.TensorMapSwizzle
		smem uint64
		want string // "" for no error
	}{
		{ampere, f32, 0, 8192, "tensor maps need compute capability 9.0, device 0 (fake A100, sm_80) is 8.0"},
		{hopper, f32, driver.TensorMapSwizzle128B, 8192, ""},
		{hopper, f32, driver.TensorMapSwizzle128BAtom32B, 8192, "Swizzle: the 128-byte atom swizzles need compute capability 10.0"},
		{hopper, driver.TensorMapDataType16U4Align8B, 0, 8192, "DataType: the packed sub-byte types need compute capability 10.0"},
		{blackwell, driver.TensorMapDataType16U4Align8B, driver.TensorMapSwizzle128BAtom64B, 8192, ""},
		{hopper, f32, 0, 232448, ""},
		{hopper, f32, 0, 232449, "a box is 232449 bytes, more than the 232448 bytes of shared memory a block may have"},
	} {
		err := checkTensorMapDevice("TensorMapTiledOptions", c.dev, c.t, c.s, c.smem)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v, type %d, swizzle %d: %v", c.dev, c.t, c.s, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v, type %d, swizzle %d: got %v, want %q", c.dev, c.t, c.s, err, c.want)
		}
	}
}

// hostOnlyMR is a resource whose memory kernels cannot use.
type hostOnlyMR struct{ fakeMR }

func (m *hostOnlyMR) DeviceAccessible() bool { return false }

func TestTensorMapMisuse(t *testing.T) {
	opts := tiledBase()
	if _, err := NewTensorMapTiled(nil, &opts); err == nil || !strings.Contains(err.Error(), "core: NewTensorMapTiled: nil *Buffer") {
		t.Errorf("nil buffer: %v", err)
	}
	host := NewBuffer(tmAddr, tiledBaseSize, &hostOnlyMR{}, nil)
	defer host.Close()
	if _, err := NewTensorMapIm2col(host, new(im2colBase())); err == nil || !strings.Contains(err.Error(), "is not device-accessible") {
		t.Errorf("host memory: %v", err)
	}
	nodev := NewBuffer(tmAddr, tiledBaseSize, &fakeMR{}, nil)
	if _, err := NewTensorMapTiled(nodev, &opts); err == nil || !strings.Contains(err.Error(), "has no device") {
		t.Errorf("a resource without a device: %v", err)
	}
	var zero TensorMap
	if _, err := zero.WithBuffer(nodev); err == nil || !strings.Contains(err.Error(), "was not made by NewTensorMapTiled") {
		t.Errorf("WithBuffer of a zero TensorMap: %v", err)
	}
	if err := packTensorMap(make([]byte, tensorMapSize), &zero); !errors.Is(err, ErrClosed) {
		t.Errorf("a zero TensorMap as an argument: %v, want ErrClosed", err)
	}
}

// TestPackArgsTensorMap: a *TensorMap is a 128-byte argument, copied as
// it is, and refused once its Buffer (or the buffer it views) is closed.
func TestPackArgsTensorMap(t *testing.T) {
	b := &Buffer{ptr: tmAddr, size: 4096}
	m := &TensorMap{buf: b}
	for i := range m.desc {
		m.desc[i] = byte(i*7 + 1)
	}
	x := &Buffer{ptr: 0x1000, size: 64}
	lay := []ArgumentInfo{{0, 128}, {128, 8}, {136, 4}}
	buf := make([]byte, 144)
	if err := packArgs(buf, "tma", lay, []any{m, x, int32(5)}); err != nil {
		t.Fatal(err)
	}
	for i := range tensorMapSize {
		if buf[i] != m.desc[i] {
			t.Fatalf("byte %d of the descriptor: %d, want %d", i, buf[i], m.desc[i])
		}
	}
	if got := uint64(buf[128]) | uint64(buf[129])<<8 | uint64(buf[130])<<16; got != 0x1000 {
		t.Errorf("the pointer after the descriptor: %#x", got)
	}
	for _, c := range []struct {
		args []any
		lay  []ArgumentInfo
		want string
	}{
		{[]any{(*TensorMap)(nil), x, int32(5)}, lay, "core: Launch tma: argument 0 is a nil *TensorMap"},
		{[]any{m, m, int32(5)}, lay, "argument 1 is *core.TensorMap (128 bytes) but parameter 1 takes 8 bytes"},
		{[]any{m, x, int32(5)}, []ArgumentInfo{{0, 64}, {64, 8}, {72, 4}}, "argument 0 is *core.TensorMap (128 bytes) but parameter 0 takes 64 bytes"},
		{[]any{*m, x, int32(5)}, lay, "argument 0 has unsupported type core.TensorMap"},
	} {
		err := packArgs(make([]byte, 144), "tma", c.lay, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	// A view's map fails once the viewed buffer is closed.
	root := &Buffer{ptr: tmAddr, size: 8192}
	view := &Buffer{ptr: tmAddr + 4096, size: 4096, parent: root}
	mv := &TensorMap{buf: view}
	if err := packArgs(make([]byte, 144), "tma", lay, []any{mv, x, int32(5)}); err != nil {
		t.Fatal(err)
	}
	root.life.close()
	err := packArgs(make([]byte, 144), "tma", lay, []any{mv, x, int32(5)})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "argument 0 is a TensorMap of a closed Buffer") {
		t.Errorf("the map of a view of a closed buffer: %v", err)
	}
	b.life.close()
	if err := packArgs(make([]byte, 144), "tma", lay, []any{m, x, int32(5)}); !errors.Is(err, ErrClosed) {
		t.Errorf("the map of a closed buffer: %v, want ErrClosed", err)
	}
}
