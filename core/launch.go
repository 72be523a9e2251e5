package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Dim3 is a grid, block or cluster shape.
type Dim3 struct{ X, Y, Z uint32 }

// Dim returns Dim3{x, y, z}, where y and z default to 1: Dim(256),
// Dim(16, 16), Dim(8, 8, 4).
func Dim(x uint32, yz ...uint32) Dim3 {
	d := Dim3{x, 1, 1}
	if len(yz) > 0 {
		d.Y = yz[0]
	}
	if len(yz) > 1 {
		d.Z = yz[1]
	}
	return d
}

func (d Dim3) String() string { return fmt.Sprintf("%dx%dx%d", d.X, d.Y, d.Z) }

func (d Dim3) hasZero() bool { return d.X == 0 || d.Y == 0 || d.Z == 0 }

// LaunchConfig is the shape of a kernel launch.
type LaunchConfig struct {
	Grid  Dim3 // blocks in the grid; every dimension at least 1
	Block Dim3 // threads in a block; every dimension at least 1, 1024 in all
	// Cluster groups blocks into thread-block clusters (compute
	// capability 9.0 and newer); the zero value means no clusters. Each
	// grid dimension must be a multiple of the cluster's.
	Cluster Dim3
	// SharedMemory is the dynamic shared memory per block, in bytes.
	SharedMemory uint32
	// Cooperative launches the grid cooperatively (grid-wide sync); all
	// blocks must fit on the device at once.
	Cooperative bool
}

// Validate checks the limits every CUDA device shares, so that a bad
// shape is a clear error before any driver call.
func (c *LaunchConfig) Validate() error {
	switch {
	case c.Grid.hasZero():
		return fmt.Errorf("core: LaunchConfig: grid %v has a zero dimension", c.Grid)
	case c.Block.hasZero():
		return fmt.Errorf("core: LaunchConfig: block %v has a zero dimension", c.Block)
	case c.Block.X > 1024 || c.Block.Y > 1024 || c.Block.Z > 1024 ||
		uint64(c.Block.X)*uint64(c.Block.Y)*uint64(c.Block.Z) > 1024: // the product may wrap
		return fmt.Errorf("core: LaunchConfig: block %v has %d threads, more than 1024",
			c.Block, uint64(c.Block.X)*uint64(c.Block.Y)*uint64(c.Block.Z))
	case c.Block.Z > 64:
		return fmt.Errorf("core: LaunchConfig: block %v: z may be at most 64", c.Block)
	case c.Grid.X > math.MaxInt32 || c.Grid.Y > 65535 || c.Grid.Z > 65535:
		return fmt.Errorf("core: LaunchConfig: grid %v is larger than 2147483647x65535x65535", c.Grid)
	}
	if c.Cluster != (Dim3{}) {
		if c.Cluster.hasZero() {
			return fmt.Errorf("core: LaunchConfig: cluster %v has a zero dimension", c.Cluster)
		}
		if c.Grid.X%c.Cluster.X != 0 || c.Grid.Y%c.Cluster.Y != 0 || c.Grid.Z%c.Cluster.Z != 0 {
			return fmt.Errorf("core: LaunchConfig: grid %v is not a multiple of cluster %v", c.Grid, c.Cluster)
		}
	}
	return nil
}

// Bytes passes raw bytes as one kernel argument, such as a struct laid
// out as the kernel declares it; its length must be the parameter's size.
type Bytes []byte

// Launch queues kernel k on stream with the given shape and arguments.
//
// The arguments are checked against the kernel's parameters (count and
// sizes, from cuKernelGetParamInfo, read once per kernel) before anything
// is launched. Accepted types: int8, uint8, bool (1 byte), int16, uint16
// (2), int32, uint32, float32 (4), int64, uint64, float64, complex64, int,
// uint, uintptr (8), complex128 (16), *Buffer and driver.Deviceptr (the
// device address, 8 bytes), *StridedView (the address of its element
// (0, …, 0), 8 bytes: pass its strides as further arguments),
// ConditionalHandle (a graph's condition, 8 bytes:
// cudaGraphConditionalHandle), *TensorMap (a 128-byte `const
// __grid_constant__ CUtensorMap`), *TextureObject and *SurfaceObject (a
// cudaTextureObject_t or cudaSurfaceObject_t, 8 bytes), and Bytes for
// anything else. A Go int is 8 bytes: pass int32(n) for a C int. A
// *Buffer, *StridedView or *TensorMap of a closed Buffer, and a closed
// texture or surface object or one of a closed array, fail with
// ErrClosed.
//
// The arguments are packed into one buffer (on the stack, or pooled per
// kernel when large) and launched with cuLaunchKernel in one cgo call that
// also sets the context, or with cuLaunchKernelEx for clusters and
// cooperative launches. In steady state Launch allocates nothing.
func Launch(stream *Stream, cfg LaunchConfig, k *Kernel, args ...any) error {
	if k == nil {
		return errors.New("core: Launch: nil *Kernel")
	}
	if !cfg.common() {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("core: Launch %s: %w", k.name, err)
		}
	}
	if stream == nil {
		return fmt.Errorf("core: Launch %s: nil *Stream", k.name)
	}
	// Plain reads first (the closed checks, the layout, the packing), the
	// atomic adds that hold the kernel and stream last: an atomic add
	// waits for every read before it, so reads after it that miss the
	// cache (a driver call evicts much of what the last launch read) wait
	// one after the other. A closed kernel or stream still fails before a
	// bad argument, as when they were held first.
	if k.closed() {
		return launchClosed(k)
	}
	if stream.closed() {
		return ErrClosed
	}
	lay := k.layout()
	if lay == nil {
		return launchFirst(stream, &cfg, k, args)
	}
	// The packed arguments live on the stack, in a buffer only as large
	// as most kernels need (Go zeroes it on every call), or in a pooled
	// one for big parameter lists.
	switch {
	case lay.size <= 64:
		var small [64]byte
		return packAndLaunch(stream, &cfg, k, lay, small[:lay.size], args)
	case lay.size <= 512:
		var stack [512]byte
		return packAndLaunch(stream, &cfg, k, lay, stack[:lay.size], args)
	}
	big := k.bigBuffer(lay.size)
	err := packAndLaunch(stream, &cfg, k, lay, *big, args)
	k.bufPool.Put(big) // after the call: C read it
	return err
}

// common reports, in a few comparisons, whether c is a shape that
// Validate accepts without clusters: most launches' shapes. Each x-1 < n
// holds for 1 <= x <= n. Validate decides the others, and words their
// errors.
func (c *LaunchConfig) common() bool {
	g, b := c.Grid, c.Block
	return g.X-1 < math.MaxInt32 && g.Y-1 < 65535 && g.Z-1 < 65535 &&
		b.X-1 < 1024 && b.Y-1 < 1024 && b.Z-1 < 64 && b.X*b.Y*b.Z <= 1024 &&
		c.Cluster == Dim3{}
}

func launchClosed(k *Kernel) error {
	return fmt.Errorf("core: Launch %s: its ObjectCode is closed: %w", k.name, ErrClosed)
}

// launchFirst is Launch of a kernel whose parameter layout is not read
// yet: it reads it in the stream's context, then launches.
func launchFirst(stream *Stream, cfg *LaunchConfig, k *Kernel, args []any) error {
	if !k.acquire() {
		return launchClosed(k)
	}
	h, err := stream.acquire()
	if err == nil {
		_, err = k.loadParams(h)
		stream.release()
	}
	k.release()
	if err != nil {
		return err
	}
	return Launch(stream, *cfg, k, args...)
}

// packAndLaunch packs args into buf (zeroed, the layout's size), holds the
// kernel and stream, and launches. Errors come in Launch's order: a
// closed kernel or stream before a bad argument.
func packAndLaunch(stream *Stream, cfg *LaunchConfig, k *Kernel, lay *paramLayout, buf []byte, args []any) error {
	perr := packArgs(buf, k.name, lay.params, args)
	if !k.acquire() {
		return launchClosed(k)
	}
	h, err := stream.acquire()
	if err != nil {
		k.release()
		return err
	}
	// What the releases need is read now, while it is in the cache: the
	// driver call evicts much of what Go touched, and after it only the
	// counters themselves are touched.
	ctx := stream.ctx
	primary := ctx.primary
	if err = perr; err == nil {
		var p unsafe.Pointer // see cLaunch
		if len(buf) > 0 {
			p = unsafe.Pointer(&buf[0])
		}
		if cfg.Cluster != (Dim3{}) || cfg.Cooperative {
			err = cLaunchEx(h, k.handle, cfg, stream.handle, p, len(buf))
		} else {
			err = cLaunch(h, k.handle, cfg, stream.handle, p, len(buf))
		}
	}
	// Nothing between the acquires and here can panic (the packing is
	// done), so no defer is needed.
	releaseAfter(stream, ctx, primary)
	k.release()
	return err
}

// ArgumentInfo is where a kernel parameter lives in the parameter buffer.
type ArgumentInfo struct {
	Offset int
	Size   int
}

type paramLayout struct {
	params []ArgumentInfo
	size   int // bytes of the whole parameter buffer
	// inline holds params when there are few, so that reading them is no
	// further cache miss (it is in the Kernel, after the layout's header).
	inline [8]ArgumentInfo
}

// loadParams reads the kernel's parameter layout in context h, once.
func (k *Kernel) loadParams(h driver.Context) (*paramLayout, error) {
	k.paramMu.Lock()
	defer k.paramMu.Unlock()
	if lay := k.layout(); lay != nil {
		return lay, nil
	}
	lay := paramLayout{}
	for i := 0; ; i++ {
		off64, size64, err := cuKernelGetParamInfo(h, k.handle, uint64(i))
		if err != nil {
			if errors.Is(err, driver.ErrorInvalidValue) && i > 0 {
				break
			}
			if errors.Is(err, driver.ErrorInvalidValue) && i == 0 {
				break // no parameters
			}
			return nil, fmt.Errorf("core: kernel %s: parameter %d: %w", k.name, i, err)
		}
		off, size := int(off64), int(size64)
		lay.params = append(lay.params, ArgumentInfo{Offset: off, Size: size})
		if end := off + size; end > lay.size {
			lay.size = end
		}
	}
	k.setLayout(lay)
	return &k.lay, nil
}

// setLayout publishes lay as the kernel's layout, its parameters in the
// kernel itself when they are few.
func (k *Kernel) setLayout(lay paramLayout) {
	k.lay.size = lay.size
	if len(lay.params) <= len(k.lay.inline) {
		k.lay.params = k.lay.inline[:copy(k.lay.inline[:], lay.params)]
	} else {
		k.lay.params = lay.params
	}
	k.layReady.Store(true)
}

func (k *Kernel) bigBuffer(n int) *[]byte {
	if v, ok := k.bufPool.Get().(*[]byte); ok && cap(*v) >= n {
		*v = (*v)[:n]
		clear(*v)
		return v
	}
	b := make([]byte, n)
	return &b
}

// typeName names an argument's type without letting it escape.
func typeName(a any) string {
	switch a.(type) {
	case int8:
		return "int8"
	case uint8:
		return "uint8"
	case bool:
		return "bool"
	case int16:
		return "int16"
	case uint16:
		return "uint16"
	case int32:
		return "int32"
	case uint32:
		return "uint32"
	case float32:
		return "float32"
	case int64:
		return "int64"
	case uint64:
		return "uint64"
	case float64:
		return "float64"
	case complex64:
		return "complex64"
	case complex128:
		return "complex128"
	case int:
		return "int"
	case uint:
		return "uint"
	case uintptr:
		return "uintptr"
	case driver.Deviceptr:
		return "driver.Deviceptr"
	case *Buffer:
		return "*core.Buffer"
	case ConditionalHandle:
		return "core.ConditionalHandle"
	case Bytes:
		return "core.Bytes"
	case *TensorMap:
		return "*core.TensorMap"
	case *TextureObject:
		return "*core.TextureObject"
	case *SurfaceObject:
		return "*core.SurfaceObject"
	case nil:
		return "nil"
	}
	return reflect.TypeOf(a).String()
}

// launchPointer is an argument Launch passes as a device address: a
// *StridedView of any element type.
type launchPointer interface {
	launchPtr() (driver.Deviceptr, error)
}

// packArgs writes args into buf at the offsets of params, checking count,
// types and sizes. buf must be zeroed and as long as the layout. It is a
// pure function (no driver call). Each argument goes through one type
// switch that both sizes and writes it: this runs on every launch.
func packArgs(buf []byte, kernel string, params []ArgumentInfo, args []any) error {
	return packArgsAt(buf, "Launch", kernel, params, args, 0)
}

// packArgsFor is packArgs for operation op, which its errors name
// (Launch, Graph.Kernel).
func packArgsFor(buf []byte, op, kernel string, params []ArgumentInfo, args []any) error {
	return packArgsAt(buf, op, kernel, params, args, 0)
}

// packArgsAt is packArgsFor for the arguments from index first on (errors
// number them from there).
func packArgsAt(buf []byte, op, kernel string, params []ArgumentInfo, args []any, first int) error {
	if len(args) != len(params) {
		return fmt.Errorf("core: %s %s: kernel takes %d arguments, got %d", op, kernel, len(params), len(args))
	}
	le := binary.LittleEndian
	for j, a := range args {
		p, i := params[j], first+j
		if p.Offset < 0 || p.Size < 0 || p.Offset+p.Size > len(buf) {
			return fmt.Errorf("core: %s %s: parameter %d at offset %d does not fit the %d-byte parameter buffer", op, kernel, i, p.Offset, len(buf))
		}
		d := buf[p.Offset : p.Offset+p.Size]
		// n is the argument's size; it is written only when it matches.
		var n int
		switch v := a.(type) {
		case int8:
			if n = 1; len(d) == n {
				d[0] = byte(v)
			}
		case uint8:
			if n = 1; len(d) == n {
				d[0] = v
			}
		case bool:
			if n = 1; len(d) == n && v {
				d[0] = 1
			}
		case int16:
			if n = 2; len(d) == n {
				le.PutUint16(d, uint16(v))
			}
		case uint16:
			if n = 2; len(d) == n {
				le.PutUint16(d, v)
			}
		case int32:
			if n = 4; len(d) == n {
				le.PutUint32(d, uint32(v))
			}
		case uint32:
			if n = 4; len(d) == n {
				le.PutUint32(d, v)
			}
		case float32:
			if n = 4; len(d) == n {
				le.PutUint32(d, math.Float32bits(v))
			}
		case int64:
			if n = 8; len(d) == n {
				le.PutUint64(d, uint64(v))
			}
		case uint64:
			if n = 8; len(d) == n {
				le.PutUint64(d, v)
			}
		case float64:
			if n = 8; len(d) == n {
				le.PutUint64(d, math.Float64bits(v))
			}
		case complex64:
			if n = 8; len(d) == n {
				le.PutUint32(d, math.Float32bits(real(v)))
				le.PutUint32(d[4:], math.Float32bits(imag(v)))
			}
		case complex128:
			if n = 16; len(d) == n {
				le.PutUint64(d, math.Float64bits(real(v)))
				le.PutUint64(d[8:], math.Float64bits(imag(v)))
			}
		case int:
			if n = 8; len(d) == n {
				le.PutUint64(d, uint64(v))
			}
		case uint:
			if n = 8; len(d) == n {
				le.PutUint64(d, uint64(v))
			}
		case uintptr:
			if n = 8; len(d) == n {
				le.PutUint64(d, uint64(v))
			}
		case driver.Deviceptr:
			if n = 8; len(d) == n {
				le.PutUint64(d, uint64(v))
			}
		case *Buffer:
			if n = 8; len(d) == n {
				if v == nil {
					return fmt.Errorf("core: %s %s: argument %d is a nil *Buffer", op, kernel, i)
				}
				if v.closed() {
					return fmt.Errorf("core: %s %s: argument %d: %w", op, kernel, i, ErrClosed)
				}
				le.PutUint64(d, uint64(v.ptr))
			}
		case ConditionalHandle:
			if n = 8; len(d) == n {
				if v.g == nil {
					return fmt.Errorf("core: %s %s: argument %d is a zero ConditionalHandle (make one with Graph.NewCondition)", op, kernel, i)
				}
				le.PutUint64(d, uint64(v.h))
			}
		case Bytes:
			if n = len(v); len(d) == n {
				copy(d, v)
			}
		case *TensorMap:
			if n = tensorMapSize; len(d) == n {
				if err := packTensorMap(d, v); err != nil {
					return fmt.Errorf("core: %s %s: argument %d %w", op, kernel, i, err)
				}
			}
		case *TextureObject:
			if n = 8; len(d) == n {
				h, err := v.launchHandle()
				if err != nil {
					return fmt.Errorf("core: %s %s: argument %d %w", op, kernel, i, err)
				}
				le.PutUint64(d, h)
			}
		case *SurfaceObject:
			if n = 8; len(d) == n {
				h, err := v.launchHandle()
				if err != nil {
					return fmt.Errorf("core: %s %s: argument %d %w", op, kernel, i, err)
				}
				le.PutUint64(d, h)
			}
		case launchPointer:
			if n = 8; len(d) == n {
				ptr, err := v.launchPtr()
				if err != nil {
					return fmt.Errorf("core: %s %s: argument %d: %w", op, kernel, i, err)
				}
				le.PutUint64(d, uint64(ptr))
			}
		default:
			return fmt.Errorf("core: %s %s: argument %d has unsupported type %s (use fixed-size numbers, bool, *Buffer, *StridedView, *TensorMap, *TextureObject, *SurfaceObject, ConditionalHandle, driver.Deviceptr or core.Bytes)", op, kernel, i, typeName(a))
		}
		if n != p.Size {
			return fmt.Errorf("core: %s %s: argument %d is %s (%d bytes) but parameter %d takes %d bytes", op, kernel, i, typeName(a), n, i, p.Size)
		}
	}
	return nil
}
