package core

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// First touch of a fresh destination.
//
// A new large slice is memory no one has touched (the heap grew into it,
// or the scavenger gave it back to the OS), and the first write to each
// 4 KiB page of it traps into the kernel, which zeroes the page: 65536
// faults for 256 MiB, which held a staged copy into a fresh slice to 7 GB/s
// against 48 GB/s into a touched one. A staged CopyFromDevice into such
// memory therefore makes its pages present before writing them:
//
//   - mincore finds the pages not there yet (about 3 ns a page): a
//     destination whose pages it finds present at 8 places costs those
//     look-ups only, and the copy is today's;
//   - MADV_POPULATE_WRITE (Linux 5.14) maps the missing pages writable in
//     one call per run, without a trap per page and without changing a
//     byte; before 5.14 an atomic add of 0 to one word a page does it
//     (value-preserving, so it can never change data);
//   - where transparent huge pages are "madvise" (Go advises none for its
//     heap), the 2 MiB-aligned interior of the destination is advised
//     MADV_HUGEPAGE for the copy: one fault, and one zeroing pass, per
//     2 MiB instead of 512. MADV_NOHUGEPAGE after it leaves the range as
//     that mode treats unadvised memory, so that khugepaged does not
//     later collapse memory the Go scavenger returns;
//   - the populating is spread over the copy's workers, each readying a
//     chunk before it waits for the chunk's DMA (overlapping it), and
//     over helper goroutines on the cores the workers leave, which ready
//     the chunks in copy order ahead of the workers.
//
// CUDAGO_PREFAULT tunes it for measurements: "off" (today's copies), or a
// comma-separated list of "nohuge" (no huge page advice), "nohelpers"
// (the workers only), "ahead" (one parallel pass over the destination
// before the copy instead of pipelining) and "touch" (the pre-5.14 way).

// prefaultOpts chooses how fresh destinations are readied.
type prefaultOpts struct {
	off, noHuge, noHelpers, ahead, touch bool
}

// prefaultOpt is CUDAGO_PREFAULT, read once; tests replace it.
var prefaultOpt = parsePrefault(os.Getenv("CUDAGO_PREFAULT"))

// warnPrefault reports, once, the words of CUDAGO_PREFAULT that mean
// nothing (they are ignored), when a copy first reads the setting.
var warnPrefault = sync.OnceFunc(func() {
	if bad := unknownPrefault(os.Getenv("CUDAGO_PREFAULT")); len(bad) > 0 {
		warn(WarnBadSetting, "CUDAGO_PREFAULT has words it does not know, which are ignored (known: off, nohuge, nohelpers, ahead, touch)",
			"variable", "CUDAGO_PREFAULT", "unknown", bad)
	}
})

// unknownPrefault returns the words of a CUDAGO_PREFAULT value that
// parsePrefault ignores.
func unknownPrefault(s string) []string {
	var bad []string
	for _, w := range strings.Split(s, ",") {
		switch w = strings.TrimSpace(w); w {
		case "", "off", "nohuge", "nohelpers", "ahead", "touch":
		default:
			bad = append(bad, w)
		}
	}
	return bad
}

func parsePrefault(s string) prefaultOpts {
	var o prefaultOpts
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "off":
			o.off = true
		case "nohuge":
			o.noHuge = true
		case "nohelpers":
			o.noHelpers = true
		case "ahead":
			o.ahead = true
		case "touch":
			o.touch = true
		}
	}
	return o
}

// prefaultHelpersMax bounds the helper goroutines of one copy: more
// contend in the kernel's page allocator for little gain.
const prefaultHelpersMax = stagingWorkers

// pageSize is the size of a base page.
var pageSize = uintptr(os.Getpagesize())

// populateTouch is set when MADV_POPULATE_WRITE is not supported (EINVAL:
// a kernel before 5.14): pages are then touched.
var populateTouch atomic.Bool

// populate makes every page of b present and writable without changing a
// byte of memory, inside b or outside it: MADV_POPULATE_WRITE on the runs
// of pages mincore finds absent (their partial first and last pages
// included, which populating leaves as they were), or an atomic add of 0
// to one aligned word inside b of each such page. Pages already present
// cost the look-up only. It is best effort: where it fails, the copy's own
// writes fault the pages in as before.
func populate(b []byte, touch bool) {
	if len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	first := start &^ (pageSize - 1)
	n := int((end - first + pageSize - 1) / pageSize)
	vec := make([]byte, n)
	if mincore(first, vec) != nil {
		return
	}
	for i := 0; i < n; {
		if vec[i]&1 != 0 {
			i++
			continue
		}
		j := i + 1
		for j < n && vec[j]&1 == 0 {
			j++
		}
		lo, hi := first+uintptr(i)*pageSize, first+uintptr(j)*pageSize
		i = j
		if !touch && !populateTouch.Load() {
			err := madvise(lo, hi-lo, madvPopulateWrite)
			if err == nil {
				continue
			}
			if !isEINVAL(err) {
				return // ENOMEM and the like: leave it to the copy
			}
			populateTouch.Store(true)
		}
		touchPages(b, start, lo, hi)
	}
}

// touchPages writes to one 4-byte-aligned word inside b (at address
// start) of every page in [lo, hi), with an atomic add of 0: a write
// fault that cannot change the word even if it raced with another write.
// A page holding no whole aligned word of b is left alone.
func touchPages(b []byte, start, lo, hi uintptr) {
	end := start + uintptr(len(b))
	b = b[:len(b):len(b)] // so that slicing checks the words are inside
	for p := lo; p < hi; p += pageSize {
		a := (max(p, start) + 3) &^ 3
		if a+4 > min(p+pageSize, end) {
			continue
		}
		w := b[a-start : a-start+4]
		atomic.AddUint32((*uint32)(unsafe.Pointer(&w[0])), 0)
	}
}

// destPrep readies the fresh destination of a staged copy chunk by chunk:
// the worker of chunk j calls ready(j) before copying into it; helper
// goroutines ready the chunks in order meanwhile.
type destPrep struct {
	dst     []byte
	chunk   int
	opts    prefaultOpts
	parts   []prepPart
	next    atomic.Int64 // the helpers' next chunk
	stop    atomic.Bool
	helpers sync.WaitGroup
	// hugeLo, hugeHi is the range advised MADV_HUGEPAGE, to undo.
	hugeLo, hugeHi uintptr
}

// prepPart is one chunk: whoever holds mu readies it, once.
type prepPart struct {
	mu   sync.Mutex
	done bool
}

// newDestPrep prepares readying dst, copied in chunks of chunk bytes, with
// up to helpers goroutines besides the copy's workers. It returns nil (no
// work: today's copy) when prefaulting is off or when dst looks touched
// already (looksFresh).
func newDestPrep(dst []byte, chunk, helpers int, o prefaultOpts) *destPrep {
	if o.off || len(dst) == 0 || chunk <= 0 || !looksFresh(dst) {
		return nil
	}
	n := (len(dst) + chunk - 1) / chunk
	d := &destPrep{dst: dst, chunk: chunk, opts: o, parts: make([]prepPart, n)}
	if !o.noHuge {
		d.adviseHuge()
	}
	if o.ahead {
		d.helpers.Add(1)
		d.help(runtime.GOMAXPROCS(0)) // all of it, now
		return d
	}
	if k := min(helpers, prefaultHelpersMax); k > 0 && !o.noHelpers {
		d.helpers.Add(1)
		go d.help(k)
	}
	return d
}

// help readies chunks in order from k goroutines (none when k < 1), and
// returns when they are done; it is called with d.helpers incremented.
func (d *destPrep) help(k int) {
	defer d.helpers.Done()
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !d.stop.Load() {
				j := int(d.next.Add(1) - 1)
				if j >= len(d.parts) {
					return
				}
				// A chunk its worker holds is the worker's: go on ahead.
				if p := &d.parts[j]; p.mu.TryLock() {
					d.readyLocked(j)
					p.mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
}

// ready readies chunk j, or waits while a helper does.
func (d *destPrep) ready(j int) {
	if d == nil {
		return
	}
	p := &d.parts[j]
	p.mu.Lock()
	d.readyLocked(j)
	p.mu.Unlock()
}

func (d *destPrep) readyLocked(j int) {
	p := &d.parts[j]
	if p.done {
		return
	}
	p.done = true
	off := j * d.chunk
	populate(d.dst[off:min(off+d.chunk, len(d.dst))], d.opts.touch)
}

// finish stops the helpers, waits for them and undoes the huge page
// advice; the copy must be done with dst.
func (d *destPrep) finish() {
	if d == nil {
		return
	}
	d.stop.Store(true)
	d.helpers.Wait()
	if d.hugeHi > d.hugeLo {
		madvise(d.hugeLo, d.hugeHi-d.hugeLo, madvNohugepage)
	}
	runtime.KeepAlive(d.dst)
}

// adviseHuge advises the huge-page-aligned interior of dst MADV_HUGEPAGE
// where transparent huge pages are "madvise" (with "always" they need no
// advice; with "never" none helps). Only the interior: every huge page
// advised is overwritten whole, so the advice costs no memory.
func (d *destPrep) adviseHuge() {
	size := thpAdviseSize()
	if size == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(d.dst)))
	lo := (start + size - 1) &^ (size - 1)
	hi := (start + uintptr(len(d.dst))) &^ (size - 1)
	if lo < hi && madvise(lo, hi-lo, madvHugepage) == nil {
		d.hugeLo, d.hugeHi = lo, hi
	}
}

// looksFresh reports whether any of 8 pages evenly spread over b, the
// first and last included, is absent: a fresh slice has all absent, a
// touched one none (Go zeroes reused memory when it allocates it, which
// touches every page), one partly filled before some.
func looksFresh(b []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	var vec [1]byte
	for k := range 8 {
		off := k * (len(b) - 1) / 7
		if mincore((start+uintptr(off))&^(pageSize-1), vec[:]) != nil {
			return false
		}
		if vec[0]&1 == 0 {
			return true
		}
	}
	return false
}
