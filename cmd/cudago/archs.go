package main

// Helpers shared by compile, link, fatbin, ls, extract and build: GPU
// architecture names, repeatable flags, flags mixed with arguments, and
// writing outputs.

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// gpuArch is a GPU architecture: an SM number and an optional "a"
// (arch-specific, sm_90a) or "f" (family-specific, sm_100f) suffix.
type gpuArch struct {
	num    int    // 80 for sm_80
	suffix string // "", "a" or "f"
}

// parseArch reads an architecture in any of the forms NVIDIA's tools
// accept: "sm_90", "compute_90", "lto_90", "90", with an optional "a" or
// "f" suffix ("sm_90a").
func parseArch(s string) (gpuArch, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"sm_", "compute_", "lto_"} {
		if strings.HasPrefix(t, p) {
			t = t[len(p):]
			break
		}
	}
	var a gpuArch
	if n := len(t); n > 0 && (t[n-1] == 'a' || t[n-1] == 'f') {
		a.suffix, t = t[n-1:], t[:n-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 10 || n > 999 || strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		return gpuArch{}, fmt.Errorf("bad architecture %q: want sm_NN, compute_NN or NN (such as sm_90)", s)
	}
	a.num = n
	return a, nil
}

// parseArchList parses architectures separated by commas; each element of
// list may itself hold several ("sm_80,sm_90"). The result is sorted, oldest
// first, without duplicates.
func parseArchList(list []string) ([]gpuArch, error) {
	seen := map[gpuArch]bool{}
	var out []gpuArch
	for _, l := range list {
		for _, s := range strings.Split(l, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			a, err := parseArch(s)
			if err != nil {
				return nil, err
			}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].num != out[j].num {
			return out[i].num < out[j].num
		}
		return out[i].suffix < out[j].suffix
	})
	return out, nil
}

// newest returns the architecture the PTX of a fatbin is for: the highest
// SM number, preferring the portable (suffix-less) variant.
func newest(archs []gpuArch) gpuArch {
	best := archs[0]
	for _, a := range archs[1:] {
		if a.num > best.num || a.num == best.num && (a.suffix == "" || best.suffix != "" && a.suffix < best.suffix) {
			best = a
		}
	}
	return best
}

func (a gpuArch) sm() string      { return "sm_" + a.number() }
func (a gpuArch) compute() string { return "compute_" + a.number() }

// number is the form nvFatbin wants: "90", "90a".
func (a gpuArch) number() string { return strconv.Itoa(a.num) + a.suffix }

func (a gpuArch) String() string { return a.sm() }

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// parseInterspersed parses the arguments a command's body receives (those
// left after the first flag), allowing flags after arguments as in
// "cudago compile x.cu -arch sm_90". Each argument, in order, goes to
// onArg, which sees the flags given before it (link's --kind relies on
// that). After "--" everything is an argument. It returns ok=false and the
// exit status when parsing failed or -h was given.
func parseInterspersed(name string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer, onArg func(string)) (int, bool) {
	for len(args) > 0 {
		if args[0] == "--" {
			for _, a := range args[1:] {
				onArg(a)
			}
			break
		}
		onArg(args[0])
		rest := args[1:]
		if err := fs.Parse(rest); err != nil {
			c := commands[name]
			if err == flag.ErrHelp {
				commandUsage(c, fs, stdout)
				return exitOK, false
			}
			fmt.Fprintf(stderr, "usage: cudago %s %s\nrun 'cudago %s -h' for help\n", c.name, c.args, c.name)
			return exitUsage, false
		}
		left := fs.Args()
		if used := len(rest) - len(left); used > 0 && rest[used-1] == "--" {
			for _, a := range left {
				onArg(a)
			}
			break
		}
		args = left
	}
	return exitOK, true
}

// usageError prints a usage error of command name and returns exitUsage.
func usageError(stderr io.Writer, name, format string, a ...any) int {
	c := commands[name]
	fmt.Fprintf(stderr, "cudago %s: %s\n", name, fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "usage: cudago %s %s\nrun 'cudago %s -h' for help\n", c.name, c.args, c.name)
	return exitUsage
}

// failure prints an error of command name and returns exitFail.
func failure(stderr io.Writer, name string, err error) int {
	msg := strings.TrimRight(err.Error(), "\n")
	fmt.Fprintf(stderr, "cudago %s: %s\n", name, msg)
	return exitFail
}

// writeOutput writes b to path, creating its directory. It writes a
// temporary file and renames it, so that a failed write never leaves a
// truncated output (or a damaged previous one) behind.
func writeOutput(path string, b []byte) error {
	dir := filepath.Dir(path)
	if dir != "." {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	}
	// O_EXCL with 0666, as os.WriteFile would create it (umask applies).
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp%d-%d", filepath.Base(path), os.Getpid(), rand.Uint64()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// stem is the last element of path without its last extension, as
// cuobjdump names files: "dir/x.cu" -> "x".
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}
