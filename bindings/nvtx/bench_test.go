package nvtx_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvtx"
)

// The benchmarks measure whichever path the environment selects: without
// NVTX_INJECTION64_PATH the no-tool path (no cgo call, no allocation);
// under a profiler, the tool's cost.

func BenchmarkMark(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		nvtx.Mark("mark")
	}
}

func BenchmarkRangePushPop(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		nvtx.RangePush("range")
		nvtx.RangePop()
	}
}

func BenchmarkRange(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		func() { defer nvtx.Range("range")() }()
	}
}

func BenchmarkRangeStartEnd(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		nvtx.RangeEnd(nvtx.RangeStart("range"))
	}
}

func BenchmarkDomainMarkEx(b *testing.B) {
	d := nvtx.NewDomain("bench")
	a := nvtx.Attributes{Color: nvtx.RGB(0, 160, 0), Category: 1, Payload: nvtx.Int64(42)}
	b.ReportAllocs()
	for b.Loop() {
		d.MarkEx("mark", a)
	}
}

func BenchmarkDomainRange(b *testing.B) {
	d := nvtx.NewDomain("bench")
	b.ReportAllocs()
	for b.Loop() {
		func() { defer d.Range("range")() }()
	}
}
