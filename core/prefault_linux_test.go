package core

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

// mapFresh maps n bytes of anonymous memory that nothing has touched,
// unmapped when the test ends.
func mapFresh(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Munmap(b) })
	return b
}

// present reports which pages of b (page aligned) are present.
func present(tb testing.TB, b []byte) []bool {
	tb.Helper()
	vec := make([]byte, (len(b)+int(pageSize)-1)/int(pageSize))
	if err := mincore(uintptr(unsafe.Pointer(&b[0])), vec); err != nil {
		tb.Fatal(err)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

// thpAlways reports whether transparent huge pages are "always": then a
// fault may map a whole huge page around a range, outside it too.
func thpAlways() bool {
	b, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return strings.Contains(string(b), "[always]")
}

// TestPopulate populates ranges of fresh memory (unaligned starts and
// ends, tiny ranges, none) by MADV_POPULATE_WRITE and by touching, and
// checks that the pages of the range are then present, that no page
// wholly outside it is, and that no byte changed anywhere: fresh bytes
// stay zero, data written before (around and inside the range) stays.
func TestPopulate(t *testing.T) {
	ps := int(pageSize)
	const pages = 24
	always := thpAlways()
	for _, touch := range []bool{false, true} {
		for _, r := range []struct{ off, n int }{
			{0, 0}, {3 * ps, 0}, {3*ps + 5, 1}, {3*ps + 6, 3}, {3*ps + 6, 6}, {4*ps - 1, 1}, {4*ps - 3, 3}, {4*ps - 2, 5},
			{3 * ps, ps}, {3*ps + 1, ps}, {3*ps + 7, 5*ps + 9}, {2 * ps, 10 * ps}, {ps + 4093, 2},
			{ps + 2, 20*ps - 3},
		} {
			name := fmt.Sprintf("touch=%v/off=%d/n=%d", touch, r.off, r.n)
			mem := mapFresh(t, pages*ps)
			// Data before: the first page and the last, and two pages
			// inside most ranges (pages 6 and 7).
			want := make([]byte, len(mem))
			for _, pg := range []int{0, 6, 7, pages - 1} {
				for i := pg * ps; i < (pg+1)*ps; i++ {
					want[i] = byte(i*7 + 1)
				}
			}
			for _, pg := range []int{0, 6, 7, pages - 1} {
				copy(mem[pg*ps:(pg+1)*ps], want[pg*ps:])
			}
			populate(mem[r.off:r.off+r.n], touch)
			if !touch && populateTouch.Load() {
				t.Logf("%s: MADV_POPULATE_WRITE unsupported, touched", name)
			}
			for pg, p := range present(t, mem) {
				lo, hi := pg*ps, (pg+1)*ps
				in := r.n > 0 && r.off < hi && r.off+r.n > lo
				if touch || populateTouch.Load() {
					// Touching needs a whole aligned word of the range.
					a := (max(lo, r.off) + 3) &^ 3
					in = in && a+4 <= min(hi, r.off+r.n)
				}
				data := pg == 0 || pg == 6 || pg == 7 || pg == pages-1
				switch {
				case in && !p:
					t.Errorf("%s: page %d of the range is absent", name, pg)
				case !in && !data && p && !always && (r.n == 0 || pg < r.off/ps || pg > (r.off+r.n-1)/ps):
					t.Errorf("%s: page %d outside the range is present", name, pg)
				}
			}
			// Compared after the presence check: reading maps absent pages.
			if !bytes.Equal(mem, want) {
				i := 0
				for mem[i] == want[i] {
					i++
				}
				t.Fatalf("%s: byte %d changed to %d from %d", name, i, mem[i], want[i])
			}
		}
	}
}

// TestPopulatePresent: pages already present are left as they are (a
// populated range populated again changes nothing), and touching keeps
// what it touches.
func TestPopulatePresent(t *testing.T) {
	mem := mapFresh(t, 8*int(pageSize))
	for i := range mem {
		mem[i] = byte(i)
	}
	populate(mem[100:len(mem)-100], false)
	populate(mem[100:len(mem)-100], true)
	b := mem[101 : len(mem)-99]
	start := uintptr(unsafe.Pointer(&b[0]))
	touchPages(b, start, start&^(pageSize-1), start+uintptr(len(b)))
	for i := range mem {
		if mem[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
	if looksFresh(mem) {
		t.Error("touched memory looks fresh")
	}
	if newDestPrep(mem, stagingChunk, 2, prefaultOpts{}) != nil {
		t.Error("a destPrep for touched memory")
	}
}

// hostCopy is the host side of copyDtoH without a GPU: worker w copies its
// chunks (w, w+workers, ...) of src into dst after prep.ready, where the
// staged copy copies each out of the staging buffer its DMA filled.
func hostCopy(dst []byte, src func(w, off, n int) []byte, workers int, prep *destPrep) {
	chunks := (len(dst) + stagingChunk - 1) / stagingChunk
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < chunks; j += workers {
				prep.ready(j)
				off := j * stagingChunk
				m := min(stagingChunk, len(dst)-off)
				stageCopy(dst[off:off+m], src(w, off, m))
			}
		}()
	}
	wg.Wait()
	prep.finish()
}

// vmFlags returns the VmFlags of the mapping holding address p
// (/proc/self/smaps).
func vmFlags(tb testing.TB, p uintptr) string {
	tb.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		tb.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") && !strings.Contains(line[:strings.Index(line, " ")], ":") {
			in = lo <= p && p < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	tb.Fatalf("no mapping holds %#x", p)
	return ""
}

// TestDestPrep copies into fresh memory through the host side of a staged
// copy with every way of readying it, and into partly touched memory,
// checking every byte of the destination and the bytes around it, and
// that the huge page advice is undone.
func TestDestPrep(t *testing.T) {
	const n = 37<<20 + 5
	ps := int(pageSize)
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	from := func(w, off, m int) []byte { return src[off : off+m] }
	saved := prefaultOpt
	defer func() { prefaultOpt = saved }()
	for _, tc := range []struct {
		name    string
		o       prefaultOpts
		helpers int
		dirty   bool // the first half was written before
	}{
		{"default", prefaultOpts{}, 2, false},
		{"nohuge", prefaultOpts{noHuge: true}, 2, false},
		{"nohelpers", prefaultOpts{noHelpers: true}, 2, false},
		{"ahead", prefaultOpts{ahead: true}, 0, false},
		{"touch", prefaultOpts{touch: true}, 3, false},
		{"touch-nohuge", prefaultOpts{touch: true, noHuge: true}, 1, false},
		{"dirty", prefaultOpts{}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The destination starts 3 pages and 5 bytes into fresh memory,
			// so that neither end is page or huge-page aligned.
			mem := mapFresh(t, n+8<<20)
			base := (2<<20 - int(uintptr(unsafe.Pointer(&mem[0]))%(2<<20))) % (2 << 20)
			off := base + 3*ps + 5
			for i := base; i < off; i++ {
				mem[i] = 0x5a // data just before the destination
			}
			dst := mem[off : off+n]
			after := mem[off+n : off+n+100]
			for i := range after {
				after[i] = 0xa5
			}
			if tc.dirty {
				for i := range n / 2 {
					dst[i] = 0xee
				}
			}
			if !looksFresh(dst) {
				t.Fatal("fresh memory does not look fresh")
			}
			prep := newDestPrep(dst, stagingChunk, tc.helpers, tc.o)
			if prep == nil {
				t.Fatal("no destPrep for fresh memory")
			}
			advised := prep.hugeHi > prep.hugeLo
			if want := thpAdviseSize() != 0 && !tc.o.noHuge; advised != want {
				t.Errorf("huge page advice given: %v, want %v", advised, want)
			}
			if advised && !strings.Contains(vmFlags(t, prep.hugeLo), " hg") {
				t.Errorf("advised range lacks hg: %s", vmFlags(t, prep.hugeLo))
			}
			hostCopy(dst, from, 2, prep)
			if !bytes.Equal(dst, src) {
				i := 0
				for dst[i] == src[i] {
					i++
				}
				t.Fatalf("first difference at byte %d", i)
			}
			for i := base; i < off; i++ {
				if mem[i] != 0x5a {
					t.Fatalf("byte %d before the destination changed", off-i)
				}
			}
			for i, b := range after {
				if b != 0xa5 {
					t.Fatalf("byte %d after the destination changed", i)
				}
			}
			for i, b := range mem[off+n+100:] {
				if b != 0 {
					t.Fatalf("byte %d after the destination written", 100+i)
				}
			}
			for j := range prep.parts {
				if !prep.parts[j].done {
					t.Fatal("a chunk was not readied")
				}
			}
			if advised {
				if f := vmFlags(t, prep.hugeLo); strings.Contains(f, " hg") || !strings.Contains(f, " nh") {
					t.Errorf("huge page advice not undone: %s", f)
				}
			}
			runtime.KeepAlive(mem)
		})
	}
}

// freshBytes returns make([]byte, n)[skew:], fresh if it can: the heap's
// free memory goes back to the OS first, and a slice that Go zeroed
// (memory freed since) is tried again, twice.
func freshBytes(n, skew int) ([]byte, bool) {
	for range 3 {
		debug.FreeOSMemory()
		b := make([]byte, n)[skew:]
		if len(b) == 0 || looksFresh(b) {
			return b, len(b) > 0
		}
	}
	return make([]byte, n)[skew:], false
}

// TestDestPrepGoSlice readies a fresh Go slice (the heap's memory, as
// CopyFromDevice gets it) and checks that it is all present afterwards,
// and that prefaulting off gives no destPrep.
func TestDestPrepGoSlice(t *testing.T) {
	b, fresh := freshBytes(20<<20+3, 0)
	if newDestPrep(b, stagingChunk, 1, prefaultOpts{off: true}) != nil {
		t.Error("a destPrep with prefaulting off")
	}
	if !fresh {
		t.Skip("the Go heap gave touched memory")
	}
	prep := newDestPrep(b, stagingChunk, 1, prefaultOpts{})
	for j := range prep.parts {
		prep.ready(j)
	}
	prep.finish()
	// The pages holding b, from the one holding its first byte.
	lead := int(uintptr(unsafe.Pointer(&b[0])) & (pageSize - 1))
	pages := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), -lead)), lead+len(b))
	for i, p := range present(t, pages) {
		if !p {
			t.Fatalf("page %d absent", i)
		}
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("byte %d is %d", i, v)
		}
	}
}

func TestParsePrefault(t *testing.T) {
	for s, want := range map[string]prefaultOpts{
		"":                 {},
		"off":              {off: true},
		"nohuge, ahead":    {noHuge: true, ahead: true},
		"touch,nohelpers":  {touch: true, noHelpers: true},
		"bogus,nohuge":     {noHuge: true},
		"nohuge,nohelpers": {noHuge: true, noHelpers: true},
	} {
		if got := parsePrefault(s); got != want {
			t.Errorf("parsePrefault(%q) = %+v, want %+v", s, got, want)
		}
	}
}

// BenchmarkFreshCopy measures the host side of a staged CopyFromDevice
// into a fresh Go slice, without a GPU: workers copy 2 MiB chunks out of
// staging-like buffers (one per worker, in cache) into the slice, readied
// each of the ways destPrep offers, against today's copy (faulting page by
// page) and a copy into touched memory. Each iteration gets a fresh slice
// (the heap's free memory given back to the OS, then make), untimed;
// faults/op counts the page faults of the timed part.
func BenchmarkFreshCopy(b *testing.B) {
	workers := min(stagingWorkers, runtime.GOMAXPROCS(0))
	helpers := min(prefaultHelpersMax, runtime.GOMAXPROCS(0)-workers)
	type strategy struct {
		name             string
		o                prefaultOpts
		workers, helpers int
		touched, none    bool
	}
	strategies := []strategy{
		{name: "touched", none: true, touched: true},
		{name: "today", none: true},
		{name: "pipelined-4k", o: prefaultOpts{noHelpers: true, noHuge: true}},
		{name: "pipelined-huge", o: prefaultOpts{noHelpers: true}},
		{name: "helpers-4k", o: prefaultOpts{noHuge: true}},
		{name: "helpers-huge", o: prefaultOpts{}},
		{name: "ahead-4k", o: prefaultOpts{ahead: true, noHuge: true}},
		{name: "ahead-huge", o: prefaultOpts{ahead: true}},
		{name: "touch-4k", o: prefaultOpts{touch: true, noHuge: true}},
		{name: "touch-huge", o: prefaultOpts{touch: true}},
	}
	if workers > 1 { // what helpers do where the workers leave no core
		strategies = append(strategies,
			strategy{name: "w1h1-4k", o: prefaultOpts{noHuge: true}, workers: 1, helpers: 1},
			strategy{name: "w1h1-huge", o: prefaultOpts{}, workers: 1, helpers: 1})
	}
	stage := make([][]byte, stagingWorkers)
	for i := range stage {
		stage[i] = bytes.Repeat([]byte{byte(i + 1)}, stagingChunk)
	}
	from := func(w, off, n int) []byte { return stage[w][:n] }
	for _, size := range []int{16 << 20, 256 << 20} {
		for _, s := range strategies {
			w, h := workers, helpers
			if s.workers > 0 {
				w, h = s.workers, s.helpers
			}
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, s.name), func(b *testing.B) {
				b.SetBytes(int64(size))
				var faults int64
				for range b.N {
					b.StopTimer()
					debug.FreeOSMemory()
					dst := make([]byte, size)
					if !looksFresh(dst) {
						b.Fatal("the Go heap gave touched memory")
					}
					if s.touched {
						for i := 0; i < len(dst); i += int(pageSize) {
							dst[i] = 1
						}
					}
					f0 := minorFaults()
					b.StartTimer()
					var prep *destPrep
					if !s.none {
						prep = newDestPrep(dst, stagingChunk, h, s.o)
					}
					hostCopy(dst, from, w, prep)
					b.StopTimer()
					faults += minorFaults() - f0
					if dst[len(dst)-1] != stage[(len(dst)-1)/stagingChunk%w][0] {
						b.Fatal("copy missing")
					}
				}
				b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
			})
		}
	}
}

// BenchmarkPopulateTouched is what readying costs on memory already
// present: populate (mincore, then nothing) against MADV_POPULATE_WRITE
// of the whole range, for 256 MiB.
func BenchmarkPopulateTouched(b *testing.B) {
	const size = 256 << 20
	dst := make([]byte, size)
	for i := range dst {
		dst[i] = 1
	}
	p := uintptr(unsafe.Pointer(&dst[0]))
	lead := p & (pageSize - 1)
	b.Run("populate", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			populate(dst, false)
		}
	})
	b.Run("MADV_POPULATE_WRITE", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if err := madvise(p-lead, size+lead, madvPopulateWrite); err != nil {
				b.Skip(err)
			}
		}
	})
	runtime.KeepAlive(dst)
}

// minorFaults is the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// TestGPUCopyFromDeviceFresh copies into fresh slices (the heap's free
// memory given back to the OS first) of sizes around pages, huge pages
// and the staging threshold, at unaligned starts, typed and not, partly
// filled before, with every way of readying them, and checks every byte.
func TestGPUCopyFromDeviceFresh(t *testing.T) {
	dev := gpuDevice(t)
	const most = 64<<20 + 3
	src := make([]byte, most)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	buf, err := dev.Allocate(most, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if err := CopyToDevice(buf, src); err != nil {
		t.Fatal(err)
	}
	saved := prefaultOpt
	defer func() { prefaultOpt = saved }()
	freshStaged := 0
	check := func(name string, got []byte) {
		t.Helper()
		if !bytes.Equal(got, src[:len(got)]) {
			i := 0
			for got[i] == src[i] {
				i++
			}
			t.Fatalf("%s: first difference at byte %d of %d", name, i, len(got))
		}
	}
	for _, mode := range []string{"", "nohuge", "nohelpers", "ahead", "touch", "off"} {
		prefaultOpt = parsePrefault(mode)
		for _, n := range []int{1, 4095, 4097, 2<<20 + 1, 16<<20 + 1, 37<<20 + 5, most} {
			for _, skew := range []int{0, 4096*3 + 5} {
				name := fmt.Sprintf("mode=%q/n=%d/skew=%d", mode, n, skew)
				out, fresh := freshBytes(n+skew, skew)
				if err := CopyFromDevice(out, buf); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				check(name, out)
				if fresh && n >= stagingMin && mode != "off" {
					freshStaged++
				}
			}
		}
		// Typed, and partly filled before (its first third).
		fb, _ := freshBytes(40<<20, 0)
		f := unsafe.Slice((*float32)(unsafe.Pointer(&fb[0])), len(fb)/4)
		for i := range len(f) / 3 {
			f[i] = -1
		}
		if err := CopyFromDevice(f, buf); err != nil {
			t.Fatalf("mode=%q: []float32: %v", mode, err)
		}
		check(fmt.Sprintf("mode=%q/float32", mode), fb)
	}
	if freshStaged == 0 {
		t.Error("no staged copy got a fresh destination: the prefaulting went untested")
	}
}
