package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
)

// fakeDevice is a Device that never reaches the driver, with the primary
// context its streams need.
func fakeDevice(ordinal int) *Device {
	d := &Device{ordinal: ordinal}
	d.primary = newPrimaryContext(d)
	return d
}

func TestIPCMemoryResourceMisuse(t *testing.T) {
	if _, err := NewIPCMemoryResource(nil, nil); err == nil {
		t.Error("NewIPCMemoryResource(nil): no error")
	}
	d := fakeDevice(0)
	if _, err := NewIPCMemoryResource(d, &IPCMemoryOptions{MaxSize: -1}); err == nil || !strings.Contains(err.Error(), "negative MaxSize") {
		t.Errorf("NewIPCMemoryResource with MaxSize -1: %v", err)
	}
	f, err := os.CreateTemp(t.TempDir(), "h")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ImportIPCMemoryResource(nil, f); err == nil {
		t.Error("ImportIPCMemoryResource(nil device): no error")
	}
	if _, err := ImportIPCMemoryResource(d, nil); err == nil {
		t.Error("ImportIPCMemoryResource(nil handle): no error")
	}

	imp := &IPCMemoryResource{dev: d, imported: true}
	if _, err := imp.Allocate(16, nil); err == nil || !strings.Contains(err.Error(), "imported pool cannot allocate") {
		t.Errorf("Allocate on an imported resource: %v", err)
	}
	if _, err := imp.ExportHandle(); err == nil || !strings.Contains(err.Error(), "only its exporter") {
		t.Errorf("ExportHandle of an imported resource: %v", err)
	}
	if _, err := imp.ImportBuffer(IPCBufferDescriptor{}, nil); err == nil || !strings.Contains(err.Error(), "descriptor of 0 bytes") {
		t.Errorf("ImportBuffer of an empty descriptor: %v", err)
	}
	if !imp.Imported() || imp.HostAccessible() || !imp.DeviceAccessible() || imp.Device() != d {
		t.Error("an imported resource's properties")
	}
	own := &IPCMemoryResource{dev: d}
	if _, err := own.ImportBuffer(IPCBufferDescriptor{Size: 8}, nil); err == nil || !strings.Contains(err.Error(), "this process's own") {
		t.Errorf("ImportBuffer into the exporter's resource: %v", err)
	}
	other := fakeDevice(1)
	if _, err := own.Allocate(16, &Stream{ctx: other.primary}); err == nil || !strings.Contains(err.Error(), "stream is on") {
		t.Errorf("Allocate on another device's stream: %v", err)
	}
	if _, err := own.Allocate(-1, nil); err == nil || !strings.Contains(err.Error(), "negative size") {
		t.Errorf("Allocate(-1): %v", err)
	}
	// Closed: no allocation, no export, no import (no driver call: the
	// guard comes first).
	own.life.close()
	impClosed := &IPCMemoryResource{dev: d, imported: true}
	impClosed.life.close()
	if _, err := own.Allocate(16, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Allocate after Close: %v", err)
	}
	if _, err := own.ExportHandle(); !errors.Is(err, ErrClosed) {
		t.Errorf("ExportHandle after Close: %v", err)
	}
	if _, err := impClosed.ImportBuffer(IPCBufferDescriptor{Size: 8}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("ImportBuffer after Close: %v", err)
	}
	if err := own.Close(); err != nil {
		t.Errorf("Close of a closed resource: %v", err)
	}
	var nilR *IPCMemoryResource
	if err := nilR.Close(); err != nil {
		t.Errorf("Close of a nil resource: %v", err)
	}

	// Descriptors: only whole buffers of an exporter's resource.
	var nilB *Buffer
	if _, err := nilB.IPCDescriptor(); err == nil {
		t.Error("IPCDescriptor of a nil *Buffer: no error")
	}
	plain := &Buffer{ptr: 0x1000, size: 64, mr: &fakeMR{}}
	if _, err := plain.IPCDescriptor(); err == nil || !strings.Contains(err.Error(), "cannot be shared with other processes") {
		t.Errorf("IPCDescriptor of a non-IPC buffer: %v", err)
	}
	exp := &IPCMemoryResource{dev: d}
	whole := &Buffer{ptr: 0x1000, size: 64, mr: exp}
	v, err := whole.View(8, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.IPCDescriptor(); err == nil || !strings.Contains(err.Error(), "a view cannot be shared") {
		t.Errorf("IPCDescriptor of a view: %v", err)
	}
	imported := &Buffer{ptr: 0x1000, size: 64, mr: imp}
	if _, err := imported.IPCDescriptor(); err == nil || !strings.Contains(err.Error(), "the buffer is imported") {
		t.Errorf("IPCDescriptor of an imported buffer: %v", err)
	}
	whole.life.close()
	if _, err := whole.IPCDescriptor(); !errors.Is(err, ErrClosed) {
		t.Errorf("IPCDescriptor of a closed buffer: %v", err)
	}
	// The channel refuses them the same way, before sending anything.
	_, c, _ := ipcPair(t)
	ctx := ctxT(t)
	if err := c.SendBuffer(ctx, whole); !errors.Is(err, ErrClosed) {
		t.Errorf("SendBuffer of a closed buffer: %v", err)
	}
	if err := c.SendBuffer(ctx, plain); err == nil {
		t.Error("SendBuffer of a non-IPC buffer: no error")
	}
	if err := c.SendMemoryResource(ctx, imp); err == nil {
		t.Error("SendMemoryResource of an imported resource: no error")
	}
	if err := c.SendMemoryResource(ctx, nil); err == nil {
		t.Error("SendMemoryResource(nil): no error")
	}
	if _, err := c.ReceiveBuffer(ctx, nil, nil); err == nil {
		t.Error("ReceiveBuffer(nil resource): no error")
	}
}

// ipcCapable skips the test where dev cannot share pools through file
// descriptors (the driver says so; it fails under CUDAGO_REQUIRE_GPU=1 on
// a GPU that should).
func ipcCapable(t *testing.T, dev *Device) {
	t.Helper()
	v, err := dev.Attribute(driver.DeviceAttributeMempoolSupportedHandleTypes)
	if err != nil {
		t.Fatal(err)
	}
	if v&int(driver.MemHandleTypePosixFileDescriptor) == 0 {
		t.Skipf("%v cannot share memory pools through file descriptors (handle types %#x)", dev, v)
	}
}

// sharedPool is a new IPCMemoryResource of dev made with opts, closed at the
// end of the test, which it skips where dev cannot share it (ipcCapable).
func sharedPool(t *testing.T, dev *Device, opts *IPCMemoryOptions) *IPCMemoryResource {
	t.Helper()
	ipcCapable(t, dev)
	r := try(NewIPCMemoryResource(dev, opts)).must(t)
	t.Cleanup(func() { r.Close() })
	return r
}

// TestGPUIPCResource uses an IPCMemoryResource in one process: allocate,
// copy, describe, export, and the guards around Close.
func TestGPUIPCResource(t *testing.T) {
	dev := requireGPU(t)
	r := sharedPool(t, dev, &IPCMemoryOptions{MaxSize: 64 << 20})
	if r.Imported() {
		t.Error("a new resource says it is imported")
	}
	s := try(dev.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s.Close()
	const n = 1<<20 + 3
	b := try(r.Allocate(n, s)).must(t)
	want := pattern(n, 0x3c)
	if err := CopyToDevice(b, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := CopyFromDevice(got, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("round trip through an IPC pool buffer differs")
	}
	d := try(b.IPCDescriptor()).must(t)
	if d.Size != n || d.Data == ([64]byte{}) {
		t.Errorf("descriptor: size %d, data all zero %v", d.Size, d.Data == ([64]byte{}))
	}
	v, _ := b.View(16, 16)
	if _, err := v.IPCDescriptor(); err == nil {
		t.Error("descriptor of a view: no error")
	}
	f := try(r.ExportHandle()).must(t)
	if _, err := f.Stat(); err != nil {
		t.Errorf("the exported handle is not an open file: %v", err)
	}
	f.Close()
	if _, err := r.ImportBuffer(d, nil); err == nil {
		t.Error("ImportBuffer into the exporting resource: no error")
	}
	// More than MaxSize: refused by the driver.
	if big, err := r.Allocate(128<<20, s); err == nil {
		big.Close()
		t.Error("allocating 128 MiB from a pool of at most 64 MiB: no error")
	}
	// Buffers of a different device's stream are refused.
	if cnt, _ := DeviceCount(); cnt >= 2 {
		d1, _ := GetDevice(1)
		if _, err := r.Allocate(16, d1.DefaultStream()); err == nil {
			t.Error("Allocate on another device's stream: no error")
		}
	}
	// Closing the resource first: its buffers stay usable until their
	// own Close; it allocates and exports no more.
	closeTwice(t, r)
	if err := b.Memset8(0x42); err != nil {
		t.Fatalf("Memset8 of a buffer of a closed pool: %v", err)
	}
	if err := CopyFromDevice(got, b); err != nil || got[n-1] != 0x42 {
		t.Fatalf("reading a buffer of a closed pool: %#x, %v", got[n-1], err)
	}
	if _, err := r.Allocate(16, s); !errors.Is(err, ErrClosed) {
		t.Errorf("Allocate after Close: %v", err)
	}
	if _, err := r.ExportHandle(); !errors.Is(err, ErrClosed) {
		t.Errorf("ExportHandle after Close: %v", err)
	}
	if _, err := b.IPCDescriptor(); !errors.Is(err, ErrClosed) {
		t.Errorf("IPCDescriptor of a buffer of a closed pool: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close of a buffer after its pool's: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil { // nothing recorded meanwhile
		t.Errorf("Device.Sync: %v", err)
	}
}

// The child of TestGPUIPCChildProcess is this test binary run with
// -test.run=^TestHelperIPCChild$ and these variables.
const (
	ipcChildEnv     = "CUDAGO_IPC_CHILD"      // the socket path
	ipcChildSizeEnv = "CUDAGO_IPC_CHILD_SIZE" // the buffer's size
)

// The child's answers.
const (
	ipcAnswerOK       = "ok"
	ipcAnswerImported = "stale import: imported"
	ipcAnswerRefused  = "stale import: refused: "
)

// TestGPUIPCChildProcess shares a pool buffer with a child process: the
// parent writes a pattern and sends the pool and the buffer; the child
// imports them, checks every byte, writes a second pattern, closes its
// import and answers; the parent then reads the second pattern. Last, the
// parent sends the descriptor of a buffer it has already closed, and the
// child reports what importing it does (logged: the driver decides).
func TestGPUIPCChildProcess(t *testing.T) {
	dev := requireGPU(t)
	r := sharedPool(t, dev, nil)
	s := try(dev.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s.Close()
	const n = 4<<20 + 7
	b := try(r.Allocate(n, s)).must(t)
	defer b.Close()
	if err := CopyToDevice(b, pattern(n, 0xa1)); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	child := startIPCChild(t, ctx, "TestHelperIPCChild", ipcChildEnv, r, b, ipcChildSizeEnv+"="+strconv.Itoa(n))
	defer child.stop(t)
	ch := child.ch
	ans := try(ch.Receive(ctx)).must(t)
	if string(ans) != ipcAnswerOK {
		t.Fatalf("the child answered %q", ans)
	}
	got := make([]byte, n)
	if err := CopyFromDevice(got, b); err != nil {
		t.Fatal(err)
	}
	if want := pattern(n, 0x5e); !bytes.Equal(got, want) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		t.Fatalf("the child's pattern: byte %d = %#x, want %#x", i, got[i], want[i])
	}

	// A descriptor of a buffer closed (and freed) before it is sent.
	stale := try(r.Allocate(1<<20, s)).must(t)
	sd := try(stale.IPCDescriptor()).must(t)
	if err := stale.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil { // the free is done
		t.Fatal(err)
	}
	if err := ch.SendBuffer(ctx, stale); !errors.Is(err, ErrClosed) {
		t.Errorf("SendBuffer of a closed buffer: %v, want ErrClosed", err)
	}
	if err := ch.sendDescriptor(ctx, sd); err != nil { // around the guard
		t.Fatal(err)
	}
	ans = try(ch.Receive(ctx)).must(t)
	switch a := string(ans); {
	case a == ipcAnswerImported:
		t.Logf("importing the descriptor of a freed buffer succeeded (the pool had kept the block): documented as undefined")
	case strings.HasPrefix(a, ipcAnswerRefused):
		t.Logf("importing the descriptor of a freed buffer failed: %s", strings.TrimPrefix(a, ipcAnswerRefused))
	default:
		t.Errorf("the child answered %q about the stale descriptor", a)
	}
	child.wait(t)
}

// ipcChild is a child process that runs one TestHelper… test of this
// binary, connected to the parent by an IPCChannel.
type ipcChild struct {
	test   string
	cmd    *exec.Cmd
	out    bytes.Buffer
	ch     *IPCChannel
	waited bool
}

// startIPCChild runs test in a child process, with the socket path in
// pathEnv and env added to its environment, accepts its connection and
// sends it r and b. The parent defers stop.
func startIPCChild(t *testing.T, ctx context.Context, test, pathEnv string, r *IPCMemoryResource, b *Buffer, env ...string) *ipcChild {
	t.Helper()
	l, path := ipcListen(t)
	c := &ipcChild{test: test}
	c.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	c.cmd.Env = append(append(os.Environ(), pathEnv+"="+path), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Accept(ctx)
	if err == nil {
		c.ch = ch
		err = ch.SendMemoryResource(ctx, r)
	}
	if err == nil {
		err = ch.SendBuffer(ctx, b)
	}
	if err != nil {
		c.stop(t)
		t.Fatalf("%v; the child's output:\n%s", err, c.out.String())
	}
	return c
}

// stop closes the channel, kills the child if it was not waited for and
// logs its output when t failed.
func (c *ipcChild) stop(t *testing.T) {
	if c.ch != nil {
		c.ch.Close()
	}
	if !c.waited {
		c.waited = true
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
	if t.Failed() {
		t.Logf("the child's output:\n%s", c.out.String())
	}
}

// wait closes the channel (the child's cue to exit), waits for the child
// and checks that its test passed.
func (c *ipcChild) wait(t *testing.T) {
	t.Helper()
	c.ch.Close()
	c.waited = true
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("the child: %v", err)
	}
	if !strings.Contains(c.out.String(), "--- PASS: "+c.test) {
		t.Errorf("the child did not pass %s:\n%s", c.test, c.out.String())
	}
}

// dialIPCParent is the start of a TestHelper… child: it dials the parent
// at path and receives its memory resource. fail reports a failure to
// the parent before failing t.
func dialIPCParent(t *testing.T, path string) (ctx context.Context, ch *IPCChannel, r *IPCMemoryResource, fail func(format string, a ...any)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	ch, err := DialIPC(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	fail = func(format string, a ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, a...)
		ch.Send(ctx, []byte("child: "+msg))
		t.Fatal(msg)
	}
	r, err = ch.ReceiveMemoryResource(ctx)
	if err != nil {
		fail("ReceiveMemoryResource: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return ctx, ch, r, fail
}

// TestHelperIPCChild is the child process of TestGPUIPCChildProcess; run
// directly, it skips.
func TestHelperIPCChild(t *testing.T) {
	path := os.Getenv(ipcChildEnv)
	if path == "" {
		t.Skip("the child process of TestGPUIPCChildProcess")
	}
	n, err := strconv.Atoi(os.Getenv(ipcChildSizeEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx, ch, r, fail := dialIPCParent(t, path)
	if !r.Imported() {
		fail("the received resource is not marked imported")
	}
	if _, err := r.Allocate(16, nil); err == nil {
		fail("Allocate on an imported resource: no error")
	}
	b, err := ch.ReceiveBuffer(ctx, r, nil)
	if err != nil {
		fail("ReceiveBuffer: %v", err)
	}
	if b.Size() != n {
		fail("imported %d bytes, want %d", b.Size(), n)
	}
	if _, err := b.IPCDescriptor(); err == nil {
		fail("IPCDescriptor of an imported buffer: no error")
	}
	got := make([]byte, n)
	if err := CopyFromDevice(got, b); err != nil {
		fail("reading the imported buffer: %v", err)
	}
	want := pattern(n, 0xa1)
	for i := range got {
		if got[i] != want[i] {
			fail("imported byte %d = %#x, want %#x", i, got[i], want[i])
		}
	}
	if err := CopyToDevice(b, pattern(n, 0x5e)); err != nil {
		fail("writing the imported buffer: %v", err)
	}
	if err := b.Close(); err != nil { // complete before the parent goes on
		fail("closing the import: %v", err)
	}
	if err := b.Close(); err != nil {
		fail("closing the import twice: %v", err)
	}
	if err := ch.Send(ctx, []byte(ipcAnswerOK)); err != nil {
		t.Fatal(err)
	}

	// The stale descriptor: report what the driver does.
	sb, err := ch.ReceiveBuffer(ctx, r, nil)
	ans := ipcAnswerImported
	if err != nil {
		var de *driver.Error
		if !errors.As(err, &de) {
			fail("importing a stale descriptor: %v (%T), want a *driver.Error", err, err)
		}
		ans = ipcAnswerRefused + err.Error()
	} else if err := sb.Close(); err != nil {
		t.Logf("closing the stale import: %v", err)
	}
	if err := ch.Send(ctx, []byte(ans)); err != nil {
		t.Fatal(err)
	}
	// Wait for the parent to close the channel before exiting.
	if _, err := ch.Receive(ctx); err == nil {
		t.Error("a message after the last answer")
	}
}

// ipcPeerChildEnv names the socket of TestHelperIPCPeerChild.
const ipcPeerChildEnv = "CUDAGO_IPC_PEER_CHILD"

// TestGPUIPCPeerChild shares a pool of device 0 with a child process that
// imports it, opens it to device 1 (IPCMemoryResource.SetPeerAccessibleBy
// on the import) and updates the buffer from a kernel on device 1; the
// parent checks the result: IPC and peer access across processes and GPUs.
func TestGPUIPCPeerChild(t *testing.T) {
	d0, d1 := twoGPUs(t)
	if ok, err := d1.CanAccessPeer(d0); err != nil || !ok {
		t.Skipf("%v cannot access %v directly (%v)", d1, d0, err)
	}
	r := sharedPool(t, d0, nil)
	const n = 1<<18 + 3
	b := try(AllocFrom[float32](r, n, nil)).must(t)
	defer b.Close()
	if err := CopyToDevice(b, seq(n, 0)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	child := startIPCChild(t, ctx, "TestHelperIPCPeerChild", ipcPeerChildEnv, r, b)
	defer child.stop(t)
	ans, err := child.ch.Receive(ctx)
	if err != nil || string(ans) != ipcAnswerOK {
		t.Fatalf("the child answered %q, %v", ans, err)
	}
	child.wait(t)
	wantEach(t, fmt.Sprintf("b after the child's kernel on %v", d1), readBack[float32](t, b, n), func(i int) float32 { return float32(i) + 0.5 })
}

// TestHelperIPCPeerChild is the child of TestGPUIPCPeerChild; run
// directly, it skips.
func TestHelperIPCPeerChild(t *testing.T) {
	path := os.Getenv(ipcPeerChildEnv)
	if path == "" {
		t.Skip("the child process of TestGPUIPCPeerChild")
	}
	d0, d1 := twoGPUs(t)
	ctx, ch, r, fail := dialIPCParent(t, path)
	if r.Device() != d0 {
		fail("the pool was imported on %v, want %v", r.Device(), d0)
	}
	if err := r.SetPeerAccessibleBy(d1); err != nil {
		fail("opening the imported pool to %v: %v", d1, err)
	}
	b, err := ch.ReceiveBuffer(ctx, r, nil)
	if err != nil {
		fail("ReceiveBuffer: %v", err)
	}
	n, err := Len[float32](b)
	if err != nil {
		fail("%v", err)
	}
	s, err := d1.NewStream(nil)
	if err != nil {
		fail("%v", err)
	}
	defer s.Close()
	k := kernelsFor(t, d1)["add"]
	if err := Launch(s, LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}, k, b, float32(0.5), int32(n)); err != nil {
		fail("Launch on %v: %v", d1, err)
	}
	if err := s.Sync(); err != nil {
		fail("%v's kernel on the imported buffer of %v: %v", d1, d0, err)
	}
	if err := b.Close(); err != nil {
		fail("closing the import: %v", err)
	}
	if err := ch.Send(ctx, []byte(ipcAnswerOK)); err != nil {
		t.Fatal(err)
	}
}
