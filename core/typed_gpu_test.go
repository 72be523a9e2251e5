package core

import (
	"testing"
)

// TestTypedBuffersGPU allocates, views and copies by element on a GPU:
// sizes, round trips through typed views, a device-to-device copy of a
// view, a kernel launched on a view (only its elements change), a struct
// element type, and pinned memory from AllocFrom read back with HostSlice.
func TestTypedBuffersGPU(t *testing.T) {
	dev := gpuDevice(t)
	s := testStream(t, dev)

	const n = 1000
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i)*0.25 - 100
	}
	x := try(Alloc[float32](dev, n, s)).must(t)
	defer x.Close()
	if l, err := Len[float32](x); err != nil || l != n || x.Size() != 4*n || x.Device() != dev {
		t.Fatalf("Alloc[float32](%d): Len %d (%v), %d bytes", n, l, err, x.Size())
	}
	if err := CopyToDevice(x, host); err != nil {
		t.Fatal(err)
	}

	// Read a part through a view.
	mid := try(View[float32](x, 100, 50)).must(t)
	wantSlice(t, "view", readBack[float32](t, mid, 50), host[100:150])

	// Copy the view to a buffer of its own, device to device.
	y := try(Alloc[float32](dev, 50, s)).must(t)
	defer y.Close()
	if err := y.CopyFrom(mid); err != nil {
		t.Fatal(err)
	}
	wantSlice(t, "copied view", readBack[float32](t, y, 50), host[100:150])

	// Write a part through a view, and launch a kernel on another: only
	// their elements change.
	w := try(View[float32](x, 10, 5)).must(t)
	if err := CopyToDevice(w, []float32{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	add := kernelsFor(t, dev)["add"]
	if err := Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(64)}, add, mid, float32(1000), int32(50)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "after the view's copy and kernel", readBack[float32](t, x, n), func(i int) float32 {
		switch {
		case i >= 10 && i < 15:
			return float32(i - 9)
		case i >= 100 && i < 150:
			return host[i] + 1000
		}
		return host[i]
	})

	// A struct element type.
	type vec3 struct{ X, Y, Z float32 }
	vs := []vec3{{1, 2, 3}, {-4, 5.5, 6}, {7, 8, -9.25}}
	vb := try(Alloc[vec3](dev, len(vs), nil)).must(t)
	defer vb.Close()
	if l, err := Len[vec3](vb); err != nil || l != 3 || vb.Size() != 36 {
		t.Fatalf("Alloc[vec3](3): Len %d (%v), %d bytes", l, err, vb.Size())
	}
	if err := CopyToDevice(vb, vs); err != nil {
		t.Fatal(err)
	}
	last := try(View[vec3](vb, 2, 1)).must(t)
	one := make([]vec3, 1)
	if err := CopyFromDevice(one, last); err != nil || one[0] != vs[2] {
		t.Fatalf("last vec3 = %v (%v), want %v", one[0], err, vs[2])
	}

	// Pinned memory from a resource, seen from the host.
	pb := try(AllocFrom[complex64](NewPinnedMemoryResource(dev), 16, nil)).must(t)
	defer pb.Close()
	cs := make([]complex64, 16)
	for i := range cs {
		cs[i] = complex(float32(i), -float32(i)/2)
	}
	if err := CopyToDevice(pb, cs); err != nil {
		t.Fatal(err)
	}
	hs, err := HostSlice[complex64](pb)
	if err != nil || len(hs) != 16 {
		t.Fatalf("HostSlice of 16 complex64: %d, %v", len(hs), err)
	}
	for i := range hs {
		if hs[i] != cs[i] {
			t.Fatalf("pinned element %d = %v, want %v", i, hs[i], cs[i])
		}
	}

	// A size the device cannot have is the driver's error, not a crash.
	if b, err := Alloc[float64](dev, 1<<50, s); err == nil {
		b.Close()
		t.Error("Alloc of 8 PiB succeeded")
	}
}
