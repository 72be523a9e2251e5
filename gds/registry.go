package gds

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Buffer registration (cuFileBufRegister) lets cuFile move data straight
// into or out of a buffer instead of through its own GPU bounce buffers;
// it pins the memory (through the GPU's BAR) and costs a system call or
// two, so it pays for buffers that serve many transfers. The policy:
//
//   - Register registers a buffer at once, whatever the mode.
//   - With GPUDirect (nvidia-fs), a buffer's second transfer registers it
//     (the first may be its only one); in compatibility mode data goes
//     through host memory anyway, and registering would only pin memory,
//     so nothing is registered unless asked.
//   - A transfer on any part of a registered range (a View of a
//     registered buffer) uses the registration.
//   - A registration ends by Deregister, by CloseDriver, or just before
//     the buffer's memory is freed (core's Buffer.OnFree): cuFile never
//     keeps an address that the GPU may hand to another allocation. It
//     waits for the registration's transfers queued on streams first.
//   - A registration that fails (no pinnable memory left) is not retried
//     for that buffer; its transfers go through the bounce buffers.
var registry struct {
	mu      sync.RWMutex
	entries []*registration
	uses    map[useKey]int // the automatic policy's count of transfers, -1: failed
}

// maxUses bounds registry.uses: past it the counts start again.
const maxUses = 1024

// autoRegister says whether buffers are registered on their second
// transfer; nil: with GPUDirect only. Tests set it.
var autoRegister func() bool

type useKey struct {
	ptr  driver.Deviceptr
	size int
}

// registration is one registered range of GPU memory.
type registration struct {
	base driver.Deviceptr
	size int
	ctx  driver.Context
	// mu is held for reading by synchronous transfers using the range,
	// for writing by drop.
	mu   sync.RWMutex
	gone bool
	ops  opSet // the transfers queued on streams that use the range
}

// lookup returns the registration holding n bytes at p, read-locked (the
// caller unlocks it), or nil.
func lookup(p driver.Deviceptr, n int) *registration {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	for _, e := range registry.entries {
		if e.base <= p && uint64(p-e.base)+uint64(n) <= uint64(e.size) {
			e.mu.RLock()
			if e.gone {
				e.mu.RUnlock()
				return nil
			}
			return e
		}
	}
	return nil
}

// Register registers b's memory with cuFile (cuFileBufRegister), for
// transfers of b and of views of it; see the package documentation for
// when that pays and when it happens by itself. Registering a registered
// buffer again does nothing; a range that overlaps a registered one
// without being it is refused. The registration ends by Deregister,
// CloseDriver, or when b's memory is freed; memory freed with its context
// (Context.Close of a created context) is not seen going, so close such
// buffers, or Deregister them, first.
func Register(b *core.Buffer) error {
	if b == nil {
		return libhandle.ArgErr("gds", "Register", "b", "nil *core.Buffer")
	}
	if err := OpenDriver(); err != nil {
		return err
	}
	ops, p, err := hold("Register", b)
	defer ops.Release()
	if err != nil {
		return err
	}
	if b.Size() == 0 {
		return libhandle.ArgErr("gds", "Register", "b", "a zero-size buffer")
	}
	ctx, err := bufferContext(b)
	if err != nil {
		return fmt.Errorf("gds: Register: %w", err)
	}
	_, err = register(b, p, ctx)
	return err
}

// hold holds b open for Register or Deregister (fn) and returns its
// address; the caller releases ops.
func hold(fn string, b *core.Buffer) (ops *libhandle.Operands, p driver.Deviceptr, err error) {
	ops = &libhandle.Operands{Package: "gds", Func: fn}
	ptr, err := ops.Add("b", b, 1, "")
	return ops, libhandle.Addr(ptr), err
}

// register registers b (acquired, at p) in ctx; it reports whether it was
// registered already.
func register(b *core.Buffer, p driver.Deviceptr, ctx driver.Context) (bool, error) {
	n := b.Size()
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, e := range registry.entries {
		if e.base == p && e.size == n {
			return true, nil
		}
		if p < e.base+driver.Deviceptr(e.size) && e.base < p+driver.Deviceptr(n) {
			return false, libhandle.ArgErr("gds", "Register", "b", "%d bytes at %#x overlap the %d registered at %#x", n, uint64(p), e.size, uint64(e.base))
		}
	}
	if err := cuFileBufRegister(ctx, devicePtr(p), uint64(n), 0); err != nil {
		return false, fmt.Errorf("gds: Register: %d bytes at %#x: %w", n, uint64(p), err)
	}
	e := &registration{base: p, size: n, ctx: ctx}
	// b is acquired, so OnFree cannot fail; the function keeps e, not b.
	if err := b.OnFree(func() { e.drop() }); err != nil {
		cuFileBufDeregister(ctx, devicePtr(p))
		return false, fmt.Errorf("gds: Register: %w", err)
	}
	registry.entries = append(registry.entries, e)
	return false, nil
}

// Deregister ends the registration of b (which Register made, or a
// transfer made by itself), once the transfers queued on streams that use
// it are done. A buffer that is not registered is an error.
func Deregister(b *core.Buffer) error {
	if b == nil {
		return libhandle.ArgErr("gds", "Deregister", "b", "nil *core.Buffer")
	}
	ops, p, err := hold("Deregister", b)
	defer ops.Release()
	if err != nil {
		return err
	}
	registry.mu.RLock()
	var found *registration
	for _, e := range registry.entries {
		if e.base == p && e.size == b.Size() {
			found = e
		}
	}
	registry.mu.RUnlock()
	if found == nil {
		return libhandle.ArgErr("gds", "Deregister", "b", "the %d bytes at %#x are not registered", b.Size(), uint64(p))
	}
	return found.drop()
}

// drop ends the registration: no new transfer finds it, the ones in
// flight finish, then cuFileBufDeregister. It runs once; later calls
// return nil.
func (e *registration) drop() error {
	registry.mu.Lock()
	registry.entries = slices.DeleteFunc(registry.entries, func(x *registration) bool { return x == e })
	delete(registry.uses, useKey{e.base, e.size})
	registry.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return nil
	}
	e.gone = true
	e.ops.waitAll()
	if err := cuFileBufDeregister(e.ctx, devicePtr(e.base)); err != nil {
		return fmt.Errorf("gds: deregistering %d bytes at %#x: %w", e.size, uint64(e.base), err)
	}
	return nil
}

// dropAll ends every registration (CloseDriver).
func dropAll() error {
	registry.mu.RLock()
	all := slices.Clone(registry.entries)
	registry.mu.RUnlock()
	var errs []error
	for _, e := range all {
		errs = append(errs, e.drop())
	}
	registry.mu.Lock()
	registry.uses = nil
	registry.mu.Unlock()
	return errors.Join(errs...)
}

// useRegistration returns the registration for a transfer of b (acquired,
// at p) read-locked, registering b on its second transfer when the policy
// says so; nil: none.
func useRegistration(b *core.Buffer, p driver.Deviceptr, ctx driver.Context) *registration {
	if e := lookup(p, b.Size()); e != nil {
		return e
	}
	auto := drv.info.Mode == ModeGPUDirect
	if autoRegister != nil {
		auto = autoRegister()
	}
	if !auto {
		return nil
	}
	k := useKey{p, b.Size()}
	registry.mu.Lock()
	if registry.uses == nil || len(registry.uses) >= maxUses {
		registry.uses = map[useKey]int{}
	}
	registry.uses[k]++
	n := registry.uses[k]
	registry.mu.Unlock()
	if n == 1 {
		// The count belongs to this buffer: a pool hands the same range
		// to the next one, which must start from nothing.
		b.OnFree(func() {
			registry.mu.Lock()
			delete(registry.uses, k)
			registry.mu.Unlock()
		})
	}
	if n != 2 {
		return nil
	}
	if _, err := register(b, p, ctx); err != nil {
		registry.mu.Lock()
		if registry.uses != nil {
			registry.uses[k] = -1 << 30 // not again for this buffer
		}
		registry.mu.Unlock()
		return nil
	}
	return lookup(p, b.Size())
}

// registered reports the registered ranges, for tests.
func registered() []useKey {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	var out []useKey
	for _, e := range registry.entries {
		out = append(out, useKey{e.base, e.size})
	}
	return out
}
