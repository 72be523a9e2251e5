// Command cudago is the command-line face of cudago: it compiles, links,
// packs, inspects and extracts CUDA code with the run-time libraries only
// (NVRTC, nvJitLink, nvFatbin), without nvcc, fatbinary or cuobjdump.
//
// Usage:
//
//	cudago <command> [flags] [arguments]
//	cudago help [command]
//	cudago <command> -h
//
// Commands:
//
//	doctor   report the CUDA libraries found, the driver's CUDA version and the GPUs
//	smi      show each GPU's temperature, power, memory, utilization and clocks, like nvidia-smi
//	compile  compile .cu files with NVRTC for several architectures (in parallel)
//	link     link LTO-IR, PTX, cubins, fatbins and objects with nvJitLink
//	fatbin   pack cubins, PTX and LTO-IR into a fat binary with nvFatbin
//	ls       list the entries of a fatbin or of a host ELF file holding fatbins
//	extract  write those entries out, with cuobjdump's file names
//	build    compile .cu files into a fatbin for //go:embed (for go generate)
//
// Each command lives in its own file and registers itself in the command
// table; "cudago help <command>" prints its flags.
//
// Exit status: 0 when the command worked, 1 when it failed, 2 for a usage
// error (unknown command, bad flag, unexpected argument). Errors go to
// standard error. A bad flag value says the form the flag takes.
//
// Files: inputs must be regular files of at most 4 GiB (they are read into
// memory); a directory, a device such as /dev/zero or a FIFO is refused
// before anything is read. Outputs are written as cc -o writes them: into
// a directory that must exist (-mkdir creates missing ones), never onto a
// directory, and atomically (a temporary file renamed over the output, so
// a failed write leaves the old file whole); a device such as /dev/null is
// written to. Errors name the paths given, never a temporary file.
//
// # cudago doctor
//
//	cudago doctor [-json] [-require-gpu]
//
// doctor loads every library pathfinder knows, 20 (the driver libcuda, NVML,
// NVRTC, nvJitLink, nvFatbin, NVVM, cuFile, the CUDA runtime, cuBLASLt,
// cuBLAS, cuFFT, cuRAND, cuSPARSE, cuSOLVER, NVTX 2's libnvToolsExt,
// NCCL, CUPTI, cuDNN, cuTENSOR and cuDLA) and prints, for each, whether it
// was found, its path, where it was found, its version, the CUDA release
// it belongs to and any notes or warnings; for a library found but
// refused by the loader (CANNOT LOAD: built for a newer glibc, damaged) it
// says why and how to fix it, before the places searched; for cuDLA off a
// Tegra system, "n/a" and why; for a missing
// one (NOT FOUND) it prints every place tried and how to install it. Then
// the headers, tools and device libraries pathfinder.Find finds (the
// toolkit's, cuDNN's and NCCL's include directories, nvcc, nvdisasm,
// cuobjdump, libcudadevrt.a, libdevice.10.bc), with their versions; then
// the guard rails' warnings (pathfinder.Check: a library newer than the
// driver supports, CUDA 12 and 13 libraries mixed, CUDA_PATH and CUDA_HOME
// apart). Then it prints the CUDA version the driver supports; NVML's view,
// without a CUDA context (the driver's version and branch, each GPU's name,
// UUID, PCI bus id and memory), or why there is none ("no GPU: the NVIDIA
// driver is not loaded (...)"); and, for each GPU, its name, compute
// capability, total memory, PCI bus id, multiprocessor count and UUID, or
// why there is none (for example "no GPU: cuInit returned
// CUDA_ERROR_NO_DEVICE"). Last, GPUDirect Storage: cuFile's version,
// whether the nvidia-fs kernel module is loaded, the cufile.json cuFile
// reads and its compatibility settings, and the mode (GPUDirect, cuFile's
// compatibility mode, or unavailable), from the cuFile driver itself when
// there is a GPU; and, for the current and the temporary folder, whether
// the udev database has the record of the block device under them that
// cuFile reads to register a file, and where it has not, the fix: the
// record's file, /run/udev/data/b<major>:<minor> with that device's
// numbers, and its two lines, E:ID_FS_USAGE=filesystem and
// E:ID_FS_TYPE=<the file system's type>.
//
// doctor exits 0 whenever the report could be produced, even when libraries
// or GPUs are missing: reporting is its job. With -require-gpu it exits 1
// when no GPU is usable.
//
// # doctor -json
//
// With -json, doctor prints one JSON object. Field names are stable; every
// field is always present (strings may be "", lists are [] when empty):
//
//	{
//	  "schema": 1,                       // bumped on incompatible changes
//	  "go": "go1.26.8", "os": "linux", "arch": "amd64",
//	  "libraries": [{                    // fixed order: pathfinder.Libs(): cuda, nvidia-ml, nvrtc, nvJitLink, nvfatbin,
//	                                     // nvvm, cufile, cudart, cublasLt, cublas, cufft, curand, cusparse,
//	                                     // cusolver, nvToolsExt, nccl, cupti, cudnn, cutensor, cudla
//	    "name": "nvrtc",                 // pathfinder.Lib
//	    "description": "runtime compiler (NVRTC)",
//	    "env_var": "CUDAGO_NVRTC_PATH",  // override variable
//	    "sonames": ["libnvrtc.so.13", "libnvrtc.so.12"],
//	    "found": true,                   // the library loaded
//	    "ok": true,                      // found and its checks passed
//	    "path": "/.../libnvrtc.so.12",   // file loaded ("" when missing)
//	    "soname": "libnvrtc.so.12",
//	    "found_by": "local install",     // pathfinder.Library.Found
//	    "version": "12.4",               // the library's own version ("" if unknown)
//	    "version_error": "",
//	    "check_error": "",               // a failed functional check (NVRTC compiling a kernel)
//	    "notes": ["loaded .../libnvrtc-builtins.so.12.4", "compiles a test kernel"],
//	    "error": "",                     // why it did not load (pathfinder's full message)
//	    "tried": [{"where": "CUDA_PATH", "path": "", "error": "not set"}],
//	    "cause": "",                     // a file found but refused by the loader, and why:
//	                                     // ".../libnccl.so.2 (local install) needs glibc 2.38 or newer (GLIBC_2.38), ..."
//	    "fix": "",                       // how to fix a missing or refused library (may span lines)
//	    "cuda": "12.4",                  // the CUDA release it belongs to (pathfinder.Library.CUDA): "12.4",
//	                                     // "12.x" when only the major is known, "" when it tells none
//	    "unavailable": ""                // why it cannot exist on this machine (cuDLA off Tegra); "" otherwise
//	  }],
//	  "files": [{                        // fixed order: pathfinder.Artifacts(): cuda-headers, cudnn-headers,
//	                                     // nccl-headers, nvcc, nvdisasm, cuobjdump, cudadevrt, libdevice
//	    "name": "nvcc", "description": "the CUDA compiler driver (nvcc)",
//	    "env_var": "CUDAGO_NVCC_PATH", "file": "nvcc",
//	    "found": true,
//	    "path": "/.../.cuda/bin/nvcc",   // the file, or for headers their directory
//	    "found_by": "local install",     // pathfinder.Located.Found
//	    "version": "12.4.131",           // headers: the version they declare; tools: what --version prints
//	    "version_error": "",
//	    "error": "", "tried": [], "fix": ""   // as for libraries, when it was not found
//	  }],
//	  "warnings": [{                     // pathfinder.Check, after every library was loaded
//	    "kind": "cuda-mix",              // "newer-than-driver", "cuda-mix" or "cuda-path-home"
//	    "libraries": ["cublas", "cudart"],
//	    "text": "libraries of several CUDA majors are loaded in this process (...): ..."
//	  }],
//	  "driver": {
//	    "loaded": true,                  // libcuda loaded
//	    "cuda_version": "12.4",          // cuDriverGetVersion as major.minor ("" if unknown)
//	    "cuda_version_raw": 12040,       // 1000*major + 10*minor (0 if unknown)
//	    "init_error": "",                // cuInit's error ("" when it succeeded)
//	    "init_code": ""                  // its CUresult name, e.g. "CUDA_ERROR_NO_DEVICE"
//	  },
//	  "nvml": {                          // through NVML (package system), without a CUDA context
//	    "initialized": true,             // nvmlInit succeeded
//	    "driver_version": "550.163.01",
//	    "driver_branch": "",             // "" before driver 560, which has no such query
//	    "cuda_version": "12.4",          // nvmlSystemGetCudaDriverVersion
//	    "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-6d6f2b3a-...",
//	              "pci_bus_id": "00000000:18:00.0", "memory_total_bytes": 85520809984,
//	              "memory_used_bytes": 0, "errors": []}],   // NVML's order (by PCI bus id), its memory on the board
//	    "error": ""                      // why not, e.g. "no GPU: the NVIDIA driver is not loaded (...)"
//	  },
//	  "gpus": [{
//	    "index": 0, "name": "NVIDIA H100 80GB HBM3",
//	    "compute_capability": "9.0", "cc_major": 9, "cc_minor": 0,
//	    "total_memory_bytes": 84929347584,
//	    "pci_bus_id": "0000:18:00.0",
//	    "multiprocessors": 132,
//	    "uuid": "GPU-6d6f2b3a-...",
//	    "errors": []                     // queries about this GPU that failed
//	  }],
//	  "no_gpu_reason": "",               // why "gpus" is empty, e.g. "cuInit returned CUDA_ERROR_NO_DEVICE (...)"
//	  "gds": {                           // GPUDirect Storage (package gds's Check)
//	    "cufile_version": "1.9",         // libcufile's cuFileGetVersion ("" when it did not load)
//	    "cufile_error": "",              // why it did not load
//	    "nvidia_fs": false,              // the nvidia-fs kernel module is loaded
//	    "nvidia_fs_version": "",
//	    "config_path": "/etc/cufile.json", // what cuFile reads: CUFILE_ENV_PATH_JSON or /etc/cufile.json
//	    "config_found": false,
//	    "config_error": "",
//	    "allow_compat_mode": "",         // "true", "false", or "" when neither the file nor
//	    "force_compat_mode": "",         // CUFILE_ALLOW/FORCE_COMPAT_MODE sets it
//	    "mode": "compat",                // "gpudirect", "compat" or "unavailable"
//	    "summary": "compatibility mode (nvidia-fs not loaded): ...",
//	    "driver_opened": false,          // opened (only with a GPU) and asked
//	    "driver_error": "",              // why it did not open
//	    "max_direct_io_size": 0,         // the driver's largest request, bytes (0 unless opened)
//	    "udev": [{                       // the udev record cuFile reads to register a file, for the
//	      "dir": "/tmp",                 // current and the temporary folder (one entry per device)
//	      "device": "254:0",             // the block device under its file system ("" for tmpfs, overlay...)
//	      "fs_type": "ext4", "source": "/dev/vda",
//	      "record": "/run/udev/data/b254:0",
//	      "ok": false,                   // the record is there with E:ID_FS_USAGE= and E:ID_FS_TYPE=
//	      "problem": "cuFile reads the volume of /tmp, on ext4 (/dev/vda), from udev's record of ...",
//	      "fix": "write /run/udev/data/b254:0 with the two lines udev writes, E:ID_FS_USAGE=filesystem and ..."
//	    }]
//	  }
//	}
//
// # cudago smi
//
//	cudago smi [-watch DURATION] [-count N] [-json]
//
// smi prints nvidia-smi's summary table through NVML (package system),
// without a CUDA context: per GPU its index, name, temperature, power
// draw/cap, memory used/total, GPU and memory utilization, and SM and
// memory clocks (current/max), N/A where the GPU does not report a value.
// -watch reprints it every DURATION (clearing the screen only on a
// terminal). With -json each table is one line:
//
//	{"time": "2026-01-02T03:04:05Z", "driver_version": "550.163.01", "cuda_version": "12.4",
//	 "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...", "pci_bus_id": "00000000:18:00.0",
//	           "temperature_c": 34, "power_usage_w": 70.1, "power_limit_w": 700,
//	           "memory_used_bytes": 1048576, "memory_total_bytes": 85520809984,
//	           "utilization_gpu_percent": 0, "utilization_memory_percent": 0,
//	           "sm_clock_mhz": 345, "max_sm_clock_mhz": 1980, "memory_clock_mhz": 2619, "max_memory_clock_mhz": 2619,
//	           "errors": {}}],             // a null value's reason, by name ("PowerUsage": "...NOT_SUPPORTED...")
//	 "error": ""}                          // why there is no table; then the exit status is 1
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit statuses.
const (
	exitOK    = 0 // the command worked
	exitFail  = 1 // the command ran and failed
	exitUsage = 2 // the command line was wrong
)

// A command is one cudago subcommand. Each lives in its own file and adds
// itself to the table with register from an init function.
type command struct {
	name    string // as typed: "doctor"
	args    string // synopsis after the name: "[-json] [-require-gpu]"
	summary string // one line for `cudago -h`
	// help is printed after the synopsis by `cudago <name> -h`, before the flags.
	help string
	// flags defines the command's flags on fs and returns the function that
	// runs it with the remaining arguments. It writes its report to stdout,
	// errors to stderr, and returns the exit status.
	flags func(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("cudago: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs cudago with the arguments after the program name and returns the
// exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				return unknown(args[1], stderr)
			}
			commandUsage(c, stdout)
			return exitOK
		}
		usage(stdout)
		return exitOK
	}
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(stderr, "cudago: flag %s before a command; flags follow the command: cudago <command> [flags]\n", name)
		fmt.Fprintln(stderr, "run 'cudago -h' for the list of commands")
		return exitUsage
	}
	c, ok := commands[name]
	if !ok {
		return unknown(name, stderr)
	}
	return c.run(args[1:], stdout, stderr)
}

func unknown(name string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "cudago: unknown command %q\n", name)
	fmt.Fprintln(stderr, "run 'cudago -h' for the list of commands")
	return exitUsage
}

func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("cudago "+c.name, flag.ContinueOnError)
	fs.Usage = func() {} // run prints the usage itself, to the right stream
	return fs
}

// run parses the command's flags and runs it. -h prints the usage on stdout
// and exits 0; a bad flag prints the error and usage on stderr and exits 2.
func (c *command) run(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(c)
	body := c.flags(fs)
	describeForms(fs)
	if err := parseFlags(c.name, fs, args, stderr); err != nil {
		if err == flag.ErrHelp {
			commandUsage(c, stdout)
			return exitOK
		}
		// parseFlags has printed the error.
		fmt.Fprintf(stderr, "usage: cudago %s %s\nrun 'cudago %s -h' for help\n", c.name, c.args, c.name)
		return exitUsage
	}
	rest := fs.Args()
	if used := len(args) - len(rest); used > 0 && args[used-1] == "--" && len(rest) > 0 {
		// Parse took the "--": keep it, so that parseInterspersed does not
		// read the arguments after it as flags.
		rest = append([]string{"--"}, rest...)
	}
	return body(rest, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `cudago drives the CUDA toolchain and driver from Go, loading NVIDIA's
libraries at run time (no CUDA needed to build).

Usage:

	cudago <command> [flags] [arguments]

Commands:

`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "\t%-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'cudago <command> -h' for a command's flags.
Inputs must be regular files of at most 4 GiB; outputs go into existing
directories unless -mkdir is given.
Exit status: 0 ok, 1 failure, 2 usage error.
`)
}

// commandUsage prints c's usage. Its flags' defaults come from a fresh
// flag set, without parsed values or describeForms' wrappers.
func commandUsage(c *command, w io.Writer) {
	fs := newFlagSet(c)
	c.flags(fs)
	fmt.Fprintf(w, "usage: cudago %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.help))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}
