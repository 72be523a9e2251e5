package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/pathfinder"
)

// recorder is a slog.Handler that keeps what it is given, as a program
// capturing core's warnings would.
type recorder struct {
	mu   sync.Mutex
	recs []warning
}

// warning is one record: its level, message and attributes.
type warning struct {
	level slog.Level
	msg   string
	attrs map[string]slog.Value
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	w := warning{level: rec.Level, msg: rec.Message, attrs: map[string]slog.Value{}}
	rec.Attrs(func(a slog.Attr) bool {
		w.attrs[a.Key] = a.Value
		return true
	})
	r.mu.Lock()
	r.recs = append(r.recs, w)
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// of returns the warnings of one kind.
func (r *recorder) of(kind string) []warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []warning
	for _, w := range r.recs {
		if w.attrs["kind"].String() == kind {
			out = append(out, w)
		}
	}
	return out
}

// captureWarnings makes core log to a recorder for the rest of the test.
func captureWarnings(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	SetLogger(slog.New(r))
	t.Cleanup(func() { SetLogger(nil) })
	return r
}

// TestLoggerDefault: silent without CUDAGO_LOG; text on stderr at the
// level it names; an unknown value prints warnings and says so; SetLogger
// replaces the logger and nil restores the default.
func TestLoggerDefault(t *testing.T) {
	stderr := func(f func()) string {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stderr
		os.Stderr = w
		f()
		os.Stderr = old
		w.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	ctx := context.Background()
	for _, c := range []struct {
		value       string
		warn, info  bool
		printedSelf string // what creating it prints
	}{
		{"", false, false, ""},
		{"off", false, false, ""},
		{"warn", true, false, ""},
		{"WARNING", true, false, ""},
		{"info", true, true, ""},
		{"debug", true, true, ""},
		{"error", false, false, ""},
		{"loud", true, false, `level=WARN msg="CUDAGO_LOG is not one of off, error, warn, info, debug: printing warnings" value=loud`},
	} {
		var l *slog.Logger
		out := stderr(func() {
			l = envLogger(c.value)
			l.Warn("cache gone", "kind", WarnCacheDisabled, "dir", "/x")
		})
		if l.Enabled(ctx, slog.LevelWarn) != c.warn || l.Enabled(ctx, slog.LevelInfo) != c.info {
			t.Errorf("CUDAGO_LOG=%q: warn %v, info %v; want %v, %v", c.value, l.Enabled(ctx, slog.LevelWarn), l.Enabled(ctx, slog.LevelInfo), c.warn, c.info)
		}
		want := `level=WARN msg="cache gone" kind=cache-disabled dir=/x`
		if got := strings.Contains(out, want); got != c.warn {
			t.Errorf("CUDAGO_LOG=%q: stderr %q, want it to have %q: %v", c.value, out, want, c.warn)
		}
		if c.printedSelf != "" && !strings.Contains(out, c.printedSelf) {
			t.Errorf("CUDAGO_LOG=%q: stderr %q lacks %q", c.value, out, c.printedSelf)
		}
	}

	rec := &recorder{}
	mine := slog.New(rec)
	SetLogger(mine)
	if Logger() != mine {
		t.Error("Logger() is not the one set")
	}
	warn(WarnLinkerFallback, "test", "err", "x")
	SetLogger(nil)
	if Logger() != defaultLogger() {
		t.Error("SetLogger(nil) did not restore the default")
	}
	if w := rec.of(WarnLinkerFallback); len(w) != 1 || w[0].level != slog.LevelWarn || w[0].msg != "test" || w[0].attrs["err"].String() != "x" {
		t.Errorf("recorded %+v", rec.recs)
	}
}

// TestRunsOn: which code runs on which compute capability.
func TestRunsOn(t *testing.T) {
	arch := func(s ...string) []Arch {
		out, err := ParseArchList(s...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		cubins, ptx []string
		cc          int
		want        string
	}{
		{[]string{"sm_80"}, nil, 86, "cubin"},                  // same major, older minor
		{[]string{"sm_86"}, nil, 80, ""},                       // no newer minor
		{[]string{"sm_80"}, []string{"compute_80"}, 90, "ptx"}, // another major: the PTX
		{[]string{"sm_80"}, nil, 90, ""},
		{[]string{"sm_90a"}, nil, 90, "cubin"},
		{[]string{"sm_90a"}, []string{"compute_90a"}, 100, ""}, // arch-specific: only 9.0
		{[]string{"sm_80"}, []string{"compute_100f"}, 103, "ptx"},
		{[]string{"sm_80"}, []string{"compute_100f"}, 120, ""}, // family-specific: 10.x only
		{[]string{"sm_100"}, nil, 103, "cubin"},
		{nil, []string{"compute_120"}, 90, ""}, // PTX newer than the device
	} {
		var cubins, ptx []Arch
		if c.cubins != nil {
			cubins = arch(c.cubins...)
		}
		if c.ptx != nil {
			ptx = arch(c.ptx...)
		}
		if got := runsOn(cubins, ptx, c.cc); got != c.want {
			t.Errorf("runsOn(%v, %v, %d) = %q, want %q", c.cubins, c.ptx, c.cc, got, c.want)
		}
	}
}

// TestWarnArchs: code without a cubin for a device is a warning, saying
// whether the driver compiles its PTX or its kernels fail; PTX alone, and
// code with a cubin for the device, are not.
func TestWarnArchs(t *testing.T) {
	rec := captureWarnings(t)
	h100 := &Device{ordinal: 1, name: "NVIDIA H100 80GB HBM3", major: 9, minor: 0}
	a100 := &Device{ordinal: 0, name: "NVIDIA A100-SXM4-80GB", major: 8, minor: 0}
	sm80, _ := ParseArch("sm_80")
	warnArchs("fatbin k.fatbin", []Arch{sm80}, []Arch{sm80}, []*Device{a100, h100})
	ws := rec.of(WarnNoCodeForDevice)
	if len(ws) != 1 {
		t.Fatalf("warnings %+v, want one (for the H100)", rec.recs)
	}
	w := ws[0]
	if !strings.Contains(w.msg, "fatbin k.fatbin has no cubin for device 1 (NVIDIA H100 80GB HBM3, sm_90): the driver compiles its PTX") ||
		w.attrs["device"].Int64() != 1 || w.attrs["arch"].String() != "90" || w.attrs["code"].String() != "fatbin k.fatbin" ||
		fmt.Sprint(w.attrs["has"].Any()) != "[sm_80 compute_80]" {
		t.Errorf("warning %q %v", w.msg, w.attrs)
	}
	warnArchs("cubin k.cubin", []Arch{sm80}, nil, []*Device{h100})
	if ws := rec.of(WarnNoCodeForDevice); len(ws) != 2 || !strings.Contains(ws[1].msg, "CUDA_ERROR_NO_BINARY_FOR_GPU") ||
		!strings.Contains(ws[1].msg, "compile it for sm_90") {
		t.Errorf("a cubin for another major: %+v", ws)
	}
	warnArchs("ptx k.ptx", nil, []Arch{sm80}, []*Device{h100})
	if n := len(rec.of(WarnNoCodeForDevice)); n != 2 {
		t.Errorf("PTX alone warned (%d warnings)", n)
	}
}

// TestCodeArchs reads the architectures of a cubin and of a fat binary
// built from NVRTC's output (the local install's compiler and nvFatbin).
func TestCodeArchs(t *testing.T) {
	const src = `extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }`
	cubin := mustCompile(t, mustProgram(t, src, "c++", &ProgramOptions{Arch: "sm_80", NoCache: true}), "cubin")
	ptx := mustCompile(t, mustProgram(t, src, "c++", &ProgramOptions{Arch: "compute_75", NoCache: true}), "ptx")
	cubins, ptxs := codeArchs(CodeCubin, cubin.Code())
	if len(cubins) != 1 || cubins[0].SM() != "sm_80" || ptxs != nil {
		t.Errorf("cubin: %v, %v", cubins, ptxs)
	}
	b := newBuilder(t, nil)
	if err := b.AddCubin(cubin.Code(), "sm_80", "k80"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddPTX(ptx.Code(), "compute_75", "k75", ""); err != nil {
		t.Fatal(err)
	}
	fb := try(b.Build()).must(t)
	cubins, ptxs = codeArchs(CodeFatbin, fb.Code())
	if len(cubins) != 1 || cubins[0].SM() != "sm_80" || len(ptxs) != 1 || ptxs[0].Compute() != "compute_75" {
		t.Errorf("fatbin: %v, %v", cubins, ptxs)
	}
	if c, p := codeArchs(CodeFatbin, []byte("not a fatbin")); c != nil || p != nil {
		t.Errorf("garbage: %v, %v", c, p)
	}
}

// TestCacheRootWarning: a refused cache root is reported once, as
// WarnCacheDisabled, with the folder and the reason.
func TestCacheRootWarning(t *testing.T) {
	rec := captureWarnings(t)
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDAGO_CACHE_DIR", open)
	t.Setenv("CUDAGO_CACHE", "")
	for range 2 {
		if activeCache() != nil {
			t.Error("a world-writable cache root was used")
		}
	}
	ws := rec.of(WarnCacheDisabled)
	if len(ws) != 1 || ws[0].attrs["dir"].String() != open || !strings.Contains(ws[0].attrs["err"].String(), "writable by group or others") ||
		!strings.HasPrefix(ws[0].msg, "compile cache disabled: ") {
		t.Errorf("warnings %+v; want one naming %s as writable by group or others", ws, open)
	}
}

// TestWarningsInChild runs the warnings that need the process's own
// libraries in a child: nvJitLink missing (Linker falls back to cuLink,
// said once), a cuDNN missing its sub-libraries (pathfinder's warning,
// reported by noteLibrary) and a CUPTI of a CUDA 14 that no driver
// supports yet beside NVRTC of 12 or 13 (the guard rails, each once).
func TestWarningsInChild(t *testing.T) {
	if os.Getenv("CUDAGO_WARN_CHILD") == "1" {
		warningsChild(t)
		return
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the fake libraries")
	}
	dir := t.TempDir()
	build := func(name, src string) string {
		c := filepath.Join(dir, name+".c")
		if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", p, c).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		return p
	}
	cupti := build("libcupti.so.14", "int cuptiGetVersion(unsigned *v) { *v = 140; return 0; }\n")
	cudnn := build("libcudnn.so.9", "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 90100; }\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWarningsInChild$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGO_WARN_CHILD=1", "CUDAGO_NVJITLINK_PATH="+filepath.Join(dir, "no-nvjitlink"),
		"CUDAGO_CUPTI_PATH="+cupti, "CUDAGO_CUDNN_PATH="+cudnn)
	out, err := cmd.CombinedOutput()
	if _, why, skipped := strings.Cut(string(out), "child skip: "); skipped && err == nil {
		t.Skip(strings.SplitN(why, "\n", 2)[0])
	}
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// childSkip skips a child test and tells its parent why.
func childSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	fmt.Println("child skip: " + why)
	t.Skip(why)
}

func warningsChild(t *testing.T) {
	rec := captureWarnings(t)

	// The driver's library loads even without a GPU (the local install's
	// says CUDA 12.4); NVRTC with it.
	DeviceCount()
	if _, err := pathfinder.Load(pathfinder.NVRTC); err != nil {
		childSkip(t, "no NVRTC: %v", err)
	}
	noteLibrary(pathfinder.NVRTC)
	if drv, err := pathfinder.Load(pathfinder.Driver); err != nil {
		childSkip(t, "no driver library: %v", err)
	} else if _, err := drv.Version(); err != nil {
		childSkip(t, "the driver library does not say its CUDA version: %v", err)
	}

	// nvJitLink cannot be loaded: two Linkers, one warning.
	ptx, err := FromPTX([]byte(".version 8.4\n.target sm_80\n.address_size 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := NewLinker(&LinkerOptions{Arch: "sm_80"}, ptx)
		if err != nil {
			t.Fatal(err)
		}
		if l.Backend() != "cuLink" {
			t.Errorf("Backend() = %s with nvJitLink missing", l.Backend())
		}
	}
	if ws := rec.of(WarnLinkerFallback); len(ws) != 1 || !strings.Contains(ws[0].attrs["err"].String(), "CUDAGO_NVJITLINK_PATH") {
		t.Errorf("linker fallback warnings %+v, want one with pathfinder's error", ws)
	}

	// cuDNN without its sub-libraries: pathfinder's warning, once.
	noteLibrary(pathfinder.CuDNN)
	noteLibrary(pathfinder.CuDNN)
	ws := rec.of(WarnLibrary)
	if len(ws) != 1 || ws[0].attrs["library"].String() != "cudnn" || !strings.Contains(ws[0].msg, "libcudnn_graph.so.9") ||
		!strings.Contains(ws[0].msg, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED") {
		t.Errorf("library warnings %+v", ws)
	}

	// CUPTI of CUDA 14 with NVRTC 12 or 13 and today's drivers: the guard rails.
	noteLibrary(pathfinder.CUPTI)
	noteLibrary(pathfinder.NVVM) // nothing new to say: no repeats
	var checks []string
	for _, w := range rec.of(WarnCompatibility) {
		checks = append(checks, w.attrs["check"].String())
		if libs, ok := w.attrs["libraries"].Any().([]string); !ok || !slices.Contains(libs, "cupti") {
			t.Errorf("compatibility warning without cupti in its libraries: %q %v", w.msg, w.attrs)
		}
	}
	slices.Sort(checks)
	if !slices.Equal(checks, []string{"cuda-mix", "newer-than-driver"}) {
		t.Errorf("compatibility warnings %q, want cuda-mix and newer-than-driver once each", checks)
	}
	if !t.Failed() {
		fmt.Println("child ok")
	}
}

// TestBadSettings: a value of CUDAGO_CACHE_MAX that is no size falls back
// to the default with one warning per value; the words of CUDAGO_PREFAULT
// that mean nothing are named.
func TestBadSettings(t *testing.T) {
	rec := captureWarnings(t)
	t.Setenv("CUDAGO_CACHE_MAX", "lots")
	for range 3 {
		if n := cacheMaxBytes(); n != DefaultCacheMaxBytes {
			t.Errorf("cacheMaxBytes() = %d with CUDAGO_CACHE_MAX=lots, want the default", n)
		}
	}
	t.Setenv("CUDAGO_CACHE_MAX", "64M")
	if n := cacheMaxBytes(); n != 64<<20 {
		t.Errorf("cacheMaxBytes() = %d with 64M", n)
	}
	ws := rec.of(WarnBadSetting)
	if len(ws) != 1 || ws[0].attrs["variable"].String() != "CUDAGO_CACHE_MAX" || ws[0].attrs["value"].String() != "lots" ||
		ws[0].attrs["default"].Int64() != DefaultCacheMaxBytes {
		t.Errorf("warnings %+v, want one for CUDAGO_CACHE_MAX=lots", ws)
	}
	if bad := unknownPrefault("nohuge, turbo,,ahead,off"); !slices.Equal(bad, []string{"turbo"}) {
		t.Errorf("unknownPrefault = %q, want [turbo]", bad)
	}
	if bad := unknownPrefault(""); bad != nil {
		t.Errorf("unknownPrefault(\"\") = %q", bad)
	}
}

// TestNoCodeForDeviceGPU loads, on device 0, a fat binary whose only
// cubin is for an older major (sm_75) with its PTX: the warning says the
// driver compiles the PTX, and the kernel it compiles runs (its result is
// read back). A cubin of that major alone either fails to load with
// CUDA_ERROR_NO_BINARY_FOR_GPU or, where loading is lazy, warns that its
// kernels cannot run there.
func TestNoCodeForDeviceGPU(t *testing.T) {
	dev := requireGPU(t)
	if major, _ := dev.ComputeCapability(); major <= 7 {
		t.Skipf("%v: the test needs a device newer than sm_75", dev)
	}
	rec := captureWarnings(t)
	const src = `extern "C" __global__ void fill(float *x, float v) { x[threadIdx.x] = v + threadIdx.x; }`
	cubin := mustCompile(t, mustProgram(t, src, "c++", &ProgramOptions{Arch: "sm_75", NoCache: true}), "cubin")
	ptx := mustCompile(t, mustProgram(t, src, "c++", &ProgramOptions{Arch: "compute_75", NoCache: true}), "ptx")
	b := newBuilder(t, &FatbinOptions{Name: "old.fatbin"})
	if err := b.AddCubin(cubin.Code(), "sm_75", "old75"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddPTX(ptx.Code(), "compute_75", "old75", ""); err != nil {
		t.Fatal(err)
	}
	fb := try(b.Build()).must(t)
	k := try(fb.Kernel("fill")).must(t)
	var mine []warning
	for _, w := range rec.of(WarnNoCodeForDevice) {
		if w.attrs["device"].Int64() == int64(dev.Ordinal()) {
			mine = append(mine, w)
		}
	}
	if len(mine) != 1 || !strings.Contains(mine[0].msg, "the driver compiles its PTX") || mine[0].attrs["arch"].String() != dev.Arch() {
		t.Errorf("warnings for %v: %+v", dev, mine)
	}
	const n = 64
	buf := try(Alloc[float32](dev, n, nil)).must(t)
	defer buf.Close()
	s := try(dev.NewStream(nil)).must(t)
	defer s.Close()
	if err := Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(n)}, k, buf, float32(2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "x (the PTX compiled by the driver)", readBack[float32](t, buf, n), func(i int) float32 { return 2 + float32(i) })

	// The sm_75 cubin alone.
	before := len(rec.of(WarnNoCodeForDevice))
	only, err := FromCubin(cubin.Code(), WithCodeName("old.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	if _, err := only.Handle(); err != nil {
		if !errors.Is(err, driver.ErrorNoBinaryForGpu) {
			t.Errorf("loading an sm_75 cubin on %v: %v, want CUDA_ERROR_NO_BINARY_FOR_GPU", dev, err)
		}
		return
	}
	ws := rec.of(WarnNoCodeForDevice)[before:]
	if len(ws) == 0 || !strings.Contains(ws[0].msg, "CUDA_ERROR_NO_BINARY_FOR_GPU") {
		t.Errorf("an sm_75 cubin loaded on %v without the warning: %+v", dev, ws)
	}
}
