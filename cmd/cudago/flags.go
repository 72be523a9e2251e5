package main

// Flag and usage helpers shared by the commands: repeatable flags, flags
// mixed with arguments, usage errors and failures.

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

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
