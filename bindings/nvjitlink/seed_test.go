package nvjitlink_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvjitlink"
)

// seedFile finds shared/seeds/<name>: the shared folder sits beside the
// repository (<repo>/../shared), or inside it.
func seedFile(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			for _, p := range []string{filepath.Join(d, "..", "shared", "seeds", name), filepath.Join(d, "shared", "seeds", name)} {
				if _, err := os.Stat(p); err == nil {
					return p
				}
			}
			t.Fatalf("seed %s not found in %s/../shared/seeds or %s/shared/seeds", name, d, d)
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// jitSeed is what the NVVM/nvJitLink seed names: its Python functions by
// section, and the enum names of its "## Types" part by heading.
type jitSeed struct {
	nvvmFuncs, jitlinkFuncs []string
	enums                   map[string][]string // "### NVVM Result Codes" -> names
}

var (
	defRE  = regexp.MustCompile(`^def ([a-z_0-9]+)\(`)
	enumRE = regexp.MustCompile(`^\s*((?:NVVM|NVJITLINK)_[A-Z0-9_]+)\s*:`)
)

func parseJITSeed(t *testing.T) jitSeed {
	t.Helper()
	f, err := os.Open(seedFile(t, "jit-compilation-nvvm-nvjitlink.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := jitSeed{enums: map[string][]string{}}
	section, heading := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section, heading = strings.TrimPrefix(line, "## "), ""
			continue
		case strings.HasPrefix(line, "### "):
			h := strings.TrimPrefix(line, "### ")
			if section == "Capabilities" {
				// "### NVVM ..." opens NVVM's sections, "### NVJitLink ..."
				// nvJitLink's; other headings continue the current one.
				switch {
				case strings.HasPrefix(h, "NVVM"):
					heading = "NVVM"
				case strings.HasPrefix(h, "NVJitLink"):
					heading = "NVJitLink"
				}
			} else {
				heading = h
			}
			continue
		}
		switch section {
		case "Capabilities":
			if m := defRE.FindStringSubmatch(line); m != nil {
				switch heading {
				case "NVVM":
					s.nvvmFuncs = append(s.nvvmFuncs, m[1])
				case "NVJitLink":
					s.jitlinkFuncs = append(s.jitlinkFuncs, m[1])
				default:
					t.Fatalf("def %s outside the NVVM and NVJitLink sections", m[1])
				}
			}
		case "Types":
			if m := enumRE.FindStringSubmatch(line); m != nil {
				s.enums[heading] = append(s.enums[heading], m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// goName finds the Go function of a Python name: create_program and
// CreateProgram compare equal without underscores, ignoring case.
func goName(funcs map[string]string, py string) (string, bool) {
	key := strings.ReplaceAll(py, "_", "")
	for _, g := range funcs {
		if strings.EqualFold(g, key) {
			return g, true
		}
	}
	return "", false
}

func TestSeedFunctions(t *testing.T) {
	s := parseJITSeed(t)
	if len(s.jitlinkFuncs) < 13 {
		t.Fatalf("found %d nvJitLink functions in the seed, want 13: %v", len(s.jitlinkFuncs), s.jitlinkFuncs)
	}
	for _, py := range s.jitlinkFuncs {
		if g, ok := goName(nvjitlink.Functions, py); !ok {
			t.Errorf("seed function nvjitlink.%s has no Go binding", py)
		} else {
			t.Logf("%s -> %s", py, g)
		}
	}
}

// notInHeader are seed InputType names that no nvJitLink.h declares: the
// seed's NVVM_IR/NVVM_BITCODE are in fact NVJITLINK_INPUT_LTOIR.
var notInHeader = map[string]bool{
	"NVJITLINK_INPUT_NVVM_IR":      true,
	"NVJITLINK_INPUT_NVVM_BITCODE": true,
}

func TestSeedEnums(t *testing.T) {
	s := parseJITSeed(t)
	results, inputs := map[string]bool{}, map[string]bool{}
	for i := range 256 {
		results[nvjitlink.Result(i).String()] = true
		inputs[nvjitlink.InputType(i).String()] = true
	}
	for heading, want := range map[string]struct {
		names map[string]bool
		n     int
	}{
		"NVJitLink Result Codes": {results, 7},
		"Input Types":            {inputs, 8},
	} {
		listed := s.enums[heading]
		if len(listed) != want.n {
			t.Errorf("seed lists %d names under %q, want %d: %v", len(listed), heading, want.n, listed)
		}
		for _, name := range listed {
			switch {
			case notInHeader[name] && want.names[name]:
				t.Errorf("%s is now bound: drop it from notInHeader", name)
			case notInHeader[name]:
				t.Logf("%s (seed) is not in nvJitLink.h; the header has NVJITLINK_INPUT_LTOIR = %d", name, nvjitlink.InputLtoir)
			case !want.names[name]:
				t.Errorf("%s (%s) is not a value of the Go type", name, heading)
			}
		}
	}
	if got := nvjitlink.InputLtoir.String(); got != "NVJITLINK_INPUT_LTOIR" {
		t.Errorf("InputLtoir.String() = %q", got)
	}
}
