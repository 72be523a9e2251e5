// Command cubinfuzz measures what damaged cubins do to the CUDA driver,
// and what cudago's image check (fatbin.ValidateCubin, which core runs
// before any image reaches the driver) changes: it makes N deterministic
// mutations of a sound cubin (bit flips, byte sets, edits of ELF header,
// section header, program header, symbol, relocation and .nv.info fields,
// truncations) and loads each in a child process, counting the mutations
// the check rejects, those that load, those the driver refuses with an
// error, and those that crash or hang the process.
//
//	cubinfuzz [-mode before,after] [-n 10000] [-j 8] [-seed 1] [-cubin file]
//	          [-timeout 10s] [-json file] [-keep dir] [-v]
//	cubinfuzz -write I -o file          write mutation I to a file
//	cubinfuzz -only I [-mode before]    load mutation I in this process
//
// Modes: "before" loads each mutation with the driver API directly
// (bindings/driver: cuLibraryLoadData, then per kernel cuLibraryGetKernel,
// cuKernelGetAttribute on device 0, which loads the module into its
// context, and cuKernelGetParamInfo; cuLibraryUnload), without any check;
// "after" makes the same calls through core (FromCubin, Kernel,
// NumRegisters, Arguments, Close), so that the check runs first; "check"
// only runs the check (core.FromCubin) in this process, which needs no
// GPU. Without a GPU the load modes fall back to "check" and say so.
//
// Each child loads every j-th mutation of its share in turn and reports
// each; when one dies (a signal, or the Go runtime's report of one in C
// code) the mutation counts as a crash and a new child goes on from the
// next one; one that reports nothing for -timeout counts as a hang and is
// killed. The seed is -cubin, or the built-in source compiled with NVRTC
// (through core) for the GPU's architecture (-arch without a GPU).
// Mutation I depends only on -seed and I: "-write I" remakes it.
package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// source is the built-in seed: about 90 KB of sm_90 cubin with 87
// sections (kernels, templates, device functions and a call graph,
// printf, local, shared and dynamic shared memory, constants, managed
// variables, textures, the device heap, launch bounds).
//
//go:embed seed.cu
var source string

type options struct {
	modes   []string
	n, jobs int
	seed    uint64
	cubin   string
	arch    string
	timeout time.Duration
	json    string
	keep    string
	verbose bool
	maxTime time.Duration
}

func main() {
	var o options
	mode := flag.String("mode", "before,after", "comma-separated `modes`: before (driver API, no check), after (through core's check), check (the check only, no GPU)")
	flag.IntVar(&o.n, "n", 10000, "mutations per mode")
	flag.IntVar(&o.jobs, "j", min(8, runtime.NumCPU()), "child processes loading in parallel")
	flag.Uint64Var(&o.seed, "seed", 1, "PRNG seed of the mutations")
	flag.StringVar(&o.cubin, "cubin", "", "seed cubin `file` (default: the built-in source compiled with NVRTC)")
	flag.StringVar(&o.arch, "arch", "", "architecture of the built-in source when there is no GPU (default sm_90)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "time one mutation may take before it counts as a hang")
	flag.StringVar(&o.json, "json", "", "also write the results to `file` as JSON")
	flag.StringVar(&o.keep, "keep", "", "write the mutations that crash or hang into `dir`")
	flag.BoolVar(&o.verbose, "v", false, "print each crash and hang as it happens, and progress")
	flag.DurationVar(&o.maxTime, "max-time", 0, "stop a mode after this `duration` and report the mutations done (0: no limit)")
	only := flag.Int("only", -1, "load mutation `I` in this process (first -mode) and print the outcome")
	write := flag.Int("write", -1, "write mutation `I` to the -o file")
	out := flag.String("o", "", "output `file` of -write")
	// The child side, set by the parent.
	child := flag.Bool("child", false, "internal: run as a child of a campaign")
	from := flag.Int("from", 0, "internal: first mutation of a child")
	step := flag.Int("step", 1, "internal: stride of a child's mutations")
	flag.Parse()
	o.modes = strings.Split(*mode, ",")
	for _, m := range o.modes {
		if m != "before" && m != "after" && m != "check" {
			usage("unknown mode %q (want before, after or check)", m)
		}
	}
	if o.n <= 0 || o.jobs <= 0 || o.timeout <= 0 {
		usage("-n, -j and -timeout must be positive")
	}
	if *child {
		os.Exit(runChildMode(o, *from, *step))
	}
	if err := run(o, *only, *write, *out); err != nil {
		fmt.Fprintln(os.Stderr, "cubinfuzz:", err)
		os.Exit(1)
	}
}

func usage(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cubinfuzz: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

// runChildMode is a child: it loads its share of the mutations of the
// seed in -cubin with the loader of the (single) mode.
func runChildMode(o options, from, step int) int {
	noCoreDumps()
	img, err := os.ReadFile(o.cubin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cubinfuzz child:", err)
		return 1
	}
	s, err := newSeed(img)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cubinfuzz child:", err)
		return 1
	}
	l, err := newLoader(o.modes[0], s.kernels)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cubinfuzz child:", err)
		return 1
	}
	childLoop(os.Stdout, from, step, o.n, func(i int) (string, string) {
		b, _ := s.mutate(o.seed, i)
		return l.load(b)
	})
	return 0
}

func newLoader(mode string, kernels []string) (loader, error) {
	switch mode {
	case "before":
		return newDriverLoader(kernels)
	case "after":
		return newCoreLoader(kernels)
	}
	return checkLoader{}, nil
}

// checkLoader is mode "check": core.FromCubin only.
type checkLoader struct{}

func (checkLoader) load(img []byte) (string, string) {
	o, err := core.FromCubin(img)
	if err != nil {
		return classify(err)
	}
	o.Close()
	return outPassed, ""
}

// outPassed is the outcome of mode "check" for a mutation the check
// accepts (it is not loaded).
const outPassed = "passed"

// gpuArch returns device 0's architecture (sm_90), or why there is none.
func gpuArch() (string, error) {
	if err := driver.Init(0); err != nil {
		return "", err
	}
	n, err := driver.DeviceGetCount()
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", errors.New("no CUDA device")
	}
	dev, err := driver.DeviceGet(0)
	if err != nil {
		return "", err
	}
	major, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, dev)
	if err != nil {
		return "", err
	}
	minor, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, dev)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sm_%d%d", major, minor), nil
}

// modeReport is the result of one mode.
type modeReport struct {
	Mode      string         `json:"mode"`
	Mutations int            `json:"mutations"`
	Counts    map[string]int `json:"counts"` // by outcome
	// ByKind counts the outcomes of each mutation kind.
	ByKind map[string]map[string]int `json:"by_kind"`
	// Errors counts the driver's errors by text (the first words).
	Errors   map[string]int `json:"driver_errors,omitempty"`
	Crashes  []result       `json:"crashes"`
	Hangs    []result       `json:"hangs"`
	Seconds  float64        `json:"seconds"`
	Children int            `json:"children"`
	Note     string         `json:"note,omitempty"`
}

type report struct {
	SeedBytes int          `json:"seed_bytes"`
	SeedFrom  string       `json:"seed_from"`
	Arch      string       `json:"arch"`
	Kernels   int          `json:"kernels"`
	PRNGSeed  uint64       `json:"prng_seed"`
	Timeout   string       `json:"timeout"`
	GPU       string       `json:"gpu"`
	Driver    int          `json:"driver_version,omitempty"`
	Modes     []modeReport `json:"modes"`
	Mutations int          `json:"mutations_per_mode"`
	Kinds     string       `json:"mutation_kinds"`
}

func run(o options, only, write int, out string) error {
	arch, gpuErr := gpuArch()
	if gpuErr != nil {
		arch = o.arch
		if arch == "" {
			arch = "sm_90"
		}
	}
	img, from, err := seedCubin(o, arch)
	if err != nil {
		return err
	}
	s, err := newSeed(img)
	if err != nil {
		return err
	}
	if write >= 0 {
		if out == "" {
			return errors.New("-write needs -o")
		}
		b, kind := s.mutate(o.seed, write)
		fmt.Printf("mutation %d (%s): %d bytes\n", write, kind, len(b))
		return os.WriteFile(out, b, 0o644)
	}
	if only >= 0 {
		mode := o.modes[0]
		if mode != "check" && gpuErr != nil {
			return fmt.Errorf("loading needs a GPU: %v", gpuErr)
		}
		l, err := newLoader(mode, s.kernels)
		if err != nil {
			return err
		}
		b, kind := s.mutate(o.seed, only)
		fmt.Printf("mutation %d (%s, %d bytes), mode %s: ", only, kind, len(b), mode)
		outcome, detail := l.load(b)
		fmt.Println(outcome, detail)
		return nil
	}

	rep := report{SeedBytes: len(img), SeedFrom: from, Arch: arch, Kernels: len(s.kernels), PRNGSeed: o.seed,
		Timeout: o.timeout.String(), Mutations: o.n, Kinds: strings.Join(kindNames(), ",")}
	if gpuErr != nil {
		rep.GPU = "none: " + gpuErr.Error()
	} else {
		rep.GPU = arch
		v, _ := driver.DriverGetVersion()
		rep.Driver = int(v)
	}
	// The children read the seed from a file.
	tmp, err := os.CreateTemp("", "cubinfuzz-seed-*.cubin")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(img); err != nil {
		return err
	}
	tmp.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("cubinfuzz: seed %s, %d bytes, %d kernels (%s); %d mutations per mode, PRNG seed %d; GPU: %s\n",
		arch, len(img), len(s.kernels), from, o.n, o.seed, rep.GPU)
	modes, note := o.modes, ""
	if gpuErr != nil && slices.ContainsFunc(modes, func(m string) bool { return m != "check" }) {
		// Without a GPU only the check can run, the same for every mode.
		modes = []string{"check"}
		note = fmt.Sprintf("loading (modes %s) needs a GPU: only the check ran", strings.Join(o.modes, ", "))
		fmt.Println("cubinfuzz:", note)
	}
	for _, mode := range modes {
		mr := modeReport{Mode: mode, Mutations: o.n, Note: note}
		start := time.Now()
		var res []result
		if mode == "check" {
			res = checkOnly(s, o.seed, o.n)
		} else {
			mr.Children = o.jobs
			var stop chan struct{}
			if o.maxTime > 0 {
				stop = make(chan struct{})
				t := time.AfterFunc(o.maxTime, func() { close(stop) })
				defer t.Stop()
			}
			c := &campaign{
				stop: stop,
				n:    o.n, jobs: o.jobs, timeout: o.timeout, startTimeout: 2 * time.Minute,
				child: func(from, step int) *exec.Cmd {
					return exec.Command(self, "-child", "-mode", mode, "-cubin", tmp.Name(),
						"-seed", strconv.FormatUint(o.seed, 10), "-n", strconv.Itoa(o.n),
						"-from", strconv.Itoa(from), "-step", strconv.Itoa(step))
				},
				kind: func(i int) string { _, k := s.mutate(o.seed, i); return k },
			}
			if o.verbose {
				c.progress = func(format string, args ...any) {
					fmt.Printf("  %s: %s\n", mode, fmt.Sprintf(format, args...))
				}
			}
			if res, err = c.run(); err != nil {
				return fmt.Errorf("mode %s: %w", mode, err)
			}
		}
		mr.Seconds = time.Since(start).Seconds()
		tally(&mr, res)
		if skipped := mr.Counts[outSkipped]; skipped > 0 {
			mr.Note = fmt.Sprintf("stopped after %v (-max-time): %d of %d mutations done", o.maxTime, o.n-skipped, o.n)
			mr.Mutations = o.n - skipped
			fmt.Println("cubinfuzz:", mode+":", mr.Note)
		}
		if o.keep != "" {
			if err := keep(o.keep, mode, s, o.seed, append(slices.Clone(mr.Crashes), mr.Hangs...)); err != nil {
				return err
			}
		}
		rep.Modes = append(rep.Modes, mr)
	}
	printReport(os.Stdout, &rep)
	if o.json != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.json, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// seedCubin returns the seed image and where it came from.
func seedCubin(o options, arch string) ([]byte, string, error) {
	if o.cubin != "" {
		b, err := os.ReadFile(o.cubin)
		return b, o.cubin, err
	}
	p, err := core.NewProgram(source, "c++", &core.ProgramOptions{Arch: arch})
	if err != nil {
		return nil, "", err
	}
	defer p.Close()
	code, err := p.Compile("cubin")
	if err != nil {
		return nil, "", err
	}
	return code.Code(), "built-in source, NVRTC", nil
}

// checkOnly runs the check on every mutation in this process.
func checkOnly(s *seedImage, seed uint64, n int) []result {
	res := make([]result, n)
	for i := range res {
		b, kind := s.mutate(seed, i)
		out, detail := checkLoader{}.load(b)
		res[i] = result{Index: i, Kind: kind, Outcome: out, Detail: oneLine(detail)}
	}
	return res
}

// tally fills a mode's counts from its results.
func tally(mr *modeReport, res []result) {
	mr.Counts = map[string]int{}
	mr.ByKind = map[string]map[string]int{}
	mr.Errors = map[string]int{}
	for _, r := range res {
		mr.Counts[r.Outcome]++
		if r.Outcome == outSkipped {
			continue
		}
		if mr.ByKind[r.Kind] == nil {
			mr.ByKind[r.Kind] = map[string]int{}
		}
		mr.ByKind[r.Kind][r.Outcome]++
		switch r.Outcome {
		case outCrash:
			mr.Crashes = append(mr.Crashes, r)
		case outHang:
			mr.Hangs = append(mr.Hangs, r)
		case outError:
			mr.Errors[errorKey(r.Detail)]++
		}
	}
}

// errorKey shortens a driver error to its code, such as
// CUDA_ERROR_INVALID_IMAGE, when it names one.
func errorKey(s string) string {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ':' || r == '(' || r == ')' || r == ',' }) {
		if strings.HasPrefix(f, "CUDA_ERROR_") {
			return f
		}
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func keep(dir, mode string, s *seedImage, seed uint64, rs []result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range rs {
		b, kind := s.mutate(seed, r.Index)
		name := fmt.Sprintf("%s-%s-%06d-%s.cubin", mode, r.Outcome, r.Index, kind)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func printReport(w *os.File, rep *report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tmutations\trejected by check\tloaded ok\tdriver error\tcrashes\thangs\tcrashes per 10k\ttime\t")
	dash := func(mr modeReport, outcome string) string {
		if mr.Children == 0 && outcome != outRejected {
			return "-"
		}
		return strconv.Itoa(mr.Counts[outcome])
	}
	for _, mr := range rep.Modes {
		per := "-"
		if mr.Children > 0 {
			per = fmt.Sprintf("%.1f", float64(mr.Counts[outCrash])*10000/float64(mr.Mutations))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.0fs\t\n", mr.Mode, mr.Mutations, mr.Counts[outRejected],
			dash(mr, outOK), dash(mr, outError), dash(mr, outCrash), dash(mr, outHang), per, mr.Seconds)
	}
	tw.Flush()
	for _, mr := range rep.Modes {
		if mr.Children == 0 {
			fmt.Fprintf(w, "\n%s: %d of %d mutations passed the check (not loaded)\n", mr.Mode, mr.Counts[outPassed], mr.Mutations)
		}
		fmt.Fprintf(w, "\n%s, by mutation kind:\n", mr.Mode)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		outs := []string{outRejected, outOK, outError, outCrash, outHang}
		if mr.Children == 0 {
			outs = []string{outRejected, outPassed}
		}
		fmt.Fprintf(tw, "kind\tmutations\t%s\t\n", strings.Join(outs, "\t"))
		for _, k := range kindNames() {
			c := mr.ByKind[k]
			total := 0
			for _, v := range c {
				total += v
			}
			fmt.Fprintf(tw, "%s\t%d", k, total)
			for _, out := range outs {
				fmt.Fprintf(tw, "\t%d", c[out])
			}
			fmt.Fprintln(tw, "\t")
		}
		tw.Flush()
		if len(mr.Errors) > 0 {
			keys := make([]string, 0, len(mr.Errors))
			for k := range mr.Errors {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return mr.Errors[keys[i]] > mr.Errors[keys[j]] })
			fmt.Fprintf(w, "%s, driver errors:", mr.Mode)
			for _, k := range keys[:min(8, len(keys))] {
				fmt.Fprintf(w, " %s %d;", k, mr.Errors[k])
			}
			fmt.Fprintln(w)
		}
		for _, list := range [][]result{mr.Crashes, mr.Hangs} {
			for k, r := range list {
				if k == 20 {
					fmt.Fprintf(w, "  ... %d more\n", len(list)-20)
					break
				}
				fmt.Fprintf(w, "  %s: mutation %d (%s): %s: %s\n", mr.Mode, r.Index, r.Kind, r.Outcome, r.Detail)
			}
		}
	}
}
