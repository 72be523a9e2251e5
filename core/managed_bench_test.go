package core

import (
	"testing"
)

// BenchmarkManagedPrefetch runs a kernel (x = x + 1 over 1 GiB of float32)
// over managed memory in three states, and reports the buffer's bytes per
// second of the timed part:
//
//   - host-faulted: the memory is on the host and the kernel faults its
//     pages over (no prefetch);
//   - host-prefetched: the memory is on the host, PrefetchAsync moves it to
//     the device, then the kernel runs (the prefetch is timed);
//   - device-resident: the memory is already on the device (the kernel
//     alone, the ceiling).
//
// The memory is moved back between iterations, untimed. The gap between
// the first two is what a prefetch saves over demand paging.
//
//	cd core && ../.gpu/core.test -test.run '^$' -test.bench BenchmarkManagedPrefetch -test.benchtime 20x
func BenchmarkManagedPrefetch(b *testing.B) {
	dev := requireGPU(b)
	requireManagedAccess(b, dev)
	ks := managedKernels(b, dev)
	const size = 1 << 30
	budget, free := managedBudget(b, dev)
	if size > free || size > budget {
		b.Skipf("needs 1 GiB of managed memory resident on the device: %d MiB free, budget %d MiB", free>>20, budget>>20)
	}
	s, err := dev.NewStream(&StreamOptions{NonBlocking: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	buf, err := NewManagedMemoryResource(dev).Allocate(size, s)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	if err := buf.Memset8(0); err != nil { // every page made once
		b.Fatal(err)
	}
	cfg := gridStride(dev)
	n := uint64(size / 4)
	for _, c := range []struct {
		name     string
		start    Location
		prefetch bool
	}{
		{"host-faulted", HostLocation(), false},
		{"host-prefetched", HostLocation(), true},
		{"device-resident", DeviceLocation(dev), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				if err := buf.PrefetchAsync(s, c.start); err != nil {
					b.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if c.prefetch {
					if err := buf.PrefetchAsync(s, DeviceLocation(dev)); err != nil {
						b.Fatal(err)
					}
				}
				if err := Launch(s, cfg, ks["axpb"], buf, float32(1), float32(1), n); err != nil {
					b.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	// The kernel added 1 to every element once per iteration of every
	// sub-benchmark that ran: check a sample, so that the numbers are of a
	// kernel that ran.
	x, err := HostSlice[float32](buf)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(x); i += len(x) / 64 {
		if x[i] != x[0] || x[0] < 1 {
			b.Fatalf("x[%d] = %v, x[0] = %v: the kernel did not add the same (at least 1) everywhere", i, x[i], x[0])
		}
	}
}
