package core

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cudago/cudago/bindings/driver"
)

// Kernel is a GPU function of an ObjectCode. It is context-independent
// (a CUkernel): the same Kernel launches on any device the code loads on.
type Kernel struct {
	// What every launch reads comes first, in as few cache lines as can
	// be: the handle, the name (for errors), the guard, the layout.
	handle driver.Kernel
	name   string
	// life guards the kernel's driver calls (Launch...) against its
	// ObjectCode's Close, which closes it and waits for them.
	life     life
	layReady atomic.Bool // lay is read (launch.go)
	lay      paramLayout
	code     *ObjectCode // keeps the library loaded while the kernel lives

	// Launch state (launch.go): the lock of the layout's one reading, and
	// pooled parameter buffers for layouts too large for the stack.
	paramMu sync.Mutex
	bufPool sync.Pool
}

// newKernel is how ObjectCode hands out kernels; code (nil in tests)
// closes the kernel when it closes.
func newKernel(h driver.Kernel, name string, code *ObjectCode) *Kernel {
	k := &Kernel{handle: h, name: name, code: code}
	if code != nil {
		code.track(k)
	}
	return k
}

// acquire keeps the kernel's ObjectCode loaded for a driver call (see
// ObjectCode.Close); it reports false once the code is closed. Kernels
// made without an ObjectCode are always live.
func (k *Kernel) acquire() bool { return k.life.acquire() }

// closed reports whether the kernel's ObjectCode is closed: what acquire
// would refuse, read without holding anything.
func (k *Kernel) closed() bool { return k.life.closed() }

func (k *Kernel) release() { k.life.release() }

// layout returns the kernel's parameter layout, or nil before it is read
// (loadParams).
func (k *Kernel) layout() *paramLayout {
	if k.layReady.Load() {
		return &k.lay
	}
	return nil
}

// Name returns the kernel's name as it was looked up.
func (k *Kernel) Name() string { return k.name }

// Handle returns the driver's CUkernel.
func (k *Kernel) Handle() driver.Kernel { return k.handle }

// anyContext returns a context for kernel queries that name no device:
// device 0's primary context.
func anyContext() (*Context, error) {
	d, err := GetDevice(0)
	if err != nil {
		return nil, err
	}
	return d.primary, nil
}

// Arguments returns the kernel's parameters: their offsets and sizes in
// the parameter buffer (cuKernelGetParamInfo; read once, then cached).
func (k *Kernel) Arguments() ([]ArgumentInfo, error) {
	lay := k.layout()
	if lay == nil {
		if !k.acquire() {
			return nil, ErrClosed
		}
		defer k.release()
		c, err := anyContext()
		if err != nil {
			return nil, err
		}
		err = c.call(func(h driver.Context) (err error) {
			lay, err = k.loadParams(h)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return append([]ArgumentInfo(nil), lay.params...), nil
}

// NumArguments returns the number of the kernel's parameters.
func (k *Kernel) NumArguments() (int, error) {
	a, err := k.Arguments()
	return len(a), err
}

// Attribute queries a kernel attribute on dev (cuKernelGetAttribute, in
// dev's primary context, loading the kernel there if need be).
func (k *Kernel) Attribute(dev *Device, attr driver.FunctionAttribute) (int, error) {
	var v int32
	err := k.onDevice(dev, func(h driver.Context) (err error) {
		v, err = cuKernelGetAttribute(h, attr, k.handle, dev.handle)
		return err
	})
	return int(v), err
}

// SetAttribute sets a kernel attribute on dev (cuKernelSetAttribute).
func (k *Kernel) SetAttribute(dev *Device, attr driver.FunctionAttribute, value int) error {
	return k.onDevice(dev, func(h driver.Context) error {
		return cuKernelSetAttribute(h, attr, int32(value), k.handle, dev.handle)
	})
}

// onDevice calls f with the kernel held (see acquire) and dev's primary
// context acquired: the frame of the kernel's queries on a device. dev is
// read only once the kernel is held, so that a kernel of closed code
// gives ErrClosed whatever the device.
func (k *Kernel) onDevice(dev *Device, f func(h driver.Context) error) error {
	if !k.acquire() {
		return ErrClosed
	}
	defer k.release()
	err := dev.primary.call(f)
	runtime.KeepAlive(k)
	return err
}

// NumRegisters returns the registers each thread uses.
func (k *Kernel) NumRegisters(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeNumRegs)
}

// SharedMemoryBytes returns the static shared memory per block.
func (k *Kernel) SharedMemoryBytes(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeSharedSizeBytes)
}

// ConstMemoryBytes returns the constant memory the kernel uses.
func (k *Kernel) ConstMemoryBytes(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeConstSizeBytes)
}

// LocalMemoryBytes returns the local memory each thread uses.
func (k *Kernel) LocalMemoryBytes(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeLocalSizeBytes)
}

// MaxThreadsPerBlock returns the largest block the kernel can launch with
// on dev.
func (k *Kernel) MaxThreadsPerBlock(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeMaxThreadsPerBlock)
}

// PTXVersion returns the PTX virtual architecture the kernel was compiled
// for, times ten plus minor (90 for 9.0); BinaryVersion the binary one.
func (k *Kernel) PTXVersion(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributePtxVersion)
}

// BinaryVersion returns the binary architecture of the kernel (90 for sm_90).
func (k *Kernel) BinaryVersion(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeBinaryVersion)
}

// MaxDynamicSharedMemory returns the dynamic shared memory the kernel may
// be launched with on dev.
func (k *Kernel) MaxDynamicSharedMemory(dev *Device) (int, error) {
	return k.Attribute(dev, driver.FuncAttributeMaxDynamicSharedSizeBytes)
}

// SetMaxDynamicSharedMemory lets the kernel launch with up to n bytes of
// dynamic shared memory on dev (up to Device.MaxSharedMemoryPerBlockOptin
// minus its static shared memory).
func (k *Kernel) SetMaxDynamicSharedMemory(dev *Device, n int) error {
	return k.SetAttribute(dev, driver.FuncAttributeMaxDynamicSharedSizeBytes, n)
}

// MaxActiveBlocksPerMultiprocessor returns how many blocks of blockSize
// threads with dynSmem bytes of dynamic shared memory fit on one SM of dev
// (cuOccupancyMaxActiveBlocksPerMultiprocessor on the kernel's CUfunction
// in dev's primary context).
func (k *Kernel) MaxActiveBlocksPerMultiprocessor(dev *Device, blockSize, dynSmem int) (int, error) {
	if blockSize <= 0 || dynSmem < 0 {
		return 0, fmt.Errorf("core: MaxActiveBlocksPerMultiprocessor: bad block size %d or shared memory %d", blockSize, dynSmem)
	}
	var v int32
	err := k.onDevice(dev, func(h driver.Context) error {
		f, err := cuKernelGetFunction(h, k.handle)
		if err != nil {
			return err
		}
		v, err = cuOccupancyMaxActiveBlocksPerMultiprocessor(h, f, int32(blockSize), uint64(dynSmem))
		return err
	})
	return int(v), err
}

// SuggestedBlockSize returns the block size that maximizes occupancy on
// dev with dynSmem bytes of dynamic shared memory per block, and the
// smallest grid that reaches it (cuOccupancyMaxPotentialBlockSize).
func (k *Kernel) SuggestedBlockSize(dev *Device, dynSmem int) (minGrid, blockSize int, err error) {
	if dynSmem < 0 {
		return 0, 0, fmt.Errorf("core: SuggestedBlockSize: negative shared memory %d", dynSmem)
	}
	var g, b int32
	err = k.onDevice(dev, func(h driver.Context) error {
		f, err := cuKernelGetFunction(h, k.handle)
		if err != nil {
			return err
		}
		g, b, err = cuOccupancyMaxPotentialBlockSize(h, f, 0, uint64(dynSmem), 0)
		return err
	})
	return int(g), int(b), err
}
