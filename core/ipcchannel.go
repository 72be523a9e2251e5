package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// IPC channels: a Unix-domain socket between two processes of one user
// that carries the file descriptor of a shared pool (SCM_RIGHTS) and
// buffer descriptors, and any small message the two need to agree on the
// order of their work. Nothing in it needs a GPU.
//
// The socket is SOCK_SEQPACKET: every Send is one packet, received whole
// by one Receive, with the descriptors passed with it. Each packet starts
// with a tag and a kind, so that a peer that is not an IPCChannel, or that
// sends something other than what the receiver waits for, gives an error
// that says so; unexpected file descriptors are closed. Both ends check
// that the other runs as the same user (SO_PEERCRED), on top of the
// socket file's mode 0600.

// IPCMaxMessage is the most bytes one message may carry.
const IPCMaxMessage = 64 << 10

// The kinds of packets.
const (
	ipcHello      = 'H' // protocol version, first in each direction
	ipcMessage    = 'M' // bytes
	ipcFile       = 'F' // one file descriptor and bytes
	ipcPool       = 'P' // a pool's descriptor and its device's UUID
	ipcDescriptor = 'B' // an IPCBufferDescriptor
)

var (
	ipcTag     = []byte("cgipc")
	ipcVersion = []byte("cudago-ipc/1")
)

func ipcKindName(k byte) string {
	switch k {
	case ipcHello:
		return "a greeting"
	case ipcMessage:
		return "a message"
	case ipcFile:
		return "a file"
	case ipcPool:
		return "a memory pool"
	case ipcDescriptor:
		return "a buffer descriptor"
	}
	return fmt.Sprintf("a packet of unknown kind %q", k)
}

// The socket path limit of Linux (sun_path, with its NUL).
const maxSocketPath = 107

// IPCListener waits for IPC channels on a Unix-domain socket.
type IPCListener struct {
	l    *net.UnixListener
	path string
	mu   sync.Mutex // one Accept at a time: Accept sets the deadline
}

// ListenIPC creates the socket file path (mode 0600) and listens on it.
// The path must not exist; Close removes it.
func ListenIPC(path string) (*IPCListener, error) {
	if path == "" {
		return nil, errors.New("core: ListenIPC: empty path")
	}
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("core: ListenIPC: the path %q is %d bytes long, more than the %d of a Unix socket", path, len(path), maxSocketPath)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("core: ListenIPC: %s exists; remove it or choose another path", path)
	}
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("core: ListenIPC: %w", err)
	}
	// A connection made before the chmod is still checked (SO_PEERCRED).
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("core: ListenIPC: %w", err)
	}
	return &IPCListener{l: l, path: path}, nil
}

// Path returns the socket's path.
func (l *IPCListener) Path() string { return l.path }

// Accept waits for a process to DialIPC, until ctx is done, and greets it.
// A peer that runs as another user or does not speak the protocol is
// refused with an error.
func (l *IPCListener) Accept(ctx context.Context) (*IPCChannel, error) {
	if l == nil || l.l == nil {
		return nil, errors.New("core: IPCListener.Accept: nil or zero *IPCListener (make one with ListenIPC)")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var c *net.UnixConn
	err := withDeadline(ctx, l.l.SetDeadline, func() error {
		var err error
		c, err = l.l.AcceptUnix()
		return err
	})
	if err != nil {
		return nil, ipcErr("IPCListener.Accept", ctx, err)
	}
	// A peer that connects and says nothing must not hold Accept (and
	// the listener's lock) for ever: its greeting gets 10 s at most.
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return newIPCChannel(hctx, c, "IPCListener.Accept")
}

var errNoChannel = errors.New("nil or zero *IPCChannel (make one with Accept or DialIPC)")

// Close stops listening and removes the socket file. Channels accepted
// before stay open.
func (l *IPCListener) Close() error {
	if l == nil || l.l == nil {
		return nil
	}
	err := l.l.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// DialIPC connects to the IPCListener at path and greets it. Until ctx is
// done it tries again while the socket does not exist yet or nobody
// listens on it, so the listener may start after the dialer.
func DialIPC(ctx context.Context, path string) (*IPCChannel, error) {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unixpacket", path)
		if err == nil {
			return newIPCChannel(ctx, c.(*net.UnixConn), "DialIPC")
		}
		if !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("core: DialIPC: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("core: DialIPC: %w (last: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// IPCChannel is one end of a connection between two processes (see
// ListenIPC, DialIPC). One Send and one Receive may run at a time each,
// concurrently. Every call takes a context: its deadline or cancellation
// ends the call with an error that matches ctx.Err() (errors.Is).
type IPCChannel struct {
	c      *net.UnixConn
	rmu    sync.Mutex
	wmu    sync.Mutex
	closed chan struct{}
	once   sync.Once
}

// newIPCChannel checks the peer of c and greets it; fn names the caller
// in errors.
func newIPCChannel(ctx context.Context, c *net.UnixConn, fn string) (*IPCChannel, error) {
	ch := &IPCChannel{c: c, closed: make(chan struct{})}
	if err := ch.checkPeer(); err != nil {
		c.Close()
		return nil, fmt.Errorf("core: %s: %w", fn, err)
	}
	if err := ch.send(ctx, fn, ipcHello, ipcVersion, nil); err != nil {
		c.Close()
		return nil, err
	}
	v, _, err := ch.receive(ctx, fn, ipcHello)
	if err != nil {
		c.Close()
		return nil, err
	}
	if !bytes.Equal(v, ipcVersion) {
		c.Close()
		return nil, fmt.Errorf("core: %s: the peer speaks %q, not %q", fn, v, ipcVersion)
	}
	return ch, nil
}

// checkPeer refuses a peer that runs as another user.
func (c *IPCChannel) checkPeer() error {
	raw, err := c.c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("reading the peer's credentials: %w", cerr)
	}
	if uid := os.Getuid(); int(cred.Uid) != uid {
		return fmt.Errorf("refused a peer (process %d) that runs as user %d, not %d", cred.Pid, cred.Uid, uid)
	}
	return nil
}

// Send sends msg (at most IPCMaxMessage bytes) as one message.
func (c *IPCChannel) Send(ctx context.Context, msg []byte) error {
	return c.send(ctx, "IPCChannel.Send", ipcMessage, msg, nil)
}

// Receive waits for the next message, which must be one Send sent.
func (c *IPCChannel) Receive(ctx context.Context) ([]byte, error) {
	b, _, err := c.receive(ctx, "IPCChannel.Receive", ipcMessage)
	return b, err
}

// SendFile sends a duplicate of f's descriptor (SCM_RIGHTS) with msg; f
// stays open here.
func (c *IPCChannel) SendFile(ctx context.Context, f *os.File, msg []byte) error {
	if f == nil {
		return errors.New("core: IPCChannel.SendFile: nil *os.File")
	}
	return c.send(ctx, "IPCChannel.SendFile", ipcFile, msg, f)
}

// ReceiveFile waits for the next message, which must be one SendFile
// sent, and returns the file (a new descriptor of this process, to be
// closed by the caller) and the bytes sent with it.
func (c *IPCChannel) ReceiveFile(ctx context.Context) (*os.File, []byte, error) {
	b, f, err := c.receive(ctx, "IPCChannel.ReceiveFile", ipcFile)
	return f, b, err
}

// SendMemoryResource sends r's pool (its ExportHandle) and the UUID of its
// device, for ReceiveMemoryResource.
func (c *IPCChannel) SendMemoryResource(ctx context.Context, r *IPCMemoryResource) error {
	if r == nil {
		return errors.New("core: IPCChannel.SendMemoryResource: nil *IPCMemoryResource")
	}
	f, err := r.ExportHandle()
	if err != nil {
		return err
	}
	defer f.Close()
	return c.sendPool(ctx, f, r.dev.UUID())
}

// ReceiveMemoryResource waits for a pool that SendMemoryResource sent and
// imports it (ImportIPCMemoryResource) on the device with the same UUID.
func (c *IPCChannel) ReceiveMemoryResource(ctx context.Context) (*IPCMemoryResource, error) {
	f, uuid, err := c.receivePool(ctx)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.UUID() == uuid {
			return ImportIPCMemoryResource(d, f)
		}
	}
	return nil, fmt.Errorf("core: IPCChannel.ReceiveMemoryResource: the pool is on the device with UUID %s, which this process does not see (CUDA_VISIBLE_DEVICES?)", uuid)
}

// SendBuffer sends b's descriptor (Buffer.IPCDescriptor), for
// ReceiveBuffer. Keep b open until the peer has closed its import.
func (c *IPCChannel) SendBuffer(ctx context.Context, b *Buffer) error {
	d, err := b.IPCDescriptor()
	if err != nil {
		return err
	}
	return c.sendDescriptor(ctx, d)
}

// ReceiveBuffer waits for a buffer that SendBuffer sent and imports it
// into r (IPCMemoryResource.ImportBuffer), with stream as its stream.
func (c *IPCChannel) ReceiveBuffer(ctx context.Context, r *IPCMemoryResource, stream *Stream) (*Buffer, error) {
	if r == nil {
		return nil, errors.New("core: IPCChannel.ReceiveBuffer: nil *IPCMemoryResource")
	}
	d, err := c.receiveDescriptor(ctx)
	if err != nil {
		return nil, err
	}
	return r.ImportBuffer(d, stream)
}

func (c *IPCChannel) sendPool(ctx context.Context, f *os.File, uuid string) error {
	return c.send(ctx, "IPCChannel.SendMemoryResource", ipcPool, []byte(uuid), f)
}

func (c *IPCChannel) receivePool(ctx context.Context) (*os.File, string, error) {
	b, f, err := c.receive(ctx, "IPCChannel.ReceiveMemoryResource", ipcPool)
	return f, string(b), err
}

func (c *IPCChannel) sendDescriptor(ctx context.Context, d IPCBufferDescriptor) error {
	b, err := d.MarshalBinary()
	if err != nil {
		return err
	}
	return c.send(ctx, "IPCChannel.SendBuffer", ipcDescriptor, b, nil)
}

func (c *IPCChannel) receiveDescriptor(ctx context.Context) (IPCBufferDescriptor, error) {
	var d IPCBufferDescriptor
	b, _, err := c.receive(ctx, "IPCChannel.ReceiveBuffer", ipcDescriptor)
	if err != nil {
		return d, err
	}
	if err := d.UnmarshalBinary(b); err != nil {
		return d, fmt.Errorf("core: IPCChannel.ReceiveBuffer: %w", err)
	}
	return d, nil
}

// Close closes the connection; the peer's calls then fail with io.EOF
// (errors.Is), this end's with ErrClosed. Closing twice is not an error.
func (c *IPCChannel) Close() error {
	if c == nil || c.c == nil {
		return nil
	}
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.c.Close()
	})
	return err
}

// send writes one packet: tag, kind, payload, and f's descriptor if any.
func (c *IPCChannel) send(ctx context.Context, fn string, kind byte, payload []byte, f *os.File) error {
	if c == nil || c.c == nil {
		return fmt.Errorf("core: %s: %w", fn, errNoChannel)
	}
	if len(payload) > IPCMaxMessage {
		return fmt.Errorf("core: %s: %d bytes are more than IPCMaxMessage (%d)", fn, len(payload), IPCMaxMessage)
	}
	if c.isClosed() {
		return ErrClosed
	}
	pkt := make([]byte, 0, len(ipcTag)+1+len(payload))
	pkt = append(append(append(pkt, ipcTag...), kind), payload...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	err := withDeadline(ctx, c.c.SetWriteDeadline, func() error {
		if f == nil {
			_, _, err := c.c.WriteMsgUnix(pkt, nil, nil)
			return err
		}
		raw, err := f.SyscallConn()
		if err != nil {
			return err
		}
		var werr error
		if err := raw.Control(func(fd uintptr) {
			_, _, werr = c.c.WriteMsgUnix(pkt, syscall.UnixRights(int(fd)), nil)
		}); err != nil {
			return err
		}
		return werr
	})
	return c.ioErr(fn, ctx, err)
}

// receive reads one packet, which must be of kind want, and returns its
// payload and, for the kinds that carry one, its file.
func (c *IPCChannel) receive(ctx context.Context, fn string, want byte) ([]byte, *os.File, error) {
	if c == nil || c.c == nil {
		return nil, nil, fmt.Errorf("core: %s: %w", fn, errNoChannel)
	}
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	buf := make([]byte, len(ipcTag)+1+IPCMaxMessage+1)
	oob := make([]byte, syscall.CmsgSpace(4*4)) // room for 4: more are cut off, and refused
	var n, oobn, flags int
	err := withDeadline(ctx, c.c.SetReadDeadline, func() error {
		var err error
		n, oobn, flags, _, err = c.c.ReadMsgUnix(buf, oob)
		return err
	})
	if err != nil {
		return nil, nil, c.ioErr(fn, ctx, err)
	}
	fds, perr := parseRights(oob[:oobn])
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "cudago-ipc")
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	bad := func(format string, a ...any) ([]byte, *os.File, error) {
		closeAll()
		return nil, nil, fmt.Errorf("core: %s: "+format, append([]any{fn}, a...)...)
	}
	switch {
	case perr != nil:
		return bad("reading the descriptors sent: %v", perr)
	case flags&syscall.MSG_CTRUNC != 0:
		return bad("the peer sent more file descriptors than any message carries")
	case n == 0:
		return bad("the peer closed the channel: %w", io.EOF)
	case flags&syscall.MSG_TRUNC != 0 || n > len(buf)-1:
		return bad("the peer sent a message of more than IPCMaxMessage (%d) bytes", IPCMaxMessage)
	case n < len(ipcTag)+1 || !bytes.HasPrefix(buf, ipcTag):
		return bad("the peer is not an IPCChannel: it sent %q", buf[:min(n, 32)])
	}
	kind, payload := buf[len(ipcTag)], buf[len(ipcTag)+1:n]
	if kind != want {
		return bad("the peer sent %s, not %s", ipcKindName(kind), ipcKindName(want))
	}
	wantFiles := 0
	if kind == ipcFile || kind == ipcPool {
		wantFiles = 1
	}
	if len(files) != wantFiles {
		return bad("%s came with %d file descriptors, not %d", ipcKindName(kind), len(files), wantFiles)
	}
	var f *os.File
	if wantFiles == 1 {
		f = files[0]
	}
	return bytes.Clone(payload), f, nil
}

// parseRights returns the descriptors of the SCM_RIGHTS messages in oob.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	var first error
	for i := range msgs {
		if msgs[i].Header.Level != syscall.SOL_SOCKET || msgs[i].Header.Type != syscall.SCM_RIGHTS {
			continue
		}
		got, err := syscall.ParseUnixRights(&msgs[i])
		if err != nil && first == nil {
			first = err
		}
		fds = append(fds, got...)
	}
	return fds, first
}

func (c *IPCChannel) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// ioErr names the failing call, and says closed, peer gone, or ctx done.
func (c *IPCChannel) ioErr(fn string, ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if c.isClosed() {
		return ErrClosed
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("core: %s: the peer closed the channel: %w", fn, io.EOF)
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("core: %s: the peer closed the channel: %w (%w)", fn, io.EOF, err)
	}
	return ipcErr(fn, ctx, err)
}

func ipcErr(fn string, ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("core: %s: %w", fn, cerr)
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(dl) {
		// ctx's deadline, reached before ctx itself says so.
		return fmt.Errorf("core: %s: %w", fn, context.DeadlineExceeded)
	}
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("core: %s: %w", fn, err)
}

// withDeadline runs op with ctx's deadline set through set, and makes it
// return early (a deadline in the past) when ctx is cancelled.
func withDeadline(ctx context.Context, set func(time.Time) error, op func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, _ := ctx.Deadline() // the zero time: none
	if err := set(dl); err != nil {
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		set(time.Unix(1, 0))
		close(fired)
	})
	err := op()
	if !stop() {
		<-fired // let it finish before the deadline is cleared
	}
	set(time.Time{})
	return err
}
