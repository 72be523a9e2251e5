package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/cudago/cudago/bindings/nvml"
	"github.com/cudago/cudago/pathfinder"
	"github.com/cudago/cudago/system"
)

func init() {
	register(&command{
		name:    "smi",
		args:    "[-watch DURATION] [-count N] [-json]",
		summary: "show each GPU's temperature, power, memory, utilization and clocks, like nvidia-smi",
		help: `
Smi prints one table of the machine's GPUs, as nvidia-smi's summary does:
index, name, temperature, power draw and cap, memory used and total,
GPU and memory utilization, and the SM and memory clocks (current/max),
under the driver's version and the CUDA version it supports. It reads them
through NVML (package system) and never creates a CUDA context, so it can
watch a GPU that another program is using without disturbing it. A value
the GPU does not report shows as N/A.

With -watch it prints the table again every DURATION (such as 1s or 500ms)
until interrupted (or -count tables have been printed): on a terminal it
clears the screen first, otherwise the tables follow one another. With
-json each table is one JSON object on its own line; a value that could not
be read is null and its error is in the GPU's "errors".

Without an NVIDIA driver or GPU it says so on one line and exits 1.`,
		flags: smiFlags,
	})
}

func smiFlags(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) int {
	watch := fs.Duration("watch", 0, "print the table again every `DURATION` until interrupted")
	count := fs.Int("count", 0, "with -watch, stop after `N` tables (0: until interrupted)")
	asJSON := fs.Bool("json", false, "print each table as one JSON object (one line)")
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 1 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) > 0 {
			return usageError(stderr, "smi", "unexpected argument %q", args[0])
		}
		if *watch < 0 || (*watch > 0 && *watch < 10*time.Millisecond) {
			return usageError(stderr, "smi", "-watch %v: want 10ms or more", *watch)
		}
		if *count < 0 || (*count > 0 && *watch == 0) {
			return usageError(stderr, "smi", "-count %d: want a positive count with -watch", *count)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		clearScreen := *watch > 0 && !*asJSON && isTerminal(stdout)
		code := exitOK
		for n := 1; ; n++ {
			snap := smiSnapshot()
			if clearScreen {
				fmt.Fprint(stdout, "\x1b[H\x1b[2J") // cursor home, clear screen
			} else if n > 1 && !*asJSON {
				fmt.Fprintln(stdout)
			}
			code = snap.write(stdout, stderr, *asJSON, *watch > 0)
			if *watch == 0 || n == *count {
				return code
			}
			select {
			case <-ctx.Done():
				return exitOK
			case <-time.After(*watch):
			}
		}
	}
}

// isTerminal reports whether w is a character device (a terminal), where
// -watch may clear the screen.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// smiReport is one table; its JSON form is what -json prints.
type smiReport struct {
	Time          string   `json:"time"`           // RFC 3339, when it was read
	DriverVersion string   `json:"driver_version"` // "550.163.01"
	CUDAVersion   string   `json:"cuda_version"`   // the newest CUDA the driver supports, "12.4"
	GPUs          []smiGPU `json:"gpus"`
	Error         string   `json:"error"` // why there is no table ("" when there is one)
}

type smiGPU struct {
	Index             int               `json:"index"`
	Name              string            `json:"name"`
	UUID              string            `json:"uuid"`
	PCIBusID          string            `json:"pci_bus_id"`
	TemperatureC      *int              `json:"temperature_c"`
	PowerUsageW       *float64          `json:"power_usage_w"`
	PowerLimitW       *float64          `json:"power_limit_w"`
	MemoryUsedBytes   *uint64           `json:"memory_used_bytes"`
	MemoryTotalBytes  *uint64           `json:"memory_total_bytes"`
	UtilizationGPU    *int              `json:"utilization_gpu_percent"`
	UtilizationMemory *int              `json:"utilization_memory_percent"`
	SMClockMHz        *int              `json:"sm_clock_mhz"`
	MaxSMClockMHz     *int              `json:"max_sm_clock_mhz"`
	MemoryClockMHz    *int              `json:"memory_clock_mhz"`
	MaxMemoryClockMHz *int              `json:"max_memory_clock_mhz"`
	Errors            map[string]string `json:"errors"` // by Status field name: why a value is null
}

// value returns &v, or nil when field's query failed.
func value[T any](s system.Status, field string, v T) *T {
	if s.Errs[field] != nil {
		return nil
	}
	return &v
}

func smiSnapshot() *smiReport {
	r := &smiReport{Time: time.Now().Format(time.RFC3339), GPUs: []smiGPU{}}
	devs, err := system.Devices()
	if err != nil {
		r.Error = nvmlProblem(err)
		return r
	}
	if len(devs) == 0 {
		r.Error = "no GPU: the NVIDIA driver is loaded but NVML sees no GPU"
		return r
	}
	r.DriverVersion, _ = system.DriverVersion()
	r.CUDAVersion, _ = system.CUDADriverVersion()
	for _, d := range devs {
		s, err := d.Status()
		if err != nil {
			g := smiGPU{Index: d.Index(), UUID: d.UUID(), Errors: map[string]string{"Status": err.Error()}}
			r.GPUs = append(r.GPUs, g)
			continue
		}
		r.GPUs = append(r.GPUs, gpuRow(s))
	}
	return r
}

// gpuRow is a GPU's row: its values, nil where Status could not read them.
func gpuRow(s system.Status) smiGPU {
	g := smiGPU{Index: s.Index, Name: s.Name, UUID: s.UUID, PCIBusID: s.PCIBusID, Errors: map[string]string{}}
	g.TemperatureC = value(s, "Temperature", s.Temperature)
	g.PowerUsageW = value(s, "PowerUsage", s.PowerUsage.Watts())
	g.PowerLimitW = value(s, "PowerLimit", s.PowerLimit.Watts())
	g.MemoryUsedBytes = value(s, "Memory", s.Memory.Used)
	g.MemoryTotalBytes = value(s, "Memory", s.Memory.Total)
	g.UtilizationGPU = value(s, "Utilization", s.Utilization.GPU)
	g.UtilizationMemory = value(s, "Utilization", s.Utilization.Memory)
	g.SMClockMHz = value(s, "SMClock", s.SMClock)
	g.MaxSMClockMHz = value(s, "MaxSMClock", s.MaxSMClock)
	g.MemoryClockMHz = value(s, "MemoryClock", s.MemoryClock)
	g.MaxMemoryClockMHz = value(s, "MaxMemoryClock", s.MaxMemoryClock)
	for f, e := range s.Errs {
		g.Errors[f] = e.Error()
	}
	return g
}

// nvmlProblem says in one line why NVML gave no answer.
func nvmlProblem(err error) string {
	var nf *pathfinder.NotFoundError
	var ne *nvml.Error
	switch {
	case errors.As(err, &nf):
		return "no GPU: NVML (libnvidia-ml.so.1, part of the NVIDIA driver) was not found; install the driver, or set CUDAGO_NVML_PATH"
	case errors.Is(err, system.ErrDriverNotLoaded) && errors.As(err, &ne):
		return "no GPU: the NVIDIA driver is not loaded (" + ne.Error() + ")"
	}
	return firstLine(err.Error())
}

// write prints the report and returns the exit status: 1 when there is no
// table (the one line saying why goes to stderr, or into the JSON; while
// watching, to stdout, as the table would).
func (r *smiReport) write(stdout, stderr io.Writer, asJSON, watching bool) int {
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return failure(stderr, "smi", err)
		}
		stdout.Write(append(b, '\n'))
		if r.Error != "" {
			return exitFail
		}
		return exitOK
	}
	if r.Error != "" {
		w := stderr
		if watching {
			w = stdout
		}
		fmt.Fprintf(w, "cudago smi: %s\n", r.Error)
		return exitFail
	}
	fmt.Fprintf(stdout, "NVIDIA driver %s, CUDA %s%*s\n", r.DriverVersion, r.CUDAVersion, 52, r.Time)
	const format = "%3s  %-28s %5s %15s %21s %4s %4s %14s %14s\n"
	fmt.Fprintf(stdout, format, "GPU", "Name", "Temp", "Power/Cap", "Memory used/total", "GPU", "Mem", "SM MHz", "Mem MHz")
	for _, g := range r.GPUs {
		name := g.Name
		if len(name) > 28 {
			name = name[:27] + "~"
		}
		fmt.Fprintf(stdout, format, fmt.Sprint(g.Index), name,
			show(g.TemperatureC, "%dC"),
			show(g.PowerUsageW, "%.0fW")+" / "+show(g.PowerLimitW, "%.0fW"),
			show(mib(g.MemoryUsedBytes), "%dMiB")+" / "+show(mib(g.MemoryTotalBytes), "%dMiB"),
			show(g.UtilizationGPU, "%d%%"), show(g.UtilizationMemory, "%d%%"),
			show(g.SMClockMHz, "%d")+"/"+show(g.MaxSMClockMHz, "%d"),
			show(g.MemoryClockMHz, "%d")+"/"+show(g.MaxMemoryClockMHz, "%d"))
		if e, ok := g.Errors["Status"]; ok {
			fmt.Fprintf(stdout, "     %s\n", e)
		}
	}
	return exitOK
}

// show formats *v, or "N/A" for nil, as nvidia-smi writes a value the GPU
// does not report.
func show[T any](v *T, format string) string {
	if v == nil {
		return "N/A"
	}
	return fmt.Sprintf(format, *v)
}

func mib(b *uint64) *uint64 {
	if b == nil {
		return nil
	}
	m := *b >> 20
	return &m
}

// nvmlSection is doctor's view through NVML: the driver, and per GPU its
// name, UUID and memory, without a CUDA context.
func nvmlSection() nvmlReport {
	r := nvmlReport{GPUs: []nvmlGPUReport{}}
	devs, err := system.Devices()
	if err != nil {
		r.Error = nvmlProblem(err)
		return r
	}
	r.Initialized = true
	r.DriverVersion, _ = system.DriverVersion()
	r.CUDAVersion, _ = system.CUDADriverVersion()
	if b, err := system.DriverBranch(); err == nil {
		r.DriverBranch = b
	}
	for _, d := range devs {
		g := nvmlGPUReport{Index: d.Index(), UUID: d.UUID(), Errors: []string{}}
		var err error
		if g.Name, err = d.Name(); err != nil {
			g.Errors = append(g.Errors, firstLine(err.Error()))
		}
		if g.PCIBusID, err = d.PCIBusID(); err != nil {
			g.Errors = append(g.Errors, firstLine(err.Error()))
		}
		if m, err := d.MemoryInfo(); err != nil {
			g.Errors = append(g.Errors, firstLine(err.Error()))
		} else {
			g.MemoryTotalBytes, g.MemoryUsedBytes = m.Total, m.Used
		}
		r.GPUs = append(r.GPUs, g)
	}
	return r
}

type nvmlReport struct {
	Initialized   bool            `json:"initialized"`    // nvmlInit succeeded
	DriverVersion string          `json:"driver_version"` // "550.163.01"
	DriverBranch  string          `json:"driver_branch"`  // "" where NVML has no branch query (before 560)
	CUDAVersion   string          `json:"cuda_version"`   // nvmlSystemGetCudaDriverVersion: "12.4"
	GPUs          []nvmlGPUReport `json:"gpus"`
	Error         string          `json:"error"` // why NVML gave nothing, e.g. "no GPU: the NVIDIA driver is not loaded (...)"
}

type nvmlGPUReport struct {
	Index            int      `json:"index"` // NVML's, by PCI bus id
	Name             string   `json:"name"`
	UUID             string   `json:"uuid"`
	PCIBusID         string   `json:"pci_bus_id"`
	MemoryTotalBytes uint64   `json:"memory_total_bytes"` // on the board: more than cuDeviceTotalMem
	MemoryUsedBytes  uint64   `json:"memory_used_bytes"`
	Errors           []string `json:"errors"`
}

func (r nvmlReport) writeText(w io.Writer) {
	fmt.Fprint(w, "\nNVML (no CUDA context)\n")
	if r.Error != "" {
		fmt.Fprintf(w, "  %s\n", r.Error)
		return
	}
	branch := ""
	if r.DriverBranch != "" {
		branch = ", branch " + r.DriverBranch
	}
	fmt.Fprintf(w, "  driver %s%s, supports CUDA %s\n", r.DriverVersion, branch, r.CUDAVersion)
	for _, g := range r.GPUs {
		fmt.Fprintf(w, "  %d: %s  %s  %s  memory %d/%d MiB used\n", g.Index, g.Name, g.UUID, g.PCIBusID, g.MemoryUsedBytes>>20, g.MemoryTotalBytes>>20)
		for _, e := range g.Errors {
			fmt.Fprintf(w, "     error: %s\n", e)
		}
	}
}
