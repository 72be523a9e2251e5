package main

// Flag and usage helpers shared by the commands: repeatable flags, flags
// mixed with arguments, usage errors and failures.

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// formValue wraps a flag of the flag package's own types so that a bad
// value says the form wanted: flag reports only "parse error" for them.
type formValue struct {
	flag.Value
	form string
}

func (v formValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		if msg := err.Error(); msg != "parse error" {
			return fmt.Errorf("%s: want %s", msg, v.form) // "value out of range"
		}
		return fmt.Errorf("want %s", v.form)
	}
	return nil
}

// IsBoolFlag keeps -json meaning -json=true.
func (v formValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// describeForms wraps every flag of fs whose type is one of the flag
// package's, so that its parse errors name the form wanted. Flags of the
// commands' own types (listFlag, imageFlag) say it already.
func describeForms(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		var form string
		switch g.Get().(type) {
		case bool:
			form = "true or false (or the flag alone for true)"
		case int, int64:
			form = "an integer such as 10"
		case uint, uint64:
			form = "a non-negative integer such as 10"
		case float64:
			form = "a number such as 1.5"
		case time.Duration:
			form = "a duration such as 500ms, 2s or 1m30s"
		default:
			return
		}
		f.Value = formValue{f.Value, form}
	})
}

// flagError is the message for a parse error of fs: what flag returned,
// plus the form the flag takes or the flags there are.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		if f := fs.Lookup(name); f != nil {
			arg, usage := flag.UnquoteUsage(f)
			return fmt.Sprintf("flag -%s needs a value: -%s %s: %s", name, name, arg, usage)
		}
	}
	if strings.HasPrefix(msg, "flag provided but not defined: -") {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
		sort.Strings(names)
		if len(names) == 0 {
			return msg + "; this command takes no flags"
		}
		return msg + "; the flags are " + strings.Join(names, ", ")
	}
	if strings.HasPrefix(msg, "bad flag syntax: ") {
		return msg + " (want -name, -name value or -name=value)"
	}
	return msg
}

// parseFlags parses args with fs, printing a parse error (with the flag's
// form) as "cudago name: ..." on stderr instead of flag's own message.
func parseFlags(name string, fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil && err != flag.ErrHelp {
		fmt.Fprintf(stderr, "cudago %s: %s\n", name, flagError(fs, err))
	}
	return err
}

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
		if err := parseFlags(name, fs, rest, stderr); err != nil {
			c := commands[name]
			if err == flag.ErrHelp {
				commandUsage(c, stdout)
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

// parseFiles is parseInterspersed for the commands whose arguments that
// are not flags are all files: it returns them.
func parseFiles(name string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	var files []string
	code, ok := parseInterspersed(name, fs, args, stdout, stderr, func(a string) { files = append(files, a) })
	return files, code, ok
}

// parseOneFile is parseFiles for the commands that take exactly one file
// (what names it in the usage error: "file", ".cu file").
func parseOneFile(name, what string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (string, int, bool) {
	files, code, ok := parseFiles(name, fs, args, stdout, stderr)
	if !ok {
		return "", code, false
	}
	if len(files) != 1 {
		return "", usageError(stderr, name, "want one %s, have %d", what, len(files)), false
	}
	return files[0], exitOK, true
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
