package core

// #include <stdlib.h>
import "C"

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/fatbin"
)

// Code types of an ObjectCode, as CodeType returns them.
const (
	CodeCubin   = "cubin"
	CodeFatbin  = "fatbin"
	CodePTX     = "ptx"
	CodeLTOIR   = "ltoir"
	CodeObject  = "object"
	CodeLibrary = "library"
)

// ensureInit initializes the driver once per process (initDriver, in
// device.go: cuInit and the C layer's entry points) and returns its
// result, wrapped to say what failed, every time. Compilation, linking and
// fatbin building never need it; loading code does.
func ensureInit() error {
	if err := initDriver(); err != nil {
		return fmt.Errorf("core: initializing the CUDA driver: %w", err)
	}
	return nil
}

// ObjectCode is compiled device code: a CUBIN, fatbin, PTX, LTO-IR, host
// object or host library (CodeType). It is what Program.Compile,
// Linker.Link and FatbinBuilder.Build return, and what the From*
// constructors make from existing code, in memory or in a file.
//
// Cubins, fatbins and PTX load into the driver lazily, on the first Handle
// or Kernel, as a context-independent library (cuLibraryLoadData): the
// kernels it hands out launch on any device. LTO-IR, objects and
// libraries are inputs for a Linker only.
//
// An ObjectCode is safe for concurrent use. Close unloads the library;
// Kernels obtained before are then invalid.
type ObjectCode struct {
	name     string
	codeType string
	code     []byte
	symbols  map[string]string

	// The image check (checkImage) runs once, before the code first
	// reaches the driver or a linker; for a cubin from a From*
	// constructor it ran there already.
	imageOnce sync.Once
	imageErr  error

	mu      sync.Mutex
	lib     *loadedLibrary
	cleanup runtime.Cleanup
	closed  bool
	byName  map[string]*Kernel // what Kernel handed out, by the name asked for

	// Every Kernel of the code (newKernel): Close closes each one's guard,
	// waiting for its driver calls in flight (Launch...). The guard is the
	// kernel's own, in the cache lines a launch reads anyway.
	kmu     sync.Mutex
	kernels []*Kernel
	kclosed bool
}

// track adds k to the kernels Close closes (closing it at once if the
// code is closed).
func (o *ObjectCode) track(k *Kernel) {
	o.kmu.Lock()
	defer o.kmu.Unlock()
	if o.kclosed {
		k.life.close()
		return
	}
	o.kernels = append(o.kernels, k)
}

// closeKernels closes every kernel of the code; when it returns, none of
// their driver calls is in flight, and none can start.
func (o *ObjectCode) closeKernels() {
	o.kmu.Lock()
	ks := o.kernels
	o.kernels, o.kclosed = nil, true
	o.kmu.Unlock()
	for _, k := range ks {
		k.life.close()
	}
}

// loadedLibrary is what a cleanup unloads when an ObjectCode is lost
// without Close.
type loadedLibrary struct {
	handle driver.Library
	image  unsafe.Pointer // C copy of the code the driver loaded
}

func (l *loadedLibrary) unload() error {
	var err error
	if l.handle != 0 {
		err = cuLibraryUnload(l.handle)
		l.handle = 0
	}
	if l.image != nil {
		C.free(l.image)
		l.image = nil
	}
	return err
}

// ObjectCodeOption sets an optional property of an ObjectCode made by a
// From* constructor.
type ObjectCodeOption func(*ObjectCode)

// WithCodeName names the code (Name), for messages and linker logs. The
// default is "" for code from memory and the path for code from a file.
func WithCodeName(name string) ObjectCodeOption {
	return func(o *ObjectCode) { o.name = name }
}

// WithSymbolMapping maps unmangled names (such as the name expression
// "saxpy<float>") to the mangled names Kernel looks up instead (cuda.core's
// symbol_mapping). The map is copied.
func WithSymbolMapping(m map[string]string) ObjectCodeOption {
	return func(o *ObjectCode) {
		if len(m) > 0 {
			o.symbols = maps.Clone(m)
		}
	}
}

// newObjectCode makes an ObjectCode of validated data that it owns.
func newObjectCode(codeType string, data []byte, name string, symbols map[string]string, opts []ObjectCodeOption) *ObjectCode {
	o := &ObjectCode{name: name, codeType: codeType, code: data, symbols: symbols}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

// validated marks o, made of data that validateCode accepted, as checked:
// for a cubin, validateCode ran the whole image check.
func validated(o *ObjectCode) *ObjectCode {
	if o.codeType == CodeCubin {
		o.imageOnce.Do(func() {})
	}
	return o
}

func fromBytes(codeType string, data []byte, opts []ObjectCodeOption) (*ObjectCode, error) {
	if err := validateCode(codeType, data); err != nil {
		return nil, err
	}
	return validated(newObjectCode(codeType, bytes.Clone(data), "", nil, opts)), nil
}

func fromFile(codeType, path string, opts []ObjectCodeOption) (*ObjectCode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("core: reading %s file %q: %w", codeType, path, err)
	}
	if err := validateCode(codeType, data); err != nil {
		return nil, fmt.Errorf("%w (file %q)", err, path)
	}
	return validated(newObjectCode(codeType, data, path, nil, opts)), nil
}

// FromCubin makes an ObjectCode of a CUBIN (a CUDA ELF image) in memory.
// The data is copied. It fails, matching ErrInvalidCode, when data is not
// a CUDA ELF or not a sound one (fatbin.ValidateCubin: tables, sections,
// symbols, relocations and attribute records inside the image; errors.As
// finds the *fatbin.CubinError): the driver trusts what it loads, and a
// damaged image can crash it.
func FromCubin(data []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodeCubin, data, opts)
}

// FromCubinFile reads a CUBIN from a file; see FromCubin.
func FromCubinFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromFile(CodeCubin, path, opts)
}

// FromFatbin makes an ObjectCode of a fat binary in memory (it must start
// with the fatbin magic 0xBA55ED50). The data is copied. Its structure and
// its cubins are checked when it is first loaded or linked (see Handle).
func FromFatbin(data []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodeFatbin, data, opts)
}

// FromFatbinFile reads a fat binary from a file; see FromFatbin.
func FromFatbinFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromFile(CodeFatbin, path, opts)
}

// FromPTX makes an ObjectCode of PTX text (it must have a .version
// directive). The data is copied; a trailing NUL is dropped.
func FromPTX(ptx []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodePTX, bytes.TrimRight(ptx, "\x00"), opts)
}

// FromPTXFile reads PTX from a file; see FromPTX.
func FromPTXFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	o, err := fromFile(CodePTX, path, opts)
	if err == nil {
		o.code = bytes.TrimRight(o.code, "\x00")
	}
	return o, err
}

// FromLTOIR makes an ObjectCode of LTO-IR (as NVRTC -dlto or NVVM
// -gen-lto write it), an input for a Linker with LTO. The data is copied.
func FromLTOIR(data []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodeLTOIR, data, opts)
}

// FromLTOIRFile reads LTO-IR from a file; see FromLTOIR.
func FromLTOIRFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromFile(CodeLTOIR, path, opts)
}

// FromObject makes an ObjectCode of a host object file (ELF, as nvcc -c
// writes it) with embedded device code, an input for a Linker. The data is
// copied.
func FromObject(data []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodeObject, data, opts)
}

// FromObjectFile reads a host object from a file; see FromObject.
func FromObjectFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromFile(CodeObject, path, opts)
}

// FromLibrary makes an ObjectCode of a host static library (an ar
// archive of objects with embedded device code), an input for a Linker.
// The data is copied.
func FromLibrary(data []byte, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromBytes(CodeLibrary, data, opts)
}

// FromLibraryFile reads a host static library from a file; see
// FromLibrary.
func FromLibraryFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	return fromFile(CodeLibrary, path, opts)
}

// FromFile reads code of any type from a file, telling the type from
// the content: a fatbin by its magic; a CUDA ELF (EM_CUDA) is a cubin, any
// other ELF a host object; an ar archive a host library; LTO-IR by its
// magic; text with a .version directive PTX. The code is then checked as
// the From*File of its type checks it. Content of no known type is an
// error matching ErrInvalidCode.
func FromFile(path string, opts ...ObjectCodeOption) (*ObjectCode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("core: reading code file %q: %w", path, err)
	}
	codeType, ok := detectCodeType(data)
	if !ok {
		return nil, fmt.Errorf("core: %w: cannot tell the code type of file %q from its content (not a cubin, fatbin, PTX, LTO-IR, host object or library)", ErrInvalidCode, path)
	}
	if codeType == CodePTX {
		data = bytes.TrimRight(data, "\x00")
	}
	if err := validateCode(codeType, data); err != nil {
		return nil, fmt.Errorf("%w (file %q)", err, path)
	}
	return validated(newObjectCode(codeType, data, path, nil, opts)), nil
}

// ltoirMagic starts LTO-IR as NVRTC and NVVM write it (little-endian).
const ltoirMagic = 0x7F4E43ED

// detectCodeType tells the code type of data from its first bytes.
func detectCodeType(data []byte) (string, bool) {
	switch {
	case len(data) >= 4 && binary.LittleEndian.Uint32(data) == fatbin.Magic:
		return CodeFatbin, true
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		if len(data) >= 20 && elf.Machine(binary.LittleEndian.Uint16(data[18:])) == elf.EM_CUDA {
			return CodeCubin, true
		}
		return CodeObject, true
	case bytes.HasPrefix(data, []byte("!<arch>\n")):
		return CodeLibrary, true
	case len(data) >= 4 && binary.LittleEndian.Uint32(data) == ltoirMagic:
		return CodeLTOIR, true
	case ptxVersionRE.Match(data):
		return CodePTX, true
	}
	return "", false
}

var ptxVersionRE = regexp.MustCompile(`(?m)^\s*\.version\s+\d+\.\d+`)

// validateCode checks that data looks like codeType, without any CUDA
// library.
func validateCode(codeType string, data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("core: %w: %s: %s", ErrInvalidCode, codeType, fmt.Sprintf(format, args...))
	}
	if len(data) == 0 {
		return bad("empty")
	}
	switch codeType {
	case CodeCubin:
		if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
			return bad("not an ELF image (no \\x7fELF magic)")
		}
		// The driver trusts the offsets and indices of an image it loads:
		// refuse a damaged one here rather than let it crash.
		if err := fatbin.ValidateCubin(data); err != nil {
			return fmt.Errorf("core: %w: %w", ErrInvalidCode, err)
		}
	case CodeFatbin:
		if len(data) < 16 || binary.LittleEndian.Uint32(data) != fatbin.Magic {
			return bad("no fatbin magic 0x%08X", uint32(fatbin.Magic))
		}
	case CodePTX:
		if !ptxVersionRE.Match(data) {
			return bad("no .version directive")
		}
	case CodeLTOIR:
		// Any non-empty data: nvJitLink checks it.
	case CodeObject:
		if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
			return bad("not an ELF object (no \\x7fELF magic)")
		}
	case CodeLibrary:
		if !bytes.HasPrefix(data, []byte("!<arch>\n")) {
			return bad("not an ar archive (no !<arch> magic)")
		}
	default:
		return fmt.Errorf("core: %w: unknown code type %q", ErrInvalidCode, codeType)
	}
	return nil
}

// Name returns the code's human-readable name.
func (o *ObjectCode) Name() string { return o.name }

// CodeType returns "cubin", "fatbin", "ptx", "ltoir", "object" or
// "library".
func (o *ObjectCode) CodeType() string { return o.codeType }

// Code returns the code itself (PTX without a trailing NUL). The slice is
// shared: do not modify it.
func (o *ObjectCode) Code() []byte { return o.code }

// SymbolMapping returns a copy of the code's name mapping (see
// WithSymbolMapping), or nil.
func (o *ObjectCode) SymbolMapping() map[string]string { return maps.Clone(o.symbols) }

func (o *ObjectCode) String() string {
	if o.name != "" {
		return fmt.Sprintf("%s %q (%d bytes)", o.codeType, o.name, len(o.code))
	}
	return fmt.Sprintf("%s (%d bytes)", o.codeType, len(o.code))
}

func (o *ObjectCode) loadable() bool {
	return o.codeType == CodeCubin || o.codeType == CodeFatbin || o.codeType == CodePTX
}

// Handle returns the driver's CUlibrary of the code, loading it on first
// use (cuInit, then cuLibraryLoadData: no context needed). LTO-IR,
// objects and libraries fail with ErrNotLoadable. A cubin, and each cubin
// of a fat binary, is checked first (fatbin.ValidateCubin; a fat binary
// must parse): a damaged one fails, matching ErrInvalidCode, before any
// driver call. Without a GPU it returns the driver's error, e.g. one
// matching driver.ErrorNoDevice. After Close it returns ErrClosed.
func (o *ObjectCode) Handle() (driver.Library, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handleLocked()
}

func (o *ObjectCode) handleLocked() (driver.Library, error) {
	if o.closed {
		return 0, ErrClosed
	}
	if o.lib != nil {
		return o.lib.handle, nil
	}
	if !o.loadable() {
		return 0, fmt.Errorf("core: loading %v: %w", o, ErrNotLoadable)
	}
	if err := o.checkImage(); err != nil {
		return 0, fmt.Errorf("core: loading %v: %w", o, err)
	}
	if err := ensureInit(); err != nil {
		return 0, fmt.Errorf("core: loading %v: %w", o, err)
	}
	img := C.malloc(C.size_t(len(o.code) + 1))
	if img == nil {
		return 0, fmt.Errorf("core: loading %v: out of C memory", o)
	}
	buf := unsafe.Slice((*byte)(img), len(o.code)+1)
	copy(buf, o.code)
	buf[len(o.code)] = 0 // PTX must be NUL-terminated
	h, err := cuLibraryLoadData(img, nil, nil, 0, nil, nil, 0)
	if err != nil {
		C.free(img)
		return 0, fmt.Errorf("core: loading %v: %w", o, err)
	}
	o.lib = &loadedLibrary{handle: h, image: img}
	o.cleanup = runtime.AddCleanup(o, func(l *loadedLibrary) { l.unload() }, o.lib)
	if warnEnabled() && (o.codeType == CodeCubin || o.codeType == CodeFatbin) {
		if devs, err := Devices(); err == nil {
			cubins, ptx := codeArchs(o.codeType, o.code)
			warnArchs(o.String(), cubins, ptx, devs)
		}
	}
	return h, nil
}

// Kernel returns the kernel called name, loading the code first (see
// Handle); the same *Kernel for the same name. A name in the symbol
// mapping is looked up by its mapped (mangled) name. When it is absent the
// error names it and, where the code lists them, the kernels it has.
func (o *ObjectCode) Kernel(name string) (*Kernel, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	lib, err := o.handleLocked()
	if err != nil {
		return nil, err
	}
	if k := o.byName[name]; k != nil {
		return k, nil
	}
	sym := name
	if m, ok := o.symbols[name]; ok {
		sym = m
	}
	k, err := cuLibraryGetKernel(lib, sym)
	if err != nil {
		what := fmt.Sprintf("%q", name)
		if sym != name {
			what += fmt.Sprintf(" (mangled %q)", sym)
		}
		msg := fmt.Sprintf("core: kernel %s not found in %v", what, o)
		if ks := o.kernelNames(); len(ks) > 0 {
			msg += "; it has: " + strings.Join(ks, ", ")
		}
		return nil, fmt.Errorf("%s: %w", msg, err)
	}
	kern := newKernel(k, name, o)
	if o.byName == nil {
		o.byName = map[string]*Kernel{}
	}
	o.byName[name] = kern
	return kern, nil
}

// Close unloads the code from the driver, if it was loaded. It is
// idempotent; Handle and Kernel return ErrClosed afterwards.
func (o *ObjectCode) Close() error {
	return closeLocked(&o.mu, &o.closed, func() error {
		o.closeKernels() // no Kernel call is in flight from here on
		o.byName = nil
		if o.lib == nil {
			return nil
		}
		o.cleanup.Stop()
		if err := o.lib.unload(); err != nil {
			return fmt.Errorf("core: unloading %v: %w", o, err)
		}
		return nil
	})
}

// kernelNames lists the entry points of the code, read from the code
// itself (ELF symbols, PTX .entry lines), best effort.
func (o *ObjectCode) kernelNames() []string {
	switch o.codeType {
	case CodeCubin:
		return elfKernels(o.code)
	case CodePTX:
		return ptxKernels(o.code)
	case CodeFatbin:
		f, err := fatbin.Parse(o.code)
		if err != nil {
			return nil
		}
		for _, e := range f.Entries {
			d, err := e.Data()
			if err != nil {
				continue
			}
			switch e.Kind {
			case fatbin.KindPTX:
				return ptxKernels(d)
			case fatbin.KindELF:
				return elfKernels(d)
			}
		}
	}
	return nil
}

// stoCUDAEntry marks a kernel's symbol in a CUDA ELF (st_other).
const stoCUDAEntry = 0x10

// parseCUDAELF parses a CUDA ELF with debug/elf. CUDA writes its ELF ABI
// version into e_version (e.g. 124 for ABI 7), which debug/elf rejects as
// a mismatch with e_ident[EI_VERSION]; it parses a copy with e_version 1.
func parseCUDAELF(b []byte) (*elf.File, error) {
	if len(b) >= 0x18 && b[elf.EI_VERSION] == 1 && b[elf.EI_DATA] == byte(elf.ELFDATA2LSB) &&
		binary.LittleEndian.Uint32(b[0x14:]) != 1 {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[0x14:], 1)
	}
	return elf.NewFile(bytes.NewReader(b))
}

func elfKernels(b []byte) []string {
	f, err := parseCUDAELF(b)
	if err != nil {
		return nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Other&stoCUDAEntry != 0 {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var ptxEntryRE = regexp.MustCompile(`\.entry\s+([A-Za-z_$%][A-Za-z0-9_$]*)`)

func ptxKernels(b []byte) []string {
	var out []string
	for _, m := range ptxEntryRE.FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cubinArch returns the SM architecture a CUDA ELF is for, such as
// "sm_90" or "sm_90a", from its header's e_flags. CUDA 13's ELF ABI v8
// does not show the a/f suffix there: its cubins read as plain "sm_90".
func cubinArch(b []byte) (string, error) {
	f, err := parseCUDAELF(b)
	if err != nil {
		return "", fmt.Errorf("not an ELF image: %w", err)
	}
	if f.Machine != elf.EM_CUDA {
		return "", fmt.Errorf("ELF machine is %v, not EM_CUDA", f.Machine)
	}
	if len(b) < 0x34 {
		return "", errors.New("ELF header too short")
	}
	var flags uint32
	if f.Class == elf.ELFCLASS64 {
		flags = binary.LittleEndian.Uint32(b[0x30:])
	} else {
		flags = binary.LittleEndian.Uint32(b[0x24:])
	}
	abi := b[elf.EI_ABIVERSION]
	var sm uint32
	var suffix string
	if abi >= 8 {
		// ELF ABI v8 (CUDA 13): SM in bits 8-15 (sm_90: 0x6005a04). The
		// e_flags of sm_90 and sm_90a are the same there, so no suffix.
		sm = (flags >> 8) & 0xff
	} else {
		// ELF ABI v7 (CUDA 12): SM in bits 0-7, the virtual SM in bits
		// 16-23, EF_CUDA_ACCELERATORS 0x800 for 'a' (sm_90a: 0x5a0d5a).
		sm = flags & 0xff
		if flags&0x800 != 0 {
			suffix = "a"
		}
	}
	if sm == 0 {
		return "", fmt.Errorf("no SM architecture in e_flags %#x", flags)
	}
	return fmt.Sprintf("sm_%d%s", sm, suffix), nil
}

var ptxTargetRE = regexp.MustCompile(`(?m)^\s*\.target\s+(sm_[0-9]+[af]?)`)

// ptxArch returns the .target architecture of PTX, such as "sm_90".
func ptxArch(b []byte) (string, bool) {
	m := ptxTargetRE.FindSubmatch(b)
	if m == nil {
		return "", false
	}
	return string(m[1]), true
}
