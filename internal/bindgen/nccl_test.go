package main

import (
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/testing/layoutcheck"
)

// TestNCCLSince checks the configured versions of NCCL's functions: each
// one is applied, and one that contradicts the headers is refused.
func TestNCCLSince(t *testing.T) {
	headers := layoutcheck.Headers(t)
	base := configs["nccl"]
	m, err := buildModel(base, headers)
	if err != nil {
		t.Fatal(err)
	}
	since := map[string]string{}
	for _, f := range m.funcs {
		since[f.cname] = f.since
		if strings.HasPrefix(f.decl, "pnccl") {
			t.Errorf("%s is generated", f.decl)
		}
	}
	for name, want := range map[string]string{"ncclAllReduce": "2.22.3", "ncclCommInitRankScalable": "2.23.4",
		"ncclResetDebugInit": "2.24.3", "ncclCommShrink": "2.27.3", "ncclAlltoAll": "2.28.3"} {
		if since[name] != want {
			t.Errorf("%s since %q, want %s", name, since[name], want)
		}
	}
	for entry, want := range map[[2]string]string{
		{"ncclNoSuch", "2.25.0"}:     "not a function",
		{"ncclCommShrink", "2.22.3"}: "is not after 2.22.3",
		{"ncclCommShrink", "2.29.1"}: "at most 2.28.3",
		{"ncclAllReduce", "2.25.0"}:  "at most 2.22.3",
	} {
		cfg := *base
		cfg.since = map[string]string{entry[0]: entry[1]}
		if _, err := buildModel(&cfg, headers); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("since %s = %s: %v, want an error saying %q", entry[0], entry[1], err, want)
		}
	}
}
