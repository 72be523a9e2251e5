package core

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

const (
	madvHugepage      = 14
	madvNohugepage    = 15
	madvPopulateWrite = 23 // Linux 5.14
)

// mincore sets vec[i]&1 when page i of the len(vec) pages from p (page
// aligned) is present.
func mincore(p uintptr, vec []byte) error {
	if len(vec) == 0 {
		return nil
	}
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, p, uintptr(len(vec))*pageSize, uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return e
	}
	return nil
}

// madvise gives advice for the n bytes from p (page aligned).
func madvise(p, n uintptr, advice int) error {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, p, n, uintptr(advice))
	if e != 0 {
		return e
	}
	return nil
}

func isEINVAL(err error) bool { return errors.Is(err, syscall.EINVAL) }

// thpAdviseSize is the size of a transparent huge page when they are
// given on advice only ("madvise", the usual default), else 0.
var thpAdviseSize = sync.OnceValue(func() uintptr {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(b), "[madvise]") {
		return 0
	}
	size := uintptr(2 << 20)
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n&(n-1) == 0 {
			size = uintptr(n)
		}
	}
	return size
})
