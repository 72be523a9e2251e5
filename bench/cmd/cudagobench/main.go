// Command cudagobench prints one table comparing cudago with the CUDA
// driver API called from C in the same process and run (see package
// bench): launches, memory, graphs and copies, each with its C twin.
//
//	cudagobench [-reps 7] [-run regexp] [-cpuprofile file]
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cudago/cudago/bench"
	"github.com/cudago/cudago/bindings/driver"
)

func main() {
	reps := flag.Int("reps", 7, "timed repetitions per side (the median is kept)")
	run := flag.String("run", "", "only the cases matching this `regexp`")
	diag := flag.Bool("diag", false, "also print the launch-overhead diagnostics")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measurements to `file`")
	flag.Parse()
	var filter *regexp.Regexp
	if *run != "" {
		filter = regexp.MustCompile(*run)
	}
	s, err := bench.NewSuite()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudagobench:", err)
		os.Exit(1)
	}
	defer s.Close()
	if err := s.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "cudagobench: validation:", err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	rs := bench.Measure(s.Cases(), filter, *reps, os.Stderr)
	dv, _ := driver.DriverGetVersion()
	fmt.Printf("cudagobench %s: %s (sm_%s), driver API %d.%d, %s, GOMAXPROCS %d, %d reps (median)\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), s.Dev.Name(), s.Dev.Arch(), dv/1000, dv%1000/10,
		runtime.Version(), runtime.GOMAXPROCS(0), *reps)
	bench.WriteTable(os.Stdout, rs)
	if *diag {
		fmt.Println()
		if err := s.Diagnose(os.Stdout, *reps); err != nil {
			fmt.Fprintln(os.Stderr, "cudagobench: diagnostics:", err)
		}
	}
	fmt.Printf("\n(kernels compiled in %v; command: %s)\n", s.CompileTime.Round(time.Microsecond), strings.Join(os.Args, " "))
}
