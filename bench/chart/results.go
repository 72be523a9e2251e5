// Package chart draws cudagobench's comparison as an SVG chart: per case,
// cudago, its C twin in the same run, cuda.core and CuPy, with gonum's
// plot; and below it, the math libraries (blas's GEMMs, fft's transforms)
// against CuPy and PyTorch. It also holds the JSON forms of the results,
// so that a chart can be made again from a saved run without a GPU
// (cudagobench -from), and reads the library figures from the logs of
// scripts/gpu/gemm-bench.sh and fft-bench.sh (LibReportFromLogs).
//
// It is pure Go and is imported only by the benchmark runner: the
// library's own packages never pull gonum in.
package chart

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
)

// Report is one cudagobench run, as cudagobench -json writes it.
type Report struct {
	// Line is the run's header: date, GPU, driver, Go, repetitions. The
	// chart shows it as its caption.
	Line string `json:"line"`
	// Note says where the figures come from when they are not a run's
	// own output (a fixture written from a table); the caption shows it.
	Note  string `json:"note,omitempty"`
	Cases []Case `json:"cases"`
}

// Case is one case's outcome. Times are per operation, in nanoseconds;
// a copy case (Bytes > 0) is drawn as GB/s, Bytes / time.
type Case struct {
	Name       string  `json:"name"`
	What       string  `json:"what,omitempty"`
	GoNs       float64 `json:"cudago_ns"`
	CNs        float64 `json:"c_ns"`
	Bytes      int64   `json:"bytes,omitempty"`
	Allocs     float64 `json:"allocs"` // per operation of the cudago side; -1 unmeasured
	Baseline   string  `json:"baseline,omitempty"`
	Target     float64 `json:"target,omitempty"`      // cudago / C at most
	MinSpeedup float64 `json:"min_speedup,omitempty"` // C / cudago at least (copies)
	Met        bool    `json:"met"`
	// OffChart leaves the case out of the chart (its scale would flatten
	// the others); the caption names it.
	OffChart bool   `json:"off_chart,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Copy reports whether the case is a copy, drawn in GB/s.
func (c *Case) Copy() bool { return c.Bytes > 0 }

// Python is what bench/bench_cuda_python.py --json writes: the figures of
// cuda.core and CuPy for the cases they can run.
type Python struct {
	Line string `json:"line"`
	// Results maps a library (Libraries) to its figures by case name. A
	// case a library cannot run is absent or has an Error.
	Results map[string]map[string]Figure `json:"results"`
}

// Figure is one library's figure for one case: US for a timed case,
// GBps for a copy.
type Figure struct {
	US    float64 `json:"us,omitempty"`
	GBps  float64 `json:"gbps,omitempty"`
	Error string  `json:"error,omitempty"`
}

// Libraries are the keys of Python.Results, in the chart's order.
var Libraries = []string{"cuda.core", "CuPy"}

// ReadReport reads and checks a Report written by WriteJSON.
func ReadReport(path string) (*Report, error) { return readChecked[Report](path) }

// ReadPython reads and checks the figures of bench_cuda_python.py --json.
func ReadPython(path string) (*Python, error) { return readChecked[Python](path) }

// readChecked reads the JSON file at path into a new T and checks it with
// T's Check: what ReadReport and ReadPython do.
func readChecked[T any, P interface {
	*T
	Check() error
}](path string) (*T, error) {
	v := P(new(T))
	if err := readJSON(path, v); err != nil {
		return nil, err
	}
	if err := v.Check(); err != nil {
		return nil, fmt.Errorf("chart: %s: %w", path, err)
	}
	return v, nil
}

// WriteJSON writes v (a Report or Python) to path, indented.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("chart: %s: %w", path, err)
	}
	return nil
}

// Check reports what makes r unfit to draw: no cases, a case without a
// name or with the name of another, or a time that is not a positive
// finite number (a case without an Error).
func (r *Report) Check() error {
	if len(r.Cases) == 0 {
		return errors.New("no cases")
	}
	seen := map[string]bool{}
	for i, c := range r.Cases {
		if c.Name == "" {
			return fmt.Errorf("case %d has no name", i)
		}
		if seen[c.Name] {
			return fmt.Errorf("case %s appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Bytes < 0 {
			return fmt.Errorf("case %s: bytes %d is negative", c.Name, c.Bytes)
		}
		if c.Error != "" {
			continue
		}
		for _, v := range []float64{c.GoNs, c.CNs} {
			if !positive(v) {
				return fmt.Errorf("case %s: time %v ns is not a positive number", c.Name, v)
			}
		}
	}
	return nil
}

// Check reports what makes p unfit to draw: a library other than
// Libraries, or a figure that is neither an error nor one positive
// finite number.
func (p *Python) Check() error {
	for lib, figs := range p.Results {
		if !slices.Contains(Libraries, lib) {
			return fmt.Errorf("unknown library %q (want one of %q)", lib, Libraries)
		}
		for name, f := range figs {
			if f.Error != "" {
				continue
			}
			if (f.US != 0) == (f.GBps != 0) || !positive(f.US+f.GBps) {
				return fmt.Errorf("%s %s: want one positive figure, us or gbps (got us %v, gbps %v)", lib, name, f.US, f.GBps)
			}
		}
	}
	return nil
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
