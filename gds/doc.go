// Package gds is GPUDirect Storage on core's Buffers and Streams: it reads
// a file's bytes into GPU memory and writes GPU memory to files, through
// NVIDIA's cuFile library, synchronously or queued on a stream.
//
//	f, err := gds.Open("weights.bin", os.O_RDONLY, 0, nil)
//	defer f.Close()
//	buf, err := dev.Allocate(n, nil)
//	n, err := f.ReadAt(buf, 0)                 // as io.ReaderAt: io.EOF when short
//	p, err := f.ReadAtAsync(stream, view, off) // ordered on stream
//	n, err = p.Wait()
//
// A File is an *os.File registered with cuFile (cuFileHandleRegister);
// ReadAt and WriteAt take any Buffer (device, pinned or managed memory), or
// a View of one for a range of it, and any offset and size. Several
// goroutines may use one File.
//
// # The driver and its modes
//
// cuFile's driver is opened once per process, by the first Open (or
// OpenDriver), and stays open: cuFile counts its users and releases
// everything at exit, so the package never closes it by itself;
// CloseDriver does, for programs that want its pinned memory back. A
// failed open is remembered and returned again. Without a GPU the driver
// is not opened, and the error matches driver.ErrorNoDevice.
//
// cuFile moves data in one of two ways. With GPUDirect, the nvidia-fs
// kernel module (or, with CUDA 12.8 and newer, PCIe P2PDMA) lets storage
// DMA straight into GPU memory. Without it, or on a file system it does
// not support, cuFile's compatibility mode does POSIX reads and writes
// into host bounce buffers and copies them to and from GPU memory: the
// same API and results, the speed of the staged path. Driver says which
// mode the open driver is in, Check (and cudago doctor) what this machine
// offers.
//
// Compatibility mode is turned on by cuFile's configuration, which it
// reads when the driver opens, so it must be set before the first Open:
//
//   - "allow_compat_mode": true under "properties" in cufile.json lets
//     cuFile fall back to compatibility mode wherever GPUDirect cannot
//     be used (nvidia-fs not loaded, an unsupported file system); false
//     makes the driver refuse to open without nvidia-fs
//     (CU_FILE_DRIVER_NOT_INITIALIZED). "force_compat_mode": true uses
//     compatibility mode even where GPUDirect works.
//   - The variables CUFILE_ALLOW_COMPAT_MODE and CUFILE_FORCE_COMPAT_MODE
//     (true or false) override the file.
//   - CUFILE_ENV_PATH_JSON names the cufile.json to read; without it
//     cuFile reads /etc/cufile.json, and uses its defaults when there is
//     none (the libcufile of CUDA 12.4 then reports allow_compat_mode on;
//     NVIDIA's documentation disagrees with itself, so set it).
//   - cuFile's stream API (ReadAtAsync, WriteAtAsync) works only when a
//     cufile.json was read; without one they wait for the stream and
//     transfer synchronously.
//   - cuFile logs to cufile.log in the current directory unless
//     "logging": {"dir": ...} or CUFILE_LOGFILE_PATH (a file) says
//     otherwise.
//   - Tuning: "properties": "max_direct_io_size_kb" (the largest
//     request, 16384), "max_device_cache_size_kb" (GPU bounce buffers),
//     "posix_pool_slab_size_kb" and "posix_pool_slab_count" (the host
//     bounce buffers of compatibility mode), and "execution":
//     "parallel_io", "max_io_threads", "max_request_parallelism" (how
//     large requests are split across threads).
//
// A minimal cufile.json for a machine without nvidia-fs:
//
//	{ "properties": { "allow_compat_mode": true } }
//
// # The udev record
//
// In every mode, cuFile registers a file only after reading its volume's
// attributes from the udev database: the record of the block device under
// the file's file system, /run/udev/data/b<major>:<minor> (the device's
// numbers in decimal), and in it the properties ID_FS_USAGE and
// ID_FS_TYPE. A VM or container without udev has no such record, and
// cuFile registers no file at all, even in compatibility mode. Open then
// returns a *UdevError that names the fix with the real numbers and type:
//
//	gds: open /data/w.bin: cufile: cuFileHandleRegister: CU_FILE_HANDLE_NOT_REGISTERED:
//	cuFile reads the volume of /data/w.bin, on ext4 (/dev/vda), from udev's record of
//	block device 254:0, and there is no /run/udev/data/b254:0 (...); fix: write
//	/run/udev/data/b254:0 with the two lines udev writes, E:ID_FS_USAGE=filesystem and
//	E:ID_FS_TYPE=ext4: as root, mkdir -p /run/udev/data && printf '...' > /run/udev/data/b254:0
//
// Writing that file (in a container, mounting the host's /run/udev
// instead) is enough. File systems with no block device behind them
// (tmpfs, overlay, NFS, btrfs subvolumes: device major 0) have no record
// to write: put the files on ext4 or xfs. CheckUdev reports on a file or
// folder without opening anything, and cudago doctor on the current and
// the temporary folder.
//
// # Alignment
//
// O_DIRECT wants offsets and sizes in multiples of the block size, and
// Open asks for O_DIRECT; but ReadAt and WriteAt need no alignment: cuFile
// splits a request into its aligned part and the rest, which goes through
// its bounce buffers (in compatibility mode, through a second descriptor
// without O_DIRECT). Where the file system refuses O_DIRECT (tmpfs before
// Linux 6.6) Open keeps the file buffered (File.Direct reports which), and
// Open with Options.Buffered asks for that. The one place alignment is
// needed is cuFile's stream API with GPUDirect: there ReadAtAsync and
// WriteAtAsync refuse, before queuing anything, an offset or size that is
// not a multiple of 4096 bytes on an O_DIRECT file (ErrUnaligned).
//
// # Buffer registration
//
// Registering a buffer with cuFile (cuFileBufRegister) lets GPUDirect DMA
// into it directly instead of through cuFile's GPU bounce buffers; it pins
// the memory, so it pays for buffers that serve many transfers. Register
// registers a buffer for good; with GPUDirect a buffer is also registered
// by itself on its second transfer (in compatibility mode data goes
// through host memory anyway, and nothing is registered unless asked). A
// registration serves its buffer and every View of it, and ends by
// Deregister, CloseDriver, or when the buffer's memory is freed (Close,
// or its finalizer: core's Buffer.OnFree), after the transfers queued on
// streams that use it: cuFile never keeps an address that another
// allocation may get.
//
// # Streams
//
// ReadAtAsync and WriteAtAsync queue a transfer on a stream: it runs
// after the work queued there before it, and the work queued after it
// waits for it. cuFile reads the transfer's size and offsets, and writes
// its byte count, when the stream gets there, so they live in C memory
// that a host function queued after the transfer frees; Pending.Wait
// synchronizes the stream and returns the count. A transfer keeps its
// File, Buffer and registration in use until then: File.Close, Deregister
// and a registered buffer's Close wait for it.
//
// # Errors
//
// cuFile's failures are *cufile.Error values, which errors.Is matches
// against the cufile.OpError codes (cufile.DriverNotInitialized, ...) and,
// for CU_FILE_CUDA_DRIVER_ERROR, against driver.Result codes; the file
// system's are syscall.Errno values (syscall.EIO). A short read returns
// io.EOF, as io.ReaderAt does; a closed File gives an error matching
// os.ErrClosed, a closed Buffer or Stream core.ErrClosed; a file cuFile
// refused for want of its udev record, a *UdevError (errors.As), which
// still matches cuFile's code. Arguments (nil values, negative offsets,
// ranges past the largest offset, a write to a file opened read-only,
// memory of another device than the stream's, ErrUnaligned's offsets) are
// checked before anything is called, and a bad one is a *lib.ArgError
// naming it.
//
// The package is named gds, not cufile, because bindings/cufile is the C
// API itself; every call into libcufile goes through the generated
// in-context calls (calls_gen.go), which make the right CUDA context
// current within the cgo call.
package gds

//go:generate go run ../internal/bindgen -calls .
