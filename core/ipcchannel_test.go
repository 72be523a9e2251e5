package core

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ipcPair returns both ends of a channel on a socket in a fresh folder,
// closed at the end of the test.
func ipcPair(t *testing.T) (server, client *IPCChannel, path string) {
	t.Helper()
	l, path := ipcListen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dialed := dialAsync(ctx, path)
	server, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client, err = dialed()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client, path
}

// dialAsync dials path in a goroutine; the function it returns waits for
// the result.
func dialAsync(ctx context.Context, path string) func() (*IPCChannel, error) {
	type res struct {
		c   *IPCChannel
		err error
	}
	done := make(chan res, 1)
	go func() {
		c, err := DialIPC(ctx, path)
		done <- res{c, err}
	}()
	return func() (*IPCChannel, error) {
		r := <-done
		return r.c, r.err
	}
}

// ipcListen listens on a socket in a fresh, short folder (a socket path
// has at most 107 bytes).
func ipcListen(t *testing.T) (*IPCListener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "cgipc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	l, err := ListenIPC(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestIPCChannelMessages(t *testing.T) {
	s, c, path := ipcPair(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket file mode %v, want a socket with 0600", fi.Mode())
	}
	ctx := ctxT(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), IPCMaxMessage/16)
	for _, msg := range [][]byte{[]byte("hello"), {}, big} {
		if err := c.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
		got, err := s.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("received %d bytes, want the %d sent", len(got), len(msg))
		}
	}
	if err := s.Send(ctx, []byte("back")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Receive(ctx); err != nil || string(got) != "back" {
		t.Fatalf("Receive = %q, %v", got, err)
	}
	if err := c.Send(ctx, append(big, 0)); err == nil || !strings.Contains(err.Error(), "more than IPCMaxMessage") {
		t.Errorf("Send of IPCMaxMessage+1 bytes: %v", err)
	}
	// Messages in order, across concurrent sends from one side.
	const k = 50
	errc := make(chan error, 1)
	go func() {
		for i := range k {
			if err := c.Send(ctx, []byte{byte(i)}); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i := range k {
		got, err := s.Receive(ctx)
		if err != nil || len(got) != 1 || got[0] != byte(i) {
			t.Fatalf("message %d: %v, %v", i, got, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestIPCChannelFile(t *testing.T) {
	s, c, _ := ipcPair(t)
	ctx := ctxT(t)
	f, err := os.CreateTemp(t.TempDir(), "payload")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	content := []byte("the pool's descriptor travels as SCM_RIGHTS")
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := c.SendFile(ctx, f, []byte("meta")); err != nil {
		t.Fatal(err)
	}
	g, meta, err := s.ReceiveFile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if string(meta) != "meta" {
		t.Errorf("bytes with the file = %q", meta)
	}
	if g.Fd() == f.Fd() {
		t.Errorf("received descriptor %d is the sent one", g.Fd())
	}
	got := make([]byte, len(content))
	if _, err := g.ReadAt(got, 0); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("reading the received file: %q, %v", got, err)
	}
	fi1, _ := f.Stat()
	fi2, _ := g.Stat()
	if !os.SameFile(fi1, fi2) {
		t.Error("the received descriptor names another file")
	}
	flags, err := fcntlGetfd(g)
	if err != nil {
		t.Fatal(err)
	}
	if flags&syscall.FD_CLOEXEC == 0 {
		t.Error("the received descriptor is inherited by child processes (no FD_CLOEXEC)")
	}
	// The sender's file stays open.
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Errorf("the sent file after SendFile: %v", err)
	}
	if err := c.SendFile(ctx, nil, nil); err == nil {
		t.Error("SendFile(nil): no error")
	}
}

func fcntlGetfd(f *os.File) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var flags int
	var ferr error
	err = raw.Control(func(fd uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFD, 0)
		flags = int(r)
		if e != 0 {
			ferr = e
		}
	})
	if err != nil {
		return 0, err
	}
	return flags, ferr
}

func TestIPCChannelDescriptors(t *testing.T) {
	s, c, _ := ipcPair(t)
	ctx := ctxT(t)
	var d IPCBufferDescriptor
	for i := range d.Data {
		d.Data[i] = byte(i*13 + 1)
	}
	d.Size = 3<<20 + 5
	if err := c.sendDescriptor(ctx, d); err != nil {
		t.Fatal(err)
	}
	got, err := s.receiveDescriptor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != d {
		t.Fatalf("descriptor round trip: %+v, want %+v", got, d)
	}
	// A pool: a descriptor and a device UUID.
	f, err := os.CreateTemp(t.TempDir(), "pool")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const uuid = "6f3c2a10-0b7e-11f0-9d1c-5a2b3c4d5e6f"
	if err := c.sendPool(ctx, f, uuid); err != nil {
		t.Fatal(err)
	}
	g, u, err := s.receivePool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fi1, _ := f.Stat()
	fi2, _ := g.Stat()
	if u != uuid || !os.SameFile(fi1, fi2) {
		t.Errorf("pool round trip: UUID %q, same file %v", u, os.SameFile(fi1, fi2))
	}
}

func TestIPCBufferDescriptorEncoding(t *testing.T) {
	d := IPCBufferDescriptor{Size: 1 << 40}
	d.Data[0], d.Data[63] = 7, 9
	b, err := d.MarshalBinary()
	if err != nil || len(b) != ipcDescriptorLen {
		t.Fatalf("MarshalBinary: %d bytes, %v", len(b), err)
	}
	var e IPCBufferDescriptor
	if err := e.UnmarshalBinary(b); err != nil || e != d {
		t.Fatalf("UnmarshalBinary: %+v, %v", e, err)
	}
	for name, bad := range map[string][]byte{
		"short":     b[:len(b)-1],
		"long":      append(append([]byte(nil), b...), 0),
		"other tag": append([]byte("xxxxxxxxx"), b[9:]...),
		"size 0":    append(append([]byte(nil), b[:len(b)-8]...), 0, 0, 0, 0, 0, 0, 0, 0),
		"size < 0":  append(append([]byte(nil), b[:len(b)-8]...), 0, 0, 0, 0, 0, 0, 0, 0x80),
		"empty":     nil,
	} {
		var x IPCBufferDescriptor
		if err := x.UnmarshalBinary(bad); err == nil {
			t.Errorf("UnmarshalBinary of %s bytes: no error", name)
		}
	}
}

func TestIPCChannelWrongKind(t *testing.T) {
	s, c, _ := ipcPair(t)
	ctx := ctxT(t)
	if err := c.Send(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReceiveFile(ctx); err == nil || !strings.Contains(err.Error(), "sent a message, not a file") {
		t.Errorf("ReceiveFile of a message: %v", err)
	}
	// A file where a message is awaited is refused, and its descriptor
	// closed: the pipe's reader sees EOF once every write end is closed.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if err := c.SendFile(ctx, pw, nil); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if _, err := s.Receive(ctx); err == nil || !strings.Contains(err.Error(), "sent a file, not a message") {
		t.Errorf("Receive of a file: %v", err)
	}
	expectEOF(t, pr)
	if err := c.sendDescriptor(ctx, IPCBufferDescriptor{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.receivePool(ctx); err == nil || !strings.Contains(err.Error(), "buffer descriptor, not a memory pool") {
		t.Errorf("receiving a pool, sent a descriptor: %v", err)
	}
	// The channel still works.
	if err := c.Send(ctx, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Receive(ctx); err != nil || string(got) != "ok" {
		t.Fatalf("after refused messages: %q, %v", got, err)
	}
}

// expectEOF fails t unless reading r gives EOF soon: every write end of
// its pipe is closed, in this process too.
func expectEOF(t *testing.T, r *os.File) {
	t.Helper()
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("pipe read: %d bytes, %v; want EOF (a received descriptor was not closed)", n, err)
	}
}

// rawPeer connects to path without the protocol.
func rawPeer(t *testing.T, path string) *net.UnixConn {
	t.Helper()
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestIPCChannelBadPeer(t *testing.T) {
	l, path := ipcListen(t)
	// A peer that speaks something else.
	p := rawPeer(t, path)
	if _, err := p.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(ctxT(t)); err == nil || !strings.Contains(err.Error(), "not an IPCChannel") {
		t.Errorf("Accept of a peer that speaks HTTP: %v", err)
	}
	// A peer that says nothing: Accept ends with the context.
	rawPeer(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := l.Accept(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Accept of a silent peer: %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Accept took %v past a 200ms deadline", el)
	}
	// Another version of the protocol.
	p = rawPeer(t, path)
	if _, err := p.Write(append(append([]byte(nil), ipcTag...), append([]byte{ipcHello}, "cudago-ipc/99"...)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(ctxT(t)); err == nil || !strings.Contains(err.Error(), "cudago-ipc/99") {
		t.Errorf("Accept of a peer of another version: %v", err)
	}
	// A greeting, then a message with descriptors it should not carry:
	// refused, and the descriptors closed.
	p = rawPeer(t, path)
	ctx = ctxT(t)
	done := make(chan *IPCChannel, 1)
	go func() {
		ch, err := l.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- ch
	}()
	hello := append(append([]byte(nil), ipcTag...), append([]byte{ipcHello}, ipcVersion...)...)
	if _, err := p.Write(hello); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(make([]byte, 64)); err != nil { // the listener's greeting
		t.Fatal(err)
	}
	ch := <-done
	if ch == nil {
		return
	}
	defer ch.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	pr2, pw2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr2.Close()
	msg := append(append([]byte(nil), ipcTag...), ipcMessage, 'x')
	if _, _, err := p.WriteMsgUnix(msg, syscall.UnixRights(int(pw.Fd()), int(pw2.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	pw2.Close()
	if _, err := ch.Receive(ctx); err == nil || !strings.Contains(err.Error(), "came with 2 file descriptors, not 0") {
		t.Errorf("Receive of a message with descriptors: %v", err)
	}
	expectEOF(t, pr)
	expectEOF(t, pr2)
	// The peer goes away: io.EOF.
	p.Close()
	if _, err := ch.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Receive after the peer closed: %v, want io.EOF", err)
	}
}

func TestIPCChannelClosed(t *testing.T) {
	s, c, path := ipcPair(t)
	ctx := ctxT(t)
	closeTwice(t, c)
	if err := c.Send(ctx, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := c.Receive(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Receive after Close: %v", err)
	}
	if _, err := s.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Receive from a closed peer: %v, want io.EOF", err)
	}
	// A Receive in flight ends with ErrClosed when its own end closes.
	s2, c2, _ := ipcPair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s2.Receive(ctx)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	s2.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("Receive in flight when its channel closes: %v, want ErrClosed", err)
	}
	c2.Close()
	_ = path
}

func TestIPCListener(t *testing.T) {
	l, path := ipcListen(t)
	if l.Path() != path {
		t.Errorf("Path = %q, want %q", l.Path(), path)
	}
	if _, err := ListenIPC(path); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("ListenIPC on an existing path: %v", err)
	}
	if _, err := ListenIPC(""); err == nil {
		t.Error("ListenIPC(\"\"): no error")
	}
	if _, err := ListenIPC("/tmp/" + strings.Repeat("x", 120)); err == nil || !strings.Contains(err.Error(), "more than the 107") {
		t.Errorf("ListenIPC of a long path: %v", err)
	}
	closeTwice(t, l)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file after Close: %v", err)
	}
	if _, err := l.Accept(ctxT(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Accept after Close: %v, want ErrClosed", err)
	}
}

func TestIPCChannelContext(t *testing.T) {
	s, c, _ := ipcPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := s.Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Receive when ctx is cancelled: %v, want context.Canceled", err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if _, err := s.Receive(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Receive past ctx's deadline: %v, want context.DeadlineExceeded", err)
	}
	if err := c.Send(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with a cancelled ctx: %v", err)
	}
	// The deadlines are cleared: the channel works on.
	ok := ctxT(t)
	if err := c.Send(ok, []byte("later")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got, err := s.Receive(ok); err != nil || string(got) != "later" {
		t.Fatalf("Receive after timeouts: %q, %v", got, err)
	}
}

func TestDialIPCWaitsForListener(t *testing.T) {
	dir := try(os.MkdirTemp("", "cgipc")).must(t)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s")
	ctx := ctxT(t)
	dialed := dialAsync(ctx, path)
	time.Sleep(150 * time.Millisecond)
	l := try(ListenIPC(path)).must(t)
	defer l.Close()
	s := try(l.Accept(ctx)).must(t)
	defer s.Close()
	c := try(dialed()).must(t)
	c.Close()

	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := DialIPC(short, filepath.Join(dir, "nobody")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DialIPC of a path nobody listens on: %v, want DeadlineExceeded", err)
	}
	// A socket of another kind: refused at once.
	sl := try(net.Listen("unix", filepath.Join(dir, "stream"))).must(t)
	defer sl.Close()
	if _, err := DialIPC(ctxT(t), filepath.Join(dir, "stream")); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DialIPC of a stream socket: %v, want an immediate error", err)
	}
}

// Nil and zero channels and listeners give errors, never a panic.
func TestIPCZeroValues(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*IPCChannel{nil, {}} {
		if err := c.Send(ctx, []byte("x")); !errors.Is(err, errNoChannel) {
			t.Errorf("Send on %#v: %v", c, err)
		}
		if _, err := c.Receive(ctx); !errors.Is(err, errNoChannel) {
			t.Errorf("Receive on %#v: %v", c, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close of %#v: %v", c, err)
		}
	}
	for _, l := range []*IPCListener{nil, {}} {
		if _, err := l.Accept(ctx); err == nil {
			t.Errorf("Accept on %#v: no error", l)
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close of %#v: %v", l, err)
		}
	}
}
