package core

import (
	"fmt"
	"testing"

	"github.com/cudago/cudago/internal/testing/ctwin"
)

// BenchmarkPeerCopy copies between devices 0 and 1, both ways, at 64 MiB
// and 1 GiB, after EnablePeerAccess both ways (which also opens each
// device's default pool to the other). The rows, all in GB/s:
//   - cudago: Buffer.CopyFrom on default-pool Buffers (cuMemcpyPeerAsync,
//     then a wait for the stream, per copy);
//   - cudago-async: CopyFromAsync back to back, one wait at the end (as
//     PyTorch's copy_ loop is timed);
//   - C-pool: the C twin (internal/testing/ctwin) on the same pool memory, the
//     same two driver calls per copy from a C loop;
//   - C-cuMemAlloc: the C twin on cuMemAlloc memory (LegacyMemoryResource),
//     which context peer access alone covers.
//
// It needs 2 GPUs that can access each other.
func BenchmarkPeerCopy(b *testing.B) {
	d0, d1 := twoGPUs(b)
	for _, p := range [][2]*Device{{d0, d1}, {d1, d0}} {
		ok, err := p[0].CanAccessPeer(p[1])
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			b.Skipf("%v cannot access %v directly", p[0], p[1])
		}
		if err := p[0].EnablePeerAccess(p[1]); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{64 << 20, 1 << 30} {
		for _, dir := range [][2]*Device{{d0, d1}, {d1, d0}} {
			from, to := dir[0], dir[1]
			name := fmt.Sprintf("%dMiB/%dto%d", n>>20, from.Ordinal(), to.Ordinal())
			b.Run(name, func(b *testing.B) { benchPeerCopy(b, from, to, n) })
		}
	}
}

func benchPeerCopy(b *testing.B, from, to *Device, n int) {
	s := try(to.NewStream(&StreamOptions{NonBlocking: true})).must(b)
	defer s.Close()
	alloc := func(mr MemoryResource, st *Stream) *Buffer {
		return try(mr.Allocate(n, st)).must(b)
	}
	src := alloc(from.MemoryResource(), nil)
	defer src.Close()
	dst := alloc(to.MemoryResource(), s)
	defer dst.Close()
	lsrc := alloc(NewLegacyMemoryResource(from), nil)
	defer lsrc.Close()
	ldst := alloc(NewLegacyMemoryResource(to), nil)
	defer ldst.Close()
	for _, buf := range []*Buffer{src, lsrc} {
		if err := buf.Memset8(1); err != nil {
			b.Fatal(err)
		}
	}
	gbps := func(b *testing.B, sec float64) {
		b.ReportMetric(float64(n)*float64(b.N)/sec/1e9, "GB/s")
	}
	// goLoop times b.N copies of src to dst by copyOnce, after one
	// synchronous copy to warm up, and then waits for them with wait.
	goLoop := func(b *testing.B, copyOnce, wait func() error) {
		b.SetBytes(int64(n))
		if err := dst.CopyFrom(src); err != nil { // warm
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if err := copyOnce(); err != nil {
				b.Fatal(err)
			}
		}
		if err := wait(); err != nil {
			b.Fatal(err)
		}
		gbps(b, b.Elapsed().Seconds())
	}
	b.Run("cudago", func(b *testing.B) {
		goLoop(b, func() error { return dst.CopyFrom(src) }, func() error { return nil })
	})
	b.Run("cudago-async", func(b *testing.B) {
		goLoop(b, func() error { return dst.CopyFromAsync(s, src) }, s.Sync)
	})
	cLoop := func(b *testing.B, dst, src *Buffer) {
		b.SetBytes(int64(n))
		ctx, sh, err := s.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer s.Release()
		pd := try(dst.Acquire()).must(b)
		defer dst.Release()
		ps := try(src.Acquire()).must(b)
		defer src.Release()
		dctx := try(to.PrimaryContext().Handle()).must(b)
		sctx := try(from.PrimaryContext().Handle()).must(b)
		if _, err := ctwin.PeerCopyLoop(ctx, sh, pd, dctx, ps, sctx, n, 1); err != nil { // warm
			b.Fatal(err)
		}
		b.ResetTimer()
		el := try(ctwin.PeerCopyLoop(ctx, sh, pd, dctx, ps, sctx, n, b.N)).must(b)
		gbps(b, el.Seconds())
	}
	b.Run("C-pool", func(b *testing.B) { cLoop(b, dst, src) })
	b.Run("C-cuMemAlloc", func(b *testing.B) { cLoop(b, ldst, lsrc) })
}
