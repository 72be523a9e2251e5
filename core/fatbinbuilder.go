package core

// #include <stdlib.h>
import "C"

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/pathfinder"
)

// FatbinBuilder builds a fat binary at run time with nvFatbin: add CUBINs,
// PTX, LTO-IR and relocatable objects for several architectures, then
// Build. It is safe for concurrent use.
type FatbinBuilder struct {
	mu      sync.Mutex
	name    string
	h       *fatbinHandle
	cleanup runtime.Cleanup
	symbols map[string]string
	closed  bool
}

// fatbinHandle is what a cleanup releases when a builder is lost without
// Close: the handle and the C copies of the inputs, which nvFatbin may
// read until the fatbin is built.
type fatbinHandle struct {
	h   nvfatbin.Handle
	mem []unsafe.Pointer
}

func (f *fatbinHandle) destroy() error {
	var err error
	if f.h != 0 {
		h := f.h // cgo: a pointer to a local, not into f (which holds Go pointers)
		err = nvfatbin.Destroy(&h)
		f.h = 0
	}
	for _, p := range f.mem {
		C.free(p)
	}
	f.mem = nil
	return err
}

// keep copies b to C memory that lives as long as the handle.
func (f *fatbinHandle) keep(b []byte) unsafe.Pointer {
	p := cBytes(b)
	f.mem = append(f.mem, p)
	return p
}

// NewFatbinBuilder creates an nvFatbin handle with opts (nil for the
// defaults).
func NewFatbinBuilder(opts *FatbinOptions) (*FatbinBuilder, error) {
	args, err := opts.NVFatbinOptions()
	if err != nil {
		return nil, err
	}
	h, err := nvfatbin.Create(args, uint64(len(args)))
	if err != nil {
		return nil, fmt.Errorf("core: nvFatbin: creating a fatbin with %q: %w", args, err)
	}
	noteLibrary(pathfinder.NVFatbin)
	b := &FatbinBuilder{h: &fatbinHandle{h: h}}
	if opts != nil {
		b.name = opts.Name
	}
	b.cleanup = runtime.AddCleanup(b, func(f *fatbinHandle) { f.destroy() }, b.h)
	return b, nil
}

// fatbinArch turns any form ParseArch reads ("sm_90", "compute_90",
// "90a") into nvFatbin's "90" / "90a".
func fatbinArch(arch string) (string, error) {
	a, err := ParseArch(arch)
	if err != nil {
		return "", err
	}
	return a.Bare(), nil
}

func (b *FatbinBuilder) begin() (nvfatbin.Handle, error) {
	if b.closed {
		return 0, ErrClosed
	}
	return b.h.h, nil
}

// addEntry calls add with the handle, under the lock; what names the
// entry in the error.
func (b *FatbinBuilder) addEntry(what string, add func(nvfatbin.Handle) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.begin()
	if err != nil {
		return err
	}
	if err := add(h); err != nil {
		return fmt.Errorf("core: nvFatbin: adding %s: %w", what, err)
	}
	return nil
}

// AddCubin adds a CUBIN for arch (any form ParseArch reads, such as
// "sm_90" or "90"; empty: read from the CUBIN's ELF header) under
// identifier (cuobjdump names the entry after it).
func (b *FatbinBuilder) AddCubin(cubin []byte, arch, identifier string) error {
	if err := validateCode(CodeCubin, cubin); err != nil {
		return err
	}
	if arch == "" {
		a, err := cubinArch(cubin)
		if err != nil {
			return fmt.Errorf("core: AddCubin: %w", err)
		}
		arch = a
	}
	fa, err := fatbinArch(arch)
	if err != nil {
		return err
	}
	return b.addEntry(fmt.Sprintf("cubin %q for sm_%s", identifier, fa), func(h nvfatbin.Handle) error {
		return nvfatbin.AddCubin(h, b.h.keep(cubin), uint64(len(cubin)), fa, identifier)
	})
}

// AddPTX adds PTX for arch (any form ParseArch reads, such as
// "compute_90" or "90"; empty: the PTX's .target) under identifier, with
// the options the driver's JIT compiler will use (ptxas options, e.g.
// "-lineinfo"; may be empty). Trailing NULs of ptx are dropped.
func (b *FatbinBuilder) AddPTX(ptx []byte, arch, identifier, jitOptions string) error {
	if err := validateCode(CodePTX, ptx); err != nil {
		return err
	}
	if arch == "" {
		a, ok := ptxArch(ptx)
		if !ok {
			return errors.New("core: AddPTX: no arch given and no .target sm_NN in the PTX")
		}
		arch = a
	}
	fa, err := fatbinArch(arch)
	if err != nil {
		return err
	}
	// Without the NUL: the size makes nvFatbin copy the PTX, whose C copy
	// the binding frees when AddPTX returns.
	src := strings.TrimRight(string(ptx), "\x00")
	return b.addEntry(fmt.Sprintf("PTX %q for compute_%s", identifier, fa), func(h nvfatbin.Handle) error {
		return nvfatbin.AddPTX(h, src, uint64(len(src)), fa, identifier, jitOptions)
	})
}

// AddLTOIR adds LTO-IR for arch under identifier, with the options for
// its JIT compilation (may be empty).
func (b *FatbinBuilder) AddLTOIR(ltoir []byte, arch, identifier, jitOptions string) error {
	if err := validateCode(CodeLTOIR, ltoir); err != nil {
		return err
	}
	fa, err := fatbinArch(arch)
	if err != nil {
		return err
	}
	return b.addEntry(fmt.Sprintf("LTO-IR %q for %s", identifier, fa), func(h nvfatbin.Handle) error {
		return nvfatbin.AddLTOIR(h, b.h.keep(ltoir), uint64(len(ltoir)), fa, identifier, jitOptions)
	})
}

// AddReloc adds the relocatable device code embedded in a host object
// (as nvcc -rdc=true -c writes it).
func (b *FatbinBuilder) AddReloc(hostObject []byte) error {
	if err := validateCode(CodeObject, hostObject); err != nil {
		return err
	}
	return b.addEntry("relocatable code", func(h nvfatbin.Handle) error {
		return nvfatbin.AddReloc(h, b.h.keep(hostObject), uint64(len(hostObject)))
	})
}

// AddTileIR adds Tile IR under identifier. It needs nvFatbin 13.1 or
// newer; with an older library it returns the binding's
// *nvfatbin.MissingFunctionError.
func (b *FatbinBuilder) AddTileIR(tileIR []byte, identifier, options string) error {
	if len(tileIR) == 0 {
		return fmt.Errorf("core: %w: Tile IR: empty", ErrInvalidCode)
	}
	return b.addEntry(fmt.Sprintf("Tile IR %q", identifier), func(h nvfatbin.Handle) error {
		return nvfatbin.AddTileIR(h, b.h.keep(tileIR), uint64(len(tileIR)), identifier, options)
	})
}

// Add adds an ObjectCode: a CUBIN (arch may be empty), PTX (arch may be
// empty), LTO-IR or host object (as AddReloc). Its symbol mapping passes
// to the built fatbin. The identifier is the code's name.
func (b *FatbinBuilder) Add(code *ObjectCode, arch string) error {
	if code == nil {
		return errors.New("core: FatbinBuilder.Add: nil object code")
	}
	return b.add(code, arch, code.name)
}

// add is Add under another identifier.
func (b *FatbinBuilder) add(code *ObjectCode, arch, identifier string) error {
	var err error
	switch code.codeType {
	case CodeCubin:
		err = b.AddCubin(code.code, arch, identifier)
	case CodePTX:
		err = b.AddPTX(code.code, arch, identifier, "")
	case CodeLTOIR:
		err = b.AddLTOIR(code.code, arch, identifier, "")
	case CodeObject:
		err = b.AddReloc(code.code)
	default:
		err = fmt.Errorf("core: FatbinBuilder.Add: cannot add %v to a fatbin", code)
	}
	if err == nil && len(code.symbols) > 0 {
		b.mu.Lock()
		if b.symbols == nil {
			b.symbols = map[string]string{}
		}
		maps.Copy(b.symbols, code.symbols)
		b.mu.Unlock()
	}
	return err
}

// Build returns the fatbin of everything added so far, as an ObjectCode
// of type "fatbin".
func (b *FatbinBuilder) Build() (*ObjectCode, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.begin()
	if err != nil {
		return nil, err
	}
	out, err := nvfatbin.Bytes(h)
	if err != nil {
		return nil, fmt.Errorf("core: nvFatbin: building the fatbin: %w", err)
	}
	return newObjectCode(CodeFatbin, out, b.name, maps.Clone(b.symbols), nil), nil
}

// Close destroys the nvFatbin handle. It is idempotent; the builder's
// methods return ErrClosed afterwards.
func (b *FatbinBuilder) Close() error {
	return closeLocked(&b.mu, &b.closed, func() error {
		b.cleanup.Stop()
		return b.h.destroy()
	})
}
