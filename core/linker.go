package core

// #include <stdlib.h>
import "C"

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/pathfinder"
)

// LinkError is a failed link. Its message names the backend and target
// and holds the linker's error log; errors.Is matches the backend's
// status code (nvjitlink.ErrorPtxCompile, driver.ErrorInvalidPtx...).
type LinkError struct {
	Backend  string // "nvJitLink" or "cuLink" (the driver's fallback)
	Target   string // "cubin" or "ptx"
	Inputs   []string
	ErrorLog string
	InfoLog  string
	Err      error
}

func (e *LinkError) Error() string {
	s := fmt.Sprintf("core: %s: linking %s to %s failed: %s",
		e.Backend, strings.Join(e.Inputs, ", "), e.Target, errSummary(e.Err))
	if log := strings.TrimSpace(e.ErrorLog); log != "" {
		s += "\n" + log
	}
	return s
}

func (e *LinkError) Unwrap() error { return e.Err }

// errSummary is err's message without the log the bindings append (the
// core errors print the log themselves, once).
func errSummary(err error) string {
	var (
		e1 *nvrtc.Error
		e2 *nvvm.Error
		e3 *nvjitlink.Error
		e4 *driver.Error
	)
	switch {
	case errors.As(err, &e1):
		return e1.Func + ": " + e1.Code.Error()
	case errors.As(err, &e2):
		return e2.Func + ": " + e2.Code.Error()
	case errors.As(err, &e3):
		return e3.Func + ": " + e3.Code.Error()
	case errors.As(err, &e4):
		return e4.Func + ": " + e4.Code.Error()
	}
	return err.Error()
}

// Linker links device code (PTX, CUBIN, fatbins, LTO-IR, host objects and
// libraries, as ObjectCodes) into one CUBIN, or into PTX with LTO. It uses
// nvJitLink; when nvJitLink cannot be loaded it falls back to the
// driver's cuLink* API, which needs a GPU (it links in device 0's primary
// context) and takes no LTO-IR.
//
// A Linker is safe for concurrent use; Link may be called more than once.
type Linker struct {
	mu       sync.Mutex
	opts     LinkerOptions
	args     []string
	inputs   []*ObjectCode
	driver   bool // the cuLink fallback
	errorLog string
	infoLog  string
	closed   bool
}

// nvJitLinkInput maps code types to nvJitLink's input types.
var nvJitLinkInput = map[string]nvjitlink.InputType{
	CodeCubin:   nvjitlink.InputCubin,
	CodePTX:     nvjitlink.InputPtx,
	CodeLTOIR:   nvjitlink.InputLtoir,
	CodeFatbin:  nvjitlink.InputFatbin,
	CodeObject:  nvjitlink.InputObject,
	CodeLibrary: nvjitlink.InputLibrary,
}

// cuLinkInput maps code types to the driver's input types.
var cuLinkInput = map[string]driver.JitInputType{
	CodeCubin:   driver.JitInputCubin,
	CodePTX:     driver.JitInputPtx,
	CodeFatbin:  driver.JitInputFatbinary,
	CodeObject:  driver.JitInputObject,
	CodeLibrary: driver.JitInputLibrary,
}

// NewLinker makes a Linker of the given inputs. Options are validated
// here (opts.Arch is required); the inputs are handed to the linker by
// Link.
func NewLinker(opts *LinkerOptions, codes ...*ObjectCode) (*Linker, error) {
	args, err := opts.NVJitLinkOptions()
	if err != nil {
		return nil, err
	}
	if len(codes) == 0 {
		return nil, errors.New("core: NewLinker: no object code to link")
	}
	for i, c := range codes {
		if c == nil {
			return nil, fmt.Errorf("core: NewLinker: object code %d is nil", i)
		}
		if _, ok := nvJitLinkInput[c.codeType]; !ok {
			return nil, fmt.Errorf("core: NewLinker: object code %d: cannot link code type %q", i, c.codeType)
		}
	}
	l := &Linker{opts: *opts, args: args, inputs: append([]*ObjectCode(nil), codes...)}
	if _, err := pathfinder.Load(pathfinder.NVJitLink); err != nil {
		// No nvJitLink: the driver links, without LTO.
		l.driver = true
		if opts.LTO {
			return nil, fmt.Errorf("core: NewLinker: LTO needs nvJitLink, which cannot be loaded: %w", err)
		}
		for _, c := range codes {
			if c.codeType == CodeLTOIR {
				return nil, fmt.Errorf("core: NewLinker: linking LTO-IR (%v) needs nvJitLink, which cannot be loaded: %w", c, err)
			}
		}
		warnLinkerFallback(err)
	} else {
		noteLibrary(pathfinder.NVJitLink)
	}
	return l, nil
}

// Backend returns "nvJitLink", or "cuLink" when the driver links.
func (l *Linker) Backend() string {
	if l.driver {
		return "cuLink"
	}
	return "nvJitLink"
}

// Options returns the nvJitLink options the Linker passes (Link("ptx")
// adds -ptx).
func (l *Linker) Options() []string { return append([]string(nil), l.args...) }

// ErrorLog returns the error log of the last Link.
func (l *Linker) ErrorLog() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errorLog
}

// InfoLog returns the information log of the last Link.
func (l *Linker) InfoLog() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.infoLog
}

// Close releases the Linker. It is idempotent; Link returns ErrClosed
// afterwards. The inputs are not closed.
func (l *Linker) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}

func (l *Linker) inputNames() []string {
	names := make([]string, len(l.inputs))
	for i, c := range l.inputs {
		names[i] = l.inputName(i, c)
	}
	return names
}

func (l *Linker) inputName(i int, c *ObjectCode) string {
	if c.name != "" {
		return c.name
	}
	return c.codeType + "_" + strconv.Itoa(i)
}

// Link links the inputs into target, "cubin" or "ptx" (PTX needs
// LinkerOptions.LTO). The result carries the union of the inputs' symbol
// mappings. On failure the error is a *LinkError holding the logs; a
// damaged cubin or fat binary input (see ObjectCode.Handle) is refused
// first, matching ErrInvalidCode.
func (l *Linker) Link(target string) (*ObjectCode, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	switch target {
	case CodeCubin:
	case CodePTX:
		if !l.opts.LTO {
			return nil, badOption("LinkerOptions.LTO", "Link(\"ptx\") needs LTO: nvJitLink emits PTX only with -lto")
		}
	default:
		return nil, fmt.Errorf("core: Link: unknown target %q (want \"cubin\" or \"ptx\")", target)
	}
	for i, c := range l.inputs {
		if len(c.code) == 0 {
			return nil, fmt.Errorf("core: Link: %v is empty", c)
		}
		// nvJitLink and the driver's linker trust cubins as the loader does.
		if err := c.checkImage(); err != nil {
			return nil, fmt.Errorf("core: Link: input %s: %w", l.inputName(i, c), err)
		}
	}
	out, key, cache := l.linkCached(target) // cache.go
	if out == nil {
		var err error
		if l.driver {
			out, err = l.linkDriver(target)
		} else {
			out, err = l.linkNVJitLink(target)
		}
		if err != nil {
			return nil, err
		}
		l.linkStore(cache, key, target, out)
	}
	var syms map[string]string
	for _, c := range l.inputs {
		if len(c.symbols) > 0 {
			if syms == nil {
				syms = map[string]string{}
			}
			maps.Copy(syms, c.symbols)
		}
	}
	return newObjectCode(target, out, "", syms, nil), nil
}

// cBytes copies b to C memory, with a NUL after it.
func cBytes(b []byte) unsafe.Pointer {
	p := C.malloc(C.size_t(len(b) + 1))
	if p == nil {
		panic("core: out of C memory")
	}
	buf := unsafe.Slice((*byte)(p), len(b)+1)
	copy(buf, b)
	buf[len(b)] = 0
	return p
}

func (l *Linker) linkNVJitLink(target string) (out []byte, err error) {
	// One nvJitLink session stays on one locked OS thread from Create to
	// Destroy: nvJitLink 12.4 keeps per-thread state, and a session whose
	// calls moved between threads, as a goroutine's may, crashed (SIGSEGV
	// in nvJitLinkCreate or nvJitLinkComplete). This is the one place
	// cudago drives nvJitLink (Program's PTX-to-cubin step and cudago link
	// and build come here). Sessions are not serialised: on locked threads,
	// overlapping sessions link correctly (TestLinkerConcurrentSessions),
	// and a process-wide lock would make every link wait for the slowest
	// LTO link of another goroutine. NVRTC and nvFatbin need neither: their
	// handles hold all their state and move between threads safely
	// (TestHandlesChangeThreads); Program and FatbinBuilder only keep
	// their calls one at a time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	args := l.args
	if target == CodePTX {
		args = append(append([]string(nil), args...), "-ptx")
	}
	fail := func(h nvjitlink.Handle, err error) error {
		e := &LinkError{Backend: "nvJitLink", Target: target, Inputs: l.inputNames(), Err: err}
		if h != 0 {
			e.ErrorLog, _ = nvjitlink.ErrorLog(h)
			e.InfoLog, _ = nvjitlink.InfoLog(h)
		}
		var ne *nvjitlink.Error
		if e.ErrorLog == "" && errors.As(err, &ne) {
			e.ErrorLog = ne.Log
		}
		l.errorLog, l.infoLog = e.ErrorLog, e.InfoLog
		return e
	}
	h, err := nvjitlink.Create(uint32(len(args)), args)
	if err != nil {
		if h != 0 {
			nvjitlink.Destroy(&h)
		}
		e := fail(0, err).(*LinkError)
		if e.ErrorLog == "" { // nvJitLink has no log yet: name what it rejected
			e.ErrorLog = fmt.Sprintf("nvJitLinkCreate rejected the options %q", args)
			l.errorLog = e.ErrorLog
		}
		return nil, e
	}
	defer nvjitlink.Destroy(&h)
	var mem []unsafe.Pointer
	defer func() {
		for _, p := range mem {
			C.free(p)
		}
	}()
	for i, c := range l.inputs {
		p := cBytes(c.code)
		mem = append(mem, p)
		size := uint64(len(c.code))
		if c.codeType == CodePTX {
			size++ // with the NUL
		}
		if err := nvjitlink.AddData(h, nvJitLinkInput[c.codeType], p, size, l.inputName(i, c)); err != nil {
			return nil, fail(h, err)
		}
	}
	if err := nvjitlink.Complete(h); err != nil {
		return nil, fail(h, err)
	}
	l.errorLog, _ = nvjitlink.ErrorLog(h)
	l.infoLog, _ = nvjitlink.InfoLog(h)
	if target == CodePTX {
		ptx, err := nvjitlink.LinkedPTX(h)
		if err != nil {
			return nil, fail(h, err)
		}
		return []byte(strings.TrimRight(ptx, "\x00")), nil
	}
	cubin, err := nvjitlink.LinkedCubin(h)
	if err != nil {
		return nil, fail(h, err)
	}
	return cubin, nil
}

// jitTarget is the CUjit_target of an sm_NN[a] architecture.
func jitTarget(arch string) (uintptr, bool) {
	_, n, sfx, ok := parseArch(arch)
	if !ok {
		return 0, false
	}
	t := uintptr(n)
	switch sfx {
	case "a":
		t += 0x10000 // CU_COMPUTE_ACCELERATED_TARGET_BASE
	case "f":
		t += 0x20000 // CU_COMPUTE_FAMILY_TARGET_BASE
	}
	return t, true
}

// linkDriver links with cuLinkCreate/AddData/Complete/Destroy, the
// fallback when nvJitLink is missing. They need a context: each call makes
// device 0's primary context current (the cubin it makes is not tied to
// it).
func (l *Linker) linkDriver(target string) ([]byte, error) {
	if target != CodeCubin {
		return nil, fmt.Errorf("core: Link(%q) needs nvJitLink (the driver links only to cubin)", target)
	}
	fail := func(err error, errLog, infoLog string) error {
		l.errorLog, l.infoLog = errLog, infoLog
		return &LinkError{Backend: "cuLink", Target: target, Inputs: l.inputNames(), ErrorLog: errLog, InfoLog: infoLog, Err: err}
	}
	if err := ensureInit(); err != nil {
		return nil, fail(err, "", "")
	}
	dev, err := GetDevice(0)
	if err != nil {
		return nil, fail(err, "", "")
	}
	ctx, err := dev.primary.acquire()
	if err != nil {
		return nil, fail(err, "", "")
	}
	defer dev.primary.release()

	const logSize = 1 << 16
	infoBuf := C.calloc(logSize, 1)
	errBuf := C.calloc(logSize, 1)
	defer C.free(infoBuf)
	defer C.free(errBuf)
	o := l.opts
	keys := []driver.JitOption{
		driver.JitInfoLogBuffer, driver.JitInfoLogBufferSizeBytes,
		driver.JitErrorLogBuffer, driver.JitErrorLogBufferSizeBytes,
	}
	vals := []uintptr{uintptr(infoBuf), logSize, uintptr(errBuf), logSize}
	add := func(k driver.JitOption, v uintptr) {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if t, ok := jitTarget(o.Arch); ok {
		add(driver.JitOption_JitTarget, t)
	}
	if o.MaxRegisters > 0 {
		add(driver.JitMaxRegisters, uintptr(o.MaxRegisters))
	}
	if o.Optimization != nil {
		add(driver.JitOptimizationLevel, uintptr(*o.Optimization))
	}
	if o.Debug {
		add(driver.JitGenerateDebugInfo, 1)
	}
	if o.LineInfo {
		add(driver.JitGenerateLineInfo, 1)
	}
	if o.Verbose {
		add(driver.JitLogVerbose, 1)
	}
	b01 := func(b bool) uintptr {
		if b {
			return 1
		}
		return 0
	}
	if o.FTZ != nil {
		add(driver.JitFtz, b01(*o.FTZ))
	}
	if o.PrecDiv != nil {
		add(driver.JitPrecDiv, b01(*o.PrecDiv))
	}
	if o.PrecSqrt != nil {
		add(driver.JitPrecSqrt, b01(*o.PrecSqrt))
	}
	if o.FMA != nil {
		add(driver.JitFma, b01(*o.FMA))
	}
	// The values array holds C pointers and integers: it lives in C memory.
	cvals := C.calloc(C.size_t(len(vals)), C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(cvals)
	copy(unsafe.Slice((*uintptr)(cvals), len(vals)), vals)
	logs := func() (string, string) {
		return C.GoString((*C.char)(errBuf)), C.GoString((*C.char)(infoBuf))
	}

	state, err := cuLinkCreate(ctx, uint32(len(keys)), &keys[0], (*unsafe.Pointer)(cvals))
	if err != nil {
		e, i := logs()
		return nil, fail(err, e, i)
	}
	defer cuLinkDestroy(ctx, state)
	for i, c := range l.inputs {
		p := cBytes(c.code)
		size := uint64(len(c.code))
		if c.codeType == CodePTX {
			size++
		}
		err := cuLinkAddData(ctx, state, cuLinkInput[c.codeType], p, size, l.inputName(i, c), 0, nil, nil)
		C.free(p)
		if err != nil {
			e, i := logs()
			return nil, fail(err, e, i)
		}
	}
	cubin, size, err := cuLinkComplete(ctx, state)
	if err != nil {
		e, i := logs()
		return nil, fail(err, e, i)
	}
	out := C.GoBytes(cubin, C.int(size)) // owned by state: copy before LinkDestroy
	l.errorLog, l.infoLog = logs()
	return out, nil
}
