package core

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// managedSource holds the kernels of the managed-memory tests and
// benchmark: grid-stride loops, so that any grid covers any size.
const managedSource = `
static __device__ __forceinline__ unsigned mix(unsigned long long i, unsigned seed) {
	return (unsigned)(i ^ (i >> 32)) * 2654435761u + seed;
}

// fill_u32 writes p[i] = mix(base+i, seed) for i < n.
extern "C" __global__ void fill_u32(unsigned* p, unsigned long long n, unsigned long long base, unsigned seed) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		p[i] = mix(base + i, seed);
}

// check_u32 adds to *bad the number of i < n where p[i] != mix(base+i, seed).
extern "C" __global__ void check_u32(const unsigned* p, unsigned long long n, unsigned long long base, unsigned seed,
		unsigned long long* bad) {
	unsigned long long mine = 0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		if (p[i] != mix(base + i, seed)) mine++;
	if (mine) atomicAdd(bad, mine);
}

// axpb sets x[i] = a*x[i] + b.
extern "C" __global__ void axpb(float* x, float a, float b, unsigned long long n) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		x[i] = a * x[i] + b;
}
`

// mix is the kernels' mix.
func mix(i uint64, seed uint32) uint32 { return uint32(i^i>>32)*2654435761 + seed }

var managedKernelsState testKernelSet

// managedKernels compiles managedSource for dev once per test binary.
func managedKernels(tb testing.TB, dev *Device) map[string]*Kernel {
	tb.Helper()
	return managedKernelsState.get(tb, "the managed-memory test kernels", managedSource, &ProgramOptions{Name: "managed_test.cu", Arch: "sm_" + dev.Arch()},
		"fill_u32", "check_u32", "axpb")
}

// gridStride is a launch of a grid-stride kernel: 8 blocks of 256 threads
// per SM.
func gridStride(dev *Device) LaunchConfig {
	return LaunchConfig{Grid: Dim(uint32(8 * dev.MultiprocessorCount())), Block: Dim(256)}
}

// requireManagedAccess skips where dev cannot prefetch or take location
// advice: it lacks CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS (Windows,
// or a GPU before Pascal).
func requireManagedAccess(t testing.TB, dev *Device) {
	t.Helper()
	v, err := dev.Attribute(driver.DeviceAttributeConcurrentManagedAccess)
	if err != nil {
		t.Fatal(err)
	}
	if v == 0 {
		t.Skipf("%v lacks CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: no prefetch or location advice", dev)
	}
}

// hostNUMANode returns the host NUMA node nearest dev, or -1.
func hostNUMANode(t testing.TB, dev *Device) int {
	n, err := dev.Attribute(driver.DeviceAttributeHostNumaId)
	if err != nil {
		t.Logf("CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: %v", err)
		return -1
	}
	return n
}

func TestGPUManagedAdvice(t *testing.T) {
	dev := requireGPU(t)
	requireManagedAccess(t, dev)
	b := try(NewManagedMemoryResource(dev).Allocate(4<<20, nil)).must(t)
	defer b.Close()

	// Read-mostly: off, on, off.
	if got, err := b.ReadMostly(); err != nil || got {
		t.Errorf("ReadMostly of fresh memory = %v, %v; want false", got, err)
	}
	for _, on := range []bool{true, false} {
		if err := b.SetReadMostly(on); err != nil {
			t.Fatalf("SetReadMostly(%v): %v", on, err)
		}
		if got, err := b.ReadMostly(); err != nil || got != on {
			t.Errorf("ReadMostly after SetReadMostly(%v) = %v, %v", on, got, err)
		}
	}

	// Preferred location: none, the device, the host, a NUMA node, none.
	if l, err := b.PreferredLocation(); err != nil || l != (Location{}) {
		t.Errorf("PreferredLocation of fresh memory = %v, %v; want none", l, err)
	}
	for _, want := range []Location{DeviceLocation(dev), HostLocation(), {}} {
		if err := b.SetPreferredLocation(want); err != nil {
			t.Fatalf("SetPreferredLocation(%v): %v", want, err)
		}
		if got, err := b.PreferredLocation(); err != nil || got != want {
			t.Errorf("PreferredLocation after SetPreferredLocation(%v) = %v, %v", want, got, err)
		}
	}
	if node := hostNUMANode(t, dev); node >= 0 {
		want := HostNUMALocation(node)
		if err := b.SetPreferredLocation(want); err != nil {
			t.Errorf("SetPreferredLocation(%v): %v", want, err)
		} else if got, err := b.PreferredLocation(); err != nil {
			t.Errorf("PreferredLocation after SetPreferredLocation(%v): %v", want, err)
		} else if got != want {
			// Seen on the H100 VM (driver 580): a host NUMA node reads
			// back as none; cuda.core's tests allow other answers too.
			t.Logf("PreferredLocation after SetPreferredLocation(%v) reads back as %v", want, got)
		} else if got != want {
			// As cuda.core's tests allow: a machine of one node may
			// report the host at large.
			t.Logf("PreferredLocation after SetPreferredLocation(%v) = %v", want, got)
		}
		if err := b.SetPreferredLocation(Location{}); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("%v reports no host NUMA node: NUMA advice not tried", dev)
	}

	// Accessed by the device and the host, then by neither.
	if l, err := b.AccessedBy(); err != nil || len(l) != 0 {
		t.Errorf("AccessedBy of fresh memory = %v, %v; want none", l, err)
	}
	if err := errors.Join(b.SetAccessedBy(DeviceLocation(dev), true), b.SetAccessedBy(HostLocation(), true)); err != nil {
		t.Fatal(err)
	}
	if l, err := b.AccessedBy(); err != nil || !slices.Equal(l, []Location{DeviceLocation(dev), HostLocation()}) {
		t.Errorf("AccessedBy after SetAccessedBy(device), SetAccessedBy(host) = %v, %v", l, err)
	}
	if err := b.SetAccessedBy(DeviceLocation(dev), false); err != nil {
		t.Fatal(err)
	}
	if l, err := b.AccessedBy(); err != nil || !slices.Equal(l, []Location{HostLocation()}) {
		t.Errorf("AccessedBy after unsetting the device = %v, %v; want [host]", l, err)
	}

	// Advice on a view covers its pages only.
	v := try(b.View(2<<20, 1<<20)).must(t)
	if err := v.SetPreferredLocation(DeviceLocation(dev)); err != nil {
		t.Fatal(err)
	}
	if l, err := v.PreferredLocation(); err != nil || l != DeviceLocation(dev) {
		t.Errorf("PreferredLocation of the advised view = %v, %v", l, err)
	}
	if l, err := b.PreferredLocation(); err != nil || l != (Location{}) {
		t.Errorf("PreferredLocation of the whole buffer, a quarter advised = %v, %v; want none (pages disagree)", l, err)
	}

	// Memory that is not managed is refused, whatever resource it is of.
	d := try(dev.Allocate(1<<20, nil)).must(t)
	defer d.Close()
	pinned := try(NewPinnedMemoryResource(dev).Allocate(1<<20, nil)).must(t)
	defer pinned.Close()
	s := testStream(t, dev)
	for _, nb := range []*Buffer{d, pinned} {
		for _, err := range []error{nb.SetReadMostly(true), nb.PrefetchAsync(s, DeviceLocation(dev)), func() error { _, err := nb.LastPrefetchLocation(); return err }()} {
			if err == nil || !strings.Contains(err.Error(), "is not managed memory") {
				t.Errorf("managed-memory call on %T memory: %v; want an error saying it is not managed", nb.MemoryResource(), err)
			}
		}
	}
}

// TestGPUManagedPrefetch prefetches to the device and back, reads where
// the driver says it went, checks that device memory is taken by the
// prefetch, and that a kernel over prefetched memory computes what the
// host checks; then the batched calls (CUDA 13.0 drivers).
func TestGPUManagedPrefetch(t *testing.T) {
	dev := requireGPU(t)
	requireManagedAccess(t, dev)
	ks := managedKernels(t, dev)
	s := testStream(t, dev)
	mr := NewManagedMemoryResource(dev)
	const n = 64 << 20 // floats: 256 MiB
	b, err := mr.Allocate(4*n, s)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if l, err := b.LastPrefetchLocation(); err != nil || l != (Location{}) {
		t.Errorf("LastPrefetchLocation before any prefetch = %v, %v; want none", l, err)
	}
	x, err := HostSlice[float32](b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		x[i] = float32(i % 4096)
	}

	free0, _, err := dev.MemoryInfo()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PrefetchAsync(s, DeviceLocation(dev)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if l, err := b.LastPrefetchLocation(); err != nil || l != DeviceLocation(dev) {
		t.Errorf("LastPrefetchLocation after PrefetchAsync(device) = %v, %v", l, err)
	}
	free1, _, err := dev.MemoryInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prefetching %d MiB to %v took %d MiB of its free memory", 4*n>>20, dev, (int64(free0)-int64(free1))>>20)
	if int64(free0)-int64(free1) < 3*n { // 3/4 of the bytes: pages now live on the device
		t.Errorf("free device memory went from %d to %d MiB after prefetching %d MiB there: the prefetch did not place the pages", free0>>20, free1>>20, 4*n>>20)
	}
	if err := Launch(s, gridStride(dev), ks["axpb"], b, float32(2), float32(1), uint64(n)); err != nil {
		t.Fatal(err)
	}
	if err := b.PrefetchAsync(s, HostLocation()); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if l, err := b.LastPrefetchLocation(); err != nil || l != HostLocation() {
		t.Errorf("LastPrefetchLocation after PrefetchAsync(host) = %v, %v", l, err)
	}
	for i, v := range x {
		if want := 2*float32(i%4096) + 1; v != want {
			t.Fatalf("x[%d] = %v after the kernel over prefetched memory, want %v", i, v, want)
		}
	}
	if node := hostNUMANode(t, dev); node >= 0 {
		want := HostNUMALocation(node)
		if err := errors.Join(b.PrefetchAsync(s, want), s.Sync()); err != nil {
			t.Errorf("PrefetchAsync(%v): %v", want, err)
		} else if l, err := b.LastPrefetchLocation(); err != nil || l != want && l != HostLocation() {
			t.Errorf("LastPrefetchLocation after PrefetchAsync(%v) = %v, %v", want, l, err)
		} else if l != want {
			// As cuda.core's tests allow: a machine of one node may
			// report the host at large.
			t.Logf("LastPrefetchLocation after PrefetchAsync(%v) = %v", want, l)
		}
	}
	// A view is prefetched alone: the whole buffer's pages disagree.
	v, err := b.View(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(v.PrefetchAsync(s, DeviceLocation(dev)), s.Sync()); err != nil {
		t.Fatal(err)
	}
	if l, err := v.LastPrefetchLocation(); err != nil || l != DeviceLocation(dev) {
		t.Errorf("LastPrefetchLocation of the prefetched view = %v, %v", l, err)
	}
	if l, err := b.LastPrefetchLocation(); err != nil || l != (Location{}) {
		t.Errorf("LastPrefetchLocation of the buffer, one view of it prefetched to the device = %v, %v; want none (pages disagree)", l, err)
	}

	// The batched calls.
	if err := managedEntry("cuMemPrefetchBatchAsync"); err != nil {
		var m *driver.MissingFunctionError
		if !errors.As(err, &m) {
			t.Fatalf("cuMemPrefetchBatchAsync: %v", err)
		}
		t.Skipf("the batched calls need a CUDA 13.0 driver: %v", err)
	}
	const m = 4 << 20 // bytes each
	bufs := make([]*Buffer, 3)
	for i := range bufs {
		if bufs[i], err = mr.Allocate(m, s); err != nil {
			t.Fatal(err)
		}
		defer bufs[i].Close()
	}
	last := func(what string, want ...Location) {
		t.Helper()
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		for i, b := range bufs {
			w := want[0]
			if len(want) > 1 {
				w = want[i]
			}
			if l, err := b.LastPrefetchLocation(); err != nil || l != w {
				t.Errorf("%s: LastPrefetchLocation of buffer %d = %v, %v; want %v", what, i, l, err, w)
			}
		}
	}
	dl, hl := DeviceLocation(dev), HostLocation()
	if err := PrefetchBatchAsync(s, bufs, []Location{dl}); err != nil {
		t.Fatal(err)
	}
	last("PrefetchBatchAsync(all to the device)", dl)
	if err := PrefetchBatchAsync(s, bufs, []Location{hl, dl, hl}); err != nil {
		t.Fatal(err)
	}
	last("PrefetchBatchAsync(host, device, host)", hl, dl, hl)
	// Discarded, then written by a kernel: the data is the kernel's.
	if err := DiscardBatchAsync(s, bufs); err != nil {
		t.Fatal(err)
	}
	if err := DiscardPrefetchBatchAsync(s, bufs, []Location{dl}); err != nil {
		t.Fatal(err)
	}
	last("DiscardPrefetchBatchAsync(device)", dl)
	bad, err := dev.Allocate(8, s)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Memset8Async(s, 0); err != nil {
		t.Fatal(err)
	}
	for i, b := range bufs {
		if err := Launch(s, gridStride(dev), ks["fill_u32"], b, uint64(m/4), uint64(0), uint32(i)); err != nil {
			t.Fatal(err)
		}
		if err := Launch(s, gridStride(dev), ks["check_u32"], b, uint64(m/4), uint64(0), uint32(i), bad); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(bufs[0].DiscardAsync(s), bufs[1].DiscardPrefetchAsync(s, hl)); err != nil {
		t.Fatal(err)
	}
	var nbad [1]uint64
	if err := CopyFromDevice(nbad[:], bad); err != nil { // on s: after the kernels
		t.Fatal(err)
	}
	if nbad[0] != 0 {
		t.Errorf("%d words differ after discarding, prefetching and writing the buffers", nbad[0])
	}
	if l, err := bufs[1].LastPrefetchLocation(); err != nil || l != hl {
		t.Errorf("LastPrefetchLocation after DiscardPrefetchAsync(host) = %v, %v", l, err)
	}
	// Discarded memory written on the host: the GPU reads what was written.
	w, err := HostSlice[uint32](bufs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range w {
		w[i] = mix(uint64(i), 99)
	}
	if err := errors.Join(bad.Memset8Async(s, 0), Launch(s, gridStride(dev), ks["check_u32"], bufs[0], uint64(m/4), uint64(0), uint32(99), bad)); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(nbad[:], bad); err != nil {
		t.Fatal(err)
	}
	if nbad[0] != 0 {
		t.Errorf("%d words of a discarded buffer rewritten on the host differ on the GPU", nbad[0])
	}
}

// memAvailable returns the host's MemAvailable from /proc/meminfo, in
// bytes.
func memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/meminfo MemAvailable %q: %v", rest, err)
		}
		return kb << 10, nil
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}

// managedBudget returns how much managed memory may be allocated on dev
// without risk to the machine: free device memory plus half the host's
// available memory (the other half is left to everything else). A test
// that cannot tell skips.
func managedBudget(tb testing.TB, dev *Device) (budget, free uint64) {
	tb.Helper()
	free, _, err := dev.MemoryInfo()
	if err != nil {
		tb.Fatal(err)
	}
	avail, err := memAvailable()
	if err != nil {
		tb.Skipf("cannot tell how much host memory is available, so no managed memory beyond the device's is safe: %v", err)
	}
	return free + avail/2, free
}

// TestGPUManagedOversubscribe allocates a managed Buffer 2 GiB larger than
// the device's free memory, writes all of it from kernels chunk by chunk
// (the driver evicts earlier chunks to the host to make room), and checks
// every word on the GPU and samples on the host. It runs in a child
// process: a failure under memory pressure must not spoil the other
// tests' context.
func TestGPUManagedOversubscribe(t *testing.T) {
	if testenv.RunIsolated(t) {
		return
	}
	dev := requireGPU(t)
	requireManagedAccess(t, dev)
	ks := managedKernels(t, dev)
	s := testStream(t, dev)
	cfg := gridStride(dev)
	bad := try(dev.Allocate(8, s)).must(t) // before the device fills up
	defer bad.Close()
	// Load the kernels into the context now: that takes device memory too.
	warm := try(NewManagedMemoryResource(dev).Allocate(1<<20, s)).must(t)
	if err := errors.Join(Launch(s, cfg, ks["fill_u32"], warm, uint64(1<<18), uint64(0), uint32(1)),
		bad.Memset8Async(s, 0),
		Launch(s, cfg, ks["check_u32"], warm, uint64(1<<18), uint64(0), uint32(1), bad), s.Sync(), warm.Close()); err != nil {
		t.Fatal(err)
	}

	budget, free := managedBudget(t, dev)
	const over = 2 << 30
	size := (free + over) &^ (2<<20 - 1)
	if size > budget {
		t.Skipf("not safe: %d MiB of managed memory (free device memory %d MiB + 2 GiB) is more than free device memory + half the host's available memory (%d MiB)", size>>20, free>>20, budget>>20)
	}
	t.Logf("%v: %d MiB free; allocating %d MiB of managed memory (budget %d MiB)", dev, free>>20, size>>20, budget>>20)
	b := try(NewManagedMemoryResource(dev).Allocate(int(size), s)).must(t)
	defer b.Close()

	const chunk = 1 << 30
	const seed = 0x5eed
	chunks := func(f func(v *Buffer, off int) error) {
		t.Helper()
		for off := 0; off < int(size); off += chunk {
			v := try(b.View(off, min(chunk, int(size)-off))).must(t)
			if err := f(v, off); err != nil {
				t.Fatalf("chunk at %d MiB: %v", off>>20, err)
			}
		}
	}
	start := time.Now()
	// Written by faults: the pages are made where the kernel touches them.
	chunks(func(v *Buffer, off int) error {
		return Launch(s, cfg, ks["fill_u32"], v, uint64(v.Size()/4), uint64(off/4), uint32(seed))
	})
	if err := s.Sync(); err != nil {
		t.Fatalf("writing %d MiB of managed memory from kernels: %v", size>>20, err)
	}
	wrote := time.Since(start)
	// Checked on the GPU, each chunk prefetched first (evicting others).
	chunks(func(v *Buffer, off int) error {
		return errors.Join(v.PrefetchAsync(s, DeviceLocation(dev)),
			Launch(s, cfg, ks["check_u32"], v, uint64(v.Size()/4), uint64(off/4), uint32(seed), bad))
	})
	var nbad [1]uint64
	if err := CopyFromDevice(nbad[:], bad); err != nil { // on s: after the checks
		t.Fatal(err)
	}
	checked := time.Since(start) - wrote
	if nbad[0] != 0 {
		t.Errorf("%d of %d words differ from what the kernels wrote", nbad[0], size/4)
	}
	// Sampled on the host: the first, a middle and the last word of every
	// 64 MiB, through the host's own mapping.
	mem := try(b.Bytes()).must(t)
	checkWord := func(i uint64) {
		if got, want := binary.LittleEndian.Uint32(mem[4*i:]), mix(i, seed); got != want {
			t.Errorf("word %d (byte %d of %d) read on the host = %#x, want %#x", i, 4*i, size, got, want)
		}
	}
	words := size / 4
	for i := uint64(0); i < words; i += 16 << 20 {
		checkWord(i)
		checkWord(min(i+8<<20+12345, words-1))
	}
	checkWord(words - 1)
	t.Logf("%d MiB of managed memory on a device with %d MiB free: written by kernels in %v, checked on the GPU in %v, sampled on the host", size>>20, free>>20, wrote.Round(time.Millisecond), checked.Round(time.Millisecond))
}
