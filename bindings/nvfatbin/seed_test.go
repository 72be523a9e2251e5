package nvfatbin_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvfatbin"
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

var (
	seedFuncRE   = regexp.MustCompile(`cuda\.bindings\.nvfatbin\.([a-z_]+)\(`)
	seedResultRE = regexp.MustCompile(`^- ([A-Z_]+) = <Result\.([A-Z_]+): (\d+)>`)
)

// TestSeedCoverage checks that every function and result code of
// shared/seeds/nvfatbin-bindings.txt is bound.
func TestSeedCoverage(t *testing.T) {
	f, err := os.Open(seedFile(t, "nvfatbin-bindings.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	funcs := map[string]bool{}
	results := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Result codes share a line with the heading: split on "¶".
		for line := range strings.SplitSeq(sc.Text(), "¶") {
			line = strings.TrimSpace(strings.TrimPrefix(line, "nvFatbinResult."))
			if m := seedFuncRE.FindStringSubmatch(line); m != nil && strings.HasPrefix(line, "- ") {
				funcs[m[1]] = true
			}
			if m := seedResultRE.FindStringSubmatch(line); m != nil {
				results++
				n, _ := strconv.Atoi(m[3])
				want := "NVFATBIN_" + m[1]
				if got := nvfatbin.Result(n).String(); got != want {
					t.Errorf("Result(%d).String() = %q, want %q", n, got, want)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(funcs) != 9 {
		t.Errorf("found %d functions in the seed, want 9: %v", len(funcs), funcs)
	}
	if results != 18 {
		t.Errorf("found %d result codes in the seed, want 18 (SUCCESS..ERROR_INTERNAL_PTX_OPTION)", results)
	}
	for py := range funcs {
		key := strings.ReplaceAll(py, "_", "")
		found := ""
		for c, g := range nvfatbin.Functions {
			if strings.EqualFold(g, key) || strings.EqualFold(strings.TrimPrefix(c, "nvFatbin"), key) {
				found = g
			}
		}
		if found == "" {
			t.Errorf("seed function nvfatbin.%s has no Go binding in Functions", py)
		}
	}
}
