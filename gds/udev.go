package gds

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// cuFile registers a file only after reading its volume's attributes from
// the udev database: the record udev keeps of the block device under the
// file's file system, /run/udev/data/b<major>:<minor>, and in it the
// properties ID_FS_USAGE and ID_FS_TYPE. Where that record is missing (a VM
// or container without udev, a device udev has not probed) it registers no
// file, even in compatibility mode: cufile.log says "udev property not
// found: ID_FS_USAGE vda" and "error getting volume attributes", and
// cuFileHandleRegister fails. Writing the record by hand, with the two
// lines udev writes, is enough (seen on the H100 VM: every gds GPU test
// passed in compatibility mode).

// UdevEntry is what the udev database says about the block device under a
// file's file system: the record cuFile reads to register the file.
type UdevEntry struct {
	// Name is the file or folder asked about.
	Name string
	// Device is the block device's number, "major:minor" in decimal
	// ("254:0"); "" where the file system has none (tmpfs, overlay, NFS,
	// btrfs subvolumes: their device numbers have major 0).
	Device string
	// FSType and Source are the file system's type ("ext4") and what is
	// mounted ("/dev/vda"), from /proc/self/mountinfo; "" when not found.
	FSType, Source string
	// Path is the record's file, /run/udev/data/b<major>:<minor>; "" with
	// no block device.
	Path string
	// OK reports whether the record is there with the two properties
	// cuFile reads (E:ID_FS_USAGE= and E:ID_FS_TYPE= lines).
	OK bool
	// Problem says what is wrong when not OK, and Fix what to do: for a
	// missing record, the file to write and its two lines.
	Problem, Fix string
}

// CheckUdev reports on the udev record cuFile needs to register the named
// file (or files in the named folder).
func CheckUdev(name string) UdevEntry { return checkUdev(udevRoot, name) }

// udevRoot prefixes the paths of /run/udev and /proc that the udev check
// reads: "" but in tests.
var udevRoot = ""

const udevData = "/run/udev/data"

func checkUdev(root, name string) UdevEntry {
	dev, err := statDev(name)
	if err != nil {
		return UdevEntry{Name: name, Problem: err.Error()}
	}
	return udevEntry(root, name, dev)
}

// statDev returns the device number of the file system holding name.
func statDev(name string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return uint64(st.Dev), nil
}

// devMajor and devMinor split a Linux device number (glibc's
// gnu_dev_major and gnu_dev_minor: 12 bits of major and 20 of minor,
// interleaved).
func devMajor(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&0xfffff000 }
func devMinor(dev uint64) uint64 { return dev&0xff | (dev>>12)&0xffffff00 }

// udevEntry is checkUdev for a file of device number dev.
func udevEntry(root, name string, dev uint64) UdevEntry {
	e := UdevEntry{Name: name}
	maj, min := devMajor(dev), devMinor(dev)
	mounts := readMountinfo(root)
	abs, _ := filepath.Abs(name)
	if m, ok := mountOf(mounts, maj, min, abs); ok {
		e.FSType, e.Source = m.fsType, m.source
	}
	what := "its file system"
	if e.FSType != "" {
		what = e.FSType
		if e.Source != "" && e.Source != e.FSType {
			what += " (" + e.Source + ")"
		}
	}
	if maj == 0 {
		e.Problem = fmt.Sprintf("%s is on %s, which has no block device (device %d:%d), so udev has no record of its volume for cuFile to read", name, what, maj, min)
		e.Fix = "put the file on a file system on a block device"
		if c := blockMounts(mounts); len(c) > 0 {
			e.Fix += ", such as " + strings.Join(c, ", ")
		}
		return e
	}
	e.Device = fmt.Sprintf("%d:%d", maj, min)
	e.Path = fmt.Sprintf("%s/b%s", udevData, e.Device)
	fsType := e.FSType
	if fsType == "" {
		fsType = "ext4" // a guess, said so below
	}
	lines := "E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=" + fsType + "\n"
	write := fmt.Sprintf("as root, mkdir -p %s && printf '%s' > %s", udevData, strings.ReplaceAll(lines, "\n", `\n`), e.Path)
	b, err := os.ReadFile(root + e.Path)
	switch {
	case err != nil:
		why := "there is no " + e.Path
		if _, err := os.Stat(root + udevData); err != nil {
			why += " (no udev database: " + udevData + " is missing)"
		}
		e.Problem = fmt.Sprintf("cuFile reads the volume of %s, on %s, from udev's record of block device %s, and %s", name, what, e.Device, why)
		e.Fix = fmt.Sprintf("write %s with the two lines udev writes, E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=%s: %s (in a container, mount the host's /run/udev instead)", e.Path, fsType, write)
	default:
		var missing []string
		for _, p := range []string{"E:ID_FS_USAGE=", "E:ID_FS_TYPE="} {
			if !hasLinePrefix(string(b), p) {
				missing = append(missing, strings.TrimSuffix(p, "="))
			}
		}
		if len(missing) == 0 {
			e.OK = true
			return e
		}
		e.Problem = fmt.Sprintf("cuFile reads the volume of %s, on %s, from udev's record of block device %s, and %s lacks %s", name, what, e.Device, e.Path, strings.Join(missing, " and "))
		e.Fix = fmt.Sprintf("have udev probe the device again (udevadm trigger --action=change /sys/dev/block/%s), or add the lines E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=%s to %s", e.Device, fsType, e.Path)
	}
	if e.FSType == "" {
		e.Fix += " (ext4 is a guess: the file system's type was not found in /proc/self/mountinfo)"
	}
	return e
}

func hasLinePrefix(s, prefix string) bool {
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// mount is a line of /proc/self/mountinfo.
type mount struct {
	major, minor uint64
	point        string
	fsType       string
	source       string
}

// readMountinfo reads the mounts this process sees (nil when it cannot).
func readMountinfo(root string) []mount {
	f, err := os.Open(root + "/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 2 {
			continue
		}
		smaj, smin, ok := strings.Cut(a[2], ":")
		maj, err1 := strconv.ParseUint(smaj, 10, 32)
		min, err2 := strconv.ParseUint(smin, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		ms = append(ms, mount{maj, min, unescapeMount(a[4]), b[0], unescapeMount(b[1])})
	}
	return ms
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out = append(out, byte(v))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

// mountOf finds the mount of device maj:min that holds path: of those of
// the device (bind mounts share one), the deepest mount point above path.
func mountOf(ms []mount, maj, min uint64, path string) (mount, bool) {
	var best mount
	found, bestUnder := false, false
	for _, m := range ms {
		if m.major != maj || m.minor != min {
			continue
		}
		under := path == m.point || m.point == "/" || strings.HasPrefix(path, m.point+"/")
		switch {
		case !found:
			best, found, bestUnder = m, true, under
		case under && (!bestUnder || len(m.point) > len(best.point)):
			best, bestUnder = m, true
		}
	}
	return best, found
}

// blockMounts lists up to three mount points of file systems on block
// devices that cuFile handles (ext4, xfs), for a fix to suggest.
func blockMounts(ms []mount) []string {
	var out []string
	seen := map[[2]uint64]bool{}
	for _, m := range ms {
		k := [2]uint64{m.major, m.minor}
		if m.major == 0 || seen[k] || m.fsType != "ext4" && m.fsType != "xfs" {
			continue
		}
		seen[k] = true
		out = append(out, fmt.Sprintf("%s (%s on %s)", m.point, m.fsType, m.source))
		if len(out) == 3 {
			break
		}
	}
	return out
}

// UdevError is Open's error when cuFile refused a file whose volume it
// cannot look up in the udev database: Entry names the record to write.
// It unwraps to cuFile's error.
type UdevError struct {
	Entry UdevEntry
	Err   error
}

func (e *UdevError) Error() string {
	return fmt.Sprintf("%v: %s; fix: %s", e.Err, e.Entry.Problem, e.Entry.Fix)
}

func (e *UdevError) Unwrap() error { return e.Err }
