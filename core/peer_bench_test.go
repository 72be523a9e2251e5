package core

import (
	"testing"

	"github.com/cudago/cudago/internal/ctwin"
)

// BenchmarkPeerCopy copies 64 MiB from device 0 to device 1, with peer
// access enabled both ways where the devices allow it: Buffer.CopyFrom
// ("cudago": cuMemcpyPeerAsync and a stream wait per copy, after waiting
// for the source's idle stream), and its C twin ("C", internal/ctwin):
// the same two driver calls in a C loop. Both report GB/s. It needs 2
// GPUs.
func BenchmarkPeerCopy(b *testing.B) {
	const n = 64 << 20
	d0, d1 := twoGPUs(b)
	direct := true
	for _, p := range [][2]*Device{{d0, d1}, {d1, d0}} {
		ok, err := p[0].CanAccessPeer(p[1])
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			if err := p[0].EnablePeerAccess(p[1]); err != nil {
				b.Fatal(err)
			}
		}
		direct = direct && ok
	}
	b.Logf("peer access both ways: %v (false: copies are staged through the host)", direct)
	s1, err := d1.NewStream(StreamOptions{NonBlocking: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s1.Close()
	src, err := d0.Allocate(n, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := d1.Allocate(n, s1)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	if err := src.Memset8(1); err != nil {
		b.Fatal(err)
	}
	gbps := func(b *testing.B, sec float64) {
		b.ReportMetric(float64(n)*float64(b.N)/sec/1e9, "GB/s")
	}
	b.Run("cudago", func(b *testing.B) {
		b.SetBytes(n)
		if err := dst.CopyFrom(src); err != nil { // warm
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if err := dst.CopyFrom(src); err != nil {
				b.Fatal(err)
			}
		}
		gbps(b, b.Elapsed().Seconds())
	})
	b.Run("C", func(b *testing.B) {
		b.SetBytes(n)
		ctx, sh, err := s1.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer s1.Release()
		pd, err := dst.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer dst.Release()
		ps, err := src.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer src.Release()
		dctx, err := d1.PrimaryContext().Handle()
		if err != nil {
			b.Fatal(err)
		}
		sctx, err := d0.PrimaryContext().Handle()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ctwin.PeerCopyLoop(ctx, sh, pd, dctx, ps, sctx, n, 1); err != nil { // warm
			b.Fatal(err)
		}
		b.ResetTimer()
		el, err := ctwin.PeerCopyLoop(ctx, sh, pd, dctx, ps, sctx, n, b.N)
		if err != nil {
			b.Fatal(err)
		}
		gbps(b, el.Seconds())
	})
}
