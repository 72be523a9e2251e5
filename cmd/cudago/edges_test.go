package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cudago/cudago/internal/fsutil"
)

// The edges of the command line: outputs into missing directories and onto
// directories, unwritable outputs, inputs that are not regular files or
// are too large, flag values of the wrong form, architectures NVRTC does
// not have.

// fatbinInput compiles a small fat binary for the commands that read one.
func fatbinInput(t *testing.T, dir string) string {
	t.Helper()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	out := filepath.Join(dir, "saxpy.fatbin")
	mustRun(t, "compile", src, "-arch", "sm_90", "-o", out)
	return out
}

// noTempNames fails if msg names a temporary file of fsutil.WriteAtomic or
// if one was left in dir.
func noTempNames(t *testing.T, msg, dir string) {
	t.Helper()
	if strings.Contains(msg, fsutil.TempPrefix) {
		t.Errorf("the error names a temporary file:\n%s", msg)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

// TestOutputMissingDirectory: like cc -o, an output into a missing
// directory fails, before anything is compiled, naming the path and
// -mkdir, and creates nothing; with -mkdir the directories are made.
func TestOutputMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	fb := fatbinInput(t, dir)
	src := filepath.Join(dir, "saxpy.cu")
	ptx := filepath.Join(dir, "k.ptx")
	mustRun(t, "compile", src, "--ptx", "-arch", "sm_90", "-o", ptx)
	missing := filepath.Join(dir, "no", "such")
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"compile", src, "-arch", "sm_90", "-o", filepath.Join(missing, "x.fatbin")}, filepath.Join(missing, "x.fatbin")},
		{[]string{"compile", src, "--cubin", "-arch", "sm_80,sm_90", "-o", filepath.Join(missing, "k.cubin")}, filepath.Join(missing, "k.sm_80.cubin")},
		{[]string{"build", "-arch", "sm_90", "-o", filepath.Join(missing, "k.fatbin"), src}, filepath.Join(missing, "k.fatbin")},
		{[]string{"link", "-arch", "sm_90", "-o", filepath.Join(missing, "k.cubin"), ptx}, filepath.Join(missing, "k.cubin")},
		{[]string{"fatbin", "-o", filepath.Join(missing, "k.fatbin"), "--ptx", "90:" + ptx}, filepath.Join(missing, "k.fatbin")},
		{[]string{"extract", fb, "-o", filepath.Join(missing, "x")}, missing},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != exitFail || stdout != "" || !strings.Contains(stderr, c.out) || !strings.Contains(stderr, "-mkdir") {
			t.Errorf("cudago %s: exit %d (want 1), stdout %q, stderr:\n%s", strings.Join(c.args, " "), code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
			t.Fatalf("cudago %s created %s without -mkdir", strings.Join(c.args, " "), filepath.Join(dir, "no"))
		}
		with := append([]string{c.args[0], "-mkdir"}, c.args[1:]...)
		mustRun(t, with...)
		if _, err := os.Stat(c.out); err != nil {
			t.Errorf("cudago %s: %v", strings.Join(with, " "), err)
		}
		if err := os.RemoveAll(filepath.Join(dir, "no")); err != nil {
			t.Fatal(err)
		}
	}
	// extract creates the directory it is given when its parent exists.
	x := filepath.Join(dir, "x")
	mustRun(t, "extract", fb, "-o", x)
	if ents, _ := os.ReadDir(x); len(ents) != 2 {
		t.Errorf("extract -o %s wrote %d files, want 2", x, len(ents))
	}
}

// TestOutputIsDirectory: -o naming a directory says so, about the user's
// path, and leaves no temporary file.
func TestOutputIsDirectory(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	adir := filepath.Join(dir, "adir")
	if err := os.Mkdir(adir, 0o755); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(src, "x") // under a file
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compile", src, "-arch", "sm_90", "-o", adir}, "write " + adir + ": is a directory"},
		{[]string{"build", "-arch", "sm_90", "-o", adir, src}, "write " + adir + ": is a directory"},
		{[]string{"compile", src, "-arch", "sm_90", "-o", under}, "write " + under + ": " + src + " is not a directory"},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("cudago %s: exit %d, stderr lacks %q:\n%s", strings.Join(c.args, " "), code, c.want, stderr)
		}
		noTempNames(t, stderr, dir)
	}
	// Written, then replaced by a directory: the atomic write's rename
	// fails; the error still names the output.
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := fsutil.WriteAtomic(out, []byte("x"), 0o644)
	if err == nil || err.Error() != "write "+out+": is a directory" {
		t.Errorf("WriteAtomic over a directory: %v", err)
	}
	noTempNames(t, err.Error(), dir)
}

// TestOutputUnwritable: a directory the output cannot be created in gives
// an error naming the output, not the temporary file.
func TestOutputUnwritable(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "saxpy.cu", saxpySrc)
	ro := filepath.Join(dir, "ro")
	if os.Geteuid() == 0 {
		// Modes do not stop root; sysfs does.
		ro = "/sys"
		if f, err := os.Create("/sys/cudago-probe"); err == nil {
			f.Close()
			os.Remove("/sys/cudago-probe")
			t.Skip("root can write /sys here")
		}
	} else {
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(ro, "out.fatbin")
	code, _, stderr := runCmd(t, "compile", src, "-arch", "sm_90", "-o", out)
	if code != exitFail || !strings.Contains(stderr, "write "+out+": permission denied") {
		t.Errorf("unwritable output: exit %d, stderr:\n%s", code, stderr)
	}
	noTempNames(t, stderr, ro)
}

// TestOutputDevice: -o /dev/null is written to, as cc writes it, not
// replaced by a regular file.
func TestOutputDevice(t *testing.T) {
	fi, err := os.Stat(os.DevNull)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device", os.DevNull)
	}
	src := writeFile(t, t.TempDir(), "saxpy.cu", saxpySrc)
	mustRun(t, "compile", src, "-arch", "sm_90", "-o", os.DevNull)
	mustRun(t, "build", "-arch", "sm_90", "-o", os.DevNull, src) // and not read back forever
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

// TestInputNotRegular: a directory, a device that never ends and a FIFO
// nobody writes are refused at once, by every command that reads files.
func TestInputNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{dir, "a directory"},
		{fifo, "a named pipe"},
	} {
		for _, args := range [][]string{
			{"ls", in.path},
			{"ls", "-json", in.path},
			{"extract", in.path, "-o", dir},
			{"compile", in.path, "-arch", "sm_90", "-o", filepath.Join(dir, "x.fatbin")},
			{"build", "-arch", "sm_90", "-o", filepath.Join(dir, "x.fatbin"), in.path},
			{"link", "-arch", "sm_90", "--kind", "ptx", in.path, "-o", filepath.Join(dir, "x.cubin")},
			{"fatbin", "-o", filepath.Join(dir, "x.fatbin"), "--ptx", "90:" + in.path},
		} {
			start := time.Now()
			code, _, stderr := runCmd(t, args...)
			want := in.path + ": not a regular file (" + in.kind + ")"
			if code != exitFail || !strings.Contains(stderr, want) {
				t.Errorf("cudago %s: exit %d, stderr lacks %q:\n%s", strings.Join(args, " "), code, want, stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("cudago %s took %v to refuse it", strings.Join(args, " "), d)
			}
		}
	}
}

// TestInputTooLarge: a file over the stated limit is refused before it is
// read (a sparse file: no disk is used).
func TestInputTooLarge(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.fatbin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxInput + 1); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse file of %d bytes: %v", maxInput+1, err)
	}
	f.Close()
	for _, args := range [][]string{
		{"ls", big},
		{"extract", big, "-o", dir},
		{"fatbin", "-o", filepath.Join(dir, "x.fatbin"), "--cubin", "90:" + big},
		{"compile", big, "-arch", "sm_90", "-o", filepath.Join(dir, "x.fatbin")},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != exitFail || !strings.Contains(stderr, big+": 4.0 GiB (4294967297 bytes), larger than the 4 GiB an input may be") {
			t.Errorf("cudago %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	if err := checkInput(big); err == nil {
		t.Error("checkInput accepted a file over the limit")
	}
	if _, usage, _ := runCmd(t, "-h"); !strings.Contains(usage, "at most "+size(maxInput)) {
		t.Errorf("cudago -h does not state the limit, %s:\n%s", size(maxInput), usage)
	}
	if err := os.Truncate(big, maxInput); err != nil {
		t.Fatal(err)
	}
	if err := checkInput(big); err != nil {
		t.Errorf("checkInput refused a file of exactly the limit: %v", err)
	}
}

// TestFlagErrors: a flag parse error names the flag and the form it takes.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"smi", "-watch", "banana"}, []string{`invalid value "banana" for flag -watch`, "a duration such as 500ms, 2s or 1m30s"}},
		{[]string{"smi", "-watch"}, []string{"flag -watch needs a value: -watch DURATION"}},
		{[]string{"smi", "-count", "many"}, []string{`invalid value "many" for flag -count`, "an integer"}},
		{[]string{"smi", "-count", "99999999999999999999999"}, []string{"-count", "value out of range", "an integer"}},
		{[]string{"doctor", "-json=maybe"}, []string{`invalid boolean value "maybe" for -json`, "true or false"}},
		{[]string{"compile", "x.cu", "-o"}, []string{"flag -o needs a value: -o file"}},
		{[]string{"compile", "-arch"}, []string{"flag -arch needs a value: -arch architectures"}},
		{[]string{"compile", "x.cu", "-G=perhaps"}, []string{"-G", "true or false"}},
		{[]string{"link", "-nope"}, []string{"flag provided but not defined: -nope", "the flags are", "-arch", "-kind"}},
		{[]string{"ls", "---x"}, []string{"bad flag syntax: ---x", "-name=value"}},
		{[]string{"fatbin", "-o", "x", "--cubin", "zz:k.cubin"}, []string{`invalid value "zz:k.cubin" for flag -cubin`, "want sm_NN"}},
		{[]string{"fatbin", "-o", "x", "--cubin", "k.cubin"}, []string{"-cubin", "want ARCH:FILE"}},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != exitUsage || stdout != "" {
			t.Errorf("cudago %s: exit %d (want 2), stdout %q", strings.Join(c.args, " "), code, stdout)
		}
		if !strings.HasPrefix(stderr, "cudago "+c.args[0]+": ") {
			t.Errorf("cudago %s: the error does not start with the command:\n%s", strings.Join(c.args, " "), stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("cudago %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), w, stderr)
			}
		}
		if strings.Contains(stderr, "parse error") {
			t.Errorf("cudago %s: says only \"parse error\":\n%s", strings.Join(c.args, " "), stderr)
		}
	}
	// The help still shows the flags' defaults, unwrapped.
	_, help, _ := runCmd(t, "smi", "-h")
	if !strings.Contains(help, "-watch DURATION") || strings.Contains(help, "panic") {
		t.Errorf("smi -h:\n%s", help)
	}
}

// TestInvalidArch: an architecture the loaded NVRTC does not compile for is
// a usage error listing those it does (nvrtcGetSupportedArchs).
func TestInvalidArch(t *testing.T) {
	supported, err := nvrtcArchs()
	if err != nil {
		t.Fatalf("NVRTC's supported architectures: %v", err)
	}
	src := writeFile(t, t.TempDir(), "saxpy.cu", saxpySrc)
	for _, args := range [][]string{
		{"compile", src, "-arch", "sm_20,sm_90"},
		{"build", "-arch", "sm_20", "-o", "x.fatbin", src},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "sm_20: not an architecture NVRTC ") {
			t.Errorf("cudago %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
		for _, n := range supported {
			if sm := "sm_" + strconv.Itoa(n); !strings.Contains(stderr, sm) {
				t.Errorf("cudago %s: the list lacks %s:\n%s", strings.Join(args, " "), sm, stderr)
			}
		}
	}
	if len(supported) == 0 || supported[len(supported)-1] < 90 {
		t.Errorf("NVRTC supports %v, want sm_90 among them", supported)
	}
}
