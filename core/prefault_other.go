//go:build !linux

package core

import "errors"

// Elsewhere nothing is prefaulted: mincore fails, so nothing looks fresh.

const (
	madvHugepage = iota
	madvNohugepage
	madvPopulateWrite
)

var errNoPrefault = errors.New("core: no prefaulting on this system")

func mincore(p uintptr, vec []byte) error    { return errNoPrefault }
func madvise(p, n uintptr, advice int) error { return errNoPrefault }
func isEINVAL(err error) bool                { return false }
func thpAdviseSize() uintptr                 { return 0 }
