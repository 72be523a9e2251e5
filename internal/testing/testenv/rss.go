package testenv

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// RSS returns the process's resident set size (VmRSS of
// /proc/self/status), or 0 where there is none.
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// SettledRSS collects garbage (running the cleanups it queues), returns
// freed memory to the OS and then reads RSS.
func SettledRSS() int64 {
	for range 3 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	return RSS()
}

// RSSGrowth runs f 20 times to warm up, then two rounds of n runs, and
// returns how much the RSS grew over the round that grew less: a
// library's one-time growth (first-use caches) shows in one round, a leak
// in both. All runs are on one OS thread: a goroutine that moves between
// threads makes glibc give each new thread a malloc arena, which grew by
// 5-10 MiB over both rounds of NVRTC compiles on the 16-core GPU machine.
func RSSGrowth(n int, f func()) int64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 20 {
		f()
	}
	least := int64(1 << 62)
	for range 2 {
		before := SettledRSS()
		for range n {
			f()
		}
		if g := SettledRSS() - before; g < least {
			least = g
		}
	}
	return least
}

// BadInput checks one call that had to fail (a compile or link of bad
// input): its error is an E, the bindings' *Error, matching code unless
// code is zero, with a log (the compiler's or linker's; "" when there is
// none) holding want; and calling again 200 times grows the process by
// at most limit bytes, so nothing leaks on the error paths.
func BadInput[E error, C interface {
	comparable
	error
}](t *testing.T, err error, code C, log, want string, limit int64, again func()) {
	t.Helper()
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v, want %T", err, err, e)
	}
	var none C
	if code != none && !errors.Is(err, code) {
		t.Errorf("error %v, want %v", err, code)
	}
	if !strings.Contains(log, want) {
		t.Errorf("log %q lacks %q", log, want)
	}
	g := RSSGrowth(200, again)
	t.Logf("RSS growth over 200 failures: %d KiB", g>>10)
	if g > limit {
		t.Errorf("RSS grew by %d KiB over 200 failures (limit %d KiB)", g>>10, limit>>10)
	}
}
