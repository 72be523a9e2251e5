package core

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// fakeMR is a resource that never reaches the driver. Its Deallocate may
// run on cleanup goroutines, concurrently.
type fakeMR struct{ freed atomic.Int32 }

func (m *fakeMR) Allocate(size int, stream *Stream) (*Buffer, error) {
	return NewBuffer(0x1000, size, m, stream), nil
}
func (m *fakeMR) Deallocate(driver.Deviceptr, int, *Stream) error { m.freed.Add(1); return nil }
func (m *fakeMR) Device() *Device                                 { return nil }
func (m *fakeMR) DeviceAccessible() bool                          { return true }
func (m *fakeMR) HostAccessible() bool                            { return false }

func TestBufferChecksBeforeDriver(t *testing.T) {
	mr := &fakeMR{}
	b, _ := mr.Allocate(16, nil)
	if err := CopyToDevice(b, make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "20 bytes do not fit in a buffer of 16 bytes") {
		t.Errorf("CopyToDevice of 20 bytes into 16: %v", err)
	}
	if err := CopyFromDevice(make([]int64, 3), b); err == nil || !strings.Contains(err.Error(), "24 bytes do not fit") {
		t.Errorf("CopyFromDevice of 24 bytes from 16: %v", err)
	}
	if err := CopyToDeviceAsync(nil, b, make([]byte, 17)); err == nil || !strings.Contains(err.Error(), "17 bytes do not fit") {
		t.Errorf("CopyToDeviceAsync of 17 bytes into 16: %v", err)
	}
	if err := CopyFromDeviceAsync(nil, make([]uint16, 9), b); err == nil || !strings.Contains(err.Error(), "18 bytes do not fit") {
		t.Errorf("CopyFromDeviceAsync of 18 bytes from 16: %v", err)
	}
	big, _ := mr.Allocate(32, nil)
	if err := b.CopyFrom(big); err == nil || !strings.Contains(err.Error(), "32 bytes do not fit") {
		t.Errorf("CopyFrom a larger buffer: %v", err)
	}
	if err := CopyToDevice(b, []*int{nil}); err == nil || !strings.Contains(err.Error(), "holds Go pointers") {
		t.Errorf("CopyToDevice of pointers: %v", err)
	}
	type withString struct {
		A int32
		S string
	}
	if err := CopyToDevice(b, []withString{{}}); err == nil || !strings.Contains(err.Error(), "holds Go pointers") {
		t.Errorf("CopyToDevice of a struct with a string: %v", err)
	}
	odd, _ := mr.Allocate(6, nil)
	if err := odd.Memset32(1); err == nil || !strings.Contains(err.Error(), "not a multiple of 4") {
		t.Errorf("Memset32 of 6 bytes: %v", err)
	}
	if _, err := b.Bytes(); err == nil {
		t.Error("Bytes of device memory: no error")
	}

	if err := b.Close(); err != nil || mr.freed.Load() != 1 {
		t.Fatalf("Close: %v, %d frees", err, mr.freed.Load())
	}
	if err := b.Close(); err != nil || mr.freed.Load() != 1 {
		t.Errorf("second Close: %v, %d frees", err, mr.freed.Load())
	}
	if b.Ptr() != 0 {
		t.Errorf("Ptr after Close = %#x", b.Ptr())
	}
	for name, err := range map[string]error{
		"CopyToDevice":   CopyToDevice(b, []byte{1}),
		"CopyFromDevice": CopyFromDevice(make([]byte, 1), b),
		"Memset8":        b.Memset8(0),
		"CopyFrom":       b.CopyFrom(odd),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if _, err := b.Bytes(); !errors.Is(err, ErrClosed) {
		t.Errorf("Bytes after Close: %v", err)
	}
	big.Close()
	odd.Close()
}

func TestGPUBuffers(t *testing.T) {
	dev := gpuDevice(t)
	s := testStream(t, dev)
	const n = 4096
	f32 := make([]float32, n)
	i64 := make([]int64, n)
	for i := range f32 {
		f32[i] = float32(i)*0.5 - 7
		i64[i] = int64(i)*1_000_000_007 - 1<<40
	}
	for _, mr := range []MemoryResource{
		dev.MemoryResource(),
		NewDeviceMemoryResource(dev),
		NewPinnedMemoryResource(dev),
		NewManagedMemoryResource(dev),
		NewLegacyMemoryResource(dev),
	} {
		t.Run(strings.TrimPrefix(typeName(mr), "*core."), func(t *testing.T) {
			for _, stream := range []*Stream{nil, s} {
				a, err := mr.Allocate(n*8, stream)
				if err != nil {
					t.Fatal(err)
				}
				b, err := mr.Allocate(n*8, stream)
				if err != nil {
					t.Fatal(err)
				}
				if a.Size() != n*8 || a.Ptr() == 0 || a.MemoryResource() != mr || a.Device() != dev {
					t.Errorf("buffer: size %d, ptr %#x", a.Size(), a.Ptr())
				}
				// Synchronous typed round trips.
				if err := CopyToDevice(a, f32); err != nil {
					t.Fatal(err)
				}
				got := readBack[float32](t, a, n)
				wantSlice(t, "float32", got, f32)
				if err := CopyToDevice(a, i64); err != nil {
					t.Fatal(err)
				}
				// Device to device.
				if err := b.CopyFrom(a); err != nil {
					t.Fatal(err)
				}
				wantSlice(t, "int64", readBack[int64](t, b, n), i64)
				// Asynchronous round trip on s.
				if err := a.Memset8(0); err != nil {
					t.Fatal(err)
				}
				if err := CopyToDeviceAsync(s, a, f32); err != nil {
					t.Fatal(err)
				}
				if err := b.CopyFromAsync(s, a); err != nil {
					t.Fatal(err)
				}
				clear(got)
				if err := CopyFromDeviceAsync(s, got, b); err != nil {
					t.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
				wantSlice(t, "async float32", got, f32)
				// Memsets.
				if err := a.Memset32(0x3f800000); err != nil { // 1.0f
					t.Fatal(err)
				}
				if err := CopyFromDevice(got, a); err != nil {
					t.Fatal(err)
				}
				if got[0] != 1 || got[n-1] != 1 {
					t.Errorf("after Memset32(1.0f): %v ... %v", got[0], got[n-1])
				}
				if err := b.Memset8Async(s, 0xab); err != nil {
					t.Fatal(err)
				}
				if err := b.Memset32Async(s, 0); err != nil {
					t.Fatal(err)
				}
				if err := b.Memset8Async(s, 0xab); err != nil {
					t.Fatal(err)
				}
				u8 := make([]uint8, n*8)
				if err := CopyFromDeviceAsync(s, u8, b); err != nil {
					t.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
				if u8[0] != 0xab || u8[n*8-1] != 0xab {
					t.Errorf("after Memset8(0xab): %#x ... %#x", u8[0], u8[n*8-1])
				}
				// Views: copies and memsets through a view touch its part only.
				if err := a.Memset8(0); err != nil {
					t.Fatal(err)
				}
				v, err := a.View(1024, 2048)
				if err != nil {
					t.Fatal(err)
				}
				if err := CopyToDevice(v, f32[:512]); err != nil {
					t.Fatal(err)
				}
				vv, err := v.View(1024, 16) // a's bytes 2048..2063: float32s 512..515
				if err != nil {
					t.Fatal(err)
				}
				if err := vv.Memset32(0x40000000); err != nil { // 2.0f
					t.Fatal(err)
				}
				whole := make([]float32, n*2)
				if err := CopyFromDevice(whole, a); err != nil {
					t.Fatal(err)
				}
				for i, x := range whole {
					want := float32(0)
					switch {
					case i >= 512 && i < 516:
						want = 2
					case i >= 256 && i < 768:
						want = f32[i-256]
					}
					if x != want {
						t.Fatalf("after copies through views: float32[%d] = %v, want %v", i, x, want)
					}
				}
				if err := vv.Close(); err != nil {
					t.Fatal(err)
				}
				// Host views.
				if mr.HostAccessible() {
					if err := s.Sync(); err != nil {
						t.Fatal(err)
					}
					view, err := b.Bytes()
					if err != nil || len(view) != n*8 || view[5] != 0xab {
						t.Errorf("Bytes: len %d, %v", len(view), err)
					}
					view[5] = 0x11
					one := make([]byte, 8)
					if err := CopyFromDevice(one, b); err != nil || one[5] != 0x11 {
						t.Errorf("a host write through Bytes is not seen by a copy: %v, %v", one, err)
					}
					// The typed view: a write through it reaches the device.
					fs, err := HostSlice[float32](b)
					if err != nil || len(fs) != n*2 {
						t.Fatalf("HostSlice[float32]: len %d, %v", len(fs), err)
					}
					for i := range fs {
						fs[i] = float32(i) + 0.25
					}
					back := make([]float32, n*2)
					if err := CopyFromDevice(back, b); err != nil {
						t.Fatal(err)
					}
					for i := range back {
						if back[i] != float32(i)+0.25 {
							t.Fatalf("HostSlice write [%d]: copy reads %v", i, back[i])
						}
					}
					if _, err := HostSlice[[3]byte](b); err == nil {
						t.Error("HostSlice of 3-byte elements over a 32 KiB buffer: no error")
					}
					if _, err := HostSlice[*int](b); err == nil {
						t.Error("HostSlice of pointers: no error")
					}
				} else if _, err := b.Bytes(); err == nil {
					t.Error("Bytes of device memory: no error")
				} else if _, err := HostSlice[float32](b); err == nil {
					t.Error("HostSlice of device memory: no error")
				}
				// Bounds.
				if err := CopyToDevice(a, make([]int64, n+1)); err == nil {
					t.Error("copying too much: no error")
				}
				small, err := mr.Allocate(8, stream)
				if err != nil {
					t.Fatal(err)
				}
				if err := small.CopyFrom(a); err == nil {
					t.Error("CopyFrom into a smaller buffer: no error")
				}
				small.Close()
				closeTwice(t, a)
				if err := CopyToDevice(a, f32); !errors.Is(err, ErrClosed) {
					t.Errorf("copy after Close: %v", err)
				}
				if err := b.CloseOn(s); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}

	// A buffer whose stream was closed is freed on the default stream.
	s2, err := dev.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := dev.Allocate(1<<20, s2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := buf.Memset8(1); err != nil {
		t.Errorf("Memset8 after the buffer's stream closed: %v", err)
	}
	if err := buf.Close(); err != nil {
		t.Errorf("Close after the buffer's stream closed: %v", err)
	}
	if b, err := dev.Allocate(0, nil); err != nil || b.Size() != 0 || b.Close() != nil {
		t.Errorf("empty allocation: %v", err)
	}
	if _, err := dev.Allocate(-1, nil); err == nil {
		t.Error("negative allocation: no error")
	}

	// Asking for more than the device has is ErrorOutOfMemory.
	_, err = NewLegacyMemoryResource(dev).Allocate(int(dev.TotalMemory())*4, nil)
	if !errors.Is(err, driver.ErrorOutOfMemory) {
		t.Errorf("allocating 4x the device memory: %v, want ErrorOutOfMemory", err)
	}
}

func TestHostSliceMisuse(t *testing.T) {
	if _, err := HostSlice[float32](nil); err == nil {
		t.Error("HostSlice(nil): no error")
	}
	if _, err := HostSlice[[]int](nil); err == nil || !strings.Contains(err.Error(), "Go pointers") {
		t.Errorf("HostSlice of slices: %v, want an error about Go pointers", err)
	}
}

func TestBufferView(t *testing.T) {
	mr := &fakeMR{}
	b, _ := mr.Allocate(64, nil)
	v, err := b.View(16, 32)
	if err != nil || v.Ptr() != b.Ptr()+16 || v.Size() != 32 || v.MemoryResource() != mr {
		t.Fatalf("View(16, 32): ptr %#x size %d, %v", v.Ptr(), v.Size(), err)
	}
	vv, err := v.View(8, 8)
	if err != nil || vv.Ptr() != b.Ptr()+24 || vv.Size() != 8 || vv.parent != b {
		t.Fatalf("view of a view: ptr %#x size %d, %v", vv.Ptr(), vv.Size(), err)
	}
	for _, c := range [][2]int{{-1, 4}, {0, -1}, {60, 8}, {65, 0}, {0, 65}} {
		if _, err := b.View(c[0], c[1]); err == nil || !strings.Contains(err.Error(), "do not fit") {
			t.Errorf("View(%d, %d): %v", c[0], c[1], err)
		}
	}
	if _, err := v.View(0, 33); err == nil {
		t.Error("a view larger than its base view: no error")
	}
	if z, err := b.View(64, 0); err != nil || z.Size() != 0 {
		t.Errorf("empty view at the end: %v", err)
	}
	// Bounds are checked against the view, before the driver.
	if err := CopyToDevice(v, make([]byte, 33)); err == nil || !strings.Contains(err.Error(), "33 bytes do not fit in a buffer of 32 bytes") {
		t.Errorf("copy of 33 bytes into a 32-byte view: %v", err)
	}
	// Overlapping copies within one buffer are refused before the driver.
	lo, _ := b.View(0, 32)
	hi, _ := b.View(16, 32)
	if err := lo.CopyFrom(hi); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("CopyFrom between overlapping views: %v", err)
	}
	if err := b.CopyFrom(b); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("CopyFrom of a buffer onto itself: %v", err)
	}
	// Closing a view frees nothing and leaves the base usable.
	if err := vv.Close(); err != nil || mr.freed.Load() != 0 {
		t.Fatalf("closing a view: %v, %d frees", err, mr.freed.Load())
	}
	if vv.Ptr() != 0 || b.Ptr() == 0 || v.Ptr() == 0 {
		t.Error("closing a view closed more than the view")
	}
	// Closing the base ends every view.
	if err := b.Close(); err != nil || mr.freed.Load() != 1 {
		t.Fatalf("closing the base: %v, %d frees", err, mr.freed.Load())
	}
	if v.Ptr() != 0 {
		t.Error("view of a closed buffer still has an address")
	}
	if err := CopyToDevice(v, make([]byte, 4)); !errors.Is(err, ErrClosed) {
		t.Errorf("copy into a view of a closed buffer: %v", err)
	}
	if _, err := b.View(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("View of a closed buffer: %v", err)
	}
	if err := v.Close(); err != nil || mr.freed.Load() != 1 {
		t.Errorf("closing a view after its base: %v, %d frees", err, mr.freed.Load())
	}
	var nilBuf *Buffer
	if _, err := nilBuf.View(0, 0); err == nil {
		t.Error("View of a nil buffer: no error")
	}
}

// TestStagingContextGone checks the staging pool's bookkeeping when a
// primary context is reset: its buffers are dropped, free or in use, and
// a new context with the same handle starts afresh.
func TestStagingContextGone(t *testing.T) {
	staging.mu.Lock()
	saved := staging.free
	savedAlloc, savedGens := staging.allocated, staging.gens
	staging.free, staging.allocated, staging.gens = nil, 0, nil
	staging.mu.Unlock()
	defer func() {
		staging.mu.Lock()
		staging.free, staging.allocated, staging.gens = saved, savedAlloc, savedGens
		staging.mu.Unlock()
	}()
	a1, a2, b1 := &stagingSlot{ctx: 1}, &stagingSlot{ctx: 1}, &stagingSlot{ctx: 2}
	staging.allocated = 3
	putSlots([]*stagingSlot{a1, b1}) // a2 is in use
	stagingContextGone(1)
	if len(staging.free) != 1 || staging.free[0] != b1 || staging.allocated != 2 {
		t.Fatalf("after the reset of context 1: free %v, allocated %d", staging.free, staging.allocated)
	}
	putSlots([]*stagingSlot{a2}) // returned after the reset: dropped
	if len(staging.free) != 1 || staging.allocated != 1 {
		t.Fatalf("a buffer of the reset context came back: free %v, allocated %d", staging.free, staging.allocated)
	}
	a3 := &stagingSlot{ctx: 1, gen: staging.gens[1]} // the new context 1
	staging.allocated++
	putSlots([]*stagingSlot{a3})
	if len(staging.free) != 2 || staging.allocated != 2 {
		t.Fatalf("a buffer of the new context was dropped: free %v, allocated %d", staging.free, staging.allocated)
	}
}
