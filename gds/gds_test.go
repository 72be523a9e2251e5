package gds

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudago/cudago/bindings/cufile"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/lib"
	"github.com/cudago/cudago/pathfinder"
)

// fakeMR is memory that never reaches a driver, for Buffers of the
// argument tests.
type fakeMR struct{}

func (fakeMR) Allocate(size int, s *core.Stream) (*core.Buffer, error) {
	return core.NewBuffer(0x10000, size, fakeMR{}, s), nil
}
func (fakeMR) Deallocate(driver.Deviceptr, int, *core.Stream) error { return nil }
func (fakeMR) Device() *core.Device                                 { return nil }
func (fakeMR) DeviceAccessible() bool                               { return true }
func (fakeMR) HostAccessible() bool                                 { return false }

func fakeBuffer(t *testing.T, n int) *core.Buffer {
	t.Helper()
	b, _ := fakeMR{}.Allocate(n, nil)
	t.Cleanup(func() { b.Close() })
	return b
}

// TestLibrary: libcufile loads and answers without a driver or a GPU,
// through the generated calls.
func TestLibrary(t *testing.T) {
	_, v := bindtest.Load(t, pathfinder.CuFile)
	var ver int32
	if err := cuFileGetVersion(0, &ver); err != nil {
		t.Fatalf("cuFileGetVersion: %v", err)
	}
	if ver < 1000 {
		t.Fatalf("cuFileGetVersion = %d, want 1000*major + 10*minor", ver)
	}
	r := Check(false)
	if r.LibraryErr != "" || r.LibraryVersion == "" || !strings.HasPrefix(v, r.LibraryVersion) {
		t.Errorf("Check: library %q (%s), pathfinder says %s", r.LibraryVersion, r.LibraryErr, v)
	}
	if r.Summary == "" {
		t.Error("Check: no summary")
	}
	t.Logf("libcufile %s (cuFileGetVersion %d); %s", v, ver, r.Summary)
}

// TestOpenDriverNoGPU: without a GPU the driver is not opened; the error
// matches driver.ErrorNoDevice, is the same for every later use, and is
// what Open, Driver and Register return.
func TestOpenDriverNoGPU(t *testing.T) {
	if testenv.GPUError() == nil {
		t.Skip("a GPU is here")
	}
	err := OpenDriver()
	if err == nil {
		t.Fatal("OpenDriver without a GPU succeeded")
	}
	const prefix = "gds: no GPU, so the cuFile driver was not opened: "
	if !errors.Is(err, driver.ErrorNoDevice) || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("OpenDriver: %q, want %q and an error matching driver.ErrorNoDevice", err, prefix+"...")
	}
	if again := OpenDriver(); again != err {
		t.Errorf("OpenDriver again: %v, want the same error", again)
	}
	if _, e := Open(filepath.Join(t.TempDir(), "x"), os.O_RDWR|os.O_CREATE, 0o600, nil); e != err {
		t.Errorf("Open: %v, want the driver's error", e)
	}
	if _, e := Driver(); e != err {
		t.Errorf("Driver: %v, want the driver's error", e)
	}
	if e := Register(fakeBuffer(t, 64)); e != err {
		t.Errorf("Register: %v, want the driver's error", e)
	}
	r := Check(true)
	if r.DriverOpened || r.DriverErr != err.Error() || r.Mode != ModeUnknown {
		t.Errorf("Check(true) without a GPU: %+v", r)
	}
	t.Logf("without a GPU: %v", err)
}

// TestArguments: bad arguments are errors, found before any call into
// cuFile (none of these Files has a cuFile handle).
func TestArguments(t *testing.T) {
	buf := fakeBuffer(t, 64)
	readable := &File{fileState: &fileState{name: "r", read: true}}
	writable := &File{fileState: &fileState{name: "w", write: true}}
	closed := &File{fileState: &fileState{name: "c", read: true, write: true, closed: true}}
	var nilFile *File
	stream := new(core.Stream)
	closedBuf := fakeBuffer(t, 64)
	closedBuf.Close()

	for _, c := range []struct {
		name string
		err  error
		want string
		is   error
		arg  string // the *lib.ArgError's Arg; "": no ArgError
	}{
		{"nil File", e2(nilFile.ReadAt(buf, 0)), "gds: ReadAt: nil *File", nil, "f"},
		{"nil File async", ep(nilFile.WriteAtAsync(stream, buf, 0)), "gds: WriteAtAsync: nil *File", nil, "f"},
		{"nil Buffer", e2(readable.ReadAt(nil, 0)), "gds: ReadAt: nil *core.Buffer", nil, "dst"},
		{"nil Stream", ep(readable.ReadAtAsync(nil, buf, 0)), "gds: ReadAtAsync: nil *core.Stream", nil, "s"},
		{"negative offset", e2(readable.ReadAt(buf, -1)), "gds: ReadAt: negative offset -1", nil, "off"},
		{"negative offset async", ep(writable.WriteAtAsync(stream, buf, -4096)), "gds: WriteAtAsync: negative offset -4096", nil, "off"},
		{"past the largest offset", e2(writable.WriteAt(buf, math.MaxInt64-63)), "gds: WriteAt: 64 bytes at offset 9223372036854775744 end past the largest file offset", nil, "off"},
		{"zero File", e2((&File{}).ReadAt(buf, 0)), "gds: ReadAt: file already closed", os.ErrClosed, ""},
		{"closed File", e2(closed.WriteAt(buf, 0)), "gds: WriteAt c: file already closed", os.ErrClosed, ""},
		{"closed File async", ep(closed.ReadAtAsync(stream, buf, 0)), "gds: ReadAtAsync c: file already closed", os.ErrClosed, ""},
		{"read-only", e2(readable.WriteAt(buf, 0)), "gds: WriteAt: r is open read-only", nil, "f"},
		{"write-only", ep(writable.ReadAtAsync(stream, buf, 0)), "gds: ReadAtAsync: w is open write-only", nil, "f"},
		{"closed Buffer", e2(readable.ReadAt(closedBuf, 0)), "gds: ReadAt: dst: " + core.ErrClosed.Error(), core.ErrClosed, ""},
		{"O_APPEND", ep2(Open("x", os.O_WRONLY|os.O_APPEND, 0, nil)), "gds: Open: x: O_APPEND is not supported: WriteAt writes at offsets", nil, "flag"},
		{"Register nil", Register(nil), "gds: Register: nil *core.Buffer", nil, "b"},
		{"Deregister nil", Deregister(nil), "gds: Deregister: nil *core.Buffer", nil, "b"},
		{"Deregister unregistered", Deregister(buf), "gds: Deregister: the 64 bytes at 0x10000 are not registered", nil, "b"},
		{"Deregister closed", Deregister(closedBuf), "gds: Deregister: b: " + core.ErrClosed.Error(), core.ErrClosed, ""},
		{"nil Pending", e2((*Pending)(nil).Wait()), "gds: Pending.Wait: nil *Pending", nil, "p"},
	} {
		if c.err == nil || c.err.Error() != c.want || c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
		var ae *lib.ArgError
		if isArg := errors.As(c.err, &ae); isArg != (c.arg != "") || isArg && (ae.Package != "gds" || ae.Arg != c.arg) {
			t.Errorf("%s: %#v, want a *lib.ArgError about %q: %t", c.name, c.err, c.arg, c.arg != "")
		}
	}

	// A zero-size transfer moves nothing and calls nothing.
	empty := fakeBuffer(t, 0)
	if n, err := readable.ReadAt(empty, 1<<40); n != 0 || err != nil {
		t.Errorf("ReadAt of 0 bytes: %d, %v", n, err)
	}
	if nilFile.Close() != nil || (&File{}).Close() != nil || closed.Close() != nil {
		t.Error("Close of a nil, zero or closed File failed")
	}
	if nilFile.Name() != "" || nilFile.Direct() || (&File{}).Direct() {
		t.Error("a nil or zero File has a name or O_DIRECT")
	}
	if (*Pending)(nil).Done() {
		t.Error("a nil Pending is done")
	}
}

func e2(_ int, err error) error      { return err }
func ep(_ *Pending, err error) error { return err }
func ep2(_ *File, err error) error   { return err }

// TestUnaligned: with GPUDirect, cuFile's stream API refuses unaligned
// transfers on O_DIRECT files, so the asynchronous calls refuse them
// first, before touching the stream; synchronous ones and buffered files
// take any.
func TestUnaligned(t *testing.T) {
	saved := drv.info.Mode
	savedAsync := drv.async
	drv.info.Mode, drv.async = ModeGPUDirect, true
	defer func() { drv.info.Mode, drv.async = saved, savedAsync }()
	direct := &File{fileState: &fileState{name: "d", read: true, write: true, direct: true}}
	stream := new(core.Stream) // never reached
	for _, c := range []struct {
		size int
		off  int64
	}{{4096, 1}, {4095, 0}, {1, 8192}} {
		buf := fakeBuffer(t, c.size)
		_, err := direct.ReadAtAsync(stream, buf, c.off)
		var ae *lib.ArgError
		if !errors.Is(err, ErrUnaligned) || !errors.As(err, &ae) || ae.Arg != "off" || !strings.HasPrefix(err.Error(), "gds: ReadAtAsync: d: ") {
			t.Errorf("ReadAtAsync of %d bytes at %d: %v, want ErrUnaligned", c.size, c.off, err)
		}
		_, err = direct.WriteAtAsync(stream, buf, c.off)
		if !errors.Is(err, ErrUnaligned) {
			t.Errorf("WriteAtAsync of %d bytes at %d: %v, want ErrUnaligned", c.size, c.off, err)
		}
	}
}

// TestResultError: a negative byte count is cuFile's code or an errno.
func TestResultError(t *testing.T) {
	err := resultError("cuFileRead", -5022)
	var ce *cufile.Error
	if !errors.As(err, &ce) || ce.Func != "cuFileRead" || !errors.Is(err, cufile.InvalidValue) {
		t.Errorf("-5022: %#v, want CU_FILE_INVALID_VALUE", err)
	}
	if err := resultError("cuFileWrite", -5); err != syscall.EIO {
		t.Errorf("-5: %v, want EIO", err)
	}
	if err := resultError("cuFileRead", -1); err == nil || err.Error() != "cuFileRead returned -1 without an errno" {
		t.Errorf("-1: %v", err)
	}
}

// TestDriverInfo: the mode and flags from the driver's properties.
func TestDriverInfo(t *testing.T) {
	var gds DriverInfo
	gds.Props.Nvfs.MajorVersion, gds.Props.Nvfs.MinorVersion = 2, 17
	gds.Props.Nvfs.Dcontrolflags = 1<<cufile.AllowCompatMode | 1<<cufile.UsePollMode
	gds.Props.Nvfs.MaxDirectIoSize = 16384
	gds.fill()
	if gds.Mode != ModeGPUDirect || gds.NvidiaFS != "2.17" || !gds.AllowCompat || !gds.PollMode || gds.MaxDirectIOSize != 16<<20 {
		t.Errorf("nvidia-fs 2.17: %+v", gds)
	}
	var compat DriverInfo
	compat.Props.Nvfs.Dcontrolflags = 1 << cufile.AllowCompatMode
	compat.fill()
	if compat.Mode != ModeCompat || compat.NvidiaFS != "" || compat.PollMode {
		t.Errorf("no nvidia-fs, compat allowed: %+v", compat)
	}
	var p2p DriverInfo
	p2p.Props.Nvfs.Dstatusflags = 1 << cufile.NvmeP2PSupported
	p2p.fill()
	if p2p.Mode != ModeGPUDirect {
		t.Errorf("P2PDMA: %+v", p2p)
	}
	var none DriverInfo
	none.fill()
	if none.Mode != ModeUnknown || none.Mode.String() != "unknown" || ModeCompat.String() != "compatibility" || ModeGPUDirect.String() != "GPUDirect" {
		t.Errorf("nothing: %+v", none)
	}
}

// TestConfig: the configuration cuFile will read: the file CUFILE_ENV_PATH_JSON
// names (with comments and trailing commas, as NVIDIA writes it), and the
// variables that override it.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nvidia := write("nvidia.json", `{
    // NOTE : Application can override custom configuration via export CUFILE_ENV_PATH_JSON=<filepath>
    "logging": {
        // "dir": "/home/<xxxx>",
        "level": "ERROR" /* INFO, DEBUG, TRACE */
    },
    "properties": {
        "max_direct_io_size_kb" : 16384,
        "allow_compat_mode": false,
        "rdma_dev_addr_list": [ "http://a//b", "/*not a comment*/", ],
    },
}`)
	env := map[string]string{"CUFILE_ENV_PATH_JSON": nvidia}
	getenv := func(k string) string { return env[k] }
	c := readConfig(getenv)
	if !c.Found || c.Err != "" || c.Path != nvidia || c.AllowCompat != (Setting{true, false, nvidia}) || c.ForceCompat.Set {
		t.Errorf("NVIDIA's style: %+v", c)
	}
	env["CUFILE_ALLOW_COMPAT_MODE"] = "true"
	env["CUFILE_FORCE_COMPAT_MODE"] = "1"
	c = readConfig(getenv)
	if c.AllowCompat != (Setting{true, true, "CUFILE_ALLOW_COMPAT_MODE"}) || c.ForceCompat != (Setting{true, true, "CUFILE_FORCE_COMPAT_MODE"}) {
		t.Errorf("variables override the file: %+v", c)
	}
	env["CUFILE_FORCE_COMPAT_MODE"] = "sometimes"
	c = readConfig(getenv)
	if c.ForceCompat.Set || c.Err != `CUFILE_FORCE_COMPAT_MODE="sometimes" is not a boolean` {
		t.Errorf("a variable that is no boolean: %+v", c)
	}
	env = map[string]string{"CUFILE_ENV_PATH_JSON": write("bad.json", `{"properties": {"allow_compat_mode": "yes"}}`)}
	c = readConfig(getenv)
	if c.AllowCompat.Set || !strings.Contains(c.Err, `properties.allow_compat_mode: "yes" is not a boolean`) {
		t.Errorf("a property that is no boolean: %+v", c)
	}
	env = map[string]string{"CUFILE_ENV_PATH_JSON": write("broken.json", `{"properties": `)}
	if c = readConfig(getenv); !c.Found || c.Err == "" {
		t.Errorf("broken JSON: %+v", c)
	}
	env = map[string]string{"CUFILE_ENV_PATH_JSON": filepath.Join(dir, "none.json")}
	if c = readConfig(getenv); c.Found || c.Err != "" || c.AllowCompat.Set {
		t.Errorf("no file: %+v", c)
	}
	env = map[string]string{}
	if c = readConfig(getenv); c.Path != DefaultConfigPath {
		t.Errorf("no variable: %+v", c)
	}
	if s := (Setting{}).String(); s != "not set (cuFile's default)" {
		t.Errorf("Setting{}.String() = %q", s)
	}
	// The tests' own configuration, from TestMain.
	if c := ReadConfig(); !c.Found || c.Err != "" || !c.AllowCompat.Value {
		t.Errorf("TestMain's configuration: %+v", c)
	}
}

func TestStripJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, // one` + "\n" + `}`:          `{"a": 1 ` + "\n" + `}`,
		`{"a": "x//y", "b": "/*z*/"}`:           `{"a": "x//y", "b": "/*z*/"}`,
		`{"a": [1, 2, ], /* c */ "b": "q\"//"}`: `{"a": [1, 2 ],   "b": "q\"//"}`,
		`{"a": 1 /* unterminated`:               `{"a": 1  `,
		`[1,` + "\n\t" + `]`:                    `[1` + "\n\t" + `]`,
		`{"s": "a, }"}`:                         `{"s": "a, }"}`,
	} {
		if got := string(stripJSON([]byte(in))); got != want {
			t.Errorf("stripJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNvidiaFS: the kernel module, from sysfs or /proc.
func TestNvidiaFS(t *testing.T) {
	mk := func(files map[string]string) string {
		root := t.TempDir()
		for p, s := range files {
			p = filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if s == "/" {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, c := range []struct {
		name    string
		files   map[string]string
		loaded  bool
		version string
	}{
		{"none", map[string]string{"proc/modules": "nvidia_uvm 1 0 - Live\nnvidia 2 0 - Live\n"}, false, ""},
		{"sysfs", map[string]string{"sys/module/nvidia_fs/version": "2.20.5\n"}, true, "2.20.5"},
		{"proc", map[string]string{"proc/modules": "nvidia 2 0 - Live\nnvidia_fs 262144 0 - Live 0x0\n",
			"proc/driver/nvidia-fs/version": "version: 2.17.5\nmod count: 0\n"}, true, "2.17.5"},
		{"no version", map[string]string{"sys/module/nvidia_fs": "/"}, true, ""},
	} {
		loaded, v := nvidiaFS(mk(c.files))
		if loaded != c.loaded || v != c.version {
			t.Errorf("%s: %t %q, want %t %q", c.name, loaded, v, c.loaded, c.version)
		}
	}
	if _, err := os.Stat("/sys/module"); err == nil {
		loaded, v := nvidiaFS("")
		t.Logf("this machine: nvidia-fs loaded %t, version %q", loaded, v)
	}
}

// TestReportMode: the mode Check tells without a driver, from the module
// and the configuration, and the one the driver says.
func TestReportMode(t *testing.T) {
	set := func(v bool) Setting { return Setting{true, v, "X"} }
	open := func(m Mode, nvfs string, allow bool) Report {
		return Report{DriverOpened: true, Driver: DriverInfo{Mode: m, NvidiaFS: nvfs, AllowCompat: allow}}
	}
	for _, c := range []struct {
		r    Report
		mode Mode
		want string
	}{
		{Report{LibraryErr: "x"}, ModeUnknown, "unavailable: libcufile did not load"},
		{Report{DriverErr: "gds: boom"}, ModeUnknown, "unavailable: gds: boom"},
		{Report{}, ModeCompat, "compatibility mode (nvidia-fs not loaded): POSIX reads and writes through host memory (the driver was not opened)"},
		{Report{Config: Config{AllowCompat: set(false)}}, ModeUnknown, "unavailable: nvidia-fs not loaded and allow_compat_mode is false (X)"},
		{Report{Config: Config{ForceCompat: set(true)}, NvidiaFS: true}, ModeCompat, "compatibility mode, forced by force_compat_mode (X) (the driver was not opened)"},
		{Report{NvidiaFS: true, NvidiaFSVersion: "2.17.5"}, ModeGPUDirect, "GPUDirect Storage through nvidia-fs 2.17.5, for the file systems that support it (the driver was not opened)"},
		{open(ModeGPUDirect, "2.17", true), ModeGPUDirect, "GPUDirect Storage through nvidia-fs 2.17, for the file systems that support it; compatibility mode for the others"},
		{open(ModeGPUDirect, "", false), ModeGPUDirect, "GPUDirect Storage through PCIe P2PDMA, for the file systems that support it"},
		{open(ModeCompat, "", true), ModeCompat, "compatibility mode (nvidia-fs not loaded): POSIX reads and writes through host memory"},
		{open(ModeUnknown, "", false), ModeUnknown, "unknown: the driver opened with nvidia-fs not loaded and compatibility mode off"},
	} {
		if m, s := c.r.mode(); m != c.mode || s != c.want {
			t.Errorf("%+v: %v %q, want %v %q", c.r, m, s, c.mode, c.want)
		}
	}
}

// TestAsyncAvailable: the stream API needs the library's functions and a
// configuration file.
func TestAsyncAvailable(t *testing.T) {
	bindtest.Load(t, pathfinder.CuFile)
	if ok, why := asyncAvailable(Config{Path: "/x/cufile.json"}); ok || why != "no cufile.json: cuFile's stream API needs one (/x/cufile.json)" {
		t.Errorf("no file: %t %q", ok, why)
	}
	if ok, why := asyncAvailable(Config{Found: true}); !ok || why != "" {
		t.Errorf("libcufile with a file: %t %q", ok, why)
	}
}

// TestOpenMissing: a missing file is the os error, after the driver.
func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing"), os.O_RDONLY, 0, nil)
	if err == nil {
		t.Fatal("Open of a missing file succeeded")
	}
	if testenv.GPUError() == nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
}
