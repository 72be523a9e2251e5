package bench

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cudago/cudago/bench/chart"
)

// TestChartReport needs no GPU: results made up, as Measure returns them.
func TestChartReport(t *testing.T) {
	launch := &Case{Name: "LaunchEmpty", What: "empty launch", Target: 1.03, CheckAllocs: true}
	cp := &Case{Name: "CopyH2DPageable_256MiB", Bytes: CopySize, MinSpeedup: 3, Baseline: "pageable cuMemcpyHtoD"}
	off := &Case{Name: "MemAllocFree", Target: 1.1, CheckAllocs: true, OffChart: true}
	bad := &Case{Name: "LaunchSync", Target: 1.03}
	rs := []*Result{
		{Case: launch, Go: 3800, C: 3400, Allocs: 0},
		{Case: cp, Go: 7 * time.Millisecond, C: 40 * time.Millisecond, Allocs: -1},
		{Case: off, Go: 84850, C: 88430, Allocs: 4},
		{Case: bad, Allocs: -1, Err: errors.New("core: boom")},
	}
	rep := ChartReport("cudagobench line", rs)
	want := []chart.Case{
		{Name: "LaunchEmpty", What: "empty launch", GoNs: 3800, CNs: 3400, Allocs: 0, Target: 1.03, Met: false},
		{Name: "CopyH2DPageable_256MiB", GoNs: 7e6, CNs: 40e6, Bytes: CopySize, Allocs: -1, Baseline: "pageable cuMemcpyHtoD", MinSpeedup: 3, Met: true},
		{Name: "MemAllocFree", GoNs: 84850, CNs: 88430, Allocs: 4, Target: 1.1, Met: true, OffChart: true},
		{Name: "LaunchSync", Allocs: -1, Target: 1.03, Error: "core: boom"},
	}
	if rep.Line != "cudagobench line" || !reflect.DeepEqual(rep.Cases, want) {
		t.Fatalf("ChartReport:\n%+v\nwant\n%+v", rep.Cases, want)
	}
	// The chart's GB/s are the table's.
	if got, tbl := float64(rep.Cases[1].Bytes)/rep.Cases[1].GoNs, rs[1].GBps(rs[1].Go); math.Abs(got-tbl) > 1e-9 {
		t.Errorf("chart %v GB/s, table %v GB/s", got, tbl)
	}

	path := filepath.Join(t.TempDir(), "run.json")
	if err := chart.WriteJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	back, err := chart.ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep, back) {
		t.Fatalf("round trip:\n%+v\n%+v", rep, back)
	}
	if _, err := chart.SVG(back, nil, nil); err != nil {
		t.Fatal(err)
	}
}
