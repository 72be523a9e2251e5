package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// snippet is one ```go block of README.md.
type snippet struct {
	line int // of its first line of code
	code string
}

// goSnippets returns the ```go blocks of a Markdown text.
func goSnippets(md string) []snippet {
	var out []snippet
	var cur *snippet
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{line: n + 1}
			b.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return out
}

// packages are the import paths a fragment (a snippet that is not a whole
// file) may use by their names.
var packages = map[string]string{
	"core":       "github.com/cudago/cudago/core",
	"gds":        "github.com/cudago/cudago/gds",
	"nccl":       "github.com/cudago/cudago/nccl",
	"blas":       "github.com/cudago/cudago/blas",
	"rng":        "github.com/cudago/cudago/rng",
	"fft":        "github.com/cudago/cudago/fft",
	"sparse":     "github.com/cudago/cudago/sparse",
	"solver":     "github.com/cudago/cudago/solver",
	"system":     "github.com/cudago/cudago/system",
	"rendezvous": "github.com/cudago/cudago/rendezvous",
	"fatbin":     "github.com/cudago/cudago/fatbin",
	"pathfinder": "github.com/cudago/cudago/pathfinder",
	"nvtx":       "github.com/cudago/cudago/bindings/nvtx",
	"driver":     "github.com/cudago/cudago/bindings/driver",
	"nvrtc":      "github.com/cudago/cudago/bindings/nvrtc",
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"io":         "io",
	"log":        "log",
	"os":         "os",
	"strings":    "strings",
	"time":       "time",
}

// source makes a Go file of a snippet: a whole file as it is; a fragment
// (statements) as the body of func main, importing the packages it names.
func source(s snippet) (src string, imports []string, err error) {
	if strings.HasPrefix(strings.TrimSpace(s.code), "package ") {
		f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", s.code, parser.ImportsOnly)
		if err != nil {
			return "", nil, err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports = append(imports, p)
		}
		return s.code, imports, nil
	}
	// Which package names it uses: the X of its selectors X.Sel.
	body := "package main\nfunc main() {\n" + s.code + "\n}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", body, 0)
	if err != nil {
		return "", nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && packages[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	for name := range used {
		imports = append(imports, packages[name])
	}
	sort.Strings(imports)
	for _, p := range imports {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	// A line directive keeps the README's line numbers in errors.
	fmt.Fprintf(&b, ")\n\nfunc main() {\n//line README.md:%d\n%s}\n", s.line, s.code)
	return b.String(), imports, nil
}

// exportData builds the packages and returns their export data files by
// import path (go list -export), as the gc importer wants them.
func exportData(t *testing.T, pkgs []string) map[string]string {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m
}

// typeCheck type-checks the Go file src, named name, with the packages
// whose export data exports holds, and returns its errors other than soft
// ones (a variable or import left unused: fine in a fragment).
func typeCheck(name, src string, exports map[string]string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return []string{err.Error()}
	}
	var hard []string
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		}),
		Error: func(err error) {
			if te, ok := err.(types.Error); ok && te.Soft {
				return
			}
			hard = append(hard, err.Error())
		},
	}
	conf.Check("main", fset, []*ast.File{f}, nil)
	return hard
}

// TestSnippetsCompile type-checks every ```go block of README.md against
// the packages of this module. Fragments may leave variables and imports
// unused (what go/types calls soft errors); anything else, an undefined
// name, a wrong argument, a missing import, fails.
func TestSnippetsCompile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snips := goSnippets(string(readme))
	if len(snips) < 3 {
		t.Fatalf("README.md has %d ```go blocks; want its core, gds and own-module examples at least", len(snips))
	}
	srcs := make([]string, len(snips))
	var all []string
	for i, s := range snips {
		src, imports, err := source(s)
		if err != nil {
			t.Fatalf("README.md:%d: %v", s.line, err)
		}
		srcs[i] = src
		for _, p := range imports {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	exports := exportData(t, all)
	for i, s := range snips {
		if errs := typeCheck(fmt.Sprintf("README.md:%d", s.line), srcs[i], exports); len(errs) > 0 {
			t.Errorf("the Go snippet at README.md:%d does not compile:\n\t%s\n%s", s.line, strings.Join(errs, "\n\t"), s.code)
		}
	}
}

// TestSnippetCheckFails: the check finds what breaks a snippet.
func TestSnippetCheckFails(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"x := undefinedName + 1\n", "undefined: undefinedName"},
		{"dev, _ := core.GetDevice(\"zero\")\n", "cannot use \"zero\""},
		{"core.NoSuchFunction()\n", "undefined: core.NoSuchFunction"},
		{"package main\n\nfunc main() { fmt.Println() }\n", "undefined: fmt"}, // a whole file imports what it uses
	} {
		src, imports, err := source(snippet{line: 1, code: c.code})
		if err != nil {
			t.Fatal(err)
		}
		errs := typeCheck("x.go", src, exportData(t, imports))
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%q: errors %q, want one with %q", c.code, errs, c.want)
		}
	}
}
