package core

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"

	"github.com/cudago/cudago/bindings/driver"
)

// CUDA arrays: memory laid out for the texture units (opaque, tiled for
// 2-D and 3-D locality), read by texture objects and read and written
// by surface objects (texture.go). An Array is 1-D, 2-D or 3-D, or a
// stack of 1-D or 2-D layers; a MipmappedArray holds an array and its
// successively halved levels. Their elements are 1, 2 or 4 channels of
// one of eight types. Every rule of cuArray3DCreate's and
// cuMipmappedArrayCreate's documentation, the device's limits included,
// is checked here before the driver is called, so that a bad shape is an
// error naming it rather than CUDA_ERROR_INVALID_VALUE.

// Extent is the size of an array in elements: Width alone for a 1-D
// array, Width and Height for a 2-D one, all three for a 3-D one (Height
// and Depth 0 where unused).
type Extent struct{ Width, Height, Depth int }

func (e Extent) String() string {
	switch {
	case e.Height == 0 && e.Depth == 0:
		return fmt.Sprintf("%d", e.Width)
	case e.Depth == 0:
		return fmt.Sprintf("%dx%d", e.Width, e.Height)
	}
	return fmt.Sprintf("%dx%dx%d", e.Width, e.Height, e.Depth)
}

// ArrayOptions describe the elements and uses of an array. A nil
// *ArrayOptions (or the zero value) means one float32 channel, not
// layered, for textures only.
type ArrayOptions struct {
	// Format is the type of each channel: driver.AdFormatUnsignedInt8,
	// AdFormatUnsignedInt16, AdFormatUnsignedInt32, AdFormatSignedInt8,
	// AdFormatSignedInt16, AdFormatSignedInt32, AdFormatHalf or
	// AdFormatFloat; 0 means AdFormatFloat.
	Format driver.ArrayFormat
	// Channels is the number of channels per element: 1, 2 or 4 (a
	// float4, say); 0 means 1.
	Channels int
	// Layers, when not 0, makes a layered array: that many layers of a
	// 1-D (Extent.Height 0) or 2-D array, which a kernel reads with
	// tex1DLayered/tex2DLayered. Extent.Depth must then be 0.
	Layers int
	// SurfaceLoadStore lets surface objects read and write the array
	// (CUDA_ARRAY3D_SURFACE_LDST); NewSurfaceObject needs it.
	SurfaceLoadStore bool
	// TextureGather lets textures of a 2-D array gather (tex2Dgather;
	// CUDA_ARRAY3D_TEXTURE_GATHER). 2-D arrays only.
	TextureGather bool
}

// arrayShape is what an Array and a MipmappedArray share: the checked
// descriptor in Go's terms.
type arrayShape struct {
	ext      Extent
	layers   int
	format   driver.ArrayFormat
	channels int
	flags    uint32 // the CUDA_ARRAY3D_* flags
}

// formatBytes returns the size of one channel of format f, or 0 for a
// format arrays of this package do not take.
func formatBytes(f driver.ArrayFormat) int {
	switch f {
	case driver.AdFormatUnsignedInt8, driver.AdFormatSignedInt8:
		return 1
	case driver.AdFormatUnsignedInt16, driver.AdFormatSignedInt16, driver.AdFormatHalf:
		return 2
	case driver.AdFormatUnsignedInt32, driver.AdFormatSignedInt32, driver.AdFormatFloat:
		return 4
	}
	return 0
}

// formatName names f as a kernel sees one channel.
func formatName(f driver.ArrayFormat) string {
	switch f {
	case driver.AdFormatUnsignedInt8:
		return "uint8"
	case driver.AdFormatUnsignedInt16:
		return "uint16"
	case driver.AdFormatUnsignedInt32:
		return "uint32"
	case driver.AdFormatSignedInt8:
		return "int8"
	case driver.AdFormatSignedInt16:
		return "int16"
	case driver.AdFormatSignedInt32:
		return "int32"
	case driver.AdFormatHalf:
		return "half"
	case driver.AdFormatFloat:
		return "float32"
	}
	return fmt.Sprintf("format %#x", uint32(f))
}

func isFloatFormat(f driver.ArrayFormat) bool {
	return f == driver.AdFormatHalf || f == driver.AdFormatFloat
}

// dims returns 1, 2 or 3: the dimensions of the array (of a layer, for a
// layered one).
func (s *arrayShape) dims() int {
	switch {
	case s.ext.Depth > 0:
		return 3
	case s.ext.Height > 0:
		return 2
	}
	return 1
}

// elemBytes is the size of one element.
func (s *arrayShape) elemBytes() int { return formatBytes(s.format) * s.channels }

// rows and slices are the array's rows per slice and slices (layers for a
// layered array), as a copy sees them: at least 1.
func (s *arrayShape) rows() int { return max(s.ext.Height, 1) }

func (s *arrayShape) slices() int {
	if s.layers > 0 {
		return s.layers
	}
	return max(s.ext.Depth, 1)
}

// bytes is the size of the array's elements, packed: what a copy moves.
func (s *arrayShape) bytes() int {
	return s.ext.Width * s.elemBytes() * s.rows() * s.slices()
}

// what names the shape in messages: "2-D 256x256 float32x4 array".
func (s *arrayShape) what() string {
	kind := fmt.Sprintf("%d-D %v", s.dims(), s.ext)
	if s.layers > 0 {
		kind = fmt.Sprintf("%d-D layered %v (%d layers)", s.dims(), s.ext, s.layers)
	}
	return fmt.Sprintf("%s %sx%d array", kind, formatName(s.format), s.channels)
}

// descriptor is the shape as cuArray3DCreate takes it.
func (s *arrayShape) descriptor() driver.Array3DDescriptor {
	d := driver.Array3DDescriptor{
		Width: uint64(s.ext.Width), Height: uint64(s.ext.Height), Depth: uint64(s.ext.Depth),
		Format: s.format, NumChannels: uint32(s.channels), Flags: s.flags,
	}
	if s.layers > 0 {
		d.Depth = uint64(s.layers) // a layered array's Depth counts its layers
	}
	return d
}

// maxArrayDim bounds each dimension before any product is taken (no
// device comes near it).
const maxArrayDim = 1 << 30

// arrayShapeOf checks ext and opts for function fn (levels > 0: a
// mipmapped array of that many levels) and returns the shape. It needs
// no device: the device's limits are checkArrayLimits's.
func arrayShapeOf(fn string, ext Extent, opts *ArrayOptions, levels int) (arrayShape, error) {
	var o ArrayOptions
	if opts != nil {
		o = *opts
	}
	s := arrayShape{ext: ext, layers: o.Layers, format: o.Format, channels: o.Channels}
	if s.format == 0 {
		s.format = driver.AdFormatFloat
	}
	if s.channels == 0 {
		s.channels = 1
	}
	if formatBytes(s.format) == 0 {
		return s, fmt.Errorf("core: %s: ArrayOptions.Format %v: want one of AdFormatUnsignedInt8/16/32, AdFormatSignedInt8/16/32, AdFormatHalf or AdFormatFloat", fn, s.format)
	}
	if s.channels != 1 && s.channels != 2 && s.channels != 4 {
		return s, fmt.Errorf("core: %s: ArrayOptions.Channels %d: want 1, 2 or 4", fn, o.Channels)
	}
	switch {
	case ext.Width < 1 || ext.Width > maxArrayDim:
		return s, fmt.Errorf("core: %s: Extent %v: Width must be at least 1 (and at most 2^30)", fn, ext)
	case ext.Height < 0 || ext.Height > maxArrayDim || ext.Depth < 0 || ext.Depth > maxArrayDim:
		return s, fmt.Errorf("core: %s: Extent %v: Height and Depth must be 0 (unused) or positive (and at most 2^30)", fn, ext)
	case ext.Depth > 0 && ext.Height == 0:
		return s, fmt.Errorf("core: %s: Extent %v: a 3-D array needs a Height as well as a Depth", fn, ext)
	case o.Layers < 0 || o.Layers > maxArrayDim:
		return s, fmt.Errorf("core: %s: ArrayOptions.Layers %d: want 0 (not layered) or a number of layers", fn, o.Layers)
	case o.Layers > 0 && ext.Depth > 0:
		return s, fmt.Errorf("core: %s: Extent %v with ArrayOptions.Layers %d: layers are of 1-D or 2-D arrays, so Depth must be 0", fn, ext, o.Layers)
	}
	if o.Layers > 0 {
		s.flags |= driver.Array3DLayered
	}
	if o.SurfaceLoadStore {
		s.flags |= driver.Array3DSurfaceLdst
	}
	if o.TextureGather {
		if s.dims() != 2 || o.Layers > 0 {
			return s, fmt.Errorf("core: %s: ArrayOptions.TextureGather: texture gather is for 2-D arrays, not a %s", fn, s.what())
		}
		s.flags |= driver.Array3DTextureGather
	}
	if levels > 0 {
		if most := maxLevels(ext); levels > most {
			return s, fmt.Errorf("core: %s: %d mipmap levels: a %v array has at most %d (down to 1 element in every dimension)", fn, levels, ext, most)
		}
	}
	return s, nil
}

// maxLevels is the number of levels of a full mipmap chain of ext: 1 +
// floor(log2) of its largest dimension.
func maxLevels(ext Extent) int {
	return bits.Len(uint(max(ext.Width, ext.Height, ext.Depth)))
}

// checkArrayLimits checks the shape against the device's limits, read
// with attr (Device.Attribute), as the tables of cuArray3DCreate and
// cuMipmappedArrayCreate give them.
func checkArrayLimits(fn string, s *arrayShape, mipmapped bool, attr func(driver.DeviceAttribute) (int, error)) error {
	type lim struct {
		name string
		v    int
		a    driver.DeviceAttribute
	}
	// fits reports whether every value is within its limit; the first
	// one that is not is named in the error.
	fits := func(ls ...lim) (bool, string, error) {
		for _, l := range ls {
			m, err := attr(l.a)
			if err != nil {
				return false, "", fmt.Errorf("core: %s: reading the device's limit on %s (%v): %w", fn, l.name, l.a, err)
			}
			if l.v > m {
				return false, fmt.Sprintf("%s %d is more than the device's %d (%v)", l.name, l.v, m, l.a), nil
			}
		}
		return true, "", nil
	}
	w, h, d, n := s.ext.Width, s.ext.Height, s.ext.Depth, s.layers
	var sets [][]lim
	surface := s.flags&driver.Array3DSurfaceLdst != 0
	switch {
	case n > 0 && h == 0:
		sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture1DLayeredWidth}, {"Layers", n, driver.DeviceAttributeMaximumTexture1DLayeredLayers}})
		if surface {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumSurface1DLayeredWidth}, {"Layers", n, driver.DeviceAttributeMaximumSurface1DLayeredLayers}})
		}
	case n > 0:
		sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture2DLayeredWidth}, {"Height", h, driver.DeviceAttributeMaximumTexture2DLayeredHeight},
			{"Layers", n, driver.DeviceAttributeMaximumTexture2DLayeredLayers}})
		if surface {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumSurface2DLayeredWidth}, {"Height", h, driver.DeviceAttributeMaximumSurface2DLayeredHeight},
				{"Layers", n, driver.DeviceAttributeMaximumSurface2DLayeredLayers}})
		}
	case d > 0:
		// Two sets of 3-D limits: either will do.
		ok, why, err := fits(lim{"Width", w, driver.DeviceAttributeMaximumTexture3DWidth}, lim{"Height", h, driver.DeviceAttributeMaximumTexture3DHeight},
			lim{"Depth", d, driver.DeviceAttributeMaximumTexture3DDepth})
		if err != nil {
			return err
		}
		if !ok {
			ok2, why2, err := fits(lim{"Width", w, driver.DeviceAttributeMaximumTexture3DWidthAlternate}, lim{"Height", h, driver.DeviceAttributeMaximumTexture3DHeightAlternate},
				lim{"Depth", d, driver.DeviceAttributeMaximumTexture3DDepthAlternate})
			if err != nil {
				return err
			}
			if !ok2 {
				return fmt.Errorf("core: %s: the %s does not fit the device: %s, and with the alternate 3-D limits %s", fn, s.what(), why, why2)
			}
		}
		if surface {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumSurface3DWidth}, {"Height", h, driver.DeviceAttributeMaximumSurface3DHeight},
				{"Depth", d, driver.DeviceAttributeMaximumSurface3DDepth}})
		}
	case h > 0:
		switch {
		case s.flags&driver.Array3DTextureGather != 0:
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture2DGatherWidth}, {"Height", h, driver.DeviceAttributeMaximumTexture2DGatherHeight}})
		case mipmapped:
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture2DMipmappedWidth}, {"Height", h, driver.DeviceAttributeMaximumTexture2DMipmappedHeight}})
		default:
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture2DWidth}, {"Height", h, driver.DeviceAttributeMaximumTexture2DHeight}})
		}
		if surface {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumSurface2DWidth}, {"Height", h, driver.DeviceAttributeMaximumSurface2DHeight}})
		}
	default:
		if mipmapped {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture1DMipmappedWidth}})
		} else {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumTexture1DWidth}})
		}
		if surface {
			sets = append(sets, []lim{{"Width", w, driver.DeviceAttributeMaximumSurface1DWidth}})
		}
	}
	for _, set := range sets {
		ok, why, err := fits(set...)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("core: %s: the %s does not fit the device: %s", fn, s.what(), why)
		}
	}
	return nil
}

// Array is a CUDA array (CUarray) in its device's primary context: made
// by NewArray, or a level of a MipmappedArray. Close destroys it; a
// finalizer destroys a forgotten one. Copies fill and read it
// (CopyToArray, CopyFromArray, CopyFromBuffer, CopyToBuffer); texture and
// surface objects let kernels use it.
type Array struct {
	handle  driver.Array
	dev     *Device
	shape   arrayShape
	parent  *MipmappedArray // a level of it, which owns the memory
	level   int
	life    life
	cleanup runtime.Cleanup
}

// NewArray creates a CUDA array of extent ext on dev (cuArray3DCreate):
//
//	a, err := core.NewArray(dev, core.Extent{Width: 640, Height: 480}, nil) // 640x480 float32
//
// Its shape, opts and the device's limits (its texture and, with
// SurfaceLoadStore, surface attributes) are checked before the driver is
// called. The contents start undefined.
func NewArray(dev *Device, ext Extent, opts *ArrayOptions) (*Array, error) {
	const fn = "NewArray"
	s, err := arrayShapeOf(fn, ext, opts, 0)
	if err != nil {
		return nil, err
	}
	if dev == nil {
		return nil, errors.New("core: NewArray: nil *Device")
	}
	if err := checkArrayLimits(fn, &s, false, dev.Attribute); err != nil {
		return nil, err
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	desc := s.descriptor()
	ah, err := cuArray3DCreate(h, &desc)
	if err != nil {
		return nil, fmt.Errorf("core: NewArray: creating a %s: %w", s.what(), err)
	}
	a := &Array{handle: ah, dev: dev, shape: s}
	a.cleanup = runtime.AddCleanup(a, destroyArray, handleRef[driver.Array]{dev.primary, ah})
	return a, nil
}

// destroyArray is the finalizer of a forgotten Array. Its error is
// recorded for the next Sync of the context.
func destroyArray(r handleRef[driver.Array]) {
	destroyForgotten(r.ctx, "CUDA array", r.h, cuArrayDestroy)
}

// acquire holds a, and the mipmapped array it is a level of, for a
// driver call.
func (a *Array) acquire() bool {
	if !a.life.acquire() {
		return false
	}
	if a.parent != nil && !a.parent.life.acquire() {
		a.life.release()
		return false
	}
	return true
}

func (a *Array) release() {
	if a.parent != nil {
		a.parent.life.release()
	}
	a.life.release()
}

// closed reports whether a, or the mipmapped array it is a level of, is
// closed.
func (a *Array) closed() bool {
	return a.life.closed() || a.parent != nil && a.parent.life.closed()
}

// Handle returns the driver's CUarray.
func (a *Array) Handle() driver.Array { return a.handle }

// Device returns the array's device.
func (a *Array) Device() *Device { return a.dev }

// Extent returns the array's size in elements (of one layer, for a
// layered array).
func (a *Array) Extent() Extent { return a.shape.ext }

// Layers returns the number of layers of a layered array, else 0.
func (a *Array) Layers() int { return a.shape.layers }

// Format returns the type of the element's channels.
func (a *Array) Format() driver.ArrayFormat { return a.shape.format }

// Channels returns the number of channels per element.
func (a *Array) Channels() int { return a.shape.channels }

// ElementSize returns the size of one element in bytes.
func (a *Array) ElementSize() int { return a.shape.elemBytes() }

// Size returns the size of the array's elements in bytes: what a copy of
// the whole array moves.
func (a *Array) Size() int { return a.shape.bytes() }

// Level returns the mipmap level a is of its MipmappedArray (0 for an
// array made by NewArray).
func (a *Array) Level() int { return a.level }

// Close destroys the array; later uses return ErrClosed, and launches
// with its texture or surface objects fail. Closing a level of a
// MipmappedArray only ends this Array (the MipmappedArray owns the
// memory). Closing twice is not an error.
func (a *Array) Close() error {
	if a == nil || !a.life.close() {
		return nil
	}
	if a.parent != nil || a.dev == nil { // a level, or a zero Array: nothing to free
		return nil
	}
	return destroyClosed(a.dev.primary, &a.cleanup, a.handle, cuArrayDestroy)
}

// MipmappedArray is a mipmapped CUDA array (CUmipmappedArray): levels 0
// to Levels()-1 of an array, each half the size of the one before in
// every dimension (at least 1), read through a texture object with
// tex*Lod or tex*Grad. Level returns each as an Array, to copy into or
// bind a surface object to. Close destroys it; a finalizer destroys a
// forgotten one.
type MipmappedArray struct {
	handle  driver.MipmappedArray
	dev     *Device
	shape   arrayShape
	levels  int
	life    life
	cleanup runtime.Cleanup
}

// NewMipmappedArray creates a mipmapped array of levels levels on dev
// (cuMipmappedArrayCreate), level 0 of extent ext; levels may be at most
// 1 + log2 of the largest dimension. ext, opts and the device's limits
// are checked as by NewArray.
func NewMipmappedArray(dev *Device, ext Extent, levels int, opts *ArrayOptions) (*MipmappedArray, error) {
	const fn = "NewMipmappedArray"
	if levels < 1 {
		return nil, fmt.Errorf("core: %s: %d mipmap levels, want at least 1", fn, levels)
	}
	s, err := arrayShapeOf(fn, ext, opts, levels)
	if err != nil {
		return nil, err
	}
	if dev == nil {
		return nil, errors.New("core: NewMipmappedArray: nil *Device")
	}
	if err := checkArrayLimits(fn, &s, true, dev.Attribute); err != nil {
		return nil, err
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	desc := s.descriptor()
	mh, err := cuMipmappedArrayCreate(h, &desc, uint32(levels))
	if err != nil {
		return nil, fmt.Errorf("core: NewMipmappedArray: creating a %s of %d levels: %w", s.what(), levels, err)
	}
	m := &MipmappedArray{handle: mh, dev: dev, shape: s, levels: levels}
	m.cleanup = runtime.AddCleanup(m, destroyMipmappedArray, handleRef[driver.MipmappedArray]{dev.primary, mh})
	return m, nil
}

func destroyMipmappedArray(r handleRef[driver.MipmappedArray]) {
	destroyForgotten(r.ctx, "mipmapped CUDA array", r.h, cuMipmappedArrayDestroy)
}

func (m *MipmappedArray) acquire() bool { return m.life.acquire() }
func (m *MipmappedArray) release()      { m.life.release() }
func (m *MipmappedArray) closed() bool  { return m.life.closed() }

// Handle returns the driver's CUmipmappedArray.
func (m *MipmappedArray) Handle() driver.MipmappedArray { return m.handle }

// Device returns the array's device.
func (m *MipmappedArray) Device() *Device { return m.dev }

// Extent returns the size of level 0 in elements.
func (m *MipmappedArray) Extent() Extent { return m.shape.ext }

// Layers returns the number of layers of a layered array, else 0.
func (m *MipmappedArray) Layers() int { return m.shape.layers }

// Format returns the type of the element's channels.
func (m *MipmappedArray) Format() driver.ArrayFormat { return m.shape.format }

// Channels returns the number of channels per element.
func (m *MipmappedArray) Channels() int { return m.shape.channels }

// Levels returns the number of mipmap levels.
func (m *MipmappedArray) Levels() int { return m.levels }

// Level returns mipmap level i (cuMipmappedArrayGetLevel) as an Array
// that the MipmappedArray owns: copies and surface objects use it as any
// Array; closing it ends only this Array, and closing m ends it too.
func (m *MipmappedArray) Level(i int) (*Array, error) {
	if m == nil {
		return nil, errors.New("core: MipmappedArray.Level: nil *MipmappedArray")
	}
	if i < 0 || i >= m.levels {
		return nil, fmt.Errorf("core: MipmappedArray.Level(%d): the array has levels 0 to %d", i, m.levels-1)
	}
	if !m.acquire() {
		return nil, ErrClosed
	}
	defer m.release()
	h, err := m.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer m.dev.primary.release()
	ah, err := cuMipmappedArrayGetLevel(h, m.handle, uint32(i))
	if err != nil {
		return nil, fmt.Errorf("core: MipmappedArray.Level(%d): %w", i, err)
	}
	// The level's extent as the driver made it.
	desc, err := cuArray3DGetDescriptor(h, ah)
	if err != nil {
		return nil, fmt.Errorf("core: MipmappedArray.Level(%d): %w", i, err)
	}
	s := m.shape
	s.ext = Extent{Width: int(desc.Width), Height: int(desc.Height), Depth: int(desc.Depth)}
	if s.layers > 0 {
		s.ext.Depth = 0 // Depth counts the layers, which do not shrink
	}
	return &Array{handle: ah, dev: m.dev, shape: s, parent: m, level: i}, nil
}

// Close destroys the mipmapped array and with it its levels; later uses
// return ErrClosed. Closing twice is not an error.
func (m *MipmappedArray) Close() error {
	if m == nil || !m.life.close() || m.dev == nil {
		return nil
	}
	return destroyClosed(m.dev.primary, &m.cleanup, m.handle, cuMipmappedArrayDestroy)
}
