package chart

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// LibReport is the math libraries' comparison: cudago's blas and fft
// against CuPy and PyTorch, as cudagobench -libs-json writes it from the
// logs of scripts/gpu/gemm-bench.sh and fft-bench.sh (LibReportFromLogs).
type LibReport struct {
	// Line says where the figures come from (sessions, GPU, versions,
	// repetitions); the chart shows it as the section's caption.
	Line string `json:"line"`
	// Note is shown after Line: what the units are, why a library has
	// no figure for some cases.
	Note  string    `json:"note,omitempty"`
	Cases []LibCase `json:"cases"`
}

// LibCase is one case of the math libraries: each library's figure, in
// one unit. Cases of one Panel are drawn together and share the unit.
type LibCase struct {
	Name  string `json:"name"`
	Panel string `json:"panel"`
	// What names the other libraries' call where it is not the obvious
	// one ("PyTorch's torch._scaled_mm"); the caption shows "Name
	// against What".
	What   string `json:"what,omitempty"`
	Unit   string `json:"unit"`
	Higher bool   `json:"higher_is_better"`
	// Figures maps a library (LibSeries) to its figure; a library
	// without the case is absent (n/a on the chart).
	Figures map[string]float64 `json:"figures"`
}

// LibSeries are the keys of LibCase.Figures: the bars of a case in the
// math libraries' panels, top to bottom, as the legend names them.
var LibSeries = [3]string{"cudago", "CuPy", "PyTorch"}

// ReadLibReport reads and checks a LibReport written by WriteJSON.
func ReadLibReport(path string) (*LibReport, error) { return readChecked[LibReport](path) }

// Check reports what makes l unfit to draw: no cases, a case without a
// name, panel or unit, a name given twice, a panel whose cases differ in
// unit or direction, a case without figures, a library other than
// LibSeries, or a figure that is not a positive finite number.
func (l *LibReport) Check() error {
	if len(l.Cases) == 0 {
		return errors.New("no cases")
	}
	seen := map[string]bool{}
	panels := map[string]LibCase{}
	for i, c := range l.Cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("case %d has no name", i)
		case seen[c.Name]:
			return fmt.Errorf("case %s appears twice", c.Name)
		case c.Panel == "":
			return fmt.Errorf("case %s has no panel", c.Name)
		case c.Unit == "":
			return fmt.Errorf("case %s has no unit", c.Name)
		case len(c.Figures) == 0:
			return fmt.Errorf("case %s has no figures", c.Name)
		}
		seen[c.Name] = true
		if first, ok := panels[c.Panel]; !ok {
			panels[c.Panel] = c
		} else if c.Unit != first.Unit || c.Higher != first.Higher {
			return fmt.Errorf("case %s: unit %s (%s) differs from %s (%s) of panel %q's case %s",
				c.Name, c.Unit, better(c.Higher), first.Unit, better(first.Higher), c.Panel, first.Name)
		}
		for _, lib := range slices.Sorted(maps.Keys(c.Figures)) {
			if !slices.Contains(LibSeries[:], lib) {
				return fmt.Errorf("case %s: unknown library %q (want one of %q)", c.Name, lib, LibSeries)
			}
			if v := c.Figures[lib]; !positive(v) {
				return fmt.Errorf("case %s: %s's figure %v is not a positive number", c.Name, lib, v)
			}
		}
	}
	return nil
}

func better(higher bool) string {
	if higher {
		return "higher is better"
	}
	return "lower is better"
}
