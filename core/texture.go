package core

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/enum"
)

// Texture and surface objects: the 64-bit handles (CUtexObject,
// CUsurfObject) through which a kernel reads a CUDA array with the
// texture units (tex2D<float>(t, x, y): filtering, address modes,
// normalized coordinates) or reads and writes it as a surface
// (surf2Dread, surf2Dwrite). Pass the *TextureObject or *SurfaceObject to
// Launch for a cudaTextureObject_t or cudaSurfaceObject_t parameter.

// AddressMode says what a texture reads at coordinates outside the array.
// The zero value is AddressClamp.
type AddressMode int

const (
	// AddressClamp reads the texel at the nearest edge.
	AddressClamp AddressMode = iota
	// AddressWrap repeats the array (normalized coordinates only).
	AddressWrap
	// AddressMirror repeats the array mirrored every other time
	// (normalized coordinates only).
	AddressMirror
	// AddressBorder reads TextureOptions.BorderColor.
	AddressBorder
)

func (m AddressMode) String() string {
	return enum.Name(m, "AddressMode", "AddressClamp", "AddressWrap", "AddressMirror", "AddressBorder")
}

func (m AddressMode) driver() driver.AddressMode {
	switch m {
	case AddressWrap:
		return driver.TrAddressModeWrap
	case AddressMirror:
		return driver.TrAddressModeMirror
	case AddressBorder:
		return driver.TrAddressModeBorder
	}
	return driver.TrAddressModeClamp
}

// FilterMode is how a texture turns coordinates into a value: the
// nearest texel (FilterPoint, the zero value) or the linear
// interpolation of the nearest 2, 4 or 8 (FilterLinear), whose weights
// the texture unit holds in 9-bit fixed point with 8 fractional bits.
type FilterMode int

const (
	FilterPoint FilterMode = iota
	FilterLinear
)

func (f FilterMode) String() string {
	return enum.Name(f, "FilterMode", "FilterPoint", "FilterLinear")
}

// ReadMode is what a texture of integer channels returns: the integers
// (ReadElementType, the zero value) or, for 8- and 16-bit channels,
// floats normalized to [0, 1] (unsigned) or [-1, 1] (signed), which
// FilterLinear needs. Half and float channels are read as float either
// way.
type ReadMode int

const (
	ReadElementType ReadMode = iota
	ReadNormalizedFloat
)

func (r ReadMode) String() string {
	return enum.Name(r, "ReadMode", "ReadElementType", "ReadNormalizedFloat")
}

// TextureOptions describe how a texture object samples its array. A nil
// *TextureOptions (or the zero value) means point sampling at
// unnormalized coordinates (texel i spans [i, i+1)), clamped at the
// edges, integers read as integers.
type TextureOptions struct {
	// AddressMode is the address mode of each dimension: x, y, z.
	AddressMode [3]AddressMode
	// Filter is the filter within a level.
	Filter FilterMode
	// ReadMode is what integer channels read as.
	ReadMode ReadMode
	// NormalizedCoords makes coordinates run over [0, 1) instead of
	// [0, size) (the layer index of a layered array stays an integer).
	// AddressWrap and AddressMirror need it.
	NormalizedCoords bool
	// BorderColor is what AddressBorder reads, per channel.
	BorderColor [4]float32
	// MaxAnisotropy bounds anisotropic filtering: 0 or 1 (off) to 16.
	MaxAnisotropy int

	// The mipmap fields are for a MipmappedArray's texture only.

	// MipmapFilter is the filter between levels.
	MipmapFilter FilterMode
	// MipmapLevelBias is added to the level a fetch computes.
	MipmapLevelBias float32
	// MinMipmapLevelClamp and MaxMipmapLevelClamp bound that level;
	// both 0 mean all levels (0 to Levels()-1).
	MinMipmapLevelClamp, MaxMipmapLevelClamp float32
}

// textureDesc checks o for a texture of an array of shape s (levels: 0,
// or the levels of a mipmapped array) and returns it as
// cuTexObjectCreate takes it.
func (o *TextureOptions) textureDesc(fn string, s *arrayShape, levels int) (driver.TextureDesc, error) {
	var opt TextureOptions
	if o != nil {
		opt = *o
	}
	var d driver.TextureDesc
	bad := func(field, format string, args ...any) (driver.TextureDesc, error) {
		return d, fmt.Errorf("core: %s: TextureOptions.%s: %s", fn, field, fmt.Sprintf(format, args...))
	}
	for i, m := range opt.AddressMode {
		if m < AddressClamp || m > AddressBorder {
			return bad(fmt.Sprintf("AddressMode[%d]", i), "unknown mode %d", int(m))
		}
		if (m == AddressWrap || m == AddressMirror) && !opt.NormalizedCoords && i < s.dims() {
			return bad(fmt.Sprintf("AddressMode[%d]", i), "%v needs NormalizedCoords (the texture unit wraps and mirrors only normalized coordinates)", m)
		}
		d.AddressMode[i] = m.driver()
	}
	for _, f := range []struct {
		name string
		v    FilterMode
	}{{"Filter", opt.Filter}, {"MipmapFilter", opt.MipmapFilter}} {
		if f.v != FilterPoint && f.v != FilterLinear {
			return bad(f.name, "unknown filter %d", int(f.v))
		}
	}
	intFormat := !isFloatFormat(s.format)
	switch opt.ReadMode {
	case ReadElementType:
		if intFormat {
			d.Flags |= driver.TrsfReadAsInteger
		}
	case ReadNormalizedFloat:
		if !intFormat || formatBytes(s.format) == 4 {
			return bad("ReadMode", "ReadNormalizedFloat is for 8- and 16-bit integer channels, not %s", formatName(s.format))
		}
	default:
		return bad("ReadMode", "unknown mode %d", int(opt.ReadMode))
	}
	if intFormat && opt.ReadMode == ReadElementType {
		// The texture unit interpolates floats only.
		if opt.Filter == FilterLinear {
			return bad("Filter", "FilterLinear needs float results: a half or float32 array, or ReadNormalizedFloat for 8- and 16-bit integers (this array has %s channels)", formatName(s.format))
		}
		if opt.MipmapFilter == FilterLinear {
			return bad("MipmapFilter", "FilterLinear needs float results: a half or float32 array, or ReadNormalizedFloat for 8- and 16-bit integers (this array has %s channels)", formatName(s.format))
		}
	}
	if opt.NormalizedCoords {
		d.Flags |= driver.TrsfNormalizedCoordinates
	}
	if opt.MaxAnisotropy < 0 || opt.MaxAnisotropy > 16 {
		return bad("MaxAnisotropy", "%d, want 0 to 16", opt.MaxAnisotropy)
	}
	d.MaxAnisotropy = uint32(opt.MaxAnisotropy)
	d.FilterMode = driver.FilterMode(opt.Filter)
	d.BorderColor = opt.BorderColor
	if levels == 0 {
		switch {
		case opt.MipmapFilter != FilterPoint:
			return bad("MipmapFilter", "set for an Array: the mipmap fields are for a MipmappedArray's texture")
		case opt.MipmapLevelBias != 0:
			return bad("MipmapLevelBias", "set for an Array: the mipmap fields are for a MipmappedArray's texture")
		case opt.MinMipmapLevelClamp != 0 || opt.MaxMipmapLevelClamp != 0:
			return bad("MinMipmapLevelClamp", "the level clamps are set for an Array: the mipmap fields are for a MipmappedArray's texture")
		}
		return d, nil
	}
	lo, hi := opt.MinMipmapLevelClamp, opt.MaxMipmapLevelClamp
	if lo == 0 && hi == 0 {
		hi = float32(levels - 1)
	}
	switch {
	case isBadFloat(opt.MipmapLevelBias):
		return bad("MipmapLevelBias", "%v is not a finite number", opt.MipmapLevelBias)
	case isBadFloat(lo) || isBadFloat(hi) || lo < 0 || hi < lo:
		return bad("MaxMipmapLevelClamp", "the clamps %v to %v are not a range of levels from 0 (want 0 <= Min <= Max)", lo, hi)
	}
	d.MipmapFilterMode = driver.FilterMode(opt.MipmapFilter)
	d.MipmapLevelBias = opt.MipmapLevelBias
	d.MinMipmapLevelClamp, d.MaxMipmapLevelClamp = lo, hi
	return d, nil
}

func isBadFloat(f float32) bool {
	return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0)
}

// TextureResource is what a texture object reads: an *Array or a
// *MipmappedArray.
type TextureResource interface {
	Device() *Device
	// resource returns the resource descriptor, the shape and the
	// levels (0 for an Array).
	resource() (driver.ResourceDesc, *arrayShape, int)
	acquire() bool
	release()
	closed() bool
}

func (a *Array) resource() (driver.ResourceDesc, *arrayShape, int) {
	d := driver.ResourceDesc{ResType: driver.ResourceTypeArray}
	d.Res.Array().HArray = a.handle
	return d, &a.shape, 0
}

func (m *MipmappedArray) resource() (driver.ResourceDesc, *arrayShape, int) {
	d := driver.ResourceDesc{ResType: driver.ResourceTypeMipmappedArray}
	d.Res.Mipmap().HMipmappedArray = m.handle
	return d, &m.shape, m.levels
}

// nilResource reports whether r holds no array.
func nilResource(r TextureResource) bool {
	switch v := r.(type) {
	case nil:
		return true
	case *Array:
		return v == nil
	case *MipmappedArray:
		return v == nil
	}
	return false
}

// TextureObject is a texture object (CUtexObject) of an Array or a
// MipmappedArray. It keeps its array referenced; once the array is
// closed, a Launch with the texture fails with ErrClosed. Close destroys
// it; a finalizer destroys a forgotten one.
type TextureObject struct {
	handle  driver.TexObject
	res     TextureResource
	ctx     *Context
	life    life
	cleanup runtime.Cleanup
}

// NewTextureObject creates a texture object of res (an *Array or a
// *MipmappedArray) sampled as opts says (cuTexObjectCreate). opts is
// checked against the array's format first: FilterLinear needs float
// results, AddressWrap and AddressMirror normalized coordinates,
// ReadNormalizedFloat 8- or 16-bit integers.
func NewTextureObject(res TextureResource, opts *TextureOptions) (*TextureObject, error) {
	const fn = "NewTextureObject"
	if nilResource(res) {
		return nil, errors.New("core: NewTextureObject: nil TextureResource (want an *Array or a *MipmappedArray)")
	}
	rd, s, levels := res.resource()
	td, err := opts.textureDesc(fn, s, levels)
	if err != nil {
		return nil, err
	}
	if !res.acquire() {
		return nil, ErrClosed
	}
	defer res.release()
	ctx := res.Device().primary
	h, err := ctx.acquire()
	if err != nil {
		return nil, err
	}
	defer ctx.release()
	th, err := cuTexObjectCreate(h, &rd, &td, nil)
	if err != nil {
		return nil, fmt.Errorf("core: NewTextureObject: a texture of a %s: %w", s.what(), err)
	}
	t := &TextureObject{handle: th, res: res, ctx: ctx}
	t.cleanup = runtime.AddCleanup(t, destroyTexture, handleRef[driver.TexObject]{ctx, th})
	return t, nil
}

func destroyTexture(r handleRef[driver.TexObject]) {
	destroyForgotten(r.ctx, "texture object", r.h, cuTexObjectDestroy)
}

// Handle returns the driver's CUtexObject, the kernel's
// cudaTextureObject_t.
func (t *TextureObject) Handle() driver.TexObject { return t.handle }

// Resource returns the array the texture reads.
func (t *TextureObject) Resource() TextureResource { return t.res }

// Close destroys the texture object; later launches with it return
// ErrClosed. Closing twice is not an error.
func (t *TextureObject) Close() error {
	if t == nil || !t.life.close() {
		return nil
	}
	return destroyClosed(t.ctx, &t.cleanup, t.handle, cuTexObjectDestroy)
}

// launchHandle is the handle Launch passes, or an error that completes
// "argument N ...".
func (t *TextureObject) launchHandle() (uint64, error) {
	if t == nil {
		return 0, errors.New("is a nil *TextureObject")
	}
	return objectLaunchHandle("TextureObject", "array", uint64(t.handle), &t.life, t.res == nil, t.res != nil && t.res.closed())
}

// objectLaunchHandle is launchHandle for a texture or surface object
// (what) with handle h and life l, of a resource (res) that may be absent
// (noRes: a zero object) or closed.
func objectLaunchHandle(what, res string, h uint64, l *life, noRes, resClosed bool) (uint64, error) {
	switch {
	case noRes:
		return 0, fmt.Errorf("is a zero %s (make one with New%[1]s)", what)
	case l.closed():
		return 0, fmt.Errorf("is a closed %s: %w", what, ErrClosed)
	case resClosed:
		return 0, fmt.Errorf("is a %s of a closed %s: %w", what, res, ErrClosed)
	}
	return h, nil
}

// SurfaceObject is a surface object (CUsurfObject) of an Array made with
// ArrayOptions.SurfaceLoadStore, through which kernels read and write it
// (surf2Dread, surf2Dwrite: x in bytes, y and z in elements). It keeps its
// array referenced; once the array is closed, a Launch with the surface
// fails with ErrClosed. Close destroys it; a finalizer destroys a
// forgotten one.
type SurfaceObject struct {
	handle  driver.SurfObject
	arr     *Array
	ctx     *Context
	life    life
	cleanup runtime.Cleanup
}

// NewSurfaceObject creates a surface object of a (cuSurfObjectCreate).
// The array must have been made with ArrayOptions.SurfaceLoadStore (for a
// mipmap level: its MipmappedArray).
func NewSurfaceObject(a *Array) (*SurfaceObject, error) {
	if a == nil {
		return nil, errors.New("core: NewSurfaceObject: nil *Array")
	}
	if a.shape.flags&driver.Array3DSurfaceLdst == 0 {
		return nil, fmt.Errorf("core: NewSurfaceObject: the %s was made without ArrayOptions.SurfaceLoadStore", a.shape.what())
	}
	if !a.acquire() {
		return nil, ErrClosed
	}
	defer a.release()
	rd, _, _ := a.resource()
	ctx := a.dev.primary
	h, err := ctx.acquire()
	if err != nil {
		return nil, err
	}
	defer ctx.release()
	sh, err := cuSurfObjectCreate(h, &rd)
	if err != nil {
		return nil, fmt.Errorf("core: NewSurfaceObject: a surface of a %s: %w", a.shape.what(), err)
	}
	s := &SurfaceObject{handle: sh, arr: a, ctx: ctx}
	s.cleanup = runtime.AddCleanup(s, destroySurface, handleRef[driver.SurfObject]{ctx, sh})
	return s, nil
}

func destroySurface(r handleRef[driver.SurfObject]) {
	destroyForgotten(r.ctx, "surface object", r.h, cuSurfObjectDestroy)
}

// Handle returns the driver's CUsurfObject, the kernel's
// cudaSurfaceObject_t.
func (s *SurfaceObject) Handle() driver.SurfObject { return s.handle }

// Array returns the array the surface reads and writes.
func (s *SurfaceObject) Array() *Array { return s.arr }

// Close destroys the surface object; later launches with it return
// ErrClosed. Closing twice is not an error.
func (s *SurfaceObject) Close() error {
	if s == nil || !s.life.close() {
		return nil
	}
	return destroyClosed(s.ctx, &s.cleanup, s.handle, cuSurfObjectDestroy)
}

// launchHandle is as TextureObject's.
func (s *SurfaceObject) launchHandle() (uint64, error) {
	if s == nil {
		return 0, errors.New("is a nil *SurfaceObject")
	}
	return objectLaunchHandle("SurfaceObject", "Array", uint64(s.handle), &s.life, s.arr == nil, s.arr != nil && s.arr.closed())
}
