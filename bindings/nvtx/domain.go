package nvtx

/*
#include "nvtx_c.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
)

// Domain is an NVTX domain: a library's or a subsystem's own scope of
// events, categories and pushed ranges, which a tool shows and filters
// apart from the rest. A nil *Domain is NVTX's default domain, the one the
// package-level functions use.
//
// A Domain's methods may be called from any goroutine; pushed ranges are
// per OS thread and per domain (see Threads in the package doc).
type Domain struct {
	name   string
	h      uintptr // nvtxDomainHandle_t: 0 without a tool
	closed atomic.Bool
	pop    func() // popUnlock for this domain, made once
}

// NewDomain creates the domain called name (nvtxDomainCreateA); domains
// are meant to live as long as the program (var d = nvtx.NewDomain(...)).
// Without a tool the Domain does nothing.
func NewDomain(name string) *Domain {
	d := &Domain{name: name}
	if on(slotDomainCreateA) {
		p, n := cstr(name)
		d.h = uintptr(C.cg_nvtx_domain_create(p, n))
	}
	d.pop = func() { d.RangePop(); runtime.UnlockOSThread() }
	return d
}

// defaultPop is popUnlock for the nil (default) Domain.
var defaultPop = func() { (*Domain)(nil).RangePop(); runtime.UnlockOSThread() }

// Name returns the name the domain was created with; "" for the default domain.
func (d *Domain) Name() string {
	if d == nil {
		return ""
	}
	return d.name
}

// handle returns the domain's handle for a call through slot, and false
// when the call is to do nothing: no tool filled the slot, or the domain
// is closed.
func (d *Domain) handle(slot int) (C.uintptr_t, bool) {
	if !on(slot) {
		return 0, false
	}
	if d == nil {
		return 0, true
	}
	return C.uintptr_t(d.h), !d.closed.Load()
}

// Close destroys the domain (nvtxDomainDestroy); later calls on it do
// nothing. Close is idempotent; it must not run concurrently with the
// domain's other calls. Closing the default (nil) Domain does nothing.
func (d *Domain) Close() {
	if d == nil || d.closed.Swap(true) || !on(slotDomainDestroy) {
		return
	}
	C.cg_nvtx_domain_destroy(C.uintptr_t(d.h))
}

// Mark marks an instant in the domain.
func (d *Domain) Mark(name string) { d.MarkEx(name, Attributes{}) }

// MarkEx marks an instant in the domain with attributes (nvtxDomainMarkEx).
func (d *Domain) MarkEx(name string, a Attributes) {
	h, ok := d.handle(slotDomainMarkEx)
	if !ok {
		return
	}
	p, n := cstr(name)
	C.cg_nvtx_domain_mark(h, p, n, C.uint32_t(a.Category), C.uint32_t(a.Color), C.int32_t(a.Payload.kind), C.uint64_t(a.Payload.bits))
}

// RangePush starts a range nested in the domain's ranges of the current OS
// thread and returns its level, or a negative number: NoPushPopTracking
// without a tool (or after Close). As for the package's RangePush, the
// goroutine must stay on its thread until RangePop.
func (d *Domain) RangePush(name string) int { return d.RangePushEx(name, Attributes{}) }

// RangePushEx is RangePush with attributes (nvtxDomainRangePushEx).
func (d *Domain) RangePushEx(name string, a Attributes) int {
	h, ok := d.handle(slotDomainPushEx)
	if !ok {
		return NoPushPopTracking
	}
	p, n := cstr(name)
	return int(C.cg_nvtx_domain_push(h, p, n, C.uint32_t(a.Category), C.uint32_t(a.Color), C.int32_t(a.Payload.kind), C.uint64_t(a.Payload.bits)))
}

// RangePop ends the innermost of the domain's ranges pushed on the current
// OS thread (nvtxDomainRangePop) and returns its level, or a negative
// number: NoPushPopTracking without a tool (or after Close).
func (d *Domain) RangePop() int {
	h, ok := d.handle(slotDomainPop)
	if !ok {
		return NoPushPopTracking
	}
	return int(C.cg_nvtx_domain_pop(h))
}

// RangeStart starts a process-wide range in the domain; it returns 0
// without a tool (or after Close).
func (d *Domain) RangeStart(name string) RangeID { return d.RangeStartEx(name, Attributes{}) }

// RangeStartEx is RangeStart with attributes (nvtxDomainRangeStartEx).
func (d *Domain) RangeStartEx(name string, a Attributes) RangeID {
	h, ok := d.handle(slotDomainStartEx)
	if !ok {
		return 0
	}
	p, n := cstr(name)
	return RangeID(C.cg_nvtx_domain_start(h, p, n, C.uint32_t(a.Category), C.uint32_t(a.Color), C.int32_t(a.Payload.kind), C.uint64_t(a.Payload.bits)))
}

// RangeEnd ends a range that the domain's RangeStart started (nvtxDomainRangeEnd).
func (d *Domain) RangeEnd(id RangeID) {
	h, ok := d.handle(slotDomainEnd)
	if !ok {
		return
	}
	C.cg_nvtx_domain_end(h, C.uint64_t(id))
}

// Range pushes a range in the domain and returns the function that pops
// it, locking the goroutine to its OS thread in between, as the package's
// Range does:
//
//	defer lib.Range("name")()
func (d *Domain) Range(name string) func() { return d.RangeEx(name, Attributes{}) }

// RangeEx is Range with attributes.
func (d *Domain) RangeEx(name string, a Attributes) func() {
	if _, ok := d.handle(slotDomainPushEx); !ok {
		return noop
	}
	runtime.LockOSThread()
	d.RangePushEx(name, a)
	if d == nil {
		return defaultPop
	}
	return d.pop
}

// NameCategory names a category of the domain (nvtxDomainNameCategoryA).
func (d *Domain) NameCategory(category uint32, name string) {
	h, ok := d.handle(slotDomainNameCategory)
	if !ok {
		return
	}
	p, n := cstr(name)
	C.cg_nvtx_domain_name_category(h, C.uint32_t(category), p, n)
}
