package rendezvous

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds what ExpandHostlist returns (and the node count of a
// Slurm tasks-per-node list): more than any cluster has, few enough that a
// corrupt variable cannot make it allocate without bound.
const MaxHosts = 1 << 16

// ExpandHostlist expands a Slurm host list such as "node[01-04,07],gpu3"
// into its hosts, in order: node01 node02 node03 node04 node07 gpu3. A
// range keeps the width of its lower bound ("[08-10]" gives 08 09 10,
// "[8-10]" gives 8 9 10); several bracket groups in one name give every
// combination ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2). Commas and white space
// outside brackets separate names; empty names are skipped. Malformed
// lists, and lists of more than MaxHosts hosts, are errors.
func ExpandHostlist(list string) ([]string, error) {
	var (
		names []string
		total int
	)
	for _, entry := range splitHostlist(list) {
		segs, n, err := parseHostEntry(entry)
		if err != nil {
			return nil, err
		}
		total += n
		if total > MaxHosts {
			return nil, fmt.Errorf("more than %d hosts", MaxHosts)
		}
		names = expandEntry(names, "", segs)
	}
	if len(names) == 0 {
		return nil, errors.New("no hosts in the list")
	}
	return names, nil
}

// splitHostlist splits at commas and white space outside brackets,
// dropping empty names; an unbalanced bracket stays in its name for
// parseHostEntry to report.
func splitHostlist(list string) []string {
	var (
		out   []string
		depth int
		start int
	)
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				continue
			case ',', ' ', '\t', '\n', '\r':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if i > start {
			out = append(out, list[start:i])
		}
		start = i + 1
	}
	return out
}

// hostSeg is literal text (ranges nil) or a bracket group.
type hostSeg struct {
	text   string
	ranges []hostRange
}

type hostRange struct{ lo, hi, width int }

// parseHostEntry parses one name with its bracket groups and counts the
// hosts it stands for.
func parseHostEntry(entry string) ([]hostSeg, int, error) {
	var segs []hostSeg
	count := 1
	for entry != "" {
		open := strings.IndexAny(entry, "[]")
		if open < 0 {
			segs = append(segs, hostSeg{text: entry})
			break
		}
		if entry[open] == ']' {
			return nil, 0, fmt.Errorf("%q: ']' without '['", entry)
		}
		if open > 0 {
			segs = append(segs, hostSeg{text: entry[:open]})
		}
		end := strings.IndexAny(entry[open+1:], "[]")
		if end < 0 || entry[open+1+end] == '[' {
			return nil, 0, fmt.Errorf("%q: '[' without ']'", entry)
		}
		body := entry[open+1 : open+1+end]
		ranges, n, err := parseRanges(body)
		if err != nil {
			return nil, 0, fmt.Errorf("%q: %v", entry, err)
		}
		count *= n
		if count > MaxHosts {
			return nil, 0, fmt.Errorf("%q: more than %d hosts", entry, MaxHosts)
		}
		segs = append(segs, hostSeg{ranges: ranges})
		entry = entry[open+1+end+1:]
	}
	return segs, count, nil
}

// parseRanges parses "01-04,07" and counts its numbers.
func parseRanges(body string) ([]hostRange, int, error) {
	if body == "" {
		return nil, 0, errors.New("empty brackets")
	}
	var (
		out   []hostRange
		count int
	)
	for _, part := range strings.Split(body, ",") {
		loS, hiS, isRange := strings.Cut(part, "-")
		lo, err := rangeNumber(loS)
		if err != nil {
			return nil, 0, err
		}
		hi := lo
		if isRange {
			if hi, err = rangeNumber(hiS); err != nil {
				return nil, 0, err
			}
			if hi < lo {
				return nil, 0, fmt.Errorf("range %q runs backwards", part)
			}
		}
		count += hi - lo + 1
		if count > MaxHosts {
			return nil, 0, fmt.Errorf("more than %d hosts", MaxHosts)
		}
		out = append(out, hostRange{lo: lo, hi: hi, width: len(loS)})
	}
	return out, count, nil
}

// rangeNumber parses up to 9 decimal digits.
func rangeNumber(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number of 1 to 9 digits", s)
	}
	return strconv.Atoi(s)
}

// expandEntry appends prefix + every combination of segs to out.
func expandEntry(out []string, prefix string, segs []hostSeg) []string {
	if len(segs) == 0 {
		return append(out, prefix)
	}
	s := segs[0]
	if s.ranges == nil {
		return expandEntry(out, prefix+s.text, segs[1:])
	}
	for _, r := range s.ranges {
		for n := r.lo; n <= r.hi; n++ {
			out = expandEntry(out, fmt.Sprintf("%s%0*d", prefix, r.width, n), segs[1:])
		}
	}
	return out
}

// parseTasksPerNode expands Slurm's compressed tasks-per-node list,
// "2(x3),1", into one count per node: 2 2 2 1.
func parseTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		num, rep, hasRep := strings.Cut(strings.TrimSpace(part), "(x")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > 1<<20 {
			return nil, fmt.Errorf("%q is not a task count", part)
		}
		times := 1
		if hasRep {
			r, ok := strings.CutSuffix(rep, ")")
			if !ok {
				return nil, fmt.Errorf("%q: missing ')'", part)
			}
			if times, err = strconv.Atoi(r); err != nil || times < 1 {
				return nil, fmt.Errorf("%q: %q is not a node count", part, r)
			}
		}
		if times > MaxHosts-len(out) {
			return nil, fmt.Errorf("more than %d nodes", MaxHosts)
		}
		for range times {
			out = append(out, n)
		}
	}
	return out, nil
}
