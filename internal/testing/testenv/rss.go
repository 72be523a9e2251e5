package testenv

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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
