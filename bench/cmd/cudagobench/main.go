// Command cudagobench prints one table comparing cudago with the CUDA
// driver API called from C in the same process and run (see package
// bench): launches, memory, graphs and copies, each with its C twin.
//
//	cudagobench [-reps 7] [-run regexp] [-diag] [-cpuprofile file]
//	            [-json results.json] [-svg chart.svg] [-python python.json]
//	            [-libs libraries.json]
//	cudagobench -from results.json [-python python.json] [-libs libraries.json] -svg chart.svg
//	cudagobench [-gemm-logs dir] [-fft-logs dir] -libs-json libraries.json
//
// -json saves the run's results; -svg draws the comparison (cudago, C in
// the same run, and with -python the cuda.core and CuPy figures that
// bench/bench_cuda_python.py --json wrote) as an SVG chart (package
// bench/chart). -from draws the chart of a saved run and runs nothing, so
// it needs no GPU.
//
// -libs adds a section of the math libraries (blas's GEMMs and fft's
// transforms against CuPy and PyTorch) to the chart, from the file that
// -libs-json wrote. -gemm-logs and -fft-logs read the folders that
// scripts/gpu/gemm-bench.sh and scripts/gpu/fft-bench.sh wrote on the GPU
// machine, take the same medians as their tables and save the figures to
// -libs-json (with -from, they also go on the chart); they run nothing.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cudago/cudago/bench"
	"github.com/cudago/cudago/bench/chart"
	"github.com/cudago/cudago/bindings/driver"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cudagobench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reps := fs.Int("reps", 7, "timed repetitions per side (the median is kept)")
	runRE := fs.String("run", "", "only the cases matching this `regexp`")
	diag := fs.Bool("diag", false, "also print the launch-overhead diagnostics")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measurements to `file`")
	jsonOut := fs.String("json", "", "save the results as JSON to `file` (for -from)")
	svgOut := fs.String("svg", "", "draw the comparison as an SVG chart to `file`")
	pyIn := fs.String("python", "", "draw cuda.core's and CuPy's figures from `file` (bench_cuda_python.py --json)")
	from := fs.String("from", "", "draw the chart of the results saved in `file` by -json; runs nothing (needs -svg)")
	libsIn := fs.String("libs", "", "draw the math libraries' figures from `file` (-libs-json)")
	gemmLogs := fs.String("gemm-logs", "", "read the math libraries' GEMM figures from the `dir` of scripts/gpu/gemm-bench.sh; runs nothing")
	fftLogs := fs.String("fft-logs", "", "read the math libraries' FFT figures from the `dir` of scripts/gpu/fft-bench.sh; runs nothing")
	libsOut := fs.String("libs-json", "", "save the figures of -gemm-logs and -fft-logs as JSON to `file` (for -libs)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "cudagobench:", err)
		return 1
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	var py *chart.Python
	if *pyIn != "" { // before any measuring: a bad file costs no GPU time
		var err error
		if py, err = chart.ReadPython(*pyIn); err != nil {
			return fail(err)
		}
	}
	var libs *chart.LibReport
	fromLogs := *gemmLogs != "" || *fftLogs != ""
	switch {
	case fromLogs && *libsIn != "":
		return fail(fmt.Errorf("-libs and -gemm-logs or -fft-logs: give one source of the library figures"))
	case fromLogs && *libsOut == "" && *from == "":
		return fail(fmt.Errorf("-gemm-logs and -fft-logs need -libs-json or -from"))
	case fromLogs && *svgOut != "" && *from == "":
		return fail(fmt.Errorf("-gemm-logs and -fft-logs run nothing: -svg needs -from"))
	case !fromLogs && *libsOut != "":
		return fail(fmt.Errorf("-libs-json needs -gemm-logs or -fft-logs"))
	case fromLogs:
		var err error
		if libs, err = chart.LibReportFromLogs(*gemmLogs, *fftLogs); err != nil {
			return fail(err)
		}
		if *libsOut != "" {
			if err := chart.WriteJSON(*libsOut, libs); err != nil {
				return fail(err)
			}
		}
		if *from == "" {
			return 0
		}
	case *libsIn != "":
		var err error
		if libs, err = chart.ReadLibReport(*libsIn); err != nil {
			return fail(err)
		}
	}
	if *from != "" {
		if *svgOut == "" {
			return fail(fmt.Errorf("-from needs -svg"))
		}
		rep, err := chart.ReadReport(*from)
		if err != nil {
			return fail(err)
		}
		if err := writeSVG(*svgOut, rep, py, libs); err != nil {
			return fail(err)
		}
		return 0
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		var err error
		if filter, err = regexp.Compile(*runRE); err != nil {
			return fail(err)
		}
	}
	s, err := bench.NewSuite()
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	if err := s.Validate(); err != nil {
		return fail(fmt.Errorf("validation: %w", err))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	rs := bench.Measure(s.Cases(), filter, *reps, stderr)
	dv, _ := driver.DriverGetVersion()
	line := fmt.Sprintf("cudagobench %s: %s (sm_%s), %s, %s, GOMAXPROCS %d, %d reps (median)",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), s.Dev.Name(), s.Dev.Arch(), driverLine(int(dv)),
		runtime.Version(), runtime.GOMAXPROCS(0), *reps)
	fmt.Fprintf(stdout, "%s\n\n", line)
	bench.WriteTable(stdout, rs)
	status := 0
	rep := bench.ChartReport(line, rs)
	if *jsonOut != "" {
		if err := chart.WriteJSON(*jsonOut, rep); err != nil {
			status = fail(err)
		}
	}
	if *svgOut != "" {
		if err := writeSVG(*svgOut, rep, py, libs); err != nil {
			status = fail(err)
		}
	}
	if *diag {
		fmt.Fprintln(stdout)
		if err := s.Diagnose(stdout, *reps); err != nil {
			fmt.Fprintln(stderr, "cudagobench: diagnostics:", err)
		}
	}
	fmt.Fprintf(stdout, "\n(kernels compiled in %v; command: cudagobench %s)\n", s.CompileTime.Round(time.Microsecond), strings.Join(args, " "))
	return status
}

func writeSVG(path string, rep *chart.Report, py *chart.Python, libs *chart.LibReport) error {
	b, err := chart.SVG(rep, py, libs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

var moduleVersion = regexp.MustCompile(`Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)\s`)

// driverLine names the driver: "driver 580.159.04 (driver API 13.0)", the
// loaded kernel module's version where it can be read, since the API
// version alone does not tell two drivers of one CUDA release apart.
func driverLine(apiVersion int) string {
	api := fmt.Sprintf("driver API %d.%d", apiVersion/1000, apiVersion%1000/10)
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return api
	}
	m := moduleVersion.FindSubmatch(b)
	if m == nil {
		return api
	}
	return "driver " + string(m[1]) + " (" + api + ")"
}
