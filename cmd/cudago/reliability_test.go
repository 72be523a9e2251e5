package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSafe runs cudago with args and fails the test on a panic or an exit
// status other than 0, 1 or 2; a failure must say why on stderr.
func runSafe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := -1
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("cudago %q: panic: %v", args, r)
			}
		}()
		code = run(args, &out, &errb)
	}()
	if code < 0 || code > 2 {
		t.Fatalf("cudago %q: exit status %d", args, code)
	}
	if code != 0 && strings.TrimSpace(errb.String()) == "" {
		t.Errorf("cudago %q: exit status %d with nothing on stderr", args, code)
	}
	return code, errb.String()
}

// TestReliabilityCLIDamagedFiles runs cudago ls, ls -json and extract on
// truncated, bit-flipped and oversized copies of the fatbin package's
// samples, on empty, missing and unreadable paths and on a directory:
// exit status 1 with a message, never a panic.
func TestReliabilityCLIDamagedFiles(t *testing.T) {
	samples, err := filepath.Glob("../../fatbin/testdata/cuda*/*")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var inputs []string
	write := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	r := rand.New(rand.NewPCG(7, 7))
	n := 0
	for _, s := range samples {
		if strings.HasSuffix(s, ".list") || strings.HasSuffix(s, ".sha256") {
			continue
		}
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(s)
		for _, cut := range []int{0, 1, 15, 16, 17, 63, 64, 80, len(b) / 3, len(b) / 2, len(b) - 1} {
			if cut >= 0 && cut < len(b) {
				write(base+".trunc"+strings.Repeat("_", n%3)+string(rune('a'+n%26)), b[:cut])
				n++
			}
		}
		for i := range 8 {
			c := append([]byte(nil), b...)
			for range 1 + r.IntN(4) {
				c[r.IntN(len(c))] ^= 1 << r.IntN(8)
			}
			write(base+".flip"+string(rune('a'+i)), c)
		}
		write(base+".big", append(append([]byte(nil), b...), bytes.Repeat([]byte{0xff}, 1<<20)...))
	}
	write("empty", nil)
	write("text", []byte("not a fatbin\n"))
	inputs = append(inputs, filepath.Join(dir, "missing"), dir)
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err == nil {
		inputs = append(inputs, unreadable)
	}
	fails := 0
	for i, in := range inputs {
		c1, _ := runSafe(t, "ls", in)
		runSafe(t, "ls", "-json", in)
		out := filepath.Join(dir, "x", strings.Repeat("d", i%4+1))
		c2, _ := runSafe(t, "extract", in, "-o", out)
		if c1 != c2 && c1 != 0 {
			t.Errorf("%s: ls exit %d but extract exit %d", in, c1, c2)
		}
		if c1 != 0 {
			fails++
		}
	}
	t.Logf("%d inputs: %d rejected with exit 1, the rest listed and extracted", len(inputs), fails)
	for _, args := range [][]string{
		{"ls"}, {"ls", "a", "b"}, {"ls", "-no-such-flag", "x"}, {"extract"}, {"extract", "-o"},
		{"no-such-command"}, {"-x"}, {"help", "no-such-command"},
		{"extract", filepath.Join(dir, "text"), "-o", filepath.Join(dir, "text")}, // -o names a file
	} {
		if code, _ := runSafe(t, args...); code == 0 {
			t.Errorf("cudago %q succeeded", args)
		}
	}
}
