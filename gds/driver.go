package gds

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// drv is the process's cuFile driver. cuFile counts opens, and one open
// serves every File, buffer and stream of the process: it is opened on
// first use and never closed by this package (cuFile releases everything
// at exit), unless CloseDriver is called. A failed open is remembered and
// returned again: trying again gives the same answer and costs cuFile's
// initialization and an error in its log each time.
var drv struct {
	mu      sync.Mutex
	opened  atomic.Bool
	err     error
	ctx     driver.Context // device 0's primary context: for calls that need one but no buffer's
	info    DriverInfo
	async   bool // the stream API can be used (see asyncAvailable)
	noAsync string
}

// openFiles counts the Files open, which CloseDriver refuses to pull the
// driver from under.
var openFiles atomic.Int64

// OpenDriver opens the cuFile driver, once per process; Open does it too.
// cuFile reads its configuration (cufile.json and the CUFILE_ variables;
// see the package documentation) when it opens, so set those before.
// Without a GPU the driver is not opened: the error matches
// driver.ErrorNoDevice (cuInit's CUDA_ERROR_NO_DEVICE). The error of a
// failed open is returned by every later call too.
func OpenDriver() error {
	if drv.opened.Load() {
		return nil
	}
	drv.mu.Lock()
	defer drv.mu.Unlock()
	return openLocked()
}

func openLocked() error {
	if drv.opened.Load() {
		return nil
	}
	if drv.err != nil {
		return drv.err
	}
	if err := openDriver(); err != nil {
		drv.err = err
		return err
	}
	drv.opened.Store(true)
	return nil
}

func openDriver() error {
	// cuFile dlopens libcuda.so.1 itself; core's loading it first (by
	// soname, from where cudago finds it) makes cuFile use the same one.
	dev, err := core.GetDevice(0)
	if err != nil {
		return fmt.Errorf("gds: no GPU, so the cuFile driver was not opened: %w", err)
	}
	ctx, err := dev.PrimaryContext().Handle()
	if err != nil {
		return fmt.Errorf("gds: opening the cuFile driver: %w", err)
	}
	if err := cuFileDriverOpen(ctx); err != nil {
		return fmt.Errorf("gds: opening the cuFile driver: %w%s", err, driverHint(err))
	}
	info := DriverInfo{}
	var v int32
	if cuFileGetVersion(ctx, &v) == nil && v > 0 {
		info.Version = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	// Into a local: cgo refuses a pointer into info, which holds strings.
	var props cufile.DrvProps
	if err := cuFileDriverGetProperties(ctx, &props); err != nil {
		info.PropsErr = err.Error()
	}
	info.Props = props
	info.fill()
	drv.ctx, drv.info = ctx, info
	drv.async, drv.noAsync = asyncAvailable(ReadConfig())
	return nil
}

// driverHint explains the driver's usual refusal.
func driverHint(err error) string {
	if errors.Is(err, cufile.DriverNotInitialized) {
		return " (the nvidia-fs kernel module is not loaded and cuFile's compatibility mode is off: set CUFILE_ALLOW_COMPAT_MODE=true, or \"allow_compat_mode\": true under \"properties\" in the cufile.json that CUFILE_ENV_PATH_JSON names, /etc/cufile.json by default)"
	}
	return ""
}

// asyncAvailable reports whether ReadAtAsync and WriteAtAsync can use
// cuFile's stream API: the library must have it (libcufile 1.7, CUDA
// 12.2), and it works only when cuFile has read a configuration file (as
// KvikIO found, which falls back the same way). Otherwise they wait for
// the stream and transfer synchronously; the string says why.
func asyncAvailable(c Config) (bool, string) {
	if _, err := cufile.Proc("cuFileReadAsync"); err != nil {
		return false, "libcufile lacks the stream API (cuFileReadAsync, from 1.7 / CUDA 12.2)"
	}
	if _, err := cufile.Proc("cuFileWriteAsync"); err != nil {
		return false, "libcufile lacks the stream API (cuFileWriteAsync, from 1.7 / CUDA 12.2)"
	}
	if !c.Found {
		return false, "no cufile.json: cuFile's stream API needs one (" + c.Path + ")"
	}
	return true, ""
}

// CloseDriver deregisters every registered buffer and closes the cuFile
// driver, if this package opened it; the next use opens it again (and
// forgets the error of an open that failed). Close every File first: with
// Files open it does nothing and says so. A program never needs it (the
// driver's resources go at exit); it gives back the memory cuFile pinned.
func CloseDriver() error {
	drv.mu.Lock()
	defer drv.mu.Unlock()
	if n := openFiles.Load(); n > 0 {
		return fmt.Errorf("gds: CloseDriver: %d File(s) still open", n)
	}
	errs := []error{dropAll()}
	if drv.opened.Load() {
		if err := cuFileDriverCloseV2(drv.ctx); err != nil {
			errs = append(errs, fmt.Errorf("gds: closing the cuFile driver: %w", err))
		}
		drv.opened.Store(false)
	}
	drv.err = nil
	return errors.Join(errs...)
}

// Mode is how cuFile moves data between files and GPU memory.
type Mode int

const (
	// ModeUnknown: the driver is not open, or said nothing either way.
	ModeUnknown Mode = iota
	// ModeGPUDirect: DMA between storage and GPU memory, through the
	// nvidia-fs kernel module (or PCIe P2PDMA), for the files and file
	// systems that support it; cuFile falls back to its compatibility
	// mode for the others when allowed.
	ModeGPUDirect
	// ModeCompat: cuFile's compatibility mode: POSIX reads and writes
	// into host bounce buffers and copies to and from GPU memory.
	ModeCompat
)

func (m Mode) String() string {
	switch m {
	case ModeGPUDirect:
		return "GPUDirect"
	case ModeCompat:
		return "compatibility"
	}
	return "unknown"
}

// DriverInfo describes the open cuFile driver.
type DriverInfo struct {
	// Version is libcufile's, "1.9" (cuFileGetVersion; "" before 1.8).
	Version string
	// Mode is what the driver's properties say.
	Mode Mode
	// NvidiaFS is the nvidia-fs version the driver talks to ("" when
	// the module is not loaded).
	NvidiaFS string
	// AllowCompat and PollMode are the driver's control flags
	// (allow_compat_mode, use_poll_mode).
	AllowCompat, PollMode bool
	// MaxDirectIOSize is the largest piece cuFile moves in one request,
	// in bytes (properties.max_direct_io_size_kb).
	MaxDirectIOSize int64
	// Props are cuFileDriverGetProperties's, as they came; PropsErr its
	// error, if it failed.
	Props    cufile.DrvProps
	PropsErr string
}

func (i *DriverInfo) fill() {
	p := &i.Props
	if p.Nvfs.MajorVersion != 0 || p.Nvfs.MinorVersion != 0 {
		i.NvidiaFS = fmt.Sprintf("%d.%d", p.Nvfs.MajorVersion, p.Nvfs.MinorVersion)
	}
	i.AllowCompat = p.Nvfs.Dcontrolflags&(1<<cufile.AllowCompatMode) != 0
	i.PollMode = p.Nvfs.Dcontrolflags&(1<<cufile.UsePollMode) != 0
	i.MaxDirectIOSize = int64(p.Nvfs.MaxDirectIoSize) << 10
	switch {
	case i.NvidiaFS != "" || p.Nvfs.Dstatusflags&(1<<cufile.NvmeP2PSupported) != 0:
		i.Mode = ModeGPUDirect
	case i.AllowCompat:
		i.Mode = ModeCompat
	}
}

// Driver opens the driver if needed and describes it.
func Driver() (DriverInfo, error) {
	if err := OpenDriver(); err != nil {
		return DriverInfo{}, err
	}
	return drv.info, nil
}

// driverCtx is the context for calls that take no buffer: device 0's
// primary context, or 0 before the driver opened.
func driverCtx() driver.Context { return drv.ctx }

// devicePtr is a device address as the pointer cuFile's C API takes.
func devicePtr(p driver.Deviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// streamPtr is a stream handle as cuFile's C API takes it (CUstream).
func streamPtr(s driver.Stream) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&s))
}

// nvidiaFS reports whether the nvidia-fs kernel module is loaded, from
// sysfs (or /proc/modules), and its version, read under root ("/" but in
// tests).
func nvidiaFS(root string) (loaded bool, version string) {
	read := func(p string) string {
		b, err := os.ReadFile(root + p)
		if err != nil {
			return ""
		}
		return string(b)
	}
	if fi, err := os.Stat(root + "/sys/module/nvidia_fs"); err == nil && fi.IsDir() {
		loaded = true
	} else {
		for _, line := range strings.Split(read("/proc/modules"), "\n") {
			if strings.HasPrefix(line, "nvidia_fs ") {
				loaded = true
			}
		}
	}
	if !loaded {
		return false, ""
	}
	if v := strings.TrimSpace(read("/sys/module/nvidia_fs/version")); v != "" {
		return true, v
	}
	// /proc/driver/nvidia-fs/version: "version: 2.17.5" and more lines.
	for _, line := range strings.Split(read("/proc/driver/nvidia-fs/version"), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "version:"); ok {
			return true, strings.TrimSpace(v)
		}
	}
	return true, ""
}
