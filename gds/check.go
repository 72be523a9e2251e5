package gds

import (
	"fmt"
	"os"
	"path/filepath"
)

// Report is what Check finds out about GPUDirect Storage here: what
// cudago doctor prints.
type Report struct {
	// LibraryVersion is libcufile's ("1.9"), asked of the library
	// without opening the driver; LibraryErr says why it is unknown.
	LibraryVersion string
	LibraryErr     string
	// NvidiaFS reports whether the nvidia-fs kernel module is loaded
	// (/sys/module/nvidia_fs), and NvidiaFSVersion its version.
	NvidiaFS        bool
	NvidiaFSVersion string
	// Config is the configuration cuFile reads when the driver opens.
	Config Config
	// Mode is the mode: the open driver's, or, when it was not opened,
	// the one the module and the configuration lead to (ModeUnknown when
	// cuFile cannot work). Summary says it in a line.
	Mode    Mode
	Summary string
	// DriverOpened reports whether Check opened the driver (asked to,
	// with a GPU): Driver is then what it says; DriverErr is why it did
	// not open.
	DriverOpened bool
	Driver       DriverInfo
	DriverErr    string
	// Udev is the udev record cuFile needs (CheckUdev) for files in the
	// current folder and in the temporary folder (one entry where both
	// are on one device): without it cuFile registers no file there.
	Udev []UdevEntry
}

// Check reports on GPUDirect Storage; with openDriver it opens the cuFile
// driver (which needs a GPU) and reports what the driver says, else it
// tells the mode from the nvidia-fs module and the configuration alone.
// It never fails: what it cannot learn is in the report.
func Check(openDriver bool) Report {
	r := Report{Config: ReadConfig()}
	var v int32
	if err := cuFileGetVersion(0, &v); err != nil {
		r.LibraryErr = err.Error()
	} else {
		r.LibraryVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	r.NvidiaFS, r.NvidiaFSVersion = nvidiaFS("")
	if openDriver && r.LibraryErr == "" {
		info, err := Driver()
		if err != nil {
			r.DriverErr = err.Error()
		} else {
			r.DriverOpened, r.Driver = true, info
		}
	}
	r.Mode, r.Summary = r.mode()
	r.Udev = udevReport(udevRoot, ".", os.TempDir())
	return r
}

// udevReport checks the udev records of the given folders, once per
// block device.
func udevReport(root string, dirs ...string) []UdevEntry {
	var out []UdevEntry
	seen := map[string]bool{}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		dev, err := statDev(d)
		if err != nil {
			out = append(out, UdevEntry{Name: d, Problem: err.Error()})
			continue
		}
		key := fmt.Sprint(dev)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, udevEntry(root, d, dev))
	}
	return out
}

func (r *Report) mode() (Mode, string) {
	if r.LibraryErr != "" {
		return ModeUnknown, "unavailable: libcufile did not load"
	}
	if r.DriverErr != "" {
		return ModeUnknown, "unavailable: " + r.DriverErr
	}
	module := "nvidia-fs not loaded"
	if r.NvidiaFS {
		module = "nvidia-fs " + r.NvidiaFSVersion + " loaded"
	}
	if r.DriverOpened {
		switch d := r.Driver; d.Mode {
		case ModeGPUDirect:
			how := "through nvidia-fs " + d.NvidiaFS
			if d.NvidiaFS == "" {
				how = "through PCIe P2PDMA"
			}
			return ModeGPUDirect, "GPUDirect Storage " + how + ", for the file systems that support it" + compatTail(d.AllowCompat)
		case ModeCompat:
			return ModeCompat, "compatibility mode (" + module + "): POSIX reads and writes through host memory"
		}
		return ModeUnknown, "unknown: the driver opened with " + module + " and compatibility mode off"
	}
	const notOpened = " (the driver was not opened)"
	c := r.Config
	switch {
	case c.ForceCompat.Set && c.ForceCompat.Value:
		return ModeCompat, "compatibility mode, forced by force_compat_mode (" + c.ForceCompat.From + ")" + notOpened
	case r.NvidiaFS:
		return ModeGPUDirect, "GPUDirect Storage through nvidia-fs " + r.NvidiaFSVersion + ", for the file systems that support it" + notOpened
	case c.AllowCompat.Set && !c.AllowCompat.Value:
		return ModeUnknown, "unavailable: nvidia-fs not loaded and allow_compat_mode is false (" + c.AllowCompat.From + ")"
	}
	return ModeCompat, "compatibility mode (" + module + "): POSIX reads and writes through host memory" + notOpened
}

func compatTail(allow bool) string {
	if allow {
		return "; compatibility mode for the others"
	}
	return ""
}
