package core

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/pathfinder"
)

// CompileError is a failed compilation. Its message names the program,
// the backend and the target, and holds the compiler's log; errors.Is
// matches the backend's status code (nvrtc.ErrorCompilation,
// nvvm.ErrorCompilation...).
type CompileError struct {
	Program string // the program's name
	Backend string // "NVRTC", "NVVM" or "nvJitLink"
	Target  string // "ptx", "cubin" or "ltoir"; "cubin and ptx" from one compilation (CompileArchs)
	Log     string
	Err     error
	// Options are the options the backend was given; the message lists
	// them when the backend rejected one (its log may not name it).
	Options []string
}

func (e *CompileError) Error() string {
	s := fmt.Sprintf("core: %s: compiling program %q to %s failed: %s",
		e.Backend, e.Program, e.Target, errSummary(e.Err))
	if errors.Is(e.Err, nvrtc.ErrorInvalidOption) || errors.Is(e.Err, nvvm.ErrorInvalidOption) {
		s += fmt.Sprintf(" (options %q)", e.Options)
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		s += "\n" + log
	}
	return s
}

func (e *CompileError) Unwrap() error { return e.Err }

// Program is device source code to compile: CUDA C++ ("c++", compiled by
// NVRTC), PTX ("ptx", assembled to a CUBIN by nvJitLink) or NVVM IR
// ("nvvm", LLVM IR compiled by libNVVM), after cuda.core's Program.
//
// Compile may be called several times, for several targets. A Program is
// safe for concurrent use (calls are serialized); Close releases the
// compiler's handle.
type Program struct {
	mu       sync.Mutex
	codeType string
	code     string
	opts     ProgramOptions
	args     []string // the backend's rendered options (NVRTC or NVVM)

	h       *programHandle
	used    bool // h has compiled once: the next Compile makes a new one
	cleanup runtime.Cleanup

	log     string
	lowered map[string]string // after a compile with name expressions
	pch     PCHStatus         // of the last compile (pch.go)
	closed  bool
}

// programHandle is the compiler's handle, which a cleanup destroys when a
// Program is lost without Close.
type programHandle struct {
	nvrtc nvrtc.Program
	nvvm  nvvm.Program
}

func (h *programHandle) destroy() error {
	var err error
	if h.nvrtc != 0 {
		err = nvrtc.DestroyProgram(&h.nvrtc)
		h.nvrtc = 0
	}
	if h.nvvm != 0 {
		err = nvvm.DestroyProgram(&h.nvvm)
		h.nvvm = 0
	}
	return err
}

// NewProgram makes a Program of code, of codeType "c++", "ptx" or "nvvm"
// (case-insensitive). opts may be nil. The options are validated here,
// before any library is called, and for "c++" and "nvvm" the compiler's
// program is created (so a missing library shows here).
func NewProgram[C ~string | ~[]byte](code C, codeType string, opts *ProgramOptions) (*Program, error) {
	ct := strings.ToLower(codeType)
	if ct != "c++" && ct != "ptx" && ct != "nvvm" {
		return nil, fmt.Errorf("core: NewProgram: unknown code type %q (want \"c++\", \"ptx\" or \"nvvm\")", codeType)
	}
	p := &Program{codeType: ct, code: string(code)}
	if opts != nil {
		p.opts = *opts
		p.opts.Defines = maps.Clone(opts.Defines)
		p.opts.DefineList = slices.Clone(opts.DefineList)
		p.opts.Headers = maps.Clone(opts.Headers)
		p.opts.NameExpressions = append([]string(nil), opts.NameExpressions...)
		p.opts.Extra = append([]string(nil), opts.Extra...)
	}
	if len(p.code) == 0 {
		return nil, fmt.Errorf("core: NewProgram: empty %s code", ct)
	}
	if err := p.opts.checkFor(ct); err != nil {
		return nil, err
	}
	var err error
	switch ct {
	case "c++":
		if p.args, err = p.opts.NVRTCOptions(); err == nil {
			err = p.setupPCH()
		}
	case "nvvm":
		p.args, err = p.opts.NVVMOptions()
	case "ptx":
		if err = p.opts.validateCommon(); err == nil {
			_, err = FromPTX([]byte(p.code))
		}
	}
	if err != nil {
		return nil, err
	}
	if err := p.newHandle(); err != nil {
		return nil, err
	}
	return p, nil
}

// newHandle creates the compiler's program, replacing any earlier one.
func (p *Program) newHandle() error {
	if p.h != nil {
		p.cleanup.Stop()
		p.h.destroy()
		p.h = nil
	}
	h := &programHandle{}
	switch p.codeType {
	case "c++":
		names := make([]string, 0, len(p.opts.Headers))
		for n := range p.opts.Headers {
			names = append(names, n)
		}
		sort.Strings(names)
		srcs := make([]string, len(names))
		for i, n := range names {
			srcs[i] = p.opts.Headers[n]
		}
		prog, err := nvrtc.CreateProgram(p.code, p.opts.name(), int32(len(names)), srcs, names)
		if err != nil {
			return fmt.Errorf("core: NVRTC: creating program %q: %w", p.opts.name(), err)
		}
		h.nvrtc = prog
		noteLibrary(pathfinder.NVRTC)
	case "nvvm":
		prog, err := nvvm.CreateProgram()
		if err != nil {
			return fmt.Errorf("core: NVVM: creating program %q: %w", p.opts.name(), err)
		}
		if err := nvvm.AddModuleToProgram(prog, p.code, uint64(len(p.code)), p.opts.name()); err != nil {
			nvvm.DestroyProgram(&prog)
			return fmt.Errorf("core: NVVM: adding the module of program %q: %w", p.opts.name(), err)
		}
		h.nvvm = prog
		noteLibrary(pathfinder.NVVM)
	case "ptx":
		return nil // nvJitLink works per Compile
	}
	p.h = h
	p.used = false
	p.cleanup = runtime.AddCleanup(p, func(h *programHandle) { h.destroy() }, h)
	return nil
}

// CodeType returns "c++", "ptx" or "nvvm".
func (p *Program) CodeType() string { return p.codeType }

// Backend returns the compiler that Compile starts with: "NVRTC",
// "nvJitLink" (for PTX) or "NVVM".
func (p *Program) Backend() string {
	switch p.codeType {
	case "c++":
		return "NVRTC"
	case "nvvm":
		return "NVVM"
	}
	return "nvJitLink"
}

// Options returns the options rendered for the program's first backend
// (NVRTC or NVVM; nil for PTX), without those Compile adds for a target.
func (p *Program) Options() []string { return append([]string(nil), p.args...) }

// Log returns the log of the last Compile (warnings included), or "".
func (p *Program) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log
}

// LoweredName returns the mangled name of a name expression given in
// ProgramOptions.NameExpressions, after a successful Compile of a "c++"
// program.
func (p *Program) LoweredName(nameExpr string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", ErrClosed
	}
	if p.codeType != "c++" {
		return "", fmt.Errorf("core: LoweredName: a %s program has no name expressions", p.codeType)
	}
	if p.lowered == nil {
		return "", errors.New("core: LoweredName: the program has not been compiled")
	}
	s, ok := p.lowered[nameExpr]
	if !ok {
		return "", fmt.Errorf("core: LoweredName: %q is not one of ProgramOptions.NameExpressions", nameExpr)
	}
	return s, nil
}

// Close destroys the compiler's program. It is idempotent; the Program's
// methods return ErrClosed afterwards. ObjectCodes compiled before stay
// valid.
func (p *Program) Close() error {
	return closeLocked(&p.mu, &p.closed, func() error {
		if p.h == nil {
			return nil
		}
		p.cleanup.Stop()
		err := p.h.destroy()
		p.h = nil
		return err
	})
}

// defaultArch is the architecture of device 0, "sm_NN", when a GPU is
// there; else "".
func defaultArch() string {
	if ensureInit() != nil {
		return ""
	}
	dev, err := cuDeviceGet(0)
	if err != nil {
		return ""
	}
	major, err1 := cuDeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, dev)
	minor, err2 := cuDeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, dev)
	if err1 != nil || err2 != nil {
		return ""
	}
	return "sm_" + strconv.Itoa(int(major*10+minor))
}

// realArch returns the sm_NN architecture a CUBIN of this program is for:
// opts.Arch (compute_NN becomes sm_NN), else device 0's.
func (p *Program) realArch() (string, error) {
	arch := p.opts.Arch
	if arch == "" {
		arch = defaultArch()
		if arch == "" {
			return "", badOption("ProgramOptions.Arch", "required to compile to cubin when no GPU can be queried (e.g. sm_90)")
		}
	}
	_, a, _ := parseArchForm(arch)
	return a.SM(), nil
}

// Compile compiles the program to target, "ptx", "cubin" or "ltoir",
// and returns the result as an ObjectCode named after the program and
// carrying its name expressions' lowered names as symbol mapping.
//
//   - "c++": NVRTC, for any target. "cubin" needs a real architecture
//     (sm_NN; default: device 0's); "ltoir" adds -dlto.
//   - "ptx": "cubin" assembles the PTX with nvJitLink (Arch or the PTX's
//     .target gives the architecture); "ptx" returns the PTX itself.
//   - "nvvm": NVVM to "ptx" or "ltoir" (-gen-lto); "cubin" is NVVM to PTX,
//     then nvJitLink.
//
// On failure the error is a *CompileError (or *LinkError for the
// nvJitLink step) holding the log, which Log also returns.
func (p *Program) Compile(target string) (*ObjectCode, error) {
	out, err := p.compile(target)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// compile is Compile of several targets, in order. Targets whose compiler
// options are the same come from one compilation: the cubin and the PTX
// of a "c++" program for sm_NN are one NVRTC run (CompileArchs relies on
// it). Log is the log of the last compilation.
func (p *Program) compile(targets ...string) ([]*ObjectCode, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	for _, target := range targets {
		switch target {
		case CodePTX, CodeCubin, CodeLTOIR:
		default:
			return nil, fmt.Errorf("core: Compile: unknown target %q (want \"ptx\", \"cubin\" or \"ltoir\")", target)
		}
	}
	p.log = ""
	return p.compileCached(targets) // cache.go; on a miss, compileBackend
}

// compileBackend runs the compiler(s) of the program's code type.
func (p *Program) compileBackend(targets []string) ([]*ObjectCode, error) {
	if p.codeType == "c++" {
		return p.compileNVRTC(targets)
	}
	out := make([]*ObjectCode, len(targets))
	for i, target := range targets {
		var err error
		if p.codeType == "nvvm" {
			out[i], err = p.compileNVVM(target)
		} else {
			out[i], err = p.compilePTX(target)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// targetArgs returns the program's options with what compiling to target
// adds: for a cubin the device's real architecture, which withArch sets;
// for LTO-IR the flag lto, unless the options asked for LTO already.
func (p *Program) targetArgs(target string, withArch func(args []string, arch string) []string, lto string) ([]string, error) {
	args := p.args
	if target == CodeCubin {
		arch, err := p.realArch()
		if err != nil {
			return nil, err
		}
		args = withArch(args, arch)
	}
	if target == CodeLTOIR && !p.opts.LTO {
		args = append(append([]string(nil), args...), lto)
	}
	return args, nil
}

// compileNVRTC compiles to targets, once per distinct option list.
func (p *Program) compileNVRTC(targets []string) ([]*ObjectCode, error) {
	args := make([][]string, len(targets))
	for i, t := range targets {
		var err error
		if args[i], err = p.targetArgs(t, replaceArch, "-dlto"); err != nil {
			return nil, err
		}
	}
	out := make([]*ObjectCode, len(targets))
	for i := range targets {
		if out[i] != nil {
			continue
		}
		run := []int{i}
		for j := i + 1; j < len(targets); j++ {
			if out[j] == nil && slices.Equal(args[i], args[j]) {
				run = append(run, j)
			}
		}
		ts := make([]string, len(run))
		for k, j := range run {
			ts[k] = targets[j]
		}
		codes, err := p.runNVRTC(args[i], ts)
		if err != nil {
			return nil, err
		}
		for k, j := range run {
			out[j] = codes[k]
		}
	}
	return out, nil
}

// runNVRTC runs one NVRTC compilation with args and returns its output
// for each of targets.
func (p *Program) runNVRTC(args []string, targets []string) ([]*ObjectCode, error) {
	what := strings.Join(targets, " and ")
	// A fresh NVRTC program per compilation: name expressions and
	// options never leak from one Compile into the next.
	if p.used {
		if err := p.newHandle(); err != nil {
			return nil, err
		}
	}
	p.used = true
	p.lowered = nil
	prog := p.h.nvrtc
	for _, e := range p.opts.NameExpressions {
		if err := nvrtc.AddNameExpression(prog, e); err != nil {
			return nil, fmt.Errorf("core: NVRTC: adding name expression %q: %w", e, err)
		}
	}
	cerr := nvrtc.CompileProgram(prog, int32(len(args)), args)
	prog, cerr = p.pchCompiled(prog, args, cerr)
	log, lerr := nvrtc.ProgramLog(prog)
	if lerr == nil {
		p.log = log
	}
	if cerr != nil {
		return nil, compileFailed[nvrtc.Result](p, "NVRTC", what, args, cerr)
	}
	lowered := make(map[string]string, len(p.opts.NameExpressions))
	for _, e := range p.opts.NameExpressions {
		s, err := nvrtc.GetLoweredName(prog, e)
		if err != nil {
			return nil, fmt.Errorf("core: NVRTC: lowered name of %q: %w", e, err)
		}
		lowered[e] = s
	}
	p.lowered = lowered
	codes := make([]*ObjectCode, len(targets))
	for i, target := range targets {
		var (
			out []byte
			err error
		)
		switch target {
		case CodePTX:
			out, err = nvrtc.PTX(prog)
		case CodeCubin:
			out, err = nvrtc.CUBIN(prog)
		case CodeLTOIR:
			out, err = nvrtc.LTOIR(prog)
		}
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("NVRTC produced no %s", target)
		}
		if err != nil {
			return nil, fmt.Errorf("core: NVRTC: getting the %s of program %q: %w", target, p.opts.name(), err)
		}
		var syms map[string]string
		if len(lowered) > 0 {
			syms = maps.Clone(lowered)
		}
		codes[i] = newObjectCode(target, out, p.opts.name(), syms, nil)
	}
	return codes, nil
}

// replaceArch sets -arch=arch in an NVRTC option list.
func replaceArch(args []string, arch string) []string {
	out := make([]string, 0, len(args)+1)
	out = append(out, "-arch="+arch)
	for _, a := range args {
		if !strings.HasPrefix(a, "-arch=") {
			out = append(out, a)
		}
	}
	return out
}

// compileNVVM runs libNVVM, to PTX or (with -gen-lto) LTO-IR.
func (p *Program) compileNVVM(target string) (*ObjectCode, error) {
	args, err := p.targetArgs(target, withNVVMArch, "-gen-lto")
	if err != nil {
		return nil, err
	}
	irTarget := target
	if target == CodeCubin {
		irTarget = CodePTX // NVVM makes PTX, which the driver then compiles
	}
	if p.used {
		if err := p.newHandle(); err != nil {
			return nil, err
		}
	}
	p.used = true
	prog := p.h.nvvm
	cerr := nvvm.CompileProgram(prog, int32(len(args)), args)
	if log, err := nvvm.ProgramLog(prog); err == nil {
		p.log = log
	}
	if cerr != nil {
		return nil, compileFailed[nvvm.Result](p, "NVVM", target, args, cerr)
	}
	out, err := nvvm.CompiledResult(prog)
	if err != nil {
		return nil, fmt.Errorf("core: NVVM: getting the result of program %q: %w", p.opts.name(), err)
	}
	if irTarget == CodePTX {
		out = []byte(strings.TrimRight(string(out), "\x00"))
	}
	code := newObjectCode(irTarget, out, p.opts.name(), nil, nil)
	if target != CodeCubin {
		return code, nil
	}
	arch, _ := p.realArch()
	return p.linkPTX(code, arch, false)
}

// compileFailed is the CompileError of p's compile by backend (whose
// errors are dl.Error[C]) to target with args, failed with cerr; the
// error's log stands for the program's when the backend's log call gave
// none.
func compileFailed[C dl.Code](p *Program, backend, target string, args []string, cerr error) error {
	var ne *dl.Error[C]
	if p.log == "" && errors.As(cerr, &ne) {
		p.log = ne.Log
	}
	return &CompileError{Program: p.opts.name(), Backend: backend, Target: target, Log: p.log, Err: cerr, Options: slices.Clone(args)}
}

// withNVVMArch sets -arch=compute_NN in an NVVM option list.
func withNVVMArch(args []string, arch string) []string {
	_, a, _ := parseArchForm(arch)
	out := []string{"-arch=" + a.Compute()}
	for _, a := range args {
		if !strings.HasPrefix(a, "-arch=") {
			out = append(out, a)
		}
	}
	return out
}

// compilePTX handles a "ptx" program.
func (p *Program) compilePTX(target string) (*ObjectCode, error) {
	code, err := FromPTX([]byte(p.code), WithCodeName(p.opts.name()))
	if err != nil {
		return nil, err
	}
	switch target {
	case CodePTX:
		return code, nil
	case CodeLTOIR:
		return nil, errors.New("core: Compile: PTX cannot become LTO-IR")
	}
	arch := p.opts.Arch
	if arch == "" {
		if a, ok := ptxArch(code.code); ok {
			arch = a
		} else if arch, err = p.realArch(); err != nil {
			return nil, err
		}
	}
	_, a, _ := parseArchForm(arch)
	return p.linkPTX(code, a.SM(), true)
}

// linkPTX turns PTX into a CUBIN with a Linker.
func (p *Program) linkPTX(code *ObjectCode, arch string, extra bool) (*ObjectCode, error) {
	lo := p.opts.linkerOptions(arch, extra)
	lo.NoCache = true // Compile caches the whole program
	l, err := NewLinker(lo, code)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	out, err := l.Link(CodeCubin)
	p.log = l.ErrorLog()
	if info := l.InfoLog(); info != "" {
		if p.log != "" {
			p.log += "\n"
		}
		p.log += info
	}
	if err != nil {
		return nil, err
	}
	out.name = p.opts.name()
	return out, nil
}
