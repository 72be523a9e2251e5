package gds

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cudago/cudago/bindings/cufile"
)

// makedev is the kernel's new_encode_dev: how st_dev holds a major and
// minor of up to 12 and 20 bits.
func makedev(maj, min uint64) uint64 {
	return min&0xff | (maj&0xfff)<<8 | (min&^0xff)<<12 | (maj&^0xfff)<<32
}

func TestDevMajorMinor(t *testing.T) {
	for _, c := range []struct{ dev, maj, min uint64 }{
		{65024, 254, 0}, // stat -c %d of a file on /dev/vda (virtio-blk, 254:0)
		{66305, 259, 1}, // nvme0n1p1
		{makedev(8, 17), 8, 17},
		{makedev(253, 300), 253, 300}, // a device-mapper minor over 255
		{makedev(4100, 1<<19+3), 4100, 1<<19 + 3},
		{makedev(0, 27), 0, 27}, // tmpfs
	} {
		if maj, min := devMajor(c.dev), devMinor(c.dev); maj != c.maj || min != c.min {
			t.Errorf("device %#x: %d:%d, want %d:%d", c.dev, maj, min, c.maj, c.min)
		}
	}
}

// fakeRoot makes a folder standing for / with the given mountinfo.
func fakeRoot(t *testing.T, mountinfo string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(root+"/proc/self", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/proc/self/mountinfo", []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

const testMountinfo = `22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 22 252:3 / /data rw,relatime - xfs /dev/mapper/vg-data rw
31 22 0:27 / /tmp rw,nosuid - tmpfs tmpfs rw,size=1024k
32 22 0:40 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw,lowerdir=/a
33 22 254:0 /home /mnt/my\040home rw - ext4 /dev/vda rw
`

func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// TestUdevEntry: the record to write is named with the device's real
// numbers and file system type, from a missing database to a complete
// record, for device-mapper, virtio and device-less file systems.
func TestUdevEntry(t *testing.T) {
	root := fakeRoot(t, testMountinfo)
	dm := makedev(252, 3)

	// No udev database at all.
	e := udevEntry(root, "/data/w.bin", dm)
	if e.OK || e.Device != "252:3" || e.Path != "/run/udev/data/b252:3" || e.FSType != "xfs" || e.Source != "/dev/mapper/vg-data" {
		t.Fatalf("no database: %+v", e)
	}
	contains(t, "Problem", e.Problem, "/data/w.bin", "xfs (/dev/mapper/vg-data)", "252:3", "there is no /run/udev/data/b252:3", "/run/udev/data is missing")
	contains(t, "Fix", e.Fix, "write /run/udev/data/b252:3", "E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=xfs",
		`mkdir -p /run/udev/data && printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=xfs\n' > /run/udev/data/b252:3`)
	if strings.Contains(e.Fix, "guess") {
		t.Errorf("the type was found, but Fix says it guessed: %s", e.Fix)
	}

	// A database without this device's record.
	if err := os.MkdirAll(root+"/run/udev/data", 0o755); err != nil {
		t.Fatal(err)
	}
	e = udevEntry(root, "/data/w.bin", dm)
	if e.OK || strings.Contains(e.Problem, "is missing") {
		t.Errorf("database there, record missing: %+v", e)
	}
	contains(t, "Problem", e.Problem, "there is no /run/udev/data/b252:3")

	// A record without the properties cuFile reads (udev never probed it).
	rec := root + "/run/udev/data/b252:3"
	if err := os.WriteFile(rec, []byte("S:mapper/vg-data\nE:ID_FS_TYPE=xfs\nE:DM_NAME=vg-data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e = udevEntry(root, "/data/w.bin", dm)
	if e.OK {
		t.Errorf("a record without ID_FS_USAGE is OK: %+v", e)
	}
	contains(t, "Problem", e.Problem, "/run/udev/data/b252:3 lacks E:ID_FS_USAGE")
	if strings.Contains(e.Problem, "ID_FS_TYPE") {
		t.Errorf("Problem names ID_FS_TYPE, which is there: %s", e.Problem)
	}
	contains(t, "Fix", e.Fix, "udevadm trigger --action=change /sys/dev/block/252:3", "E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=xfs")

	// The record as udev writes it.
	if err := os.WriteFile(rec, []byte("S:mapper/vg-data\nE:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=xfs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e = udevEntry(root, "/data/w.bin", dm); !e.OK || e.Problem != "" || e.Fix != "" {
		t.Errorf("complete record: %+v", e)
	}

	// virtio, on the root file system.
	e = udevEntry(root, "/home/u/x", makedev(254, 0))
	if e.OK || e.Path != "/run/udev/data/b254:0" || e.FSType != "ext4" {
		t.Errorf("virtio: %+v", e)
	}
	contains(t, "Fix", e.Fix, "E:ID_FS_TYPE=ext4", "> /run/udev/data/b254:0")

	// tmpfs and overlay: no block device, and folders that have one.
	for _, c := range []struct {
		name string
		min  uint64
		fs   string
	}{{"/tmp/x", 27, "tmpfs"}, {"/var/lib/docker/overlay2/x/merged/f", 40, "overlay"}} {
		e = udevEntry(root, c.name, makedev(0, c.min))
		if e.OK || e.Device != "" || e.Path != "" || e.FSType != c.fs {
			t.Errorf("%s: %+v", c.fs, e)
		}
		contains(t, "Problem", e.Problem, c.name, "no block device", fmt.Sprintf("0:%d", c.min))
		contains(t, "Fix", e.Fix, "/ (ext4 on /dev/vda)", "/data (xfs on /dev/mapper/vg-data)")
		if strings.Count(e.Fix, "/dev/vda") != 1 {
			t.Errorf("Fix names /dev/vda's bind mount too: %s", e.Fix)
		}
	}

	// A device mountinfo does not list: the type is a guess, and says so.
	e = udevEntry(root, "/x", makedev(8, 1))
	if e.FSType != "" || e.Path != "/run/udev/data/b8:1" {
		t.Errorf("unlisted device: %+v", e)
	}
	contains(t, "Fix", e.Fix, "E:ID_FS_TYPE=ext4", "ext4 is a guess")
}

func TestMountOf(t *testing.T) {
	ms := readMountinfo(fakeRoot(t, testMountinfo+"garbage line\n34 22 x:y / /z rw - ext4 /dev/z rw\n"))
	if len(ms) != 5 {
		t.Fatalf("%d mounts, want 5: %+v", len(ms), ms)
	}
	for _, c := range []struct {
		path  string
		point string
	}{
		{"/mnt/my home/a", "/mnt/my home"}, // \040 unescaped; the deeper of a bind mount
		{"/mnt/my home", "/mnt/my home"},
		{"/mnt/my homes/a", "/"},
		{"/etc/x", "/"},
	} {
		m, ok := mountOf(ms, 254, 0, c.path)
		if !ok || m.point != c.point {
			t.Errorf("mountOf(254:0, %q) = %q, %t; want %q", c.path, m.point, ok, c.point)
		}
	}
	if _, ok := mountOf(ms, 9, 9, "/"); ok {
		t.Error("mountOf found a device that is not mounted")
	}
}

// TestCheckUdevHere: on this machine, the device CheckUdev names is the
// block device sysfs has under that number, and a missing record is
// reported with its fix.
func TestCheckUdevHere(t *testing.T) {
	dir := t.TempDir()
	u := CheckUdev(dir)
	t.Logf("%+v", u)
	if u.Name != dir || u.FSType == "" {
		t.Fatalf("CheckUdev(%s): %+v", dir, u)
	}
	var sf syscall.Statfs_t
	if err := syscall.Statfs(dir, &sf); err != nil {
		t.Fatal(err)
	}
	if sf.Type == 0xEF53 && !strings.HasPrefix(u.FSType, "ext") { // EXT4_SUPER_MAGIC
		t.Errorf("statfs says ext2/3/4, CheckUdev %q", u.FSType)
	}
	if u.Device == "" {
		if u.OK || !strings.Contains(u.Problem, "no block device") {
			t.Errorf("no block device: %+v", u)
		}
		return
	}
	ev, err := os.ReadFile("/sys/dev/block/" + u.Device + "/uevent")
	if err != nil {
		t.Fatalf("sysfs has no block device %s: %v", u.Device, err)
	}
	maj, min, _ := strings.Cut(u.Device, ":")
	contains(t, "uevent", string(ev), "MAJOR="+maj+"\n", "MINOR="+min+"\n")
	_, err = os.Stat(u.Path)
	switch {
	case err != nil && u.OK:
		t.Errorf("%s is missing, but OK: %+v", u.Path, u)
	case err != nil:
		contains(t, "Fix", u.Fix, "> "+u.Path, "E:ID_FS_USAGE=filesystem", "E:ID_FS_TYPE="+u.FSType)
	}
	if bad := CheckUdev(filepath.Join(dir, "missing")); bad.OK || !strings.Contains(bad.Problem, "no such file") {
		t.Errorf("CheckUdev of a missing file: %+v", bad)
	}
}

// TestRegisterError: cuFile's refusal of a file without a udev record
// becomes a *UdevError naming the record's file and its two lines, and
// still matches cuFile's code; with the record there it is left alone.
func TestRegisterError(t *testing.T) {
	f := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev, err := statDev(f)
	if err != nil {
		t.Fatal(err)
	}
	maj, min := devMajor(dev), devMinor(dev)
	if maj == 0 {
		t.Skipf("the temporary folder has no block device (%d:%d); TestUdevEntry covers that case", maj, min)
	}
	root := fakeRoot(t, fmt.Sprintf("22 1 %d:%d / / rw - xfs /dev/sdq1 rw\n", maj, min))
	udevRoot = root
	defer func() { udevRoot = "" }()
	if !NoUdev() {
		t.Error("NoUdev is false without /run/udev/data")
	}

	refused := &cufile.Error{Func: "cuFileHandleRegister", Code: cufile.HandleNotRegistered}
	err = fmt.Errorf("gds: open %s: %w", f, registerError(f, refused))
	var ue *UdevError
	if !errors.As(err, &ue) || !errors.Is(err, cufile.HandleNotRegistered) {
		t.Fatalf("%v: want a *UdevError matching cufile.HandleNotRegistered", err)
	}
	rec := fmt.Sprintf("/run/udev/data/b%d:%d", maj, min)
	contains(t, "the error", err.Error(), "gds: open "+f+": cufile: cuFileHandleRegister: ", "xfs (/dev/sdq1)",
		"fix: write "+rec+" with the two lines udev writes, E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=xfs",
		`printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=xfs\n' > `+rec)
	if ue.Entry.Path != rec {
		t.Errorf("Entry.Path %q, want %q", ue.Entry.Path, rec)
	}
	t.Logf("%v", err)

	// A wrong open flag is not the udev record's fault.
	if err := registerError(f, &cufile.Error{Func: "cuFileHandleRegister", Code: cufile.InvalidFileOpenFlag}); errors.As(err, &ue) || !strings.Contains(err.Error(), "O_DIRECT") {
		t.Errorf("InvalidFileOpenFlag: %v", err)
	}

	// With the record, cuFile's error is its own.
	if err := os.MkdirAll(root+"/run/udev/data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+rec, []byte("E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=xfs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if NoUdev() {
		t.Error("NoUdev with /run/udev/data there")
	}
	if err := registerError(f, refused); err != refused {
		t.Errorf("with the record: %v, want cuFile's error alone", err)
	}
	unsupported := &cufile.Error{Func: "cuFileHandleRegister", Code: cufile.IoNotSupported}
	if err := registerError(f, unsupported); !errors.Is(err, cufile.IoNotSupported) || !strings.Contains(err.Error(), "compatibility mode") {
		t.Errorf("IoNotSupported: %v", err)
	}
}

// TestUdevReport: Check's udev entries, one per device.
func TestUdevReport(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	r := udevReport("", a, b, filepath.Join(a, "missing"))
	if len(r) != 2 {
		t.Fatalf("two folders of one device and a missing one: %d entries, want 2: %+v", len(r), r)
	}
	if r[0].Name != a || r[1].Problem == "" {
		t.Errorf("entries %+v", r)
	}
	if rep := Check(false); len(rep.Udev) == 0 {
		t.Error("Check reports no udev entry")
	}
}

// TestUdevScript: the GPU harness's scripts/gpu/gds-udev.sh writes, into
// a stand-in for /run/udev/data, the record this package finds complete,
// with the file system's type, once.
func TestUdevScript(t *testing.T) {
	script, err := filepath.Abs("../scripts/gpu/gds-udev.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no script: %v", err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip(err)
	}
	root := fakeRoot(t, string(mi))
	dir := t.TempDir()
	dev, err := statDev(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func() (string, error) {
		cmd := exec.Command("bash", script, dir)
		cmd.Env = append(os.Environ(), "UDEV_DATA_DIR="+root+udevData)
		out, err := cmd.CombinedOutput()
		t.Logf("gds-udev.sh %s:\n%s", dir, out)
		return string(out), err
	}
	out, err := run()
	want := udevEntry("", dir, dev) // for the type and path
	if want.Device == "" {
		if err == nil || !strings.Contains(out, "no block device") {
			t.Errorf("a folder without a block device: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "output", out, "wrote "+root+want.Path)
	u := udevEntry(root, dir, dev)
	if !u.OK {
		t.Fatalf("after the script: %+v", u)
	}
	b, err := os.ReadFile(root + want.Path)
	if err != nil {
		t.Fatal(err)
	}
	rec := "E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=" + want.FSType + "\n"
	if string(b) != rec {
		t.Errorf("record %q, want %q", b, rec)
	}
	if out, err = run(); err != nil {
		t.Fatal(err)
	}
	contains(t, "second run", out, "is there already, unchanged")
	if b2, _ := os.ReadFile(root + want.Path); string(b2) != rec {
		t.Errorf("the second run changed the record: %q", b2)
	}
	ents, _ := os.ReadDir(root + udevData)
	if len(ents) != 1 {
		t.Errorf("%d files in the udev data folder, want 1 (no leftovers)", len(ents))
	}

	// A folder without a block device (tmpfs at /dev/shm, mostly): said
	// so, with a folder that has one; the exit status is 1.
	if d, err := statDev("/dev/shm"); err == nil && devMajor(d) == 0 {
		dir = "/dev/shm"
		out, err := run()
		if err == nil {
			t.Error("the script exited 0 with only a folder that has no block device")
		}
		contains(t, "output", out, "/dev/shm is on", "which has no block device", "Put the files on one of:")
	}
}
