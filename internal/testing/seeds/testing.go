package seeds

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Need returns the folder of the lists, or fails t.
func Need(t testing.TB) string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Path returns the path of seed file name (see Need).
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Need(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// JIT is what the NVVM/nvJitLink seed names: its Python functions by
// section, and the enum names of its "## Types" part by heading.
type JIT struct {
	NVVMFuncs, JITLinkFuncs []string
	Enums                   map[string][]string // "NVVM Result Codes" -> names
}

var (
	defRE  = regexp.MustCompile(`^def ([a-z_0-9]+)\(`)
	enumRE = regexp.MustCompile(`^\s*((?:NVVM|NVJITLINK)_[A-Z0-9_]+)\s*:`)
)

// ParseJIT reads jit-compilation-nvvm-nvjitlink.txt.
func ParseJIT(t testing.TB) JIT {
	t.Helper()
	f, err := os.Open(Path(t, "jit-compilation-nvvm-nvjitlink.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := JIT{Enums: map[string][]string{}}
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
					s.NVVMFuncs = append(s.NVVMFuncs, m[1])
				case "NVJitLink":
					s.JITLinkFuncs = append(s.JITLinkFuncs, m[1])
				default:
					t.Fatalf("def %s outside the NVVM and NVJitLink sections", m[1])
				}
			}
		case "Types":
			if m := enumRE.FindStringSubmatch(line); m != nil {
				s.Enums[heading] = append(s.Enums[heading], m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// GoName finds the Go function of a Python name: create_program and
// CreateProgram compare equal without underscores, ignoring case.
func GoName(funcs map[string]string, py string) (string, bool) {
	key := strings.ReplaceAll(py, "_", "")
	for _, g := range funcs {
		if strings.EqualFold(g, key) {
			return g, true
		}
	}
	return "", false
}
