package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// Sharing device memory between processes (as cuda.core's IPC-enabled
// DeviceMemoryResource).
//
// The exporting process makes an IPCMemoryResource, a stream-ordered pool
// of its own that the driver can share through a file descriptor, and
// allocates Buffers from it. The other process imports the pool once
// (ImportIPCMemoryResource, from the descriptor ExportHandle gives) and
// then each Buffer it is told about (ImportBuffer, from the 64-byte
// IPCBufferDescriptor that Buffer.IPCDescriptor gives). An IPCChannel
// (ListenIPC, DialIPC) carries both over a Unix-domain socket:
//
//	// exporter                                  // importer
//	r, _ := core.NewIPCMemoryResource(dev, nil)
//	buf, _ := r.Allocate(n, nil)
//	l, _ := core.ListenIPC(path)                 ch, _ := core.DialIPC(ctx, path)
//	ch, _ := l.Accept(ctx)
//	ch.SendMemoryResource(ctx, r)                mr, _ := ch.ReceiveMemoryResource(ctx)
//	ch.SendBuffer(ctx, buf)                      b, _ := ch.ReceiveBuffer(ctx, mr, nil)
//	                                             ... use b, then b.Close()
//	                                             ch.Send(ctx, []byte("done"))
//	ch.Receive(ctx) // "done"
//	buf.Close()
//
// The driver's rules, which core cannot check across processes: an
// importer must not touch a buffer before its allocation is complete in
// the exporter (Buffer.IPCDescriptor waits for the buffer's stream, so
// that holds for what was queued before it), and every importer must
// close its import before the exporter closes the buffer (Close of an
// imported Buffer returns once its free is complete, so an answer sent
// after it is enough). A descriptor of a buffer the exporter has closed
// names memory the pool may have handed out again: importing it is an
// error of the program, which the driver may or may not report.

// The handle type of shared pools: a file descriptor (Linux).
const ipcHandleType = driver.MemHandleTypePosixFileDescriptor

// IPCMemoryOptions configure NewIPCMemoryResource.
type IPCMemoryOptions struct {
	// MaxSize bounds the pool's memory, in bytes; 0 leaves the bound to
	// the driver (a system-dependent size).
	MaxSize int
}

// IPCMemoryResource is a device memory pool that can be shared with other
// processes: made by NewIPCMemoryResource in the process that allocates
// (the exporter), or by ImportIPCMemoryResource in one that uses the
// exporter's buffers (an importer), where Allocate is an error and
// ImportBuffer gives the Buffers.
//
// Allocations are stream-ordered, from the resource's own pool
// (cuMemAllocFromPoolAsync, freed by cuMemFreeAsync); unlike
// DeviceMemoryResource, closed Buffers are not kept for reuse, since a
// reused block would still be known to the importers under its old
// descriptor. An imported Buffer's Close frees the import
// (cuMemFreeAsync on its stream) and waits for that free to complete.
//
// Close destroys the pool; Buffers allocated or imported before stay
// valid until their own Close (the driver releases the pool after the
// last one). A forgotten resource is closed by a finalizer; its Buffers
// keep it alive.
type IPCMemoryResource struct {
	dev      *Device
	pool     driver.MemoryPool
	imported bool
	life     life
	cleanup  runtime.Cleanup
	// shared: the pool's handle was exported once. The driver refuses
	// cuMemPoolExportPointer (CUDA_ERROR_INVALID_VALUE, seen with driver
	// 580 on the H100) until the pool itself has been exported.
	shared    sync.Once
	sharedErr error
}

// NewIPCMemoryResource creates a pool on dev that can be shared with other
// processes through a file descriptor.
func NewIPCMemoryResource(dev *Device, options *IPCMemoryOptions) (*IPCMemoryResource, error) {
	opts := optsOf(options)
	if dev == nil {
		return nil, errors.New("core: NewIPCMemoryResource: nil *Device")
	}
	if opts.MaxSize < 0 {
		return nil, fmt.Errorf("core: NewIPCMemoryResource: negative MaxSize %d", opts.MaxSize)
	}
	types, err := dev.Attribute(driver.DeviceAttributeMempoolSupportedHandleTypes)
	if err != nil {
		return nil, err
	}
	if types&int(ipcHandleType) == 0 {
		return nil, fmt.Errorf("core: NewIPCMemoryResource: %v cannot share memory pools through file descriptors", dev)
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	props := driver.MemPoolProps{
		AllocType:   driver.MemAllocationTypePinned,
		HandleTypes: ipcHandleType,
		Location:    driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(dev.handle)},
		MaxSize:     uint64(opts.MaxSize),
	}
	pool, err := cuMemPoolCreate(h, &props)
	if err != nil {
		return nil, err
	}
	return newIPCMemoryResource(dev, pool, false), nil
}

func newIPCMemoryResource(dev *Device, pool driver.MemoryPool, imported bool) *IPCMemoryResource {
	r := &IPCMemoryResource{dev: dev, pool: pool, imported: imported}
	r.cleanup = runtime.AddCleanup(r, destroyPool, handleRef[driver.MemoryPool]{dev.primary, pool})
	return r
}

// destroyPool is the finalizer of a forgotten IPCMemoryResource; its
// error is recorded on the device's primary context.
func destroyPool(r handleRef[driver.MemoryPool]) {
	destroyForgotten(r.ctx, "IPCMemoryResource's pool", r.h, cuMemPoolDestroy)
}

// ImportIPCMemoryResource imports the pool another process exported
// (IPCMemoryResource.ExportHandle, carried here by an IPCChannel or any
// other way of passing a file descriptor) as a resource of dev, which must
// be the pool's device as this process numbers it. The handle may be
// closed afterwards: the driver keeps what it needs.
func ImportIPCMemoryResource(dev *Device, handle *os.File) (*IPCMemoryResource, error) {
	if dev == nil {
		return nil, errors.New("core: ImportIPCMemoryResource: nil *Device")
	}
	if handle == nil {
		return nil, errors.New("core: ImportIPCMemoryResource: nil handle")
	}
	raw, err := handle.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("core: ImportIPCMemoryResource: %w", err)
	}
	h, err := dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer dev.primary.release()
	var pool driver.MemoryPool
	cerr := raw.Control(func(fd uintptr) {
		// The driver takes the descriptor's number itself as the handle.
		pool, err = cuMemPoolImportFromShareableHandle(h, fdHandle(fd), ipcHandleType, 0)
	})
	if cerr != nil {
		return nil, fmt.Errorf("core: ImportIPCMemoryResource: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	r := newIPCMemoryResource(dev, pool, true)
	// As NVIDIA's streamOrderedAllocationIPC sample: grant dev read-write
	// access unless it has it (the pool's own device has; setting it for
	// that device is an error).
	loc := driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(dev.handle)}
	flags, err := cuMemPoolGetAccess(h, pool, &loc)
	if err == nil && flags != driver.MemAccessFlagsProtReadwrite {
		desc := driver.MemAccessDesc{Location: loc, Flags: driver.MemAccessFlagsProtReadwrite}
		err = cuMemPoolSetAccess(h, pool, &desc, 1)
	}
	if err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// fdHandle is a file descriptor as the void * handle that
// cuMemPoolImportFromShareableHandle takes (the number, not a pointer
// to it), made in C since Go may not make a pointer from an integer.
func fdHandle(fd uintptr) unsafe.Pointer { return hostPtr(driver.Deviceptr(fd)) }

// ExportHandle returns a file descriptor of the pool that another process
// imports with ImportIPCMemoryResource (IPCChannel.SendMemoryResource
// sends it). Close the file once it is sent. An imported pool cannot be
// exported again.
func (r *IPCMemoryResource) ExportHandle() (*os.File, error) {
	if r.imported {
		return nil, errors.New("core: IPCMemoryResource.ExportHandle: the pool is imported; only its exporter can share it")
	}
	if !r.life.acquire() {
		return nil, ErrClosed
	}
	defer r.life.release()
	h, err := r.dev.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer r.dev.primary.release()
	var fd int32
	if err := cuMemPoolExportToShareableHandle(h, unsafe.Pointer(&fd), r.pool, ipcHandleType, 0); err != nil {
		return nil, err
	}
	syscall.CloseOnExec(int(fd)) // not inherited by processes this one starts
	return os.NewFile(uintptr(fd), "cudago-ipc-pool"), nil
}

// Imported reports whether r was imported from another process.
func (r *IPCMemoryResource) Imported() bool { return r.imported }

// Allocate allocates size bytes from the pool ordered on stream (nil: the
// legacy default stream). It is an error on an imported resource.
func (r *IPCMemoryResource) Allocate(size int, stream *Stream) (*Buffer, error) {
	if r.imported {
		return nil, errors.New("core: IPCMemoryResource.Allocate: an imported pool cannot allocate; import the exporter's buffers with ImportBuffer")
	}
	s, err := checkAlloc("IPCMemoryResource", r.dev, size, stream)
	if err != nil {
		return nil, err
	}
	if !r.life.acquire() {
		return nil, ErrClosed
	}
	defer r.life.release()
	if size == 0 {
		return NewBuffer(0, 0, r, s), nil
	}
	h, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.release()
	p, err := cuMemAllocFromPoolAsync(h, largePages(size), r.pool, s.handle) // whole pages, as DeviceMemoryResource's
	if err != nil {
		return nil, err
	}
	return NewBuffer(p, size, r, s), nil
}

// ImportBuffer imports the buffer d describes (from Buffer.IPCDescriptor in
// the exporting process) into an imported resource. The Buffer's stream is
// stream (nil: the legacy default stream), on which its Close frees the
// import. d comes from another process: its size is that process's word,
// which the driver cannot check.
func (r *IPCMemoryResource) ImportBuffer(d IPCBufferDescriptor, stream *Stream) (*Buffer, error) {
	if !r.imported {
		return nil, errors.New("core: IPCMemoryResource.ImportBuffer: the pool is this process's own; import into the resource ImportIPCMemoryResource returns")
	}
	if d.Size <= 0 {
		return nil, fmt.Errorf("core: IPCMemoryResource.ImportBuffer: descriptor of %d bytes", d.Size)
	}
	s, err := checkAlloc("IPCMemoryResource", r.dev, d.Size, stream)
	if err != nil {
		return nil, err
	}
	if !r.life.acquire() {
		return nil, ErrClosed
	}
	defer r.life.release()
	h, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.release()
	data := driver.MemPoolPtrExportData{Reserved: d.Data}
	p, err := cuMemPoolImportPointer(h, r.pool, &data)
	if err != nil {
		return nil, err
	}
	return NewBuffer(p, d.Size, r, s), nil
}

// Deallocate frees ptr ordered on stream (nil or closed: the legacy
// default stream). For an imported buffer it then waits for that stream,
// so that the free is complete when Buffer.Close returns, as the driver
// requires before the exporter frees the memory. It works after Close.
func (r *IPCMemoryResource) Deallocate(ptr driver.Deviceptr, size int, stream *Stream) error {
	return freeAsync(r.dev, ptr, stream, r.imported)
}

// Close destroys the pool (see IPCMemoryResource). Closing twice is not an
// error.
func (r *IPCMemoryResource) Close() error {
	if r == nil || !r.life.close() {
		return nil
	}
	return destroyClosed(r.dev.primary, &r.cleanup, r.pool, cuMemPoolDestroy)
}

func (r *IPCMemoryResource) Device() *Device        { return r.dev }
func (r *IPCMemoryResource) DeviceAccessible() bool { return true }
func (r *IPCMemoryResource) HostAccessible() bool   { return false }

// IPCBufferDescriptor names a Buffer of an IPCMemoryResource for another
// process that imported the pool (IPCMemoryResource.ImportBuffer). It is
// data, not a handle: MarshalBinary gives bytes any channel can carry.
type IPCBufferDescriptor struct {
	// Data is the driver's export data (CUmemPoolPtrExportData): opaque.
	Data [64]byte
	// Size is the buffer's size in bytes.
	Size int
}

// The encoding of an IPCBufferDescriptor: a tag, the export data and the
// size (little-endian).
var ipcDescriptorTag = []byte("cgipcbuf1")

const ipcDescriptorLen = 9 + 64 + 8

// MarshalBinary encodes d in 81 bytes.
func (d IPCBufferDescriptor) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, ipcDescriptorLen)
	b = append(b, ipcDescriptorTag...)
	b = append(b, d.Data[:]...)
	return binary.LittleEndian.AppendUint64(b, uint64(d.Size)), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (d *IPCBufferDescriptor) UnmarshalBinary(b []byte) error {
	if len(b) != ipcDescriptorLen || !bytes.HasPrefix(b, ipcDescriptorTag) {
		return fmt.Errorf("core: IPCBufferDescriptor: %d bytes are not an encoded descriptor (%d bytes starting %q)", len(b), ipcDescriptorLen, ipcDescriptorTag)
	}
	n := binary.LittleEndian.Uint64(b[len(b)-8:])
	if n == 0 || n > uint64(maxInt) {
		return fmt.Errorf("core: IPCBufferDescriptor: bad size %d", n)
	}
	copy(d.Data[:], b[len(ipcDescriptorTag):])
	d.Size = int(n)
	return nil
}

const maxInt = int(^uint(0) >> 1)

// IPCDescriptor returns what another process needs to import b, a Buffer
// of an IPCMemoryResource of this process: send it with the pool's handle
// (IPCChannel.SendBuffer). It first waits for b's stream, so that the
// allocation, and the work queued there before, are complete when the
// importer uses the memory. Views cannot be shared (share their buffer
// and make the view in the other process), nor imported buffers.
func (b *Buffer) IPCDescriptor() (IPCBufferDescriptor, error) {
	if b == nil {
		return IPCBufferDescriptor{}, errors.New("core: Buffer.IPCDescriptor: nil *Buffer")
	}
	r, ok := b.mr.(*IPCMemoryResource)
	switch {
	case !ok:
		return IPCBufferDescriptor{}, fmt.Errorf("core: Buffer.IPCDescriptor: %T memory cannot be shared with other processes; allocate it from an IPCMemoryResource", b.mr)
	case r.imported:
		return IPCBufferDescriptor{}, errors.New("core: Buffer.IPCDescriptor: the buffer is imported; only its exporter can share it")
	case b.parent != nil:
		return IPCBufferDescriptor{}, errors.New("core: Buffer.IPCDescriptor: a view cannot be shared; share its buffer and make the view in the other process")
	}
	h, s, err := b.acquireWith(nil)
	if err != nil {
		return IPCBufferDescriptor{}, err
	}
	defer b.releaseWith(s)
	if b.size == 0 {
		return IPCBufferDescriptor{}, errors.New("core: Buffer.IPCDescriptor: an empty buffer cannot be shared")
	}
	if !r.life.acquire() {
		return IPCBufferDescriptor{}, ErrClosed
	}
	defer r.life.release()
	if err := cuStreamSynchronize(h, s.handle); err != nil {
		return IPCBufferDescriptor{}, err
	}
	r.shared.Do(func() {
		var fd int32
		if r.sharedErr = cuMemPoolExportToShareableHandle(h, unsafe.Pointer(&fd), r.pool, ipcHandleType, 0); r.sharedErr == nil {
			syscall.Close(int(fd))
		}
	})
	if r.sharedErr != nil {
		return IPCBufferDescriptor{}, r.sharedErr
	}
	data, err := cuMemPoolExportPointer(h, b.ptr)
	if err != nil {
		return IPCBufferDescriptor{}, err
	}
	return IPCBufferDescriptor{Data: data.Reserved, Size: b.size}, nil
}
