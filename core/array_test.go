package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// The checks of arrays, textures and surfaces, without a GPU: every bad
// argument is an error naming it, found before the driver is called.

func wantErrParts(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", what, err, p)
		}
	}
}

func TestArrayShapeChecks(t *testing.T) {
	for _, c := range []struct {
		ext    Extent
		opts   *ArrayOptions
		levels int
		want   []string
	}{
		{Extent{Width: 4}, &ArrayOptions{Format: driver.AdFormatNv12}, 0, []string{"ArrayOptions.Format", "AdFormatFloat"}},
		{Extent{Width: 4}, &ArrayOptions{Format: driver.AdFormatUnormInt8X4}, 0, []string{"ArrayOptions.Format"}},
		{Extent{Width: 4}, &ArrayOptions{Channels: 3}, 0, []string{"ArrayOptions.Channels 3", "1, 2 or 4"}},
		{Extent{Width: 4}, &ArrayOptions{Channels: -1}, 0, []string{"ArrayOptions.Channels -1"}},
		{Extent{}, nil, 0, []string{"Extent 0", "Width must be at least 1"}},
		{Extent{Width: -3, Height: 2}, nil, 0, []string{"Width must be at least 1"}},
		{Extent{Width: 1 << 31}, nil, 0, []string{"Width"}},
		{Extent{Width: 4, Height: -1}, nil, 0, []string{"Height and Depth must be 0"}},
		{Extent{Width: 4, Height: 2, Depth: -1}, nil, 0, []string{"Height and Depth must be 0"}},
		{Extent{Width: 4, Depth: 2}, nil, 0, []string{"a 3-D array needs a Height"}},
		{Extent{Width: 4}, &ArrayOptions{Layers: -2}, 0, []string{"ArrayOptions.Layers -2"}},
		{Extent{Width: 4, Height: 4, Depth: 4}, &ArrayOptions{Layers: 2}, 0, []string{"Depth must be 0", "Layers 2"}},
		{Extent{Width: 4}, &ArrayOptions{TextureGather: true}, 0, []string{"TextureGather", "2-D arrays", "1-D 4 float32x1 array"}},
		{Extent{Width: 4, Height: 4, Depth: 4}, &ArrayOptions{TextureGather: true}, 0, []string{"TextureGather", "3-D 4x4x4"}},
		{Extent{Width: 4, Height: 4}, &ArrayOptions{TextureGather: true, Layers: 2}, 0, []string{"TextureGather", "layered"}},
		{Extent{Width: 16, Height: 8}, nil, 6, []string{"6 mipmap levels", "at most 5"}},
		{Extent{Width: 1}, nil, 2, []string{"2 mipmap levels", "at most 1"}},
	} {
		_, err := arrayShapeOf("NewArray", c.ext, c.opts, c.levels)
		wantErrParts(t, fmt.Sprintf("%v %+v levels %d", c.ext, c.opts, c.levels), err, append([]string{"core: NewArray: "}, c.want...)...)
	}
}

func TestArrayShapeDescriptors(t *testing.T) {
	for _, c := range []struct {
		ext                Extent
		opts               *ArrayOptions
		desc               driver.Array3DDescriptor
		dims, rows, slices int
		bytes              int
		what               string
	}{
		{Extent{Width: 640, Height: 480}, nil,
			driver.Array3DDescriptor{Width: 640, Height: 480, Format: driver.AdFormatFloat, NumChannels: 1},
			2, 480, 1, 640 * 480 * 4, "2-D 640x480 float32x1 array"},
		{Extent{Width: 7}, &ArrayOptions{Format: driver.AdFormatUnsignedInt8, Channels: 4, Layers: 3, SurfaceLoadStore: true},
			driver.Array3DDescriptor{Width: 7, Depth: 3, Format: driver.AdFormatUnsignedInt8, NumChannels: 4, Flags: driver.Array3DLayered | driver.Array3DSurfaceLdst},
			1, 1, 3, 7 * 4 * 3, "1-D layered 7 (3 layers) uint8x4 array"},
		{Extent{Width: 5, Height: 3}, &ArrayOptions{Format: driver.AdFormatHalf, Channels: 2, Layers: 4},
			driver.Array3DDescriptor{Width: 5, Height: 3, Depth: 4, Format: driver.AdFormatHalf, NumChannels: 2, Flags: driver.Array3DLayered},
			2, 3, 4, 5 * 3 * 4 * 4, "2-D layered 5x3 (4 layers) halfx2 array"},
		{Extent{Width: 6, Height: 5, Depth: 4}, &ArrayOptions{Format: driver.AdFormatSignedInt16, Channels: 2},
			driver.Array3DDescriptor{Width: 6, Height: 5, Depth: 4, Format: driver.AdFormatSignedInt16, NumChannels: 2},
			3, 5, 4, 6 * 5 * 4 * 4, "3-D 6x5x4 int16x2 array"},
		{Extent{Width: 64, Height: 32}, &ArrayOptions{TextureGather: true},
			driver.Array3DDescriptor{Width: 64, Height: 32, Format: driver.AdFormatFloat, NumChannels: 1, Flags: driver.Array3DTextureGather},
			2, 32, 1, 64 * 32 * 4, "2-D 64x32 float32x1 array"},
	} {
		s, err := arrayShapeOf("NewArray", c.ext, c.opts, 0)
		if err != nil {
			t.Errorf("%v %+v: %v", c.ext, c.opts, err)
			continue
		}
		if d := s.descriptor(); d != c.desc {
			t.Errorf("%v %+v: descriptor %+v, want %+v", c.ext, c.opts, d, c.desc)
		}
		if s.dims() != c.dims || s.rows() != c.rows || s.slices() != c.slices || s.bytes() != c.bytes || s.what() != c.what {
			t.Errorf("%v %+v: dims %d rows %d slices %d bytes %d %q, want %d %d %d %d %q", c.ext, c.opts,
				s.dims(), s.rows(), s.slices(), s.bytes(), s.what(), c.dims, c.rows, c.slices, c.bytes, c.what)
		}
	}
	if got := maxLevels(Extent{Width: 16, Height: 8}); got != 5 {
		t.Errorf("maxLevels(16x8) = %d, want 5", got)
	}
	if got := maxLevels(Extent{Width: 3, Height: 1, Depth: 9}); got != 4 {
		t.Errorf("maxLevels(3x1x9) = %d, want 4", got)
	}
}

// fakeLimits answers device attributes from a map: every limit is 100
// unless set, and a missing entry with a negative key fails.
func fakeLimits(set map[driver.DeviceAttribute]int, fail driver.DeviceAttribute) func(driver.DeviceAttribute) (int, error) {
	return func(a driver.DeviceAttribute) (int, error) {
		if a == fail {
			return 0, driver.ErrorInvalidValue
		}
		if v, ok := set[a]; ok {
			return v, nil
		}
		return 100, nil
	}
}

func TestArrayLimitChecks(t *testing.T) {
	type A = driver.DeviceAttribute
	for _, c := range []struct {
		name      string
		ext       Extent
		opts      *ArrayOptions
		mipmapped bool
		set       map[A]int
		fail      A
		want      []string // nil: fits
	}{
		{"1-D fits", Extent{Width: 100}, nil, false, nil, 0, nil},
		{"1-D", Extent{Width: 101}, nil, false, nil, 0, []string{"Width 101 is more than the device's 100 (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH)"}},
		{"1-D surface", Extent{Width: 60}, &ArrayOptions{SurfaceLoadStore: true}, false,
			map[A]int{driver.DeviceAttributeMaximumSurface1DWidth: 50}, 0, []string{"Width 60", "MAXIMUM_SURFACE1D_WIDTH"}},
		{"1-D mipmapped", Extent{Width: 60}, nil, true,
			map[A]int{driver.DeviceAttributeMaximumTexture1DMipmappedWidth: 50}, 0, []string{"Width 60", "MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH"}},
		{"2-D height", Extent{Width: 10, Height: 101}, nil, false, nil, 0, []string{"Height 101", "MAXIMUM_TEXTURE2D_HEIGHT"}},
		{"2-D surface", Extent{Width: 10, Height: 60}, &ArrayOptions{SurfaceLoadStore: true}, false,
			map[A]int{driver.DeviceAttributeMaximumSurface2DHeight: 50}, 0, []string{"Height 60", "MAXIMUM_SURFACE2D_HEIGHT"}},
		{"2-D gather", Extent{Width: 60, Height: 10}, &ArrayOptions{TextureGather: true}, false,
			map[A]int{driver.DeviceAttributeMaximumTexture2DGatherWidth: 50}, 0, []string{"Width 60", "MAXIMUM_TEXTURE2D_GATHER_WIDTH"}},
		{"2-D mipmapped", Extent{Width: 10, Height: 60}, nil, true,
			map[A]int{driver.DeviceAttributeMaximumTexture2DMipmappedHeight: 50}, 0, []string{"Height 60", "MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT"}},
		{"3-D fits the alternate limits", Extent{Width: 10, Height: 10, Depth: 150}, nil, false,
			map[A]int{driver.DeviceAttributeMaximumTexture3DDepthAlternate: 200}, 0, nil},
		{"3-D fits neither", Extent{Width: 50, Height: 10, Depth: 150}, nil, false,
			map[A]int{driver.DeviceAttributeMaximumTexture3DDepthAlternate: 200, driver.DeviceAttributeMaximumTexture3DWidthAlternate: 40}, 0,
			[]string{"the 3-D 50x10x150 float32x1 array does not fit the device: Depth 150 is more than the device's 100 (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH)",
				"and with the alternate 3-D limits Width 50 is more than the device's 40 (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE)"}},
		{"3-D surface", Extent{Width: 10, Height: 10, Depth: 60}, &ArrayOptions{SurfaceLoadStore: true}, false,
			map[A]int{driver.DeviceAttributeMaximumSurface3DDepth: 50}, 0, []string{"Depth 60", "MAXIMUM_SURFACE3D_DEPTH"}},
		{"1-D layered", Extent{Width: 10}, &ArrayOptions{Layers: 101}, false, nil, 0, []string{"Layers 101", "MAXIMUM_TEXTURE1D_LAYERED_LAYERS"}},
		{"1-D layered surface", Extent{Width: 60}, &ArrayOptions{Layers: 2, SurfaceLoadStore: true}, false,
			map[A]int{driver.DeviceAttributeMaximumSurface1DLayeredWidth: 50}, 0, []string{"Width 60", "MAXIMUM_SURFACE1D_LAYERED_WIDTH"}},
		{"2-D layered", Extent{Width: 10, Height: 101}, &ArrayOptions{Layers: 2}, false, nil, 0, []string{"Height 101"}},
		{"2-D layered surface", Extent{Width: 10, Height: 10}, &ArrayOptions{Layers: 60, SurfaceLoadStore: true}, false,
			map[A]int{driver.DeviceAttributeMaximumSurface2DLayeredLayers: 50}, 0, []string{"Layers 60", "MAXIMUM_SURFACE2D_LAYERED_LAYERS"}},
		{"attribute error", Extent{Width: 10, Height: 10}, nil, false, nil, driver.DeviceAttributeMaximumTexture2DHeight,
			[]string{"reading the device's limit on Height", "CUDA_ERROR_INVALID_VALUE"}},
	} {
		s, err := arrayShapeOf("NewArray", c.ext, c.opts, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = checkArrayLimits("NewArray", &s, c.mipmapped, fakeLimits(c.set, c.fail))
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantErrParts(t, c.name, err, c.want...)
	}
}

func TestArrayConstructorChecks(t *testing.T) {
	// The options are checked first, then the device: without a GPU.
	_, err := NewArray(nil, Extent{Width: 4}, &ArrayOptions{Channels: 3})
	wantErrParts(t, "NewArray bad channels", err, "ArrayOptions.Channels")
	_, err = NewArray(nil, Extent{Width: 4}, nil)
	wantErrParts(t, "NewArray nil device", err, "core: NewArray: nil *Device")
	_, err = NewMipmappedArray(nil, Extent{Width: 4}, 0, nil)
	wantErrParts(t, "NewMipmappedArray 0 levels", err, "0 mipmap levels, want at least 1")
	_, err = NewMipmappedArray(nil, Extent{Width: 4}, 4, nil)
	wantErrParts(t, "NewMipmappedArray 4 levels of 4", err, "4 mipmap levels", "at most 3")
	_, err = NewMipmappedArray(nil, Extent{Width: 4}, 3, nil)
	wantErrParts(t, "NewMipmappedArray nil device", err, "nil *Device")
	var m *MipmappedArray
	_, err = m.Level(0)
	wantErrParts(t, "Level of nil", err, "nil *MipmappedArray")
	m = &MipmappedArray{levels: 3}
	_, err = m.Level(3)
	wantErrParts(t, "Level(3) of 3", err, "levels 0 to 2")
	_, err = m.Level(-1)
	wantErrParts(t, "Level(-1)", err, "levels 0 to 2")
	m.life.close()
	if _, err := m.Level(1); !errors.Is(err, ErrClosed) {
		t.Errorf("Level of a closed MipmappedArray: %v, want ErrClosed", err)
	}
	// Close of nothing, twice.
	if err := (*Array)(nil).Close(); err != nil {
		t.Error(err)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
}

// fakeArray is an Array value for the checks that come before the
// driver: its handle is never used.
func fakeArray(t *testing.T, ext Extent, opts *ArrayOptions) *Array {
	t.Helper()
	s, err := arrayShapeOf("test", ext, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &Array{shape: s}
}

func TestArrayElementChecks(t *testing.T) {
	f4 := &fakeArray(t, Extent{Width: 2}, &ArrayOptions{Channels: 4}).shape
	h2 := &fakeArray(t, Extent{Width: 2}, &ArrayOptions{Format: driver.AdFormatHalf, Channels: 2}).shape
	i8 := &fakeArray(t, Extent{Width: 2}, &ArrayOptions{Format: driver.AdFormatSignedInt8}).shape
	type xyzw struct{ X, Y, Z, W float32 }
	type mixed struct {
		X    float32
		Y, Z int32
		W    float32
	}
	ok := []error{
		checkArrayElem[float32]("f", f4), checkArrayElem[[4]float32]("f", f4), checkArrayElem[xyzw]("f", f4),
		checkArrayElem[uint16]("f", h2), checkArrayElem[[2]uint16]("f", h2),
		checkArrayElem[int8]("f", i8),
	}
	for i, err := range ok {
		if err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	wantErrParts(t, "int32 for float", checkArrayElem[int32]("CopyToArray", f4), "core: CopyToArray: element type int32 does not fit the 1-D 2 float32x4 array", "want float32 (one channel) or a 16-byte type of 4 float32s")
	wantErrParts(t, "[2]float32 for float4", checkArrayElem[[2]float32]("f", f4), "[2]float32")
	wantErrParts(t, "mixed struct", checkArrayElem[mixed]("f", f4), "core.mixed")
	wantErrParts(t, "float32 for half2", checkArrayElem[float32]("f", h2), "want uint16 (one channel)")
	wantErrParts(t, "uint8 for int8", checkArrayElem[uint8]("f", i8), "want int8")
	wantErrParts(t, "int64", checkArrayElem[int64]("f", i8), "int64")
}

func TestArrayCopyChecks(t *testing.T) {
	a := fakeArray(t, Extent{Width: 3, Height: 2}, nil) // 6 float32s
	wantErrParts(t, "short slice", CopyToArray(a, make([]float32, 5)), "core: CopyToArray: 20 bytes (5 float32) for a 2-D 3x2 float32x1 array of 24 bytes")
	wantErrParts(t, "long slice", CopyFromArray(make([]float32, 7), a), "core: CopyFromArray: 28 bytes (7 float32)")
	wantErrParts(t, "wrong type", CopyToArray(a, make([]int32, 6)), "element type int32")
	wantErrParts(t, "pointers", CopyToArray(a, make([]*float32, 6)), "holds Go pointers")
	wantErrParts(t, "nil array", CopyToArray(nil, make([]float32, 6)), "nil *Array")
	wantErrParts(t, "nil array", CopyFromArray(make([]float32, 6), (*Array)(nil)), "nil *Array")
	wantErrParts(t, "nil buffer", a.CopyFromBuffer(nil), "core: Array.CopyFromBuffer: nil *Buffer")
	wantErrParts(t, "nil array", (*Array)(nil).CopyToBuffer(&Buffer{}), "core: Array.CopyToBuffer: nil *Array")
	wantErrParts(t, "small buffer", a.CopyToBuffer(&Buffer{size: 20}), "the 2-D 3x2 float32x1 array is 24 bytes, the buffer 20")
	closed := &Buffer{size: 100}
	closed.life.close()
	if err := a.CopyFromBuffer(closed); !errors.Is(err, ErrClosed) {
		t.Errorf("closed buffer: %v, want ErrClosed", err)
	}
	a.life.close()
	if err := CopyToArray(a, make([]float32, 6)); !errors.Is(err, ErrClosed) {
		t.Errorf("closed array: %v, want ErrClosed", err)
	}
}

func TestTextureOptionChecks(t *testing.T) {
	f1 := &fakeArray(t, Extent{Width: 4, Height: 4}, nil).shape
	u8 := &fakeArray(t, Extent{Width: 4, Height: 4}, &ArrayOptions{Format: driver.AdFormatUnsignedInt8, Channels: 4}).shape
	i32 := &fakeArray(t, Extent{Width: 4, Height: 4}, &ArrayOptions{Format: driver.AdFormatSignedInt32}).shape
	line := &fakeArray(t, Extent{Width: 4}, nil).shape
	for _, c := range []struct {
		name   string
		s      *arrayShape
		levels int
		o      *TextureOptions
		want   []string
	}{
		{"unknown address mode", f1, 0, &TextureOptions{AddressMode: [3]AddressMode{0, 9}}, []string{"TextureOptions.AddressMode[1]: unknown mode 9"}},
		{"wrap unnormalized", f1, 0, &TextureOptions{AddressMode: [3]AddressMode{AddressWrap}}, []string{"AddressMode[0]", "AddressWrap needs NormalizedCoords"}},
		{"mirror unnormalized", f1, 0, &TextureOptions{AddressMode: [3]AddressMode{0, AddressMirror}}, []string{"AddressMode[1]", "AddressMirror needs NormalizedCoords"}},
		{"unknown filter", f1, 0, &TextureOptions{Filter: 2}, []string{"TextureOptions.Filter: unknown filter 2"}},
		{"unknown mipmap filter", f1, 0, &TextureOptions{MipmapFilter: -1}, []string{"TextureOptions.MipmapFilter: unknown filter -1"}},
		{"unknown read mode", f1, 0, &TextureOptions{ReadMode: 5}, []string{"TextureOptions.ReadMode: unknown mode 5"}},
		{"normalized float of float", f1, 0, &TextureOptions{ReadMode: ReadNormalizedFloat}, []string{"ReadNormalizedFloat is for 8- and 16-bit integer channels, not float32"}},
		{"normalized float of int32", i32, 0, &TextureOptions{ReadMode: ReadNormalizedFloat}, []string{"not int32"}},
		{"linear of integers", u8, 0, &TextureOptions{Filter: FilterLinear}, []string{"TextureOptions.Filter: FilterLinear needs float results", "uint8 channels"}},
		{"linear mipmaps of integers", i32, 3, &TextureOptions{MipmapFilter: FilterLinear}, []string{"TextureOptions.MipmapFilter: FilterLinear needs float results"}},
		{"anisotropy", f1, 0, &TextureOptions{MaxAnisotropy: 17}, []string{"MaxAnisotropy: 17, want 0 to 16"}},
		{"mipmap filter of an Array", f1, 0, &TextureOptions{MipmapFilter: FilterLinear}, []string{"MipmapFilter: set for an Array"}},
		{"bias of an Array", f1, 0, &TextureOptions{MipmapLevelBias: 1}, []string{"MipmapLevelBias: set for an Array"}},
		{"clamps of an Array", f1, 0, &TextureOptions{MaxMipmapLevelClamp: 1}, []string{"level clamps are set for an Array"}},
		{"clamps reversed", f1, 4, &TextureOptions{MinMipmapLevelClamp: 2, MaxMipmapLevelClamp: 1}, []string{"MaxMipmapLevelClamp: the clamps 2 to 1"}},
		{"negative clamp", f1, 4, &TextureOptions{MinMipmapLevelClamp: -1, MaxMipmapLevelClamp: 1}, []string{"the clamps -1 to 1"}},
		{"NaN bias", f1, 4, &TextureOptions{MipmapLevelBias: float32(math.NaN())}, []string{"MipmapLevelBias: NaN is not a finite number"}},
	} {
		_, err := c.o.textureDesc("NewTextureObject", c.s, c.levels)
		wantErrParts(t, c.name, err, append([]string{"core: NewTextureObject: "}, c.want...)...)
	}

	// What the accepted options become.
	d, err := (*TextureOptions)(nil).textureDesc("f", u8, 0)
	if err != nil || d.Flags != driver.TrsfReadAsInteger || d.FilterMode != driver.TrFilterModePoint || d.AddressMode != [3]driver.AddressMode{1, 1, 1} {
		t.Errorf("nil options of uint8: %+v, %v; want integer reads, point filter, clamp", d, err)
	}
	d, err = (&TextureOptions{Filter: FilterLinear, ReadMode: ReadNormalizedFloat, NormalizedCoords: true,
		AddressMode: [3]AddressMode{AddressWrap, AddressMirror, AddressBorder}, BorderColor: [4]float32{1, 2, 3, 4}, MaxAnisotropy: 8}).textureDesc("f", u8, 0)
	if err != nil || d.Flags != driver.TrsfNormalizedCoordinates || d.FilterMode != driver.TrFilterModeLinear ||
		d.AddressMode != [3]driver.AddressMode{driver.TrAddressModeWrap, driver.TrAddressModeMirror, driver.TrAddressModeBorder} ||
		d.BorderColor != [4]float32{1, 2, 3, 4} || d.MaxAnisotropy != 8 {
		t.Errorf("normalized linear uint8: %+v, %v", d, err)
	}
	d, err = (&TextureOptions{Filter: FilterLinear}).textureDesc("f", f1, 0)
	if err != nil || d.Flags != 0 || d.FilterMode != driver.TrFilterModeLinear {
		t.Errorf("linear float: %+v, %v; want no flags (floats are never read as integers)", d, err)
	}
	// Wrap in an unused dimension needs nothing.
	if _, err := (&TextureOptions{AddressMode: [3]AddressMode{AddressClamp, AddressWrap}}).textureDesc("f", line, 0); err != nil {
		t.Errorf("wrap in y of a 1-D array: %v", err)
	}
	// Mipmaps: both clamps 0 mean all levels.
	d, err = (&TextureOptions{MipmapFilter: FilterLinear, MipmapLevelBias: 0.5}).textureDesc("f", f1, 4)
	if err != nil || d.MinMipmapLevelClamp != 0 || d.MaxMipmapLevelClamp != 3 || d.MipmapFilterMode != driver.TrFilterModeLinear || d.MipmapLevelBias != 0.5 {
		t.Errorf("mipmapped defaults: %+v, %v; want clamps 0 to 3", d, err)
	}
	d, err = (&TextureOptions{MinMipmapLevelClamp: 1, MaxMipmapLevelClamp: 2}).textureDesc("f", f1, 4)
	if err != nil || d.MinMipmapLevelClamp != 1 || d.MaxMipmapLevelClamp != 2 {
		t.Errorf("mipmapped clamps: %+v, %v", d, err)
	}
}

func TestTextureObjectChecks(t *testing.T) {
	_, err := NewTextureObject(nil, nil)
	wantErrParts(t, "nil resource", err, "core: NewTextureObject: nil TextureResource")
	_, err = NewTextureObject((*Array)(nil), nil)
	wantErrParts(t, "nil *Array", err, "nil TextureResource")
	_, err = NewTextureObject((*MipmappedArray)(nil), nil)
	wantErrParts(t, "nil *MipmappedArray", err, "nil TextureResource")
	a := fakeArray(t, Extent{Width: 4, Height: 4}, &ArrayOptions{Format: driver.AdFormatUnsignedInt16})
	_, err = NewTextureObject(a, &TextureOptions{Filter: FilterLinear})
	wantErrParts(t, "linear of uint16", err, "FilterLinear needs float results")
	a.life.close()
	if _, err := NewTextureObject(a, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("texture of a closed array: %v, want ErrClosed", err)
	}

	_, err = NewSurfaceObject(nil)
	wantErrParts(t, "nil surface array", err, "core: NewSurfaceObject: nil *Array")
	_, err = NewSurfaceObject(fakeArray(t, Extent{Width: 4, Height: 4}, nil))
	wantErrParts(t, "no SurfaceLoadStore", err, "2-D 4x4 float32x1 array was made without ArrayOptions.SurfaceLoadStore")
	b := fakeArray(t, Extent{Width: 4, Height: 4}, &ArrayOptions{SurfaceLoadStore: true})
	b.life.close()
	if _, err := NewSurfaceObject(b); !errors.Is(err, ErrClosed) {
		t.Errorf("surface of a closed array: %v, want ErrClosed", err)
	}
	if err := (*TextureObject)(nil).Close(); err != nil {
		t.Error(err)
	}
	if err := (*SurfaceObject)(nil).Close(); err != nil {
		t.Error(err)
	}
}

// TestPackTextureArgs packs texture and surface objects as kernel
// arguments: their 64-bit handles, or ErrClosed once they or their
// arrays are closed.
func TestPackTextureArgs(t *testing.T) {
	params := []ArgumentInfo{{0, 8}, {8, 8}, {16, 4}}
	a := fakeArray(t, Extent{Width: 4, Height: 4}, &ArrayOptions{SurfaceLoadStore: true})
	tex := &TextureObject{handle: 0x1122334455667788, res: a}
	surf := &SurfaceObject{handle: 0x0102030405060708, arr: a}
	buf := make([]byte, 20)
	if err := packArgs(buf, "k", params, []any{tex, surf, int32(7)}); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if le.Uint64(buf) != 0x1122334455667788 || le.Uint64(buf[8:]) != 0x0102030405060708 || le.Uint32(buf[16:]) != 7 {
		t.Errorf("packed % x", buf)
	}
	// A 4-byte parameter does not take a handle.
	err := packArgs(make([]byte, 20), "k", []ArgumentInfo{{0, 4}, {8, 8}, {16, 4}}, []any{tex, surf, int32(7)})
	wantErrParts(t, "4-byte parameter", err, "argument 0 is *core.TextureObject (8 bytes) but parameter 0 takes 4 bytes")
	err = packArgs(make([]byte, 20), "k", params, []any{(*TextureObject)(nil), surf, int32(7)})
	wantErrParts(t, "nil texture", err, "core: Launch k: argument 0 is a nil *TextureObject")
	err = packArgs(make([]byte, 20), "k", params, []any{tex, (*SurfaceObject)(nil), int32(7)})
	wantErrParts(t, "nil surface", err, "argument 1 is a nil *SurfaceObject")

	closedTex := &TextureObject{handle: 1, res: a}
	closedTex.life.close()
	err = packArgs(make([]byte, 20), "k", params, []any{closedTex, surf, int32(7)})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "argument 0 is a closed TextureObject") {
		t.Errorf("closed texture: %v", err)
	}
	a.life.close()
	err = packArgs(make([]byte, 20), "k", params, []any{tex, surf, int32(7)})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "argument 0 is a TextureObject of a closed array") {
		t.Errorf("texture of a closed array: %v", err)
	}
	err = packArgs(make([]byte, 20), "k", params[1:2], []any{surf})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "argument 0 is a SurfaceObject of a closed Array") {
		t.Errorf("surface of a closed array: %v", err)
	}
	// A level of a closed MipmappedArray is closed too.
	m := &MipmappedArray{levels: 2}
	lvl := &Array{parent: m, shape: a.shape}
	lt := &TextureObject{handle: 3, res: lvl}
	if err := packArgs(make([]byte, 8), "k", params[:1], []any{lt}); err != nil {
		t.Fatal(err)
	}
	m.life.close()
	if err := packArgs(make([]byte, 8), "k", params[:1], []any{lt}); !errors.Is(err, ErrClosed) {
		t.Errorf("texture of a level of a closed MipmappedArray: %v", err)
	}
}

func TestTextureEnumStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{AddressClamp.String(), "AddressClamp"}, {AddressWrap.String(), "AddressWrap"},
		{AddressMirror.String(), "AddressMirror"}, {AddressBorder.String(), "AddressBorder"},
		{AddressMode(7).String(), "AddressMode(7)"},
		{FilterPoint.String(), "FilterPoint"}, {FilterLinear.String(), "FilterLinear"}, {FilterMode(3).String(), "FilterMode(3)"},
		{ReadElementType.String(), "ReadElementType"}, {ReadNormalizedFloat.String(), "ReadNormalizedFloat"}, {ReadMode(2).String(), "ReadMode(2)"},
		{Extent{Width: 3}.String(), "3"}, {Extent{Width: 3, Height: 2}.String(), "3x2"}, {Extent{Width: 3, Height: 2, Depth: 1}.String(), "3x2x1"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
