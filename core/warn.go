package core

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cudago/cudago/fatbin"
	"github.com/cudago/cudago/pathfinder"
)

// Warnings are conditions that are not errors — a fallback taken, a
// library that will fail later, an error no call can return — and that a
// program may want to know. core reports them all one way: to a log/slog
// logger, at slog.LevelWarn, with a "kind" attribute (one of the Warn...
// constants) and attributes naming what is concerned. The logger is silent
// unless SetLogger sets one or the environment variable CUDAGO_LOG asks
// for stderr: CUDAGO_LOG=warn (or info, debug, error: the level printed)
// prints text lines to stderr.
const (
	// WarnCacheDisabled: the compile cache's folder was refused (another
	// user's, or writable by others): compiling goes on without the cache.
	// Attributes: dir, err.
	WarnCacheDisabled = "cache-disabled"
	// WarnLinkerFallback: nvJitLink cannot be loaded, so Linker uses the
	// driver's cuLink, which needs a GPU and takes no LTO-IR. Once per
	// process. Attribute: err.
	WarnLinkerFallback = "linker-fallback"
	// WarnNoCodeForDevice: loaded code has no cubin that runs on a device
	// of the process: the driver compiles its PTX for the device (slower
	// first use), or, with no usable PTX either, its kernels fail there
	// (CUDA_ERROR_NO_BINARY_FOR_GPU). Attributes: code, device, arch, has.
	WarnNoCodeForDevice = "no-code-for-device"
	// WarnLibrary: pathfinder loaded a library core uses with a warning
	// (pathfinder.Library.Warnings: a dependency from another install,
	// NVRTC's builtins missing). Attributes: library, path.
	WarnLibrary = "library"
	// WarnCompatibility: pathfinder's guard rails (pathfinder.Check): a
	// library newer than the driver supports, CUDA 12 and 13 libraries
	// in one process, CUDA_PATH and CUDA_HOME apart. Each once per
	// process. Attributes: check, libraries.
	WarnCompatibility = "compatibility"
	// WarnBadSetting: an environment variable core reads has a value it
	// does not understand, and the default is used instead
	// (CUDAGO_CACHE_MAX, CUDAGO_PREFAULT). Once per value. Attribute:
	// variable.
	WarnBadSetting = "bad-setting"
	// WarnUnreportedError: an error no call could return (a finalizer
	// freeing a forgotten resource). It is also kept for the context's
	// next Sync, which returns it. Attribute: err.
	WarnUnreportedError = "unreported-error"
)

var (
	logger        atomic.Pointer[slog.Logger]
	defaultLogger = sync.OnceValue(func() *slog.Logger { return envLogger(os.Getenv("CUDAGO_LOG")) })
)

// SetLogger makes core report its warnings to l; nil restores the default
// (silent, or stderr as CUDAGO_LOG asks). It is safe to call from any
// goroutine, at any time; but a condition found once per process (the
// libraries' guard rails, at the driver's first use) is reported to the
// logger of that moment only, so set it before the first call into core.
func SetLogger(l *slog.Logger) { logger.Store(l) }

// Logger returns the logger core reports its warnings to.
func Logger() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return defaultLogger()
}

// envLogger is the default logger for a value of CUDAGO_LOG.
func envLogger(v string) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off", "none":
		return slog.New(slog.DiscardHandler)
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		l := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		l.Warn("CUDAGO_LOG is not one of off, error, warn, info, debug: printing warnings", "value", v)
		return l
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// warn reports a warning of the given kind.
func warn(kind, msg string, args ...any) {
	l := Logger()
	ctx := context.Background()
	if !l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	l.Log(ctx, slog.LevelWarn, msg, append([]any{slog.String("kind", kind)}, args...)...)
}

// noted are the libraries whose warnings were reported, and the guard
// rails' warnings (by text), each once per process.
var (
	notedLibs   sync.Map // pathfinder.Lib -> struct{}
	notedChecks sync.Map // string -> struct{}
)

// noteLibrary reports, once per library, the warnings pathfinder met
// loading l, then what the guard rails say of the libraries loaded so far
// (each warning once). Call it once l is in use.
func noteLibrary(l pathfinder.Lib) {
	if _, done := notedLibs.LoadOrStore(l, struct{}{}); done {
		return
	}
	lib, err := pathfinder.Load(l)
	if err != nil {
		return // whoever needed it got the error
	}
	for _, w := range lib.Warnings {
		warn(WarnLibrary, w, "library", l.String(), "path", lib.Path)
	}
	for _, w := range pathfinder.Check() {
		if _, done := notedChecks.LoadOrStore(w.Text, struct{}{}); done {
			continue
		}
		libs := make([]string, len(w.Libs))
		for i, x := range w.Libs {
			libs[i] = x.String()
		}
		warn(WarnCompatibility, w.Text, "check", w.Kind, "libraries", libs)
	}
}

var linkerFallback sync.Once

// warnLinkerFallback reports, once per process, that the driver links.
func warnLinkerFallback(err error) {
	linkerFallback.Do(func() {
		warn(WarnLinkerFallback, "nvJitLink cannot be loaded: Linker uses the driver's cuLink, which needs a GPU and links no LTO-IR", "err", err)
	})
}

// codeArchs returns the architectures of the cubins and of the PTX in a
// cubin or fat binary (LTO-IR is not loadable and is left out).
func codeArchs(codeType string, code []byte) (cubins, ptx []Arch) {
	add := func(list *[]Arch, name string) {
		if a, err := ParseArch(name); err == nil {
			*list = append(*list, a)
		}
	}
	switch codeType {
	case CodeCubin:
		if s, err := cubinArch(code); err == nil {
			add(&cubins, s)
		}
	case CodeFatbin:
		f, err := fatbin.Parse(code)
		if err != nil {
			return nil, nil
		}
		for _, e := range f.Entries {
			switch {
			case e.Kind.IsELF():
				add(&cubins, e.ArchName())
			case e.Kind.IsPTX():
				add(&ptx, e.ArchName())
			}
		}
	}
	return cubins, ptx
}

// runsOn says how code of the given architectures runs on a device of
// compute capability cc (10*major + minor): "cubin" when a cubin does (same
// major, no newer minor; arch-specific "a" code only on its own), "ptx"
// when the driver can compile a PTX for it (no newer; "a" only on its own,
// "f" within its major), "" when nothing can.
func runsOn(cubins, ptx []Arch, cc int) string {
	for _, a := range cubins {
		if a.Number/10 == cc/10 && a.Number <= cc && (a.Suffix != "a" || a.Number == cc) {
			return "cubin"
		}
	}
	for _, a := range ptx {
		if a.Number <= cc && (a.Suffix != "a" || a.Number == cc) && (a.Suffix != "f" || a.Number/10 == cc/10) {
			return "ptx"
		}
	}
	return ""
}

// warnEnabled reports whether warnings are logged at all, to skip the work
// of finding one when they are not.
func warnEnabled() bool { return Logger().Enabled(context.Background(), slog.LevelWarn) }

// warnArchs reports, for each device of the process on which code of
// the given architectures has no cubin, whether the driver will compile
// its PTX or the kernels cannot run there.
func warnArchs(name string, cubins, ptx []Arch, devs []*Device) {
	if len(cubins) == 0 {
		return // PTX alone is meant to be compiled by the driver
	}
	has := make([]string, 0, len(cubins)+len(ptx))
	for _, a := range cubins {
		has = append(has, a.SM())
	}
	for _, a := range ptx {
		has = append(has, a.Compute())
	}
	for _, d := range devs {
		major, minor := d.ComputeCapability()
		switch runsOn(cubins, ptx, 10*major+minor) {
		case "ptx":
			warn(WarnNoCodeForDevice, fmt.Sprintf("%s has no cubin for %s: the driver compiles its PTX for it when a kernel is first used there (a slower first launch)", name, d), "code", name, "device", d.Ordinal(), "arch", d.Arch(), "has", has)
		case "":
			warn(WarnNoCodeForDevice, fmt.Sprintf("%s has neither a cubin nor PTX for %s: its kernels fail there with CUDA_ERROR_NO_BINARY_FOR_GPU; compile it for sm_%d%d (or add PTX)", name, d, major, minor), "code", name, "device", d.Ordinal(), "arch", d.Arch(), "has", has)
		}
	}
}
