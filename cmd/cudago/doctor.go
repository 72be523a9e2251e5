package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/gds"
	"github.com/cudago/cudago/pathfinder"
)

// libNames are the libraries' names in doctor's help and the README, in
// pathfinder.Libs() order.
var libNames = map[pathfinder.Lib]string{
	pathfinder.Driver:    "libcuda",
	pathfinder.NVML:      "NVML",
	pathfinder.NVRTC:     "NVRTC",
	pathfinder.NVJitLink: "nvJitLink",
	pathfinder.NVFatbin:  "nvFatbin",
	pathfinder.NVVM:      "NVVM",
	pathfinder.CuFile:    "cuFile",
	pathfinder.CUDART:    "the CUDA runtime",
	pathfinder.CuBLASLt:  "cuBLASLt",
	pathfinder.CuBLAS:    "cuBLAS",
	pathfinder.CuFFT:     "cuFFT",
	pathfinder.CuRAND:    "cuRAND",
	pathfinder.CuSPARSE:  "cuSPARSE",
	pathfinder.CuSOLVER:  "cuSOLVER",
	pathfinder.NVTX:      "NVTX 2's libnvToolsExt",
	pathfinder.NCCL:      "NCCL",
	pathfinder.CUPTI:     "CUPTI",
	pathfinder.CuDNN:     "cuDNN",
	pathfinder.CuTENSOR:  "cuTENSOR",
	pathfinder.CuDLA:     "cuDLA",
}

// libList names every library pathfinder knows, "libcuda, NVML, ... and
// NCCL", wrapped for the help text, and says how many there are.
func libList() (text string, n int) {
	libs := pathfinder.Libs()
	names := make([]string, len(libs))
	for i, l := range libs {
		names[i] = libNames[l]
		if names[i] == "" {
			names[i] = l.String()
		}
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(list) {
		if i > 0 && line+1+len(w) > 72 {
			b.WriteString("\n\t")
			line = 0
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		} else {
			b.WriteByte('\t')
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String(), len(names)
}

func doctorHelp() string {
	list, n := libList()
	return fmt.Sprintf(`
Doctor loads the %d CUDA libraries cudago uses:

%s

and prints for each whether it was found, its path, where it was found
(CUDA_PATH, the local install, a pip wheel in VIRTUAL_ENV or python3's
site-packages, CONDA_PREFIX, the system loader...), its version, the CUDA
release it belongs to, the libraries it needs that were loaded with it
(cuDNN's sub-libraries), and any notes or warnings; cuDLA, which exists
only on Tegra, is "n/a" elsewhere.
For a library that was found but would not load (CANNOT LOAD: built for a
newer glibc than this system's, damaged...) it says why and how to fix it
first; for a missing one (NOT FOUND) it lists every place searched and how
to install it, for where the program runs: in a clone of cudago, its
scripts/setup-cuda.sh; elsewhere CUDA_PATH, NVIDIA's pip wheel, conda, or
the .cuda/env.sh of a clone.

Then the headers, tools and device libraries: the toolkit's, cuDNN's and
NCCL's include directories (with the versions they declare), nvcc,
nvdisasm and cuobjdump (with the versions they print), libcudadevrt.a and
libdevice.10.bc: where each was found, or every place searched and how to
install it. Then the guard rails' warnings: a library newer than the
driver supports, CUDA 12 and 13 libraries loaded together, CUDA_PATH and
CUDA_HOME naming different toolkits.
`, n, list)
}

func init() {
	register(&command{
		name:    "doctor",
		args:    "[-json] [-require-gpu]",
		summary: "report the CUDA libraries found, the driver's CUDA version and the GPUs",
		help: doctorHelp() + `
It then prints the CUDA version the driver supports; what NVML reports
without a CUDA context (the driver's version and branch, and each GPU's
name, UUID, PCI bus id and memory), or why it cannot (no NVIDIA driver
loaded); and, through the driver API, each GPU's name, compute capability,
total memory, PCI bus id, multiprocessor count and UUID, or why there is
no GPU (such as cuInit returning CUDA_ERROR_NO_DEVICE).

Last, GPUDirect Storage: cuFile's version, whether the nvidia-fs kernel
module is loaded, the cufile.json cuFile reads (CUFILE_ENV_PATH_JSON or
/etc/cufile.json) and its compatibility settings, and the mode: GPUDirect,
cuFile's compatibility mode (POSIX I/O through host memory), or
unavailable. With a GPU it opens the cuFile driver and reports what the
driver says.

Doctor exits 0 whenever it could produce the report, even if libraries or
GPUs are missing, and 1 with -require-gpu when there is no usable GPU.
The -json field names are documented in 'go doc github.com/cudago/cudago/cmd/cudago'.`,
		flags: doctorFlags,
	})
}

func doctorFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	asJSON := fs.Bool("json", false, "print the report as one JSON object (stable field names)")
	requireGPU := fs.Bool("require-gpu", false, "exit 1 when no GPU is usable")
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 1 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 0 {
			fmt.Fprintf(stderr, "cudago doctor: unexpected argument %q\nusage: cudago doctor [-json] [-require-gpu]\n", args[0])
			return exitUsage
		}
		rep := doctor()
		if *asJSON {
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				fmt.Fprintln(stderr, "cudago doctor:", err)
				return exitFail
			}
			stdout.Write(append(b, '\n'))
		} else {
			rep.writeText(stdout)
		}
		if *requireGPU && len(rep.GPUs) == 0 {
			fmt.Fprintln(stderr, "cudago doctor: no GPU:", rep.NoGPUReason)
			return exitFail
		}
		return exitOK
	}
}

// doctorReport is what doctor prints; its JSON form is documented in the
// package comment and must stay compatible (bump schema otherwise).
type doctorReport struct {
	Schema      int             `json:"schema"`
	Go          string          `json:"go"`
	OS          string          `json:"os"`
	Arch        string          `json:"arch"`
	Libraries   []libraryReport `json:"libraries"`
	Files       []fileReport    `json:"files"`
	Warnings    []warningReport `json:"warnings"`
	Driver      driverReport    `json:"driver"`
	NVML        nvmlReport      `json:"nvml"`
	GPUs        []gpuReport     `json:"gpus"`
	NoGPUReason string          `json:"no_gpu_reason"`
	GDS         gdsReport       `json:"gds"`
}

type libraryReport struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	EnvVar       string          `json:"env_var"`
	Sonames      []string        `json:"sonames"`
	Found        bool            `json:"found"`
	OK           bool            `json:"ok"`
	Path         string          `json:"path"`
	Soname       string          `json:"soname"`
	FoundBy      string          `json:"found_by"`
	Version      string          `json:"version"`
	VersionError string          `json:"version_error"`
	CheckError   string          `json:"check_error"`
	Notes        []string        `json:"notes"`
	Error        string          `json:"error"`
	Tried        []attemptReport `json:"tried"`
	Cause        string          `json:"cause"`
	Fix          string          `json:"fix"`
	CUDA         string          `json:"cuda"`
	Unavailable  string          `json:"unavailable"`
}

// fileReport is one header directory, tool or device library
// (pathfinder.ReportFiles).
type fileReport struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	EnvVar       string          `json:"env_var"`
	File         string          `json:"file"`
	Found        bool            `json:"found"`
	Path         string          `json:"path"`
	FoundBy      string          `json:"found_by"`
	Version      string          `json:"version"`
	VersionError string          `json:"version_error"`
	Error        string          `json:"error"`
	Tried        []attemptReport `json:"tried"`
	Fix          string          `json:"fix"`
}

// warningReport is one of pathfinder.Check's warnings.
type warningReport struct {
	Kind      string   `json:"kind"`
	Libraries []string `json:"libraries"`
	Text      string   `json:"text"`
}

type attemptReport struct {
	Where string `json:"where"`
	Path  string `json:"path"`
	Error string `json:"error"`
}

type driverReport struct {
	Loaded         bool   `json:"loaded"`
	CUDAVersion    string `json:"cuda_version"`
	CUDAVersionRaw int    `json:"cuda_version_raw"`
	InitError      string `json:"init_error"`
	InitCode       string `json:"init_code"`
}

type gpuReport struct {
	Index             int      `json:"index"`
	Name              string   `json:"name"`
	ComputeCapability string   `json:"compute_capability"`
	CCMajor           int      `json:"cc_major"`
	CCMinor           int      `json:"cc_minor"`
	TotalMemoryBytes  uint64   `json:"total_memory_bytes"`
	PCIBusID          string   `json:"pci_bus_id"`
	Multiprocessors   int      `json:"multiprocessors"`
	UUID              string   `json:"uuid"`
	Errors            []string `json:"errors"`
}

// gdsReport is GPUDirect Storage's section: what gds.Check finds.
type gdsReport struct {
	CuFileVersion   string `json:"cufile_version"`
	CuFileError     string `json:"cufile_error"`
	NvidiaFS        bool   `json:"nvidia_fs"`
	NvidiaFSVersion string `json:"nvidia_fs_version"`
	ConfigPath      string `json:"config_path"`
	ConfigFound     bool   `json:"config_found"`
	ConfigError     string `json:"config_error"`
	AllowCompatMode string `json:"allow_compat_mode"`
	ForceCompatMode string `json:"force_compat_mode"`
	Mode            string `json:"mode"`
	Summary         string `json:"summary"`
	DriverOpened    bool   `json:"driver_opened"`
	DriverError     string `json:"driver_error"`
	MaxDirectIOSize int64  `json:"max_direct_io_size"`
	// Udev: the udev record cuFile needs to register files (gds.CheckUdev),
	// for the current and the temporary folder.
	Udev []udevReport `json:"udev"`
}

type udevReport struct {
	Dir     string `json:"dir"`
	Device  string `json:"device"`
	FSType  string `json:"fs_type"`
	Source  string `json:"source"`
	Record  string `json:"record"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

var libDescriptions = map[pathfinder.Lib]string{
	pathfinder.Driver:    "CUDA driver API (libcuda)",
	pathfinder.NVML:      "management library (NVML, libnvidia-ml)",
	pathfinder.NVRTC:     "runtime compiler (NVRTC)",
	pathfinder.NVJitLink: "JIT linker (nvJitLink)",
	pathfinder.NVFatbin:  "fat binary creation (nvFatbin)",
	pathfinder.NVVM:      "NVVM IR compiler (libNVVM)",
	pathfinder.CuFile:    "GPUDirect Storage (cuFile)",
	pathfinder.CUDART:    "CUDA runtime API (cudart)",
	pathfinder.CuBLASLt:  "lightweight BLAS, matmul (cuBLASLt)",
	pathfinder.CuBLAS:    "BLAS (cuBLAS)",
	pathfinder.CuFFT:     "fast Fourier transforms (cuFFT)",
	pathfinder.CuRAND:    "random numbers (cuRAND)",
	pathfinder.CuSPARSE:  "sparse linear algebra (cuSPARSE)",
	pathfinder.CuSOLVER:  "dense and sparse solvers (cuSOLVER)",
	pathfinder.NVTX:      "profiler markers (NVTX, libnvToolsExt)",
	pathfinder.NCCL:      "collective communication between GPUs (NCCL)",
	pathfinder.CUPTI:     "profiling and tracing interface (CUPTI)",
	pathfinder.CuDNN:     "deep neural network primitives (cuDNN 9)",
	pathfinder.CuTENSOR:  "tensor contractions and reductions (cuTENSOR)",
	pathfinder.CuDLA:     "deep learning accelerator of Tegra (cuDLA)",
}

// fileDescriptions describe the artifacts, in pathfinder.Artifacts() order.
var fileDescriptions = map[pathfinder.Artifact]string{
	pathfinder.CUDAHeaders:  "the toolkit's headers (cuda.h, cuda_runtime.h)",
	pathfinder.CuDNNHeaders: "cuDNN's headers (cudnn.h)",
	pathfinder.NCCLHeaders:  "NCCL's headers (nccl.h)",
	pathfinder.NVCC:         "the CUDA compiler driver (nvcc)",
	pathfinder.NVDisasm:     "the SASS disassembler (nvdisasm)",
	pathfinder.CuObjDump:    "the fat binary tool (cuobjdump)",
	pathfinder.Cudadevrt:    "the device runtime for relocatable device code (libcudadevrt.a)",
	pathfinder.Libdevice:    "CUDA's math library as NVVM IR (libdevice.10.bc)",
}

// doctor gathers the report. It never fails: whatever cannot be learnt is
// recorded in the report with the reason.
func doctor() *doctorReport {
	rep := doctorLibsAndGPUs()
	rep.GDS = checkGDS(len(rep.GPUs) > 0)
	return rep
}

// checkGDS reports on GPUDirect Storage, opening the cuFile driver when
// there is a GPU. cuFile logs its errors to cufile.log in the current
// directory unless told otherwise: doctor sends them to a file it removes.
func checkGDS(withGPU bool) gdsReport {
	if withGPU && os.Getenv("CUFILE_LOGFILE_PATH") == "" {
		if dir, err := os.MkdirTemp("", "cudago-doctor-"); err == nil {
			defer os.RemoveAll(dir)
			os.Setenv("CUFILE_LOGFILE_PATH", filepath.Join(dir, "cufile.log"))
			defer os.Unsetenv("CUFILE_LOGFILE_PATH")
		}
	}
	r := gds.Check(withGPU)
	setting := func(s gds.Setting) string {
		if !s.Set {
			return ""
		}
		return strconv.FormatBool(s.Value)
	}
	g := gdsReport{
		CuFileVersion: r.LibraryVersion, CuFileError: r.LibraryErr,
		NvidiaFS: r.NvidiaFS, NvidiaFSVersion: r.NvidiaFSVersion,
		ConfigPath: r.Config.Path, ConfigFound: r.Config.Found, ConfigError: r.Config.Err,
		AllowCompatMode: setting(r.Config.AllowCompat), ForceCompatMode: setting(r.Config.ForceCompat),
		Summary: r.Summary, DriverOpened: r.DriverOpened, DriverError: r.DriverErr,
		MaxDirectIOSize: r.Driver.MaxDirectIOSize,
		Udev:            []udevReport{},
	}
	for _, u := range r.Udev {
		g.Udev = append(g.Udev, udevReport{Dir: u.Name, Device: u.Device, FSType: u.FSType, Source: u.Source,
			Record: u.Path, OK: u.OK, Problem: u.Problem, Fix: u.Fix})
	}
	switch r.Mode {
	case gds.ModeGPUDirect:
		g.Mode = "gpudirect"
	case gds.ModeCompat:
		g.Mode = "compat"
	default:
		g.Mode = "unavailable"
	}
	return g
}

func doctorLibsAndGPUs() *doctorReport {
	rep := &doctorReport{
		Schema:    1,
		Go:        runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Libraries: []libraryReport{},
		Files:     []fileReport{},
		Warnings:  []warningReport{},
		GPUs:      []gpuReport{},
	}
	// Through NVML first: it needs no context, and is there when libcuda is not.
	rep.NVML = nvmlSection()
	driverFound := false
	for _, st := range pathfinder.Report() {
		lr := libraryFromStatus(st)
		if st.Lib == pathfinder.Driver {
			driverFound = lr.Found
		}
		rep.Libraries = append(rep.Libraries, lr)
	}
	for _, st := range pathfinder.ReportFiles() {
		rep.Files = append(rep.Files, fileFromStatus(st))
	}
	// After Report loaded everything: what is loaded together.
	for _, w := range pathfinder.Check() {
		wr := warningReport{Kind: w.Kind, Libraries: []string{}, Text: w.Text}
		for _, l := range w.Libs {
			wr.Libraries = append(wr.Libraries, l.String())
		}
		rep.Warnings = append(rep.Warnings, wr)
	}
	rep.Driver.Loaded = driverFound
	if !driverFound {
		rep.NoGPUReason = "the CUDA driver library (libcuda.so.1) was not found, so no GPU can be used; install the NVIDIA driver or see the cuda entry above"
		return rep
	}
	if v, err := driver.DriverGetVersion(); err == nil && v > 0 {
		rep.Driver.CUDAVersionRaw = int(v)
		rep.Driver.CUDAVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	if err := driver.Init(0); err != nil {
		rep.Driver.InitError = err.Error()
		var code driver.Result
		if errors.As(err, &code) {
			rep.Driver.InitCode = code.String()
			rep.NoGPUReason = "cuInit returned " + code.String()
			if msg, e := driver.GetErrorString(code); e == nil && msg != "" && msg != code.String() {
				rep.NoGPUReason += " (" + msg + ")"
			}
		} else {
			rep.NoGPUReason = "cuInit failed: " + firstLine(err.Error())
		}
		return rep
	}
	n, err := driver.DeviceGetCount()
	if err != nil {
		rep.NoGPUReason = "cuDeviceGetCount failed: " + firstLine(err.Error())
		return rep
	}
	if n == 0 {
		rep.NoGPUReason = "cuInit succeeded but cuDeviceGetCount found 0 devices (check CUDA_VISIBLE_DEVICES)"
		return rep
	}
	for i := range int(n) {
		rep.GPUs = append(rep.GPUs, queryGPU(i))
	}
	return rep
}

func libraryFromStatus(st pathfinder.Status) libraryReport {
	lr := libraryReport{
		Name:        st.Lib.String(),
		Description: libDescriptions[st.Lib],
		EnvVar:      st.Lib.EnvVar(),
		Sonames:     st.Lib.Sonames(),
		Found:       st.Err == nil && st.Library != nil,
		OK:          st.OK(),
		Version:     st.Version,
		Notes:       append([]string{}, st.Notes...),
		Tried:       []attemptReport{},
		CUDA:        st.CUDA,
	}
	if lr.Sonames == nil {
		lr.Sonames = []string{}
	}
	if lib := st.Library; lib != nil {
		lr.Path, lr.Soname, lr.FoundBy = lib.Path, lib.Soname, lib.Found
	}
	if st.VersionErr != nil {
		lr.VersionError = st.VersionErr.Error()
	}
	if st.CheckErr != nil {
		lr.CheckError = st.CheckErr.Error()
	}
	if st.Err != nil {
		lr.Error = st.Err.Error()
		var nf *pathfinder.NotFoundError
		if errors.As(st.Err, &nf) {
			lr.Tried = attemptReports(nf.Tried)
			if nf.Cause != nil {
				lr.Cause = nf.Cause.String()
			}
			lr.Unavailable = nf.Unavailable
			lr.Fix = nf.Fix()
		} else {
			lr.Fix = fmt.Sprintf("set %s to the library file or its directory, or CUDA_PATH to a CUDA toolkit", lr.EnvVar)
		}
	}
	return lr
}

// attemptReports reports where pathfinder looked, for both kinds of
// not-found error; never nil, so that JSON has [] rather than null.
func attemptReports(tried []pathfinder.Attempt) []attemptReport {
	out := []attemptReport{}
	for _, a := range tried {
		out = append(out, attemptReport{Where: a.Where, Path: a.Path, Error: a.Err})
	}
	return out
}

func fileFromStatus(st pathfinder.FileStatus) fileReport {
	fr := fileReport{
		Name:        st.Artifact.String(),
		Description: fileDescriptions[st.Artifact],
		EnvVar:      st.Artifact.EnvVar(),
		File:        st.Artifact.FileName(),
		Found:       st.File != nil,
		Version:     st.Version,
		Tried:       []attemptReport{},
	}
	if st.File != nil {
		fr.Path, fr.FoundBy = st.File.Path, st.File.Found
	}
	if st.VersionErr != nil {
		fr.VersionError = st.VersionErr.Error()
	}
	if st.Err != nil {
		fr.Error = st.Err.Error()
		var nf *pathfinder.ArtifactNotFoundError
		if errors.As(st.Err, &nf) {
			fr.Tried = attemptReports(nf.Tried)
			fr.Fix = nf.Fix()
		}
	}
	return fr
}

// queryGPU asks the driver about device ordinal i; failed queries are
// recorded in Errors and leave their fields zero.
func queryGPU(i int) gpuReport {
	g := gpuReport{Index: i, Errors: []string{}}
	fail := func(what string, err error) {
		g.Errors = append(g.Errors, what+": "+firstLine(err.Error()))
	}
	dev, err := driver.DeviceGet(int32(i))
	if err != nil {
		fail("cuDeviceGet", err)
		return g
	}
	var buf [256]byte
	if err := driver.DeviceGetName(&buf[0], int32(len(buf)), dev); err != nil {
		fail("name", err)
	} else {
		g.Name = cString(buf[:])
	}
	major, err1 := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, dev)
	minor, err2 := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, dev)
	if err := errors.Join(err1, err2); err != nil {
		fail("compute capability", err)
	} else {
		g.CCMajor, g.CCMinor = int(major), int(minor)
		g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	}
	if mem, err := driver.DeviceTotalMem(dev); err != nil {
		fail("total memory", err)
	} else {
		g.TotalMemoryBytes = mem
	}
	buf = [256]byte{}
	if err := driver.DeviceGetPCIBusId(&buf[0], int32(len(buf)), dev); err != nil {
		fail("PCI bus id", err)
	} else {
		g.PCIBusID = cString(buf[:])
	}
	if sms, err := driver.DeviceGetAttribute(driver.DeviceAttributeMultiprocessorCount, dev); err != nil {
		fail("multiprocessor count", err)
	} else {
		g.Multiprocessors = int(sms)
	}
	if u, err := driver.DeviceGetUuid(dev); err != nil {
		fail("UUID", err)
	} else {
		g.UUID = formatUUID(u.Bytes)
	}
	return g
}

// formatUUID writes a device UUID the way nvidia-smi does:
// GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func formatUUID(b [16]byte) string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (r *doctorReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "cudago doctor (%s %s/%s)\n\nLibraries\n", r.Go, r.OS, r.Arch)
	found := 0
	for _, l := range r.Libraries {
		state := "found"
		switch {
		case l.Unavailable != "":
			state = "n/a"
		case l.Cause != "":
			state = "CANNOT LOAD"
		case !l.Found:
			state = "NOT FOUND"
		case !l.OK:
			state = "CHECK FAILED"
		}
		if l.Found {
			found++
		}
		fmt.Fprintf(w, "  %-10s %-10s %s\n", l.Name, state, l.Description)
		if l.Found {
			fmt.Fprintf(w, "    path:     %s\n", l.Path)
			fmt.Fprintf(w, "    found by: %s\n", l.FoundBy)
			if l.Version != "" {
				fmt.Fprintf(w, "    version:  %s\n", l.Version)
			} else {
				fmt.Fprintf(w, "    version:  unknown (%s)\n", l.VersionError)
			}
			if l.CUDA != "" {
				fmt.Fprintf(w, "    CUDA:     %s\n", l.CUDA)
			}
			for _, n := range l.Notes {
				fmt.Fprintf(w, "    note:     %s\n", n)
			}
			if l.CheckError != "" {
				fmt.Fprintf(w, "    check:    %s\n", indent(l.CheckError, "              "))
			}
			continue
		}
		if l.Unavailable != "" {
			fmt.Fprintf(w, "    not on this machine: %s\n", l.Unavailable)
			continue
		}
		if l.Cause != "" {
			// The reason, first: the list of places would bury it.
			fmt.Fprintf(w, "    cause: %s\n", l.Cause)
			fmt.Fprintf(w, "    fix:   %s\n", indent(l.Fix, "           "))
		}
		if len(l.Tried) > 0 {
			fmt.Fprintf(w, "    searched for %s in:\n", strings.Join(l.Sonames, ", "))
			for _, a := range l.Tried {
				fmt.Fprintf(w, "      %s\n", attemptString(a))
			}
		} else {
			fmt.Fprintf(w, "    error: %s\n", indent(l.Error, "      "))
		}
		if l.Cause == "" {
			fmt.Fprintf(w, "    fix: %s\n", indent(l.Fix, "      "))
		}
	}

	fmt.Fprint(w, "\nHeaders, tools and device libraries\n")
	files := 0
	for _, f := range r.Files {
		if !f.Found {
			fmt.Fprintf(w, "  %-13s NOT FOUND  %s\n", f.Name, f.Description)
			fmt.Fprintf(w, "    searched for %s in:\n", f.File)
			for _, a := range f.Tried {
				fmt.Fprintf(w, "      %s\n", attemptString(a))
			}
			fmt.Fprintf(w, "    fix: %s\n", indent(f.Fix, "      "))
			continue
		}
		files++
		fmt.Fprintf(w, "  %-13s found      %s\n", f.Name, f.Description)
		fmt.Fprintf(w, "    path:     %s\n", f.Path)
		fmt.Fprintf(w, "    found by: %s\n", f.FoundBy)
		switch {
		case f.Version != "":
			fmt.Fprintf(w, "    version:  %s\n", f.Version)
		case f.VersionError != "":
			fmt.Fprintf(w, "    version:  unknown (%s)\n", firstLine(f.VersionError))
		}
	}

	fmt.Fprint(w, "\nCompatibility\n")
	if len(r.Warnings) == 0 {
		fmt.Fprint(w, "  no warnings: no library is newer than the driver, and no CUDA majors are mixed\n")
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "  WARNING (%s): %s\n", x.Kind, x.Text)
	}

	fmt.Fprint(w, "\nDriver\n")
	switch {
	case !r.Driver.Loaded:
		fmt.Fprint(w, "  not loaded (libcuda.so.1 not found)\n")
	case r.Driver.CUDAVersion != "":
		fmt.Fprintf(w, "  supports CUDA %s (cuDriverGetVersion: %d)\n", r.Driver.CUDAVersion, r.Driver.CUDAVersionRaw)
	default:
		fmt.Fprint(w, "  CUDA version unknown (cuDriverGetVersion failed)\n")
	}

	r.NVML.writeText(w)

	fmt.Fprintf(w, "\nGPUs (%d)\n", len(r.GPUs))
	if len(r.GPUs) == 0 {
		fmt.Fprintf(w, "  no GPU: %s\n", r.NoGPUReason)
	}
	for _, g := range r.GPUs {
		fmt.Fprintf(w, "  %d: %s\n", g.Index, g.Name)
		fmt.Fprintf(w, "     compute capability: %s\n", g.ComputeCapability)
		fmt.Fprintf(w, "     memory:             %.1f GiB (%d bytes)\n", float64(g.TotalMemoryBytes)/(1<<30), g.TotalMemoryBytes)
		fmt.Fprintf(w, "     PCI bus id:         %s\n", g.PCIBusID)
		fmt.Fprintf(w, "     multiprocessors:    %d\n", g.Multiprocessors)
		fmt.Fprintf(w, "     UUID:               %s\n", g.UUID)
		for _, e := range g.Errors {
			fmt.Fprintf(w, "     error:              %s\n", e)
		}
	}
	g := r.GDS
	fmt.Fprint(w, "\nGPUDirect Storage\n")
	line := func(k, v string) { fmt.Fprintf(w, "  %-19s%s\n", k+":", v) }
	if g.CuFileVersion != "" {
		line("cuFile", g.CuFileVersion)
	} else {
		line("cuFile", "not loaded ("+firstLine(g.CuFileError)+")")
	}
	if g.NvidiaFS {
		line("nvidia-fs", "loaded "+g.NvidiaFSVersion)
	} else {
		line("nvidia-fs", "not loaded")
	}
	cfg := "absent"
	if g.ConfigFound {
		cfg = "read"
	}
	line("config", g.ConfigPath+" ("+cfg+")")
	if g.ConfigError != "" {
		line("config error", g.ConfigError)
	}
	for _, kv := range [][2]string{{"allow_compat_mode", g.AllowCompatMode}, {"force_compat_mode", g.ForceCompatMode}} {
		if kv[1] == "" {
			kv[1] = "not set (cuFile's default)"
		}
		line(kv[0], kv[1])
	}
	line("mode", g.Summary)
	for _, u := range g.Udev {
		if u.OK {
			line("udev", fmt.Sprintf("%s: %s (%s on %s) has the record cuFile reads", u.Dir, u.Record, u.FSType, u.Source))
			continue
		}
		line("udev", u.Dir+": cuFile registers no file here")
		fmt.Fprintf(w, "    %s\n", u.Problem)
		if u.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", u.Fix)
		}
	}
	fmt.Fprintf(w, "\n%d of %d libraries found, %d of %d headers, tools and device libraries, %d compatibility warning(s), %d GPU(s)\n",
		found, len(r.Libraries), files, len(r.Files), len(r.Warnings), len(r.GPUs))
}

func attemptString(a attemptReport) string {
	return pathfinder.Attempt{Path: a.Path, Where: a.Where, Err: a.Error}.String()
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
