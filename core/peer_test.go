package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/testenv"
)

// devMR is a resource of a given (fake) device that never reaches the
// driver: the peer-copy checks that come before any driver call.
type devMR struct {
	fakeMR
	dev *Device
}

func (m *devMR) Allocate(size int, stream *Stream) (*Buffer, error) {
	return NewBuffer(0x1000, size, m, stream), nil
}
func (m *devMR) Device() *Device { return m.dev }

// pattern returns n bytes that differ from those of another seed at most
// positions, to catch copies from the wrong place.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7+i>>8) ^ seed
	}
	return p
}

// twoGPUs returns devices 0 and 1, skipping the test where there are fewer
// than two (after requireGPU, which fails without any GPU when
// CUDAGO_REQUIRE_GPU=1).
func twoGPUs(t testing.TB) (*Device, *Device) {
	t.Helper()
	d0 := requireGPU(t)
	n, err := DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Skipf("needs 2 GPUs, this machine has %d (runs on the 2-GPU machine)", n)
	}
	d1, err := GetDevice(1)
	if err != nil {
		t.Fatal(err)
	}
	return d0, d1
}

func TestPeerCopyChecks(t *testing.T) {
	d0, d1, d2 := &Device{ordinal: 0}, &Device{ordinal: 1}, &Device{ordinal: 2}
	m0, m1 := &devMR{dev: d0}, &devMR{dev: d1}
	a, _ := m0.Allocate(64, nil)
	b, _ := m1.Allocate(32, nil)
	s2 := &Stream{ctx: &Context{dev: d2}}
	if err := a.CopyFromAsync(s2, b); err == nil || !strings.Contains(err.Error(), "cannot be ordered on a stream of device 2") {
		t.Errorf("peer copy on a third device's stream: %v", err)
	}
	if err := b.CopyFrom(a); err == nil || !strings.Contains(err.Error(), "64 bytes do not fit in a buffer of 32 bytes") {
		t.Errorf("peer copy of 64 bytes into 32: %v", err)
	}
	v, err := a.View(8, 40)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFrom(v); err == nil || !strings.Contains(err.Error(), "40 bytes do not fit") {
		t.Errorf("peer copy of a 40-byte view into 32: %v", err)
	}
	var nilBuf *Buffer
	if err := nilBuf.CopyFrom(a); err == nil || !strings.Contains(err.Error(), "nil destination") {
		t.Errorf("CopyFrom into a nil *Buffer: %v", err)
	}
	// Closed source or destination: ErrClosed before any driver call.
	s1 := &Stream{ctx: &Context{dev: d1}}
	closed, _ := m1.Allocate(64, nil)
	closed.Close()
	if err := closed.CopyFromAsync(s1, a); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy into a closed buffer: %v", err)
	}
	c0, _ := m0.Allocate(16, nil)
	c0.Close()
	if err := b.CopyFromAsync(s1, c0); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy from a closed buffer: %v", err)
	}
	// A closed destination too small for the source: still ErrClosed.
	tiny, _ := m1.Allocate(8, nil)
	tiny.Close()
	if err := tiny.CopyFrom(a); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy into a closed buffer smaller than the source: %v", err)
	}
	var nilDMR *DeviceMemoryResource
	if err := nilDMR.SetPeerAccessibleBy(d1); err == nil || !strings.Contains(err.Error(), "nil or zero resource") {
		t.Errorf("SetPeerAccessibleBy on a nil resource: %v", err)
	}
	if _, err := (&IPCMemoryResource{}).PeerAccessibleBy(); err == nil || !strings.Contains(err.Error(), "nil or zero resource") {
		t.Errorf("PeerAccessibleBy on a zero IPC resource: %v", err)
	}
	cv, _ := a.View(0, 8)
	a.Close()
	if err := b.CopyFromAsync(s1, cv); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy from a view of a closed buffer: %v", err)
	}
	b.Close()

	if _, err := d0.CanAccessPeer(nil); err == nil {
		t.Error("CanAccessPeer(nil): no error")
	}
	if err := d0.EnablePeerAccess(nil); err == nil {
		t.Error("EnablePeerAccess(nil): no error")
	}
	if err := d0.EnablePeerAccess(d0); err == nil || !strings.Contains(err.Error(), "not its own peer") {
		t.Errorf("EnablePeerAccess(itself): %v", err)
	}
}

// TestGPUCopyFromViews copies between views at offsets of buffers of one
// device, synchronously and on a stream: what peer copies do across
// devices, on the machine's one GPU.
func TestGPUCopyFromViews(t *testing.T) {
	dev := requireGPU(t)
	s := testStream(t, dev)
	const n = 1 << 20
	a := try(dev.Allocate(n, s)).must(t)
	defer a.Close()
	b := try(dev.Allocate(n, nil)).must(t)
	defer b.Close()
	want := pattern(n, 0x5a)
	if err := CopyToDevice(a, want); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset8(0xee); err != nil {
		t.Fatal(err)
	}
	// a[1000:1000+300000] -> b[77:77+300000], synchronously.
	src, _ := a.View(1000, 300000)
	dst, _ := b.View(77, 300000)
	if err := dst.CopyFrom(src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := CopyFromDevice(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		w := byte(0xee)
		if i >= 77 && i < 77+300000 {
			w = want[i-77+1000]
		}
		if got[i] != w {
			t.Fatalf("after the sync copy b[%d] = %#x, want %#x", i, got[i], w)
		}
	}
	// The async form on s: the whole of a into b.
	if err := b.CopyFromAsync(s, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("after the async copy b[%d] = %#x, want %#x", i, got[i], want[i])
		}
	}
	// Overlapping views of one buffer are refused; disjoint ones copy.
	v1, _ := a.View(0, 100)
	v2, _ := a.View(50, 100)
	if err := v2.CopyFrom(v1); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping views: %v", err)
	}
	v3, _ := a.View(100, 100)
	if err := v3.CopyFrom(v1); err != nil {
		t.Errorf("disjoint views: %v", err)
	}
}

// TestGPUPeerCopy copies between buffers of devices 0 and 1, both ways,
// synchronously and ordered on either device's stream, through views at
// offsets, and checks the errors of bad sizes and closed buffers.
func TestGPUPeerCopy(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	for _, p := range [][2]*Device{{d0, d1}, {d1, d0}} {
		ok := try(p[0].CanAccessPeer(p[1])).must(t)
		t.Logf("%v can access %v directly: %v", p[0], p[1], ok)
	}
	if ok, err := d0.CanAccessPeer(d0); err != nil || ok {
		t.Errorf("CanAccessPeer(itself) = %v, %v; want false (the driver's answer)", ok, err)
	}
	s0 := try(d0.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s0.Close()
	s1 := try(d1.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s1.Close()
	const n = 8 << 20
	a := try(d0.Allocate(n, s0)).must(t)
	defer a.Close()
	b := try(d1.Allocate(n, s1)).must(t)
	defer b.Close()
	want := pattern(n, 0x11)
	got := make([]byte, n)
	check := func(what string, buf *Buffer, want []byte) {
		t.Helper()
		if err := CopyFromDevice(got, buf); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: byte %d = %#x, want %#x", what, i, got[i], want[i])
			}
		}
	}

	// Synchronous, 0 -> 1 and back.
	if err := CopyToDevice(a, want); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFrom(a); err != nil {
		t.Fatal(err)
	}
	check("sync copy 0->1", b, want)
	if err := a.Memset8(0); err != nil {
		t.Fatal(err)
	}
	if err := a.CopyFrom(b); err != nil {
		t.Fatal(err)
	}
	check("sync copy 1->0", a, want)

	// Async, ordered on the destination's stream, then on the source's.
	want2 := pattern(n, 0x77)
	if err := CopyToDevice(a, want2); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFromAsync(s1, a); err != nil {
		t.Fatal(err)
	}
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}
	check("async copy 0->1 on device 1's stream", b, want2)
	if err := a.Memset8(0); err != nil {
		t.Fatal(err)
	}
	if err := a.CopyFromAsync(s1, b); err != nil { // 1 -> 0 on the source's stream
		t.Fatal(err)
	}
	// Work on device 0 that reads a must wait for the copy: an event.
	ev := try(s1.Record()).must(t)
	defer ev.Close()
	if err := s0.Wait(ev); err != nil {
		t.Fatal(err)
	}
	host := make([]byte, n)
	if err := CopyFromDeviceAsync(s0, host, a); err != nil {
		t.Fatal(err)
	}
	if err := s0.Sync(); err != nil {
		t.Fatal(err)
	}
	for i := range want2 {
		if host[i] != want2[i] {
			t.Fatalf("async copy 1->0 on device 1's stream, read on device 0 after an event: byte %d = %#x, want %#x", i, host[i], want2[i])
		}
	}

	// Views at offsets, unaligned.
	if err := b.Memset8(0xcc); err != nil {
		t.Fatal(err)
	}
	src, _ := a.View(12345, 1<<20)
	dst, _ := b.View(3, 1<<20)
	if err := dst.CopyFrom(src); err != nil {
		t.Fatal(err)
	}
	exp := make([]byte, n)
	for i := range exp {
		exp[i] = 0xcc
	}
	copy(exp[3:], want2[12345:12345+1<<20])
	check("views 0->1", b, exp)

	// Sizes and closed buffers.
	small := try(d1.Allocate(16, nil)).must(t)
	if err := small.CopyFrom(a); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("peer copy into a smaller buffer: %v", err)
	}
	small.Close()
	if err := small.CopyFrom(a); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy into a closed buffer: %v", err)
	}
	c := try(d0.Allocate(16, nil)).must(t)
	c.Close()
	if err := b.CopyFromAsync(s1, c); !errors.Is(err, ErrClosed) {
		t.Errorf("peer copy from a closed buffer: %v", err)
	}
	if cnt, _ := DeviceCount(); cnt >= 3 {
		d2, _ := GetDevice(2)
		s2 := try(d2.NewStream(nil)).must(t)
		defer s2.Close()
		if err := b.CopyFromAsync(s2, a); err == nil || !strings.Contains(err.Error(), "cannot be ordered") {
			t.Errorf("peer copy on a third device's stream: %v", err)
		}
	}
}

// TestGPUPeerSyncWaitsForSource: a synchronous peer copy sees the work
// queued on the source's stream (on the other device) before it.
func TestGPUPeerSyncWaitsForSource(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	k := kernelsFor(t, d0)["add"]
	if d1.Arch() != d0.Arch() {
		t.Skipf("the test kernels are built for sm_%s, device 1 is sm_%s", d0.Arch(), d1.Arch())
	}
	s1 := try(d1.NewStream(&StreamOptions{NonBlocking: true})).must(t)
	defer s1.Close()
	const n = 1 << 22
	src := try(d1.Allocate(n*4, s1)).must(t) // src's stream is s1
	defer src.Close()
	dst := try(d0.Allocate(n*4, nil)).must(t)
	defer dst.Close()
	if err := src.Memset32(0); err != nil {
		t.Fatal(err)
	}
	const adds = 200
	for range adds {
		if err := Launch(s1, LaunchConfig{Grid: Dim(n / 256), Block: Dim(256)}, k, src, float32(1), int32(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := dst.CopyFrom(src); err != nil { // no Sync of s1 before
		t.Fatal(err)
	}
	wantEach(t, "dst (did the copy wait for the source's stream?)", readBack[float32](t, dst, n), func(int) float32 { return adds })
}

// TestGPUPeerAccessKernel: after EnablePeerAccess, a kernel on one device
// updates a Buffer of the other's default pool (Device.Allocate) in place,
// both ways. Before pools granted access, this faulted with an illegal
// address on two H100s.
func TestGPUPeerAccessKernel(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	if d1.Arch() != d0.Arch() {
		t.Skipf("the test kernels are built for sm_%s, device 1 is sm_%s", d0.Arch(), d1.Arch())
	}
	k := kernelsFor(t, d0)["add"]
	for _, p := range [][2]*Device{{d1, d0}, {d0, d1}} {
		run, owner := p[0], p[1]
		ok, err := run.CanAccessPeer(owner)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Skipf("%v cannot access %v directly", run, owner)
		}
		if err := run.EnablePeerAccess(owner); err != nil {
			t.Fatal(err)
		}
		if err := run.EnablePeerAccess(owner); err != nil {
			t.Errorf("enabling peer access twice: %v", err)
		}
		buf, err := owner.Allocate(1<<16*4, nil)
		if err != nil {
			t.Fatal(err)
		}
		peerKernelRoundTrip(t, k, run, buf)
		buf.Close()
		peers, err := NewDeviceMemoryResource(owner).PeerAccessibleBy()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(peers, run) {
			t.Errorf("%v's pool is accessible by %v after %v.EnablePeerAccess(%v); want it to hold %v", owner, peers, run, owner, run)
		}
	}
}

// peerKernelRoundTrip fills buf (of another device) with 0, 1, 2, ...,
// adds 0.5 to each from a kernel on run, and checks the result.
func peerKernelRoundTrip(t *testing.T, k *Kernel, run *Device, buf *Buffer) {
	t.Helper()
	n := buf.Size() / 4
	if err := CopyToDevice(buf, seq(n, 0)); err != nil {
		t.Fatal(err)
	}
	s := try(run.NewStream(nil)).must(t)
	defer s.Close()
	if err := Launch(s, LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}, k, buf, float32(0.5), int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("%v's kernel on %v's memory: %v", run, buf.Device(), err)
	}
	wantEach(t, fmt.Sprintf("buf after %v's kernel", run), readBack[float32](t, buf, n), func(i int) float32 { return float32(i) + 0.5 })
}

// TestGPUPeerPoolAccess grants and revokes a pool's peer access
// explicitly, on the default pool and on an IPC pool, and runs a kernel of
// the other device on each pool's memory while it has access.
func TestGPUPeerPoolAccess(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	if ok, err := d1.CanAccessPeer(d0); err != nil || !ok {
		t.Skipf("%v cannot access %v directly (%v)", d1, d0, err)
	}
	k := kernelsFor(t, d0)["add"]
	ipc, err := NewIPCMemoryResource(d0, nil)
	if err != nil {
		t.Fatal(err)
	}
	dmr := NewDeviceMemoryResource(d0)
	type pool interface {
		MemoryResource
		PeerAccessibleBy() ([]*Device, error)
		SetPeerAccessibleBy(...*Device) error
	}
	for _, mr := range []pool{dmr, ipc} {
		name := fmt.Sprintf("%T", mr)
		peers, err := mr.PeerAccessibleBy()
		if err != nil {
			t.Fatal(err)
		}
		if len(peers) != 0 {
			t.Errorf("%s: a fresh process's pool is accessible by %v, want none", name, peers)
		}
		if err := mr.SetPeerAccessibleBy(d1, d0); err != nil { // the owner is skipped
			t.Fatalf("%s: %v", name, err)
		}
		if peers, err := mr.PeerAccessibleBy(); err != nil || len(peers) != 1 || peers[0] != d1 {
			t.Fatalf("%s: accessible by %v (%v) after SetPeerAccessibleBy(d1), want [%v]", name, peers, err, d1)
		}
		buf, err := mr.Allocate(100000*4, nil)
		if err != nil {
			t.Fatal(err)
		}
		peerKernelRoundTrip(t, k, d1, buf)
		if err := buf.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d0.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := mr.SetPeerAccessibleBy(); err != nil {
			t.Fatalf("%s: revoking: %v", name, err)
		}
		if peers, err := mr.PeerAccessibleBy(); err != nil || len(peers) != 0 {
			t.Errorf("%s: accessible by %v (%v) after SetPeerAccessibleBy(), want none", name, peers, err)
		}
		if err := mr.SetPeerAccessibleBy(nil); err == nil || !strings.Contains(err.Error(), "nil *Device") {
			t.Errorf("%s: SetPeerAccessibleBy(nil): %v", name, err)
		}
	}
	if err := ipc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ipc.SetPeerAccessibleBy(d1); !errors.Is(err, ErrClosed) {
		t.Errorf("SetPeerAccessibleBy on a closed IPC pool: %v, want ErrClosed", err)
	}
	if _, err := ipc.PeerAccessibleBy(); !errors.Is(err, ErrClosed) {
		t.Errorf("PeerAccessibleBy on a closed IPC pool: %v, want ErrClosed", err)
	}
}
