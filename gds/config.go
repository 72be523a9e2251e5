package gds

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// DefaultConfigPath is where cuFile looks for its configuration when
// CUFILE_ENV_PATH_JSON is not set.
const DefaultConfigPath = "/etc/cufile.json"

// Config is cuFile's configuration as the driver will read it when it
// opens: the cufile.json in effect and the variables that override it.
// ReadConfig reads the two settings that decide the mode; cuFile reads
// the rest itself.
type Config struct {
	// Path is the cufile.json cuFile reads: CUFILE_ENV_PATH_JSON, or
	// DefaultConfigPath.
	Path string
	// Found reports whether Path exists; Err says why it could not be
	// read or parsed, or a variable is not a boolean ("" when fine).
	Found bool
	Err   string
	// AllowCompat and ForceCompat are properties.allow_compat_mode and
	// properties.force_compat_mode.
	AllowCompat, ForceCompat Setting
}

// Setting is a boolean of cuFile's configuration: from its variable
// (CUFILE_ALLOW_COMPAT_MODE) when set, which wins, else from the file.
type Setting struct {
	Set   bool   // false: neither sets it, cuFile's default applies
	Value bool   // when Set
	From  string // the variable's name or the file's path
}

func (s Setting) String() string {
	if !s.Set {
		return "not set (cuFile's default)"
	}
	return fmt.Sprintf("%t (%s)", s.Value, s.From)
}

// ReadConfig reads the configuration cuFile will see, from the
// environment and the file it names.
func ReadConfig() Config { return readConfig(os.Getenv) }

func readConfig(getenv func(string) string) Config {
	c := Config{Path: DefaultConfigPath}
	if p := getenv("CUFILE_ENV_PATH_JSON"); p != "" {
		c.Path = p
	}
	var errs []string
	b, err := os.ReadFile(c.Path)
	switch {
	case err == nil:
		c.Found = true
		allow, force, err := parseConfig(b)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", c.Path, err))
		}
		c.AllowCompat, c.ForceCompat = allow, force
		for _, s := range []*Setting{&c.AllowCompat, &c.ForceCompat} {
			if s.Set {
				s.From = c.Path
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		errs = append(errs, err.Error())
	}
	for _, v := range []struct {
		name string
		s    *Setting
	}{{"CUFILE_ALLOW_COMPAT_MODE", &c.AllowCompat}, {"CUFILE_FORCE_COMPAT_MODE", &c.ForceCompat}} {
		raw := getenv(v.name)
		if raw == "" {
			continue
		}
		b, err := strconv.ParseBool(raw)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q is not a boolean", v.name, raw))
			continue
		}
		*v.s = Setting{Set: true, Value: b, From: v.name}
	}
	c.Err = strings.Join(errs, "; ")
	return c
}

// parseConfig reads properties.allow_compat_mode and force_compat_mode
// from a cufile.json, which may hold // and /* */ comments (NVIDIA's
// does) and trailing commas.
func parseConfig(b []byte) (allow, force Setting, err error) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(stripJSON(b), &doc); err != nil {
		return allow, force, err
	}
	get := func(key string) (Setting, error) {
		raw, ok := doc.Properties[key]
		if !ok {
			return Setting{}, nil
		}
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return Setting{}, fmt.Errorf("properties.%s: %s is not a boolean", key, raw)
		}
		return Setting{Set: true, Value: v}, nil
	}
	allow, err1 := get("allow_compat_mode")
	force, err2 := get("force_compat_mode")
	return allow, force, errors.Join(err1, err2)
}

// stripJSON drops comments and trailing commas, outside strings.
func stripJSON(b []byte) []byte {
	return dropTrailingCommas(dropComments(b))
}

// scanJSON calls f for each byte outside strings, with its index; f
// returns how many bytes it consumed (0: keep the byte). Bytes in strings
// are kept.
func scanJSON(b []byte, f func(i int) (skip int, repl []byte)) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		if skip, repl := f(i); skip > 0 {
			out = append(out, repl...)
			i += skip - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

func dropComments(b []byte) []byte {
	return scanJSON(b, func(i int) (int, []byte) {
		if b[i] != '/' || i+1 >= len(b) {
			return 0, nil
		}
		switch b[i+1] {
		case '/':
			j := i
			for j < len(b) && b[j] != '\n' {
				j++
			}
			return j - i, nil
		case '*':
			j := i + 2
			for j+1 < len(b) && !(b[j] == '*' && b[j+1] == '/') {
				j++
			}
			return min(j+2, len(b)) - i, []byte{' '}
		}
		return 0, nil
	})
}

func dropTrailingCommas(b []byte) []byte {
	return scanJSON(b, func(i int) (int, []byte) {
		if b[i] != ',' {
			return 0, nil
		}
		j := i + 1
		for j < len(b) && strings.IndexByte(" \t\r\n", b[j]) >= 0 {
			j++
		}
		if j < len(b) && (b[j] == '}' || b[j] == ']') {
			return 1, nil
		}
		return 0, nil
	})
}
