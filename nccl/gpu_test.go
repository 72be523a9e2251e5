package nccl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/libtest"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// The GPU tests run a communicator of one rank (InitAll of one device,
// and InitRank with nranks 1) through every operation, data type and op.
// With one rank every result is the input: a reduction of one value is
// the value (Avg multiplies it by 1/1, which is exact for the normal,
// finite values used), and the gathers and scatters copy. The inputs are
// bit patterns made here, checked bit for bit; outputs start as 0xA5
// bytes, which no input holds as a whole.

// gpuDev returns device 0 and a stream on it; it skips without a GPU.
func gpuDev(t testing.TB) (*core.Device, *core.Stream) {
	t.Helper()
	s := libtest.SyncedStream(t, core.StreamOptions{NonBlocking: true})
	return s.Device(), s
}

// oneRank returns the communicators of one rank the tests use: from
// InitAll and from InitRank.
func oneRank(t testing.TB, d *core.Device) map[string]*Comm {
	t.Helper()
	all, err := InitAll([]*core.Device{d})
	if err != nil {
		t.Fatalf("InitAll: %v", err)
	}
	id, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	r, err := InitRank(d, id, 1, 0, &Config{CommName: "cudago-test"})
	if err != nil {
		t.Fatalf("InitRank: %v", err)
	}
	comms := map[string]*Comm{"InitAll": all[0], "InitRank": r}
	t.Cleanup(func() {
		for name, c := range comms {
			if err := c.Close(); err != nil {
				t.Errorf("%s: Close: %v", name, err)
			}
		}
	})
	for name, c := range comms {
		if c.Rank() != 0 || c.Count() != 1 || c.Device() != d {
			t.Fatalf("%s: %v", name, c)
		}
	}
	return comms
}

// halfBits is the IEEE half of f, which must be a normal half or zero
// exactly (the inputs are chosen so): the float32's sign, rebased
// exponent and top 10 fraction bits.
func halfBits(f float32) uint16 {
	if f == 0 {
		return 0
	}
	b := math.Float32bits(f)
	exp := int(b>>23&0xff) - 127 + 15
	if b&0x1fff != 0 || exp < 1 || exp > 30 {
		panic(fmt.Sprintf("%g is no exact normal half", f))
	}
	return uint16(b>>16&0x8000) | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// bf16Bits is the bfloat16 of f, which must be one exactly.
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0xffff != 0 {
		panic(fmt.Sprintf("%g is no exact bfloat16", f))
	}
	return uint16(b >> 16)
}

// input returns n elements of dt as bytes: varied values, normal or zero
// for the floating-point types (no NaN, infinity or subnormal), seeded.
func input(dt DataType, n, seed int) []byte {
	out := make([]byte, 0, n*dt.Size())
	le := binary.LittleEndian
	for i := range n {
		k := (i*7919 + seed*104729) % 2053 // 0..2052
		switch dt {
		case Int8:
			out = append(out, byte(int8(k-1026)))
		case Uint8:
			out = append(out, byte(k))
		case Int32:
			out = le.AppendUint32(out, uint32(int32((k-1026)*1000003)))
		case Uint32:
			out = le.AppendUint32(out, uint32(k)*2654435761)
		case Int64:
			out = le.AppendUint64(out, uint64(int64(k-1026)*1000000007*1000003))
		case Uint64:
			out = le.AppendUint64(out, uint64(k)*11400714819323198485)
		case Float16:
			out = le.AppendUint16(out, halfBits(float32(k%2047-1023)/8)) // ±127.875 in steps of 1/8
		case BFloat16:
			out = le.AppendUint16(out, bf16Bits(float32(k%255-127)/2)) // ±63.5 in steps of 1/2
		case Float32:
			out = le.AppendUint32(out, math.Float32bits(float32(k-1026)*0.375+0.0625))
		case Float64:
			out = le.AppendUint64(out, math.Float64bits(float64(k-1026)*1.0000001+1e-3))
		case Float8E4M3:
			// Exponent 1..15, sign, any mantissa but e=15 m=7 (NaN).
			e, m, s := 1+k%15, k/15%8, k/120%2
			if e == 15 && m == 7 {
				m = 6
			}
			out = append(out, byte(s<<7|e<<3|m))
		case Float8E5M2:
			// Exponent 1..30 (31 is infinity and NaN), sign, mantissa.
			e, m, s := 1+k%30, k/30%4, k/120%2
			out = append(out, byte(s<<7|e<<2|m))
		}
	}
	return out
}

// dataTypes are the types the loaded NCCL has.
func dataTypes(t testing.TB) []DataType {
	v, err := libVersion()
	if err != nil {
		t.Fatal(err)
	}
	var out []DataType
	for _, dt := range DataTypes() {
		if (dt == Float8E4M3 || dt == Float8E5M2) && v < fp8Version {
			t.Logf("NCCL %s has no %v", ncclb.VersionString(v), dt)
			continue
		}
		out = append(out, dt)
	}
	return out
}

var testSizes = []int{1, 7, 1000, 1<<20 + 3}

// fp8AvgRefused reports whether err is how NCCL 2.28.3 refuses Avg of an
// fp8 type on one rank: its one-rank path (src/device/onerank.cu) picks
// the fp8 kernels under __CUDA_ARCH__ >= 900, which host code never has,
// so it returns ncclInvalidArgument. Only that is accepted, and only
// there.
func fp8AvgRefused(dt DataType, op Op, err error) bool {
	return (dt == Float8E4M3 || dt == Float8E5M2) && op == Avg && errors.Is(err, ncclb.InvalidArgument)
}

// check compares what b holds with want.
func check(t *testing.T, what string, b *core.Buffer, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if err := core.CopyFromDevice(got, b); err != nil {
		t.Fatalf("%s: reading the result: %v", what, err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: byte %d of %d is %#x, want %#x", what, i, len(want), got[i], want[i])
	}
}

// alloc allocates n bytes on s, closed when the test ends, or, with a
// non-nil pool, when the caller closes the pool.
func alloc(t *testing.T, d *core.Device, s *core.Stream, n int, pool ...*[]*core.Buffer) *core.Buffer {
	t.Helper()
	b, err := d.Allocate(max(n, 1), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pool) > 0 {
		*pool[0] = append(*pool[0], b)
	} else {
		t.Cleanup(func() { b.Close() })
	}
	return b
}

func closeAll(pool []*core.Buffer) {
	for _, b := range pool {
		b.Close()
	}
}

// TestGPUOneRankGroup runs every operation of one rank in one Group per
// data type and size, out of place, and checks each result.
func TestGPUOneRankGroup(t *testing.T) { eachOneRankCase(t, groupCase) }

// eachOneRankCase runs oneCase on each one-rank communicator (a subtest
// each) for every data type and size, then checks that the communicator
// has no asynchronous error.
func eachOneRankCase(t *testing.T, oneCase func(t *testing.T, d *core.Device, s *core.Stream, c *Comm, dt DataType, n int)) {
	d, s := gpuDev(t)
	for name, c := range oneRank(t, d) {
		t.Run(name, func(t *testing.T) {
			for _, dt := range dataTypes(t) {
				for _, n := range testSizes {
					oneCase(t, d, s, c, dt, n)
				}
			}
			if err := c.AsyncError(); err != nil {
				t.Errorf("AsyncError after the operations: %v", err)
			}
		})
	}
}

// result is one operation's output and what it must hold.
type result struct {
	what string
	out  *core.Buffer
}

func groupCase(t *testing.T, d *core.Device, s *core.Stream, c *Comm, dt DataType, n int) {
	nb := n * dt.Size()
	want := input(dt, n, int(dt))
	var pool []*core.Buffer
	defer func() { closeAll(pool) }()
	in := alloc(t, d, s, nb, &pool)
	if err := core.CopyToDevice(in, want); err != nil {
		t.Fatal(err)
	}
	var g Group
	var results []result
	add := func(what string, op func(out *core.Buffer) error) {
		out := alloc(t, d, s, nb, &pool)
		if err := out.Memset8(0xA5); err != nil {
			t.Fatal(err)
		}
		if err := op(out); err != nil {
			t.Fatalf("%v n=%d: adding %s: %v", dt, n, what, err)
		}
		results = append(results, result{what, out})
	}
	for _, op := range Ops() {
		if (dt == Float8E4M3 || dt == Float8E5M2) && op == Avg {
			continue // alone below: NCCL 2.28.3 may refuse it
		}
		add("AllReduce "+op.String(), func(out *core.Buffer) error { return g.AllReduce(c, s, in, out, n, dt, op) })
		add("Reduce "+op.String(), func(out *core.Buffer) error { return g.Reduce(c, s, in, out, n, dt, op, 0) })
		add("ReduceScatter "+op.String(), func(out *core.Buffer) error { return g.ReduceScatter(c, s, in, out, n, dt, op) })
	}
	add("Broadcast", func(out *core.Buffer) error { return g.Broadcast(c, s, in, out, n, dt, 0) })
	add("AllGather", func(out *core.Buffer) error { return g.AllGather(c, s, in, out, n, dt) })
	add("Send/Recv to self", func(out *core.Buffer) error {
		if err := g.Send(c, s, in, n, dt, 0); err != nil {
			return err
		}
		return g.Recv(c, s, out, n, dt, 0)
	})
	if err := g.Run(); err != nil {
		t.Fatalf("%v n=%d: Group.Run of %d operations: %v", dt, n, g.Len(), err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		check(t, fmt.Sprintf("%v n=%d %s", dt, n, r.what), r.out, want)
	}
	if dt == Float8E4M3 || dt == Float8E5M2 {
		out := alloc(t, d, s, nb, &pool)
		err := c.AllReduce(s, in, out, n, dt, Avg)
		switch {
		case fp8AvgRefused(dt, Avg, err):
			t.Logf("%v n=%d: AllReduce Avg on one rank: %v (NCCL's one-rank path lacks fp8)", dt, n, err)
		case err != nil:
			t.Errorf("%v n=%d: AllReduce Avg: %v", dt, n, err)
		default:
			check(t, fmt.Sprintf("%v n=%d AllReduce Avg", dt, n), out, want)
		}
	}
}

// TestGPUOneRankAlone runs every collective by itself (a Comm method, no
// Group) and in place, for every data type, size and op.
func TestGPUOneRankAlone(t *testing.T) { eachOneRankCase(t, aloneCase) }

func aloneCase(t *testing.T, d *core.Device, s *core.Stream, c *Comm, dt DataType, n int) {
	nb := n * dt.Size()
	want := input(dt, n, 3*int(dt)+1)
	var pool []*core.Buffer
	defer func() { closeAll(pool) }()
	in := alloc(t, d, s, nb, &pool)
	out := alloc(t, d, s, nb, &pool)
	if err := core.CopyToDevice(in, want); err != nil {
		t.Fatal(err)
	}
	run := func(what string, inPlace bool, op Op, f func(send, recv *core.Buffer) error) {
		t.Helper()
		what = fmt.Sprintf("%v n=%d %s", dt, n, what)
		send, recv := in, out
		if inPlace {
			if err := core.CopyToDevice(out, want); err != nil {
				t.Fatal(err)
			}
			send = out
		} else if err := out.Memset8(0xA5); err != nil {
			t.Fatal(err)
		}
		err := f(send, recv)
		if fp8AvgRefused(dt, op, err) {
			t.Logf("%s: %v (NCCL's one-rank path lacks fp8)", what, err)
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		check(t, what, out, want)
	}
	for _, inPlace := range []bool{false, true} {
		mode := ""
		if inPlace {
			mode = " in place"
		}
		for _, op := range Ops() {
			run("AllReduce "+op.String()+mode, inPlace, op, func(send, recv *core.Buffer) error { return c.AllReduce(s, send, recv, n, dt, op) })
			run("Reduce "+op.String()+mode, inPlace, op, func(send, recv *core.Buffer) error { return c.Reduce(s, send, recv, n, dt, op, 0) })
			// In place: recv is send's block of rank 0, which is all of it.
			run("ReduceScatter "+op.String()+mode, inPlace, op, func(send, recv *core.Buffer) error { return c.ReduceScatter(s, send, recv, n, dt, op) })
		}
		run("Broadcast"+mode, inPlace, Sum, func(send, recv *core.Buffer) error { return c.Broadcast(s, send, recv, n, dt, 0) })
		run("AllGather"+mode, inPlace, Sum, func(send, recv *core.Buffer) error { return c.AllGather(s, send, recv, n, dt) })
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestGPUGeneric runs the generic functions, whose DataType is the Go
// type's, and checks values as Go sees them.
func TestGPUGeneric(t *testing.T) {
	d, s := gpuDev(t)
	c := oneRank(t, d)["InitRank"]
	const n = 1000
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i) - 499.5
	}
	in, out := alloc(t, d, s, n*8), alloc(t, d, s, n*8)
	if err := core.CopyToDevice(in, x); err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return AllReduce[float64](c, s, in, out, n, Max) },
		func() error { return Reduce[float64](c, s, in, out, n, Min, 0) },
		func() error { return Broadcast[float64](c, s, in, out, n, 0) },
		func() error { return AllGather[float64](c, s, in, out, n) },
		func() error { return ReduceScatter[float64](c, s, in, out, n, Avg) },
	}
	for i, step := range steps {
		if err := out.Memset8(0); err != nil {
			t.Fatal(err)
		}
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := libtest.Download[float64](t, out, n)
		for j := range got {
			if got[j] != x[j] {
				t.Fatalf("step %d: element %d is %g, want %g", i, j, got[j], x[j])
			}
		}
	}
	// Send and Recv of one rank to itself deadlock outside a group on
	// the GPU: through a Group, with int32 values.
	y := []int32{-7, 0, 1 << 30, 42}
	yin, yout := alloc(t, d, s, 16), alloc(t, d, s, 16)
	if err := core.CopyToDevice(yin, y); err != nil {
		t.Fatal(err)
	}
	var g Group
	if err := g.Send(c, s, yin, 4, TypeOf[int32](), 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Recv(c, s, yout, 4, TypeOf[int32](), 0); err != nil {
		t.Fatal(err)
	}
	for range 3 { // a group runs again
		if err := yout.Memset8(0); err != nil {
			t.Fatal(err)
		}
		if err := g.Run(); err != nil {
			t.Fatal(err)
		}
		got := libtest.Download[int32](t, yout, 4)
		if fmt.Sprint(got) != fmt.Sprint(y) {
			t.Errorf("Send/Recv to self: %v, want %v", got, y)
		}
	}
	if err := c.Wait(t.Context(), s); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestGPUSplitAbort splits a communicator into itself, aborts one, and
// checks what closed communicators and Buffers give.
func TestGPUSplitAbort(t *testing.T) {
	d, s := gpuDev(t)
	comms := oneRank(t, d)
	c := comms["InitRank"]
	sub, err := c.Split(0, 0, nil)
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	if sub.Rank() != 0 || sub.Count() != 1 || sub.Device() != d {
		t.Errorf("Split gave %v", sub)
	}
	none, err := c.Split(NoColor, 0, nil)
	if err != nil || none != nil {
		t.Errorf("Split(NoColor) = %v, %v; want nil, nil", none, err)
	}
	subs, err := SplitAll([]*Comm{comms["InitAll"]}, []int{3}, []int{0}, &Config{CommName: "split"})
	if err != nil || len(subs) != 1 || subs[0].Count() != 1 {
		t.Fatalf("SplitAll: %v, %v", subs, err)
	}
	x := []float32{1.5, -2, 3}
	in, out := alloc(t, d, s, 12), alloc(t, d, s, 12)
	if err := core.CopyToDevice(in, x); err != nil {
		t.Fatal(err)
	}
	for _, cc := range []*Comm{sub, subs[0]} {
		if err := out.Memset8(0); err != nil {
			t.Fatal(err)
		}
		if err := AllReduce[float32](cc, s, in, out, 3, Sum); err != nil {
			t.Fatalf("AllReduce on the split: %v", err)
		}
		got := libtest.Download[float32](t, out, 3)
		if fmt.Sprint(got) != fmt.Sprint(x) {
			t.Errorf("AllReduce on the split: %v, want %v", got, x)
		}
		if err := cc.AsyncError(); err != nil {
			t.Errorf("AsyncError: %v", err)
		}
	}
	if err := subs[0].Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	// Shrink needs NCCL 2.27.3; a rank cannot shrink itself away.
	if _, err := sub.Shrink([]int{0}, nil, false); err == nil {
		t.Error("Shrink excluding the only rank")
	}

	// Abort, then everything is ErrClosed; Close after Abort is nothing.
	if err := AllReduce[float32](sub, s, in, out, 3, Sum); err != nil {
		t.Fatal(err)
	}
	if err := sub.Abort(); err != nil {
		t.Errorf("Abort: %v", err)
	}
	if err := AllReduce[float32](sub, s, in, out, 3, Sum); !errors.Is(err, core.ErrClosed) {
		t.Errorf("AllReduce after Abort: %v", err)
	}
	if err := sub.AsyncError(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("AsyncError after Abort: %v", err)
	}
	if err := sub.Close(); err != nil || sub.Abort() != nil {
		t.Errorf("Close after Abort: %v", err)
	}

	// A closed Buffer or Stream: core.ErrClosed, before NCCL.
	gone := alloc(t, d, s, 12)
	gone.Close()
	if err := AllReduce[float32](c, s, gone, out, 3, Sum); !errors.Is(err, core.ErrClosed) {
		t.Errorf("AllReduce of a closed Buffer: %v", err)
	}
	s2, err := d.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if err := AllReduce[float32](c, s2, in, out, 3, Sum); !errors.Is(err, core.ErrClosed) {
		t.Errorf("AllReduce on a closed Stream: %v", err)
	}
	// A stream of a context of CreateContext: refused.
	ctx, err := d.CreateContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	s3, err := ctx.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	wantArg(t, AllReduce[float32](c, s3, in, out, 3, Sum), "AllReduce", "stream", "CreateContext")

	// Version and async state of the survivors.
	v, err := Version()
	t.Logf("NCCL %s, %v", v, err)
	for name, cc := range comms {
		if err := cc.AsyncError(); err != nil {
			t.Errorf("%s: AsyncError: %v", name, err)
		}
	}
}

// BenchmarkGPUAllReduce times AllReduce of float32 on one rank, out of
// place, at 8 bytes (the latency of a call) and 1 GiB (bandwidth), as
// nccl-tests reports them: algbw is the bytes reduced per second, busbw
// algbw × 2(n-1)/n, which is 0 on one rank (nothing crosses a link), so
// the time per call is reported too.
func BenchmarkGPUAllReduce(b *testing.B) {
	testenv.RequireGPU(b)
	d, err := core.GetDevice(0)
	if err != nil {
		b.Fatal(err)
	}
	s, err := d.NewStream(&core.StreamOptions{NonBlocking: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, err := NewUniqueID()
	if err != nil {
		b.Fatal(err)
	}
	c, err := InitRank(d, id, 1, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, size := range []struct {
		name  string
		bytes int
	}{{"8B", 8}, {"1GiB", 1 << 30}} {
		b.Run(size.name, func(b *testing.B) {
			n := size.bytes / 4
			in, err := d.Allocate(size.bytes, s)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			out, err := d.Allocate(size.bytes, s)
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			for range 5 {
				if err := c.AllReduce(s, in, out, n, Float32, Sum); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if err := c.AllReduce(s, in, out, n, Float32, Sum); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			per := time.Since(start).Seconds() / float64(b.N)
			ranks := float64(c.Count())
			algbw := float64(size.bytes) / per / 1e9
			b.ReportMetric(per*1e6, "µs/call")
			b.ReportMetric(algbw, "algbw-GB/s")
			b.ReportMetric(algbw*2*(ranks-1)/ranks, "busbw-GB/s")
			b.SetBytes(int64(size.bytes))
		})
	}
}

// TestGPUInitFromEnv: without a launcher, InitFromEnv makes rank 0 of 1 on
// device 0.
func TestGPUInitFromEnv(t *testing.T) {
	d, s := gpuDev(t)
	clearLaunchers(t)
	c, err := InitFromEnv(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Rank() != 0 || c.Count() != 1 || c.Device() != d {
		t.Fatalf("InitFromEnv gave %v", c)
	}
	x := []int64{1, -2, 3}
	buf := alloc(t, d, s, 24)
	if err := core.CopyToDevice(buf, x); err != nil {
		t.Fatal(err)
	}
	if err := AllReduce[int64](c, s, buf, buf, 3, Sum); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	got := libtest.Download[int64](t, buf, 3)
	if fmt.Sprint(got) != fmt.Sprint(x) {
		t.Errorf("AllReduce of one rank: %v, want %v", got, x)
	}
}

// gpus returns every device, skipping with fewer than two.
func gpus(t *testing.T) []*core.Device {
	t.Helper()
	testenv.RequireGPU(t)
	devs, err := core.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) < 2 {
		t.Skipf("%d GPU: this test needs two or more", len(devs))
	}
	return devs
}

// rankInput is rank r's float32 input: small integers, so that sums of
// any order are exact.
func rankInput(r, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i+r*31)%97 - 48)
	}
	return x
}

// TestGPUInitAllMulti makes one rank per GPU in this process and runs an
// AllReduce, an AllGather and a ring of Send/Recv in Groups.
func TestGPUInitAllMulti(t *testing.T) {
	devs := gpus(t)
	comms, err := InitAll(devs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	k := len(devs)
	const n = 1<<20 + 3
	want := make([]float32, n)
	streams := make([]*core.Stream, k)
	in := make([]*core.Buffer, k)
	sum := make([]*core.Buffer, k)
	gath := make([]*core.Buffer, k)
	ring := make([]*core.Buffer, k)
	for r, d := range devs {
		if comms[r].Rank() != r || comms[r].Count() != k || comms[r].Device() != d {
			t.Fatalf("comm %d is %v", r, comms[r])
		}
		if streams[r], err = d.NewStream(&core.StreamOptions{NonBlocking: true}); err != nil {
			t.Fatal(err)
		}
		defer streams[r].Close()
		in[r], sum[r], gath[r], ring[r] = alloc(t, d, streams[r], 4*n), alloc(t, d, streams[r], 4*n), alloc(t, d, streams[r], 4*n*k), alloc(t, d, streams[r], 4*n)
		x := rankInput(r, n)
		if err := core.CopyToDevice(in[r], x); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] += x[i]
		}
	}
	var g Group
	for r, c := range comms {
		s := streams[r]
		if err := g.AllReduce(c, s, in[r], sum[r], n, Float32, Sum); err != nil {
			t.Fatal(err)
		}
		if err := g.AllGather(c, s, in[r], gath[r], n, Float32); err != nil {
			t.Fatal(err)
		}
		if err := g.Send(c, s, in[r], n, Float32, (r+1)%k); err != nil {
			t.Fatal(err)
		}
		if err := g.Recv(c, s, ring[r], n, Float32, (r+k-1)%k); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	for r, c := range comms {
		if err := c.Wait(t.Context(), streams[r]); err != nil {
			t.Fatal(err)
		}
		got := libtest.Download[float32](t, sum[r], n)
		if !equalF32(got, want) {
			t.Errorf("rank %d: AllReduce differs from the sum of the inputs", r)
		}
		all := libtest.Download[float32](t, gath[r], n*k)
		for q := range k {
			if !equalF32(all[q*n:(q+1)*n], rankInput(q, n)) {
				t.Errorf("rank %d: AllGather block %d is not rank %d's input", r, q, q)
			}
		}
		if err := core.CopyFromDevice(got, ring[r]); err != nil {
			t.Fatal(err)
		}
		if !equalF32(got, rankInput((r+k-1)%k, n)) {
			t.Errorf("rank %d: Recv did not get rank %d's input", r, (r+k-1)%k)
		}
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGPUMultiProcess starts one process per GPU (this test binary,
// running TestHelperRank) with the CUDAGO_* launcher variables; each makes
// its rank with InitFromEnv and checks an AllReduce.
func TestGPUMultiProcess(t *testing.T) {
	devs := gpus(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	k := len(devs)
	cmds := make([]*exec.Cmd, k)
	outs := make([]*bytes.Buffer, k)
	for r := range k {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRank$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDAGO_NCCL_TEST_RANK=1", "RANK=", "WORLD_SIZE=", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID=",
			fmt.Sprintf("CUDAGO_RANK=%d", r), fmt.Sprintf("CUDAGO_WORLD_SIZE=%d", k),
			fmt.Sprintf("CUDAGO_LOCAL_RANK=%d", r), fmt.Sprintf("CUDAGO_LOCAL_WORLD_SIZE=%d", k),
			"CUDAGO_RENDEZVOUS_ADDR="+addr, "CUDAGO_RENDEZVOUS_TIMEOUT=120s")
		outs[r] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[r], outs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = cmd
	}
	for r, cmd := range cmds {
		err := cmd.Wait()
		t.Logf("rank %d:\n%s", r, outs[r])
		if err != nil || !strings.Contains(outs[r].String(), "--- PASS: TestHelperRank") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestHelperRank is one rank of TestGPUMultiProcess.
func TestHelperRank(t *testing.T) {
	if os.Getenv("CUDAGO_NCCL_TEST_RANK") != "1" {
		t.Skip("a child of TestGPUMultiProcess")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := InitFromEnv(ctx, &Config{CommName: "multiprocess"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := c.Device()
	s, err := d.NewStream(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 4099
	k, r := c.Count(), c.Rank()
	want := make([]float32, n)
	for q := range k {
		for i, v := range rankInput(q, n) {
			want[i] += v
		}
	}
	buf := alloc(t, d, s, 4*n)
	if err := core.CopyToDevice(buf, rankInput(r, n)); err != nil {
		t.Fatal(err)
	}
	if err := AllReduce[float32](c, s, buf, buf, n, Sum); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := libtest.Download[float32](t, buf, n)
	if !equalF32(got, want) {
		t.Errorf("rank %d of %d: the in-place AllReduce differs from the sum", r, k)
	}
	t.Logf("rank %d of %d on %v: AllReduce of %d float32 checked", r, k, d, n)
}
