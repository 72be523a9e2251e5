package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"modernc.org/cc/v4"
)

// A countCheck guards a C count parameter that says how many elements the
// library reads from Go slices (numOptions and options), or how many bytes
// from a Go string (size and buffer). The generated function returns a
// *CountError, before it calls the library, when the count is negative or
// larger than what a slice holds: the library would read past its end.
//
// The count stays a parameter: a smaller count than the slice is valid C
// (the library reads a prefix), and the signatures stay those of the C API.
type countCheck struct {
	count   *paramDef
	counted []*paramDef // slices ([]string) or one string
	str     bool        // counted is a string copied with its NUL
}

var (
	reNumX   = regexp.MustCompile(`^(?:num|n)([A-Z]\w*)$`)   // numOptions, nHeaders
	reXCount = regexp.MustCompile(`^(\w+)(?:Count|_count)$`) // optionsCount
)

// countStem returns the name of the parameter a count parameter's name
// documents ("Options" for numOptions and for optionsCount), or "".
func countStem(name string) string {
	if s := reNumX.FindStringSubmatch(name); s != nil {
		return s[1]
	}
	if s := reXCount.FindStringSubmatch(name); s != nil {
		return s[1]
	}
	return ""
}

func isIntegerType(t cc.Type) bool {
	switch t.Kind() {
	case cc.Short, cc.UShort, cc.Int, cc.UInt, cc.Long, cc.ULong, cc.LongLong, cc.ULongLong:
		return true
	}
	return false
}

// pairCounts finds the count parameters of f whose pairing the names make
// unambiguous:
//
//   - an integer numX, nX or xCount next to a []string parameter named x: it
//     counts that slice and the []string parameters that directly follow it
//     on the side away from the count (nvrtcCreateProgram's numHeaders counts
//     headers and includeNames);
//   - an integer size (or xSize) right after a string parameter (x): the
//     bytes of a buffer passed as a Go string (nvvmAddModuleToProgram).
func (m *model) pairCounts(f *funcDef) {
	ps := f.params
	for i, p := range ps {
		if p.out || p.kind != pkValue || !isIntegerType(p.ct) {
			continue
		}
		if stem := countStem(p.cname); stem != "" {
			for _, dir := range []int{1, -1} {
				j := i + dir
				if j < 0 || j >= len(ps) || ps[j].kind != pkStrings || !strings.EqualFold(ps[j].cname, stem) {
					continue
				}
				c := &countCheck{count: p}
				for ; j >= 0 && j < len(ps) && ps[j].kind == pkStrings; j += dir {
					c.counted = append(c.counted, ps[j])
				}
				f.checks = append(f.checks, c)
				break
			}
			continue
		}
		if i > 0 && ps[i-1].kind == pkString && (p.cname == "size" || p.cname == ps[i-1].cname+"Size") {
			f.checks = append(f.checks, &countCheck{count: p, counted: []*paramDef{ps[i-1]}, str: true})
		}
	}
}

// checkDoc is the sentence the generated function's doc adds for its checks.
func (f *funcDef) checkDoc() string {
	if len(f.checks) == 0 {
		return ""
	}
	var parts []string
	for _, c := range f.checks {
		var names []string
		for _, s := range c.counted {
			if c.str {
				names = append(names, fmt.Sprintf("len(%s)+1 (the copy passed to C ends with a NUL)", s.goName))
			} else {
				names = append(names, fmt.Sprintf("len(%s)", s.goName))
			}
		}
		parts = append(parts, fmt.Sprintf("%s must be between 0 and %s", c.count.goName, strings.Join(names, " and ")))
	}
	return "Go: " + strings.Join(parts, "; ") + ". Otherwise the function returns a *CountError without calling the library, which would read past the end."
}

// emitChecks writes the guards at the top of a generated function.
func (m *model) emitChecks(b *bytes.Buffer, f *funcDef) { m.emitChecksAs(b, f, "CountError") }

// emitChecksAs writes the guards with the error type named errType: the
// bindings package's alias, or dl.CountError outside it, the same value.
func (m *model) emitChecksAs(b *bytes.Buffer, f *funcDef, errType string) {
	for _, c := range f.checks {
		for _, s := range c.counted {
			limit := fmt.Sprintf("len(%s)", s.goName)
			if c.str {
				limit += "+1"
			}
			fmt.Fprintf(b, "\tif n := int64(%s); n < 0 || n > int64(%s) {\n", c.count.goName, limit)
			fmt.Fprintf(b, "\t\terr = &%s{Lib: %q, Func: %q, Count: %q, Value: n, Counted: %q, Len: %s}\n\t\treturn\n\t}\n",
				errType, m.cfg.name, f.cname, c.count.cname, s.cname, limit)
		}
	}
}

// hasChecks reports whether any generated function guards a count.
func (m *model) hasChecks() bool {
	for _, f := range m.funcs {
		if len(f.checks) > 0 {
			return true
		}
	}
	return false
}

const countErrorSource = `// CountError is returned, without calling the library, when a count
// argument is negative or larger than the slice (or string) whose elements
// it counts: the library would read past the end of that slice.
type CountError = dl.CountError

`
