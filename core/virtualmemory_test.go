package core

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// fakeVMR is a VirtualMemoryResource with a granularity of 4096 bytes and
// 1 MiB reserved per allocation, whose allocations are registered by hand:
// what happens before the driver is called.
func fakeVMR(d *Device) *VirtualMemoryResource {
	return &VirtualMemoryResource{dev: d, gran: 4096, reserve: 1 << 20, allocs: map[driver.Deviceptr]*vmAlloc{}}
}

func TestVirtualMemoryMisuse(t *testing.T) {
	d := fakeDevice(0)
	if _, err := NewVirtualMemoryResource(nil, nil); err == nil {
		t.Error("NewVirtualMemoryResource(nil): no error")
	}
	d1 := fakeDevice(1)
	for name, tc := range map[string]struct {
		opts VirtualMemoryOptions
		want string
	}{
		"negative reserve": {VirtualMemoryOptions{Reserve: -1}, "negative Reserve"},
		"nil peer":         {VirtualMemoryOptions{Peers: []PeerAccess{{}}}, "Peers[0] has no Device"},
		"itself":           {VirtualMemoryOptions{Peers: []PeerAccess{{Device: d}}}, "the memory's own device"},
		"twice":            {VirtualMemoryOptions{Peers: []PeerAccess{{Device: d1}, {Device: d1, ReadOnly: true}}}, "listed twice"},
	} {
		if _, err := NewVirtualMemoryResource(d, &tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}

	r := fakeVMR(d)
	if r.Granularity() != 4096 || r.Reserve() != 1<<20 || r.Device() != d || !r.DeviceAccessible() || r.HostAccessible() {
		t.Error("the resource's properties")
	}
	if _, err := r.Allocate(-1, nil); err == nil || !strings.Contains(err.Error(), "negative size") {
		t.Errorf("Allocate(-1): %v", err)
	}
	if _, err := r.Allocate(16, &Stream{ctx: d1.primary}); err == nil || !strings.Contains(err.Error(), "stream is on") {
		t.Errorf("Allocate on another device's stream: %v", err)
	}
	if _, err := r.Allocate(1<<20+1, nil); err == nil || !strings.Contains(err.Error(), "more than the 1048576 reserved") {
		t.Errorf("Allocate of more than the reservation: %v", err)
	}

	// A buffer of 4096 bytes with 8192 mapped: growing it within what is
	// mapped needs no driver call.
	const base = driver.Deviceptr(0x7000_0000)
	r.allocs[base] = &vmAlloc{reserve: 1 << 20, chunks: []int{8192}, mapped: 8192}
	b := &Buffer{ptr: base, size: 4096, mr: r}
	view, _ := b.View(0, 16)

	if _, err := r.Grow(nil, 1); err == nil {
		t.Error("Grow(nil): no error")
	}
	if _, err := r.Grow(b, 100); err == nil || !strings.Contains(err.Error(), "cannot shrink a buffer of 4096 bytes to 100") {
		t.Errorf("shrinking: %v", err)
	}
	if _, err := r.Grow(b, 2<<20); err == nil || !strings.Contains(err.Error(), "more than the 1048576 reserved") {
		t.Errorf("growing past the reservation: %v", err)
	}
	if _, err := r.Grow(view, 8192); err == nil || !strings.Contains(err.Error(), "a view cannot grow") {
		t.Errorf("growing a view: %v", err)
	}
	if _, err := r.Grow(&Buffer{ptr: 0x1000, size: 16, mr: &fakeMR{}}, 32); err == nil || !strings.Contains(err.Error(), "not of this VirtualMemoryResource") {
		t.Errorf("growing another resource's buffer: %v", err)
	}
	if _, err := fakeVMR(d).Grow(b, 8192); err == nil || !strings.Contains(err.Error(), "another VirtualMemoryResource") {
		t.Errorf("growing a buffer of another VirtualMemoryResource: %v", err)
	}
	if b.closed() {
		t.Fatal("a failed Grow closed the buffer")
	}

	ran := 0
	if err := b.OnFree(func() { ran++ }); err != nil {
		t.Fatal(err)
	}
	nb, err := r.Grow(b, 5000)
	if err != nil {
		t.Fatal(err)
	}
	// The OnFree functions go with the memory: they run when nb frees it.
	if b.hooks != nil || nb.hooks == nil || len(nb.hooks.fs) != 1 {
		t.Error("Grow did not move the old buffer's OnFree functions to the new one")
	}
	nb.hooks.run()
	if ran != 1 {
		t.Errorf("the moved OnFree function ran %d times, want 1", ran)
	}
	if nb == b || nb.ptr != base || nb.Size() != 8192 || nb.MemoryResource() != r {
		t.Errorf("grown buffer: %p (old %p), ptr %#x, size %d", nb, b, nb.ptr, nb.Size())
	}
	if !b.closed() || b.Ptr() != 0 || !view.closed() {
		t.Error("the old buffer, or its view, is still open after Grow")
	}
	if _, err := r.Grow(b, 8192); !errors.Is(err, ErrClosed) {
		t.Errorf("growing the old buffer: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("closing the old buffer: %v", err)
	}
	if r.allocs[base] == nil {
		t.Fatal("closing the old buffer freed the allocation")
	}
	// Unmapping needs the driver: forget the grown buffer instead.
	nb.life.close() // its finalizer, if any, then frees nothing
	if err := r.Deallocate(0x1234, 0, nil); err == nil || !strings.Contains(err.Error(), "no allocation at") {
		t.Errorf("Deallocate of an unknown address: %v", err)
	}
}

// vmmSource holds the kernels of the virtual-memory tests.
const vmmSource = `
extern "C" __global__ void spin_scale(float* x, int n, long long cycles) {
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {}
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = x[i] * 2.0f + 1.0f;
}

extern "C" __global__ void fill(float* x, int n, float v) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = v + (float)i;
}

extern "C" __global__ void copyf(const float* src, float* dst, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) dst[i] = src[i];
}
`

var vmmKernelsState testKernelSet

// vmmKernels compiles vmmSource for dev (without the cache), once per
// test binary.
func vmmKernels(t *testing.T, dev *Device) map[string]*Kernel {
	t.Helper()
	return vmmKernelsState.get(t, "the virtual memory test kernels", vmmSource, &ProgramOptions{Name: "vmm_test", Arch: "sm_" + dev.Arch(), NoCache: true},
		"spin_scale", "fill", "copyf")
}

func launch1D(t *testing.T, s *Stream, k *Kernel, n int, args ...any) {
	t.Helper()
	if err := Launch(s, LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}, k, args...); err != nil {
		t.Fatal(err)
	}
}

// TestGPUVirtualMemory allocates, copies, grows and closes, and checks the
// misuses the driver would see.
func TestGPUVirtualMemory(t *testing.T) {
	dev := requireGPU(t)
	r, err := NewVirtualMemoryResource(dev, &VirtualMemoryOptions{Reserve: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	g := r.Granularity()
	if g <= 0 || g&(g-1) != 0 {
		t.Fatalf("granularity %d", g)
	}
	if r.Reserve() != 256<<20 {
		t.Errorf("Reserve() = %d, want %d", r.Reserve(), 256<<20)
	}
	t.Logf("granularity %d bytes", g)
	b, err := r.Allocate(1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Size() != g || b.Ptr() == 0 || b.Device() != dev {
		t.Fatalf("Allocate(1000): size %d (want %d), ptr %#x", b.Size(), g, b.Ptr())
	}
	want := pattern(g, 0x21)
	if err := CopyToDevice(b, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, g)
	if err := CopyFromDevice(got, b); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("round trip: %v", err)
	}
	// A device-to-device copy into a DeviceMemoryResource buffer and back.
	plain, err := dev.Allocate(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.CopyFrom(b); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset8(0); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFrom(plain); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(got, b); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("copies through device memory: %v", err)
	}

	// Grow to 3g+5 bytes: 4g, same address, old data kept, new part usable.
	addr := b.Ptr()
	oldView, _ := b.View(0, 8)
	nb, err := r.Grow(b, 3*g+5)
	if err != nil {
		t.Fatal(err)
	}
	if nb.Size() != 4*g || nb.Ptr() != addr {
		t.Fatalf("grown: size %d at %#x, want %d at %#x", nb.Size(), nb.Ptr(), 4*g, addr)
	}
	if err := CopyToDevice(b, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("the old buffer after Grow: %v, want ErrClosed", err)
	}
	if err := oldView.Memset8(0); !errors.Is(err, ErrClosed) {
		t.Errorf("a view of the old buffer after Grow: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close of the old buffer: %v", err)
	}
	all := make([]byte, 4*g)
	tail := pattern(3*g, 0x99)
	tv, _ := nb.View(g, 3*g)
	if err := CopyToDevice(tv, tail); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(all, nb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(all[:g], want) || !bytes.Equal(all[g:], tail) {
		t.Fatal("after Grow: the old part or the new one differs")
	}

	// Misuse: shrink, past the reservation (b unchanged), closed, others.
	if _, err := r.Grow(nb, g); err == nil || !strings.Contains(err.Error(), "cannot shrink") {
		t.Errorf("shrink: %v", err)
	}
	if _, err := r.Grow(nb, r.Reserve()+1); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("past the reservation: %v", err)
	}
	if err := CopyFromDevice(all, nb); err != nil || !bytes.Equal(all[:g], want) {
		t.Errorf("the buffer after a refused Grow: %v", err)
	}
	if _, err := r.Grow(b, 8*g); !errors.Is(err, ErrClosed) {
		t.Errorf("growing a closed buffer: %v, want ErrClosed", err)
	}
	if _, err := r.Grow(plain, 2*g); err == nil || !strings.Contains(err.Error(), "not of this VirtualMemoryResource") {
		t.Errorf("growing a DeviceMemoryResource buffer: %v", err)
	}
	r2, err := NewVirtualMemoryResource(dev, &VirtualMemoryOptions{Reserve: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Grow(nb, 8*g); err == nil || !strings.Contains(err.Error(), "another VirtualMemoryResource") {
		t.Errorf("growing through another resource: %v", err)
	}
	if _, err := r.Allocate(r.Reserve()+1, nil); err == nil {
		t.Error("Allocate of more than the reservation: no error")
	}
	if _, err := NewVirtualMemoryResource(dev, &VirtualMemoryOptions{Peers: []PeerAccess{{Device: dev}}}); err == nil {
		t.Error("the device as its own peer: no error")
	}

	// Grow up to the whole reservation.
	full, err := r.Grow(nb, r.Reserve())
	if err != nil {
		t.Fatal(err)
	}
	if full.Size() != r.Reserve() {
		t.Errorf("grown to %d, want %d", full.Size(), r.Reserve())
	}
	last, _ := full.View(full.Size()-4, 4)
	if err := CopyToDevice(last, []uint32{0xdeadbeef}); err != nil {
		t.Fatal(err)
	}
	closeTwice(t, full)

	// Size 0: the range is reserved, Grow maps the memory.
	z, err := r2.Allocate(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if z.Size() != 0 || z.Ptr() == 0 {
		t.Errorf("Allocate(0): size %d at %#x", z.Size(), z.Ptr())
	}
	z2, err := r2.Grow(z, 1)
	if err != nil {
		t.Fatal(err)
	}
	if z2.Size() != g {
		t.Errorf("Grow of an empty buffer to 1 byte: %d bytes", z2.Size())
	}
	if err := z2.Memset32(7); err != nil {
		t.Fatal(err)
	}
	if err := z2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("Device.Sync after the frees: %v", err)
	}
}

// TestGPUVirtualMemoryGrowWhileRunning grows a buffer while a kernel that
// reads and writes its first part runs, then checks the kernel's result,
// that the rest of the old part is intact, and that the new part takes a
// kernel's writes (on another stream, while the first kernel may still
// run). Last, closing a buffer waits for the kernel that uses it.
func TestGPUVirtualMemoryGrowWhileRunning(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	dev := requireGPU(t)
	ks := vmmKernels(t, dev)
	r, err := NewVirtualMemoryResource(dev, &VirtualMemoryOptions{Reserve: 128 << 20})
	if err != nil {
		t.Fatal(err)
	}
	g := r.Granularity()
	s := testStream(t, dev)
	s2, err := dev.NewStream(&StreamOptions{NonBlocking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	b, err := r.Allocate(g, s)
	if err != nil {
		t.Fatal(err)
	}
	n := g / 4
	if err := CopyToDevice(b, seq(n, 0)); err != nil {
		t.Fatal(err)
	}
	const cycles = 400_000_000 // some 0.2 s at 2 GHz
	half := n / 2
	launch1D(t, s, ks["spin_scale"], half, b, int32(half), int64(cycles))
	running, err := s.Query()
	if err != nil {
		t.Fatal(err)
	}
	nb, err := r.Grow(b, 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Query()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the kernel was done before Grow: %v, after: %v", running, after)
	total := nb.Size() / 4
	newPart, _ := nb.View(g, nb.Size()-g)
	launch1D(t, s2, ks["fill"], total-n, newPart, int32(total-n), float32(1000))
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	wantEach(t, fmt.Sprintf("x (first part %d floats, kernel on %d)", n, half), readBack[float32](t, nb, total), func(i int) float32 {
		switch {
		case i < half:
			return float32(i)*2 + 1 // the kernel's result
		case i < n:
			return float32(i) // intact
		default:
			return 1000 + float32(i-n) // the new part
		}
	})

	// Close while a kernel uses the buffer: Close waits for its stream.
	launch1D(t, s, ks["spin_scale"], half, nb, int32(half), int64(cycles/4))
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}
	if done, err := s.Query(); err != nil || !done {
		t.Errorf("after Close the buffer's stream is done: %v, %v; want true", done, err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatalf("the kernel faulted (memory unmapped under it?): %v", err)
	}
}

// TestGPUVirtualMemoryPeer gives device 1 access to device 0's memory,
// read-write and read-only, and grows it: kernels on device 1 use it.
func TestGPUVirtualMemoryPeer(t *testing.T) {
	if testenv.RunIsolated(t) { // it can leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	ok, err := d1.CanAccessPeer(d0)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if _, err := NewVirtualMemoryResource(d0, &VirtualMemoryOptions{Peers: []PeerAccess{{Device: d1}}}); err == nil || !strings.Contains(err.Error(), "cannot access") {
			t.Errorf("a peer that cannot access the device: %v", err)
		}
		t.Skipf("%v cannot access %v's memory", d1, d0)
	}
	if d0.Arch() != d1.Arch() {
		t.Skipf("devices of different architectures (sm_%s, sm_%s)", d0.Arch(), d1.Arch())
	}
	ks := vmmKernels(t, d0)
	s1, err := d1.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()

	rw, err := NewVirtualMemoryResource(d0, &VirtualMemoryOptions{Reserve: 64 << 20, Peers: []PeerAccess{{Device: d1}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rw.Allocate(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := rw.Granularity()
	b, err = rw.Grow(b, 2*g) // the new part gets the peer's access too
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n := b.Size() / 4
	launch1D(t, s1, ks["fill"], n, b, int32(n), float32(5)) // device 1 writes device 0's memory
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "x after device 1's kernel", readBack[float32](t, b, n), func(i int) float32 { return 5 + float32(i) })

	ro, err := NewVirtualMemoryResource(d0, &VirtualMemoryOptions{Reserve: 64 << 20, Peers: []PeerAccess{{Device: d1, ReadOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	src, err := ro.Allocate(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m := g / 4
	if err := CopyToDevice(src, seq(m, 7)); err != nil {
		t.Fatal(err)
	}
	dst, err := d1.Allocate(g, s1)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	launch1D(t, s1, ks["copyf"], m, src, dst, int32(m)) // device 1 reads it
	if err := s1.Sync(); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "read-only peer read x", readBack[float32](t, dst, m), func(i int) float32 { return 7 + float32(i) })
}
