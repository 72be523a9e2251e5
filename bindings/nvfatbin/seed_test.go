package nvfatbin_test

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/internal/testing/seeds"
)

var (
	seedFuncRE   = regexp.MustCompile(`cuda\.bindings\.nvfatbin\.([a-z_]+)\(`)
	seedResultRE = regexp.MustCompile(`^- ([A-Z_]+) = <Result\.([A-Z_]+): (\d+)>`)
)

// TestSeedCoverage checks that every function and result code of
// the reference list nvfatbin-bindings.txt (internal/testing/seeds) is bound.
func TestSeedCoverage(t *testing.T) {
	f, err := os.Open(seeds.Path(t, "nvfatbin-bindings.txt"))
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
