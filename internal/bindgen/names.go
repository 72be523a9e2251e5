package main

import (
	gotoken "go/token"
	"regexp"
	"strings"
	"unicode"

	"modernc.org/token"
)

func stripPrefix(name string, prefixes []string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return name[len(p):]
		}
	}
	return name
}

// exportName turns a C name into an exported Go name: ALL_CAPS_WORDS become
// CamelCase (MEMORYTYPE_HOST -> MemorytypeHost, ARRAY3D -> Array3D), and
// camelCase keeps its shape with the first letter raised.
func exportName(s string) string {
	s = strings.TrimLeft(s, "_")
	if s == "" {
		return "X"
	}
	out := ""
	if strings.ToUpper(s) == s {
		for _, w := range strings.Split(s, "_") {
			if w == "" {
				continue
			}
			b := []rune(strings.ToLower(w))
			b[0] = unicode.ToUpper(b[0])
			for i := 1; i < len(b); i++ {
				if unicode.IsDigit(b[i-1]) && i+1 < len(b) && unicode.IsLetter(b[i]) && !unicode.IsLetter(b[i+1]) {
					b[i] = unicode.ToUpper(b[i])
				} else if unicode.IsDigit(b[i-1]) && i+1 == len(b) {
					b[i] = unicode.ToUpper(b[i])
				}
			}
			out += string(b)
		}
	} else {
		parts := strings.Split(s, "_")
		for i, w := range parts {
			if w == "" {
				continue
			}
			r := []rune(w)
			r[0] = unicode.ToUpper(r[0])
			if i > 0 && out != "" && len(parts) > 1 {
				// keep a separator where two words would run together
				// (cuDevice_attribute -> DeviceAttribute)
			}
			out += string(r)
		}
	}
	if out == "" || unicode.IsDigit([]rune(out)[0]) {
		out = "X" + out
	}
	return out
}

var goKeywords = map[string]bool{}

func init() {
	for _, k := range []string{"break", "case", "chan", "const", "continue", "default", "defer", "else",
		"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package",
		"range", "return", "select", "struct", "switch", "type", "var",
		// predeclared identifiers and names the generated code uses
		"string", "len", "cap", "error", "err", "fn", "unsafe", "C", "r", "copy", "new", "make", "append", "close", "nil", "true", "false", "int", "uint"} {
		goKeywords[k] = true
	}
}

// goIdent makes a C parameter name a safe Go identifier.
func goIdent(s string) string {
	if strings.Contains(s, "_") {
		parts := strings.Split(strings.Trim(s, "_"), "_")
		for i := 1; i < len(parts); i++ {
			if parts[i] != "" {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
		}
		s = strings.Join(parts, "")
	}
	if len(s) > 1 && unicode.IsUpper(rune(s[0])) && unicode.IsLower(rune(s[1])) {
		s = strings.ToLower(s[:1]) + s[1:]
	} else if strings.ToUpper(s) == s {
		s = strings.ToLower(s)
	}
	if goKeywords[s] || gotoken.Lookup(s).IsKeyword() {
		return s + "_"
	}
	return s
}

// ---- doc comments ----

// docAbove returns the comment block that ends right above a declaration,
// cleaned of comment markers and Doxygen commands.
func docAbove(u *unit, pos token.Position) string {
	lines := u.lines(pos.Filename)
	i := pos.Line - 2 // the line above, 0-based
	for i >= 0 && strings.TrimSpace(lines[i]) == "" {
		i--
	}
	if i < 0 || !strings.HasSuffix(strings.TrimSpace(lines[i]), "*/") {
		return ""
	}
	end := i
	for i >= 0 && !strings.Contains(lines[i], "/*") {
		i--
	}
	if i < 0 {
		return ""
	}
	if j := strings.Index(lines[i], "/*"); strings.TrimSpace(lines[i][:j]) != "" {
		return "" // the trailing comment of the declaration above
	}
	if i == end && groupMarker(lines[i]) {
		// /** @} */ closes a Doxygen group between a function's doc and
		// its declaration (nvml.h's nvmlDeviceGetTopologyCommonAncestor).
		return docAbove(u, token.Position{Filename: pos.Filename, Line: i + 1})
	}
	return cleanDoc(lines[i : end+1])
}

// groupMarker reports whether a one-line comment only opens or closes a
// Doxygen group: /** @} */, /** @{ */.
func groupMarker(l string) bool {
	l = strings.TrimSpace(l)
	l = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l, "/**"), "/*"), "*/"))
	return l == "@}" || l == "@{"
}

// docOfGroup returns the doc comment above a run of declarations, one a
// line, that pos ends: nvml.h declares nvmlDeviceGetMemoryInfo_v2 on the
// line after nvmlDeviceGetMemoryInfo, under one comment.
func docOfGroup(u *unit, pos token.Position) string {
	lines := u.lines(pos.Filename)
	i := pos.Line - 2
	for i >= 0 && i < len(lines) && isDeclLine(lines[i]) {
		i--
	}
	if i == pos.Line-2 {
		return ""
	}
	return docAbove(u, token.Position{Filename: pos.Filename, Line: i + 2})
}

// isDeclLine reports whether a line is a whole declaration (nvmlReturn_t
// DECLDIR f(int x);), not a comment.
func isDeclLine(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasSuffix(l, ");") && strings.Contains(l, "(") && !strings.HasPrefix(l, "*") && !strings.HasPrefix(l, "/")
}

// docBelow returns the comment block that follows a declaration (nvJitLink
// documents its inline wrappers, which come after the exported symbol).
func docBelow(u *unit, pos token.Position) string {
	lines := u.lines(pos.Filename)
	i := pos.Line - 1
	for i < len(lines) && !strings.Contains(lines[i], ";") {
		i++
	}
	i++
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), "/**") {
		return ""
	}
	start := i
	for i < len(lines) && !strings.Contains(lines[i], "*/") {
		i++
	}
	if i >= len(lines) {
		return ""
	}
	return cleanDoc(lines[start : i+1])
}

// docOfLine returns a trailing /**< ... */ or // comment on the line of pos,
// or a block comment right above it.
func docOfLine(u *unit, pos token.Position) string {
	lines := u.lines(pos.Filename)
	if pos.Line < 1 || pos.Line > len(lines) {
		return ""
	}
	l := lines[pos.Line-1]
	if i := strings.Index(l, "/**<"); i >= 0 {
		c := l[i+4:]
		if j := strings.Index(c, "*/"); j >= 0 {
			c = c[:j]
		}
		return cleanInline(c)
	}
	if i := strings.Index(l, "//"); i >= 0 {
		return cleanInline(strings.TrimLeft(l[i+2:], "/<!"))
	}
	if i := strings.Index(l, "/*"); i > 0 && strings.TrimSpace(l[:i]) != "" {
		// A plain trailing comment: CUDA_R_16F = 2, /* real as a half */
		c := strings.TrimLeft(l[i+2:], "*!<")
		if j := strings.Index(c, "*/"); j >= 0 {
			c = c[:j]
		}
		return cleanInline(c)
	}
	return docAbove(u, pos)
}

var (
	reDoxyRef   = regexp.MustCompile(`(?:::|#)(\w+)`)
	reDoxyCmd   = regexp.MustCompile(`[\\@](p|c|e|a|b|ref)\s+`)
	reDoxyParam = regexp.MustCompile(`[\\@]param\s*(\[[a-z, ]+\])?\s*(\w+)\s*-?\s*`)
	reDoxyDrop  = regexp.MustCompile(`[\\@](brief|details|ingroup\s+\w+|endcond|cond\s*\w*|note_\w+|notefnerr|note_init_rt|note_callback|link|endlink|hideinitializer)\b`)
)

func cleanInline(s string) string {
	return strings.TrimSpace(cleanText(s))
}

func cleanText(s string) string {
	s = reDoxyParam.ReplaceAllString(s, "  - $2 $1: ")
	s = reDoxyDrop.ReplaceAllString(s, "")
	s = reDoxyCmd.ReplaceAllString(s, "")
	s = reDoxyRef.ReplaceAllString(s, "$1")
	s = strings.NewReplacer(`\return`, "Returns:", `\returns`, "Returns:", `\retval`, "", `\sa`, "See also:", `\see`, "See also:", `\note`, "Note:", `\deprecated`, "Deprecated:", `@return`, "Returns:", "\t", "    ").Replace(s)
	return s
}

func cleanDoc(block []string) string {
	var out []string
	for _, l := range block {
		l = strings.TrimRight(l, " \t\r")
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "/**")
		l = strings.TrimPrefix(l, "/*!")
		l = strings.TrimPrefix(l, "/*")
		l = strings.TrimSuffix(l, "*/")
		l = strings.TrimPrefix(l, "*")
		l = strings.TrimSpace(l)
		l = cleanText(l)
		if !strings.HasPrefix(l, "  - ") {
			l = strings.TrimLeft(l, " ")
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[0]) == "" {
		out = out[1:]
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	// A one-line paragraph without final punctuation would become a
	// heading under gofmt: end it with a period.
	for i, l := range out {
		blankBefore := i == 0 || strings.TrimSpace(out[i-1]) == ""
		blankAfter := i == len(out)-1 || strings.TrimSpace(out[i+1]) == ""
		t := strings.TrimSpace(l)
		if t != "" && blankBefore && blankAfter && !strings.HasPrefix(l, " ") && !strings.ContainsAny(t[len(t)-1:], ".:;!?,)") {
			out[i] = l + "."
		}
	}
	return strings.Join(out, "\n")
}

// sentence ends a one-line doc with a period where it has no final
// punctuation, so gofmt does not make it a heading.
func sentence(s string) string {
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".:;!?,)") {
		s += "."
	}
	return s
}

// parseParamDocs maps parameter names to the text that documents them, from
// the raw (cleaned) doc: lines "  - name [out]: text".
func parseParamDocs(doc string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "- ") {
			continue
		}
		t = t[2:]
		i := strings.IndexAny(t, " :")
		if i < 0 {
			continue
		}
		name := t[:i]
		rest := strings.TrimSpace(t[i:])
		rest = strings.TrimPrefix(rest, ":")
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "[") {
			// "[out]: text" keeps the direction in front
			j := strings.Index(rest, "]")
			dir := rest[:j+1]
			rest = dir + " " + strings.TrimSpace(strings.TrimPrefix(rest[j+1:], ":"))
		}
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "-"))
		if _, ok := m[name]; !ok {
			m[name] = rest
		}
	}
	return m
}
