package core

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// Several devices: every Device method acts in that device's primary
// context, whatever context is current on the calling thread (cuda.core
// 1.3's "Device methods act on that device's own context"). The tests make
// the other device's context current on a locked thread before each call
// (bindings/driver's cuCtxSetCurrent, as code beside core might) and check
// where the work landed.

// makeCurrent makes d's primary context current on the calling thread,
// which the caller has locked.
func makeCurrent(d *Device) error {
	h, err := d.PrimaryContext().Handle()
	if err != nil {
		return err
	}
	return driver.CtxSetCurrent(h)
}

// pointerDevice returns the ordinal of the device p's memory is on.
func pointerDevice(p driver.Deviceptr) (int, error) {
	var ord int32
	err := driver.PointerGetAttribute(unsafe.Pointer(&ord), driver.PointerAttributeDeviceOrdinal, p)
	return int(ord), err
}

// TestGPUDeviceMethodsOwnContext calls each Device method that needs a
// context on one device while the other's is current, and checks that the
// memory, streams, events, graphs and launches are the device's own.
func TestGPUDeviceMethodsOwnContext(t *testing.T) {
	if testenv.RunIsolated(t) { // a launch in the wrong context could leave a sticky error
		return
	}
	d0, d1 := twoGPUs(t)
	if d1.Arch() != d0.Arch() {
		t.Skipf("the test kernels are built for sm_%s, device 1 is sm_%s", d0.Arch(), d1.Arch())
	}
	add := kernelsFor(t, d0)["add"]
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, p := range [][2]*Device{{d0, d1}, {d1, d0}} {
		d, other := p[0], p[1]
		dh := try(d.PrimaryContext().Handle()).must(t)
		oh := try(other.PrimaryContext().Handle()).must(t)
		// wrong makes the other device's context current before a call.
		wrong := func() {
			t.Helper()
			if err := makeCurrent(other); err != nil {
				t.Fatal(err)
			}
		}

		// frees returns the free memory of d and of other.
		frees := func() (uint64, uint64) {
			t.Helper()
			fd, _, err := d.MemoryInfo()
			if err != nil {
				t.Fatal(err)
			}
			fo, _, err := other.MemoryInfo()
			if err != nil {
				t.Fatal(err)
			}
			return fd, fo
		}

		// Memory: the pointer is d's, and d's free memory is what shrinks.
		wrong()
		freeD, freeO := frees()
		const big = 512 << 20
		wrong()
		bigBuf := try(NewLegacyMemoryResource(d).Allocate(big, nil)).must(t)
		wrong()
		freeD2, freeO2 := frees()
		bigBuf.Close()
		if int64(freeD)-int64(freeD2) < big || int64(freeO)-int64(freeO2) >= big {
			t.Errorf("%v.MemoryInfo with %v current: free went %d -> %d MiB on %v and %d -> %d MiB on %v after allocating %d MiB on %v",
				d, other, freeD>>20, freeD2>>20, d, freeO>>20, freeO2>>20, other, big>>20, d)
		}
		wrong()
		buf := try(d.Allocate(1<<16*4, nil)).must(t)
		if ord, err := pointerDevice(buf.Ptr()); err != nil || ord != d.Ordinal() {
			t.Errorf("%v.Allocate with %v current: memory on device %d, %v", d, other, ord, err)
		}

		// Streams and events are created in d's context.
		wrong()
		s := try(d.NewStream(&StreamOptions{NonBlocking: true})).must(t)
		if c, err := driver.StreamGetCtx(s.Handle()); err != nil || c != dh {
			t.Errorf("%v.NewStream with %v current: the stream's context is %#x (%v); want %#x, not %#x", d, other, c, err, dh, oh)
		}
		wrong()
		e := try(d.NewEvent(nil)).must(t)
		// cuEventRecord refuses an event of another context than the stream's.
		wrong()
		if err := e.Record(s); err != nil {
			t.Errorf("recording %v's event on %v's stream: %v", d, d, err)
		}

		// A launch and the device's Sync, on the device's own streams.
		wrong()
		peerKernelRoundTrip(t, add, d, buf) // a stream of d's, the kernel's function in d's context
		wrong()
		if err := Launch(d.DefaultStream(), LaunchConfig{Grid: Dim(256), Block: Dim(256)}, add, buf, float32(1), int32(1<<16)); err != nil {
			t.Fatal(err)
		}
		wrong()
		if err := d.Sync(); err != nil {
			t.Fatalf("%v.Sync with %v current: %v", d, other, err)
		}
		got := make([]float32, 1<<16)
		wrong()
		if err := CopyFromDevice(got, buf); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != float32(i)+1.5 {
				t.Fatalf("%v's buffer[%d] = %v after two kernels, want %v", d, i, v, float32(i)+1.5)
			}
		}

		// Graphs, the priority range, a created context.
		wrong()
		g := try(d.NewGraph()).must(t)
		if _, err := g.Memset8(buf, 0); err != nil {
			t.Fatal(err)
		}
		wrong()
		ge := try(g.Instantiate()).must(t)
		wrong()
		if err := errors.Join(ge.Launch(s), s.Sync()); err != nil {
			t.Fatalf("%v's graph on %v's stream: %v", d, d, err)
		}
		wrong()
		if err := CopyFromDevice(got, buf); err != nil || slices.ContainsFunc(got, func(v float32) bool { return v != 0 }) {
			t.Errorf("%v's graph memset, launched with %v current: buffer not all zero (%v)", d, other, err)
		}
		ge.Close()
		g.Close()
		wrong()
		if _, _, err := d.StreamPriorityRange(); err != nil {
			t.Error(err)
		}
		wrong()
		c := try(d.CreateContext(0)).must(t)
		if cur, err := driver.CtxGetCurrent(); err != nil || cur != oh {
			t.Errorf("%v.CreateContext made its context current (%#x, %v); %v's (%#x) should have stayed", d, cur, err, other, oh)
		}
		if ch, _ := c.Handle(); ch == dh || ch == oh {
			t.Errorf("CreateContext returned a primary context")
		}
		c.Close()
		e.Close()
		s.Close()
		buf.Close()
	}
}

// TestGPUTwoDevicesInterleaved runs 16 goroutines of 100 iterations each,
// alternating devices, each step starting with the other device's context
// current on its (locked) thread: stream, allocation, copies in, a kernel,
// an event (which a stream of the other device waits for), a copy to the
// other device, copies out, attributes and the device's Sync; every result
// is checked.
func TestGPUTwoDevicesInterleaved(t *testing.T) {
	if testenv.RunIsolated(t) {
		return
	}
	d0, d1 := twoGPUs(t)
	if d1.Arch() != d0.Arch() {
		t.Skipf("the test kernels are built for sm_%s, device 1 is sm_%s", d0.Arch(), d1.Arch())
	}
	add := kernelsFor(t, d0)["add"]
	devs := [2]*Device{d0, d1}
	const goroutines, iters, n = 16, 100, 4096
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			in := make([]float32, n)
			for j := range in {
				in[j] = float32(j + g)
			}
			out := make([]float32, n)
			for i := range iters {
				if err := interleavedStep(devs[(g+i)%2], devs[(g+i+1)%2], add, in, out, float32(g*iters+i)); err != nil {
					t.Errorf("goroutine %d, iteration %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// interleavedStep is one iteration on d, with other's context made current
// before every call.
func interleavedStep(d, other *Device, add *Kernel, in, out []float32, v float32) (err error) {
	step := func(what string, f func() error) {
		if err != nil {
			return
		}
		if err = makeCurrent(other); err != nil {
			return
		}
		if e := f(); e != nil {
			err = fmt.Errorf("%s on %v with %v current: %w", what, d, other, e)
		}
	}
	n := len(in)
	var s *Stream
	var buf, mirror *Buffer
	var ev *Event
	defer func() {
		if ev != nil {
			ev.Close()
		}
		if mirror != nil {
			mirror.Close()
		}
		if buf != nil {
			buf.Close()
		}
		if s != nil {
			s.Close()
		}
	}()
	step("NewStream", func() (e error) { s, e = d.NewStream(&StreamOptions{NonBlocking: true}); return })
	step("Allocate", func() (e error) { buf, e = d.Allocate(4*n, s); return })
	step("the pointer's device", func() error {
		if ord, e := pointerDevice(buf.Ptr()); e != nil || ord != d.Ordinal() {
			return fmt.Errorf("on device %d (%v)", ord, e)
		}
		return nil
	})
	step("CopyToDevice", func() error { return CopyToDevice(buf, in) })
	step("Launch", func() error {
		return Launch(s, LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}, add, buf, v, int32(n))
	})
	step("Stream.Record", func() (e error) { ev, e = s.Record(); return })
	step("Event.Sync", func() error { return ev.Sync() })
	step("Stream.Wait, on the other device, for the event", func() error {
		os, e := other.NewStream(&StreamOptions{NonBlocking: true})
		if e != nil {
			return e
		}
		defer os.Close()
		return errors.Join(os.Wait(ev), os.Sync())
	})
	step("Allocate on the other device", func() (e error) { mirror, e = other.Allocate(4*n, nil); return })
	step("CopyFrom (device to device)", func() error { return mirror.CopyFrom(buf) })
	step("CopyFromDevice", func() error { return CopyFromDevice(out, mirror) })
	step("the result", func() error {
		for j := range out {
			if out[j] != in[j]+v {
				return fmt.Errorf("element %d = %v, want %v", j, out[j], in[j]+v)
			}
		}
		return nil
	})
	step("Attribute", func() error {
		if sm, e := d.Attribute(driver.DeviceAttributeMultiprocessorCount); e != nil || sm != d.MultiprocessorCount() {
			return fmt.Errorf("%d SMs (%v), want %d", sm, e, d.MultiprocessorCount())
		}
		return nil
	})
	step("Sync", d.Sync)
	return err
}
