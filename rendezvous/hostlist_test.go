package rendezvous

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "node[01-04,07],gpu3", want: []string{"node01", "node02", "node03", "node04", "node07", "gpu3"}},
		{in: "gpu3", want: []string{"gpu3"}},
		{in: "a,b c\tb", want: []string{"a", "b", "c", "b"}},
		{in: " a,,b, ", want: []string{"a", "b"}},
		{in: "n[8-11]", want: []string{"n8", "n9", "n10", "n11"}},
		{in: "n[08-11]", want: []string{"n08", "n09", "n10", "n11"}},
		{in: "n[098-100]", want: []string{"n098", "n099", "n100"}},
		{in: "n[5]", want: []string{"n5"}},
		{in: "[1-2]", want: []string{"1", "2"}},
		{in: "r[1-2]n[1-2]", want: []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{in: "n[1-2]-ib", want: []string{"n1-ib", "n2-ib"}},
		{in: "a[1,3],b[2-3],c", want: []string{"a1", "a3", "b2", "b3", "c"}},
		{in: "host-1.example.com,host-2.example.com", want: []string{"host-1.example.com", "host-2.example.com"}},
		{in: "", err: "no hosts"},
		{in: " , ", err: "no hosts"},
		{in: "n[1-", err: "'[' without ']'"},
		{in: "n1-2]", err: "']' without '['"},
		{in: "n[1[2]]", err: "'[' without ']'"},
		{in: "n[]", err: "empty brackets"},
		{in: "n[a-b]", err: `"a" is not a number`},
		{in: "n[1,,2]", err: `"" is not a number`},
		{in: "n[3-1]", err: `range "3-1" runs backwards`},
		{in: "n[1-2-3]", err: `"2-3" is not a number`},
		{in: "n[0-1234567890]", err: "is not a number of 1 to 9 digits"},
		{in: "n[0-65535]", want: nil}, // exactly MaxHosts: checked below
		{in: "n[0-65536]", err: "more than 65536 hosts"},
		{in: "n[0-255][0-256]", err: "more than 65536 hosts"},
		{in: "a[0-40000],b[0-40000]", err: "more than 65536 hosts"},
	}
	for _, c := range cases {
		got, err := ExpandHostlist(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ExpandHostlist(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ExpandHostlist(%q): %v", c.in, err)
			continue
		}
		if c.want == nil {
			if len(got) != MaxHosts || got[0] != "n0" || got[MaxHosts-1] != "n65535" {
				t.Errorf("ExpandHostlist(%q) gave %d hosts from %q to %q", c.in, len(got), got[0], got[len(got)-1])
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ExpandHostlist(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseTasksPerNode(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "2(x3),1", want: []int{2, 2, 2, 1}},
		{in: "8", want: []int{8}},
		{in: "4(x2)", want: []int{4, 4}},
		{in: "1,2,3", want: []int{1, 2, 3}},
		{in: "", err: "is not a task count"},
		{in: "0", err: `"0" is not a task count`},
		{in: "x", err: "is not a task count"},
		{in: "2(x0)", err: `"0" is not a node count`},
		{in: "2(x3", err: "missing ')'"},
		{in: "2(xa)", err: "is not a node count"},
		{in: "2(x65537)", err: "more than 65536 nodes"},
		{in: "1(x65536),1", err: "more than 65536 nodes"},
	}
	for _, c := range cases {
		got, err := parseTasksPerNode(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseTasksPerNode(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("parseTasksPerNode(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzExpandHostlist: any input gives an error or 1 to MaxHosts non-empty
// names without separators or brackets, the same each time; lists without
// brackets come back as their names.
func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"node[01-04,07],gpu3", "a,b", "r[1-2]n[1-2]", "n[0-65535]", "n[9-10", "]", "[[", "a[1-2],,b", "n[001-3]x[2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ExpandHostlist(in)
		again, err2 := ExpandHostlist(in)
		if (err == nil) != (err2 == nil) || !slices.Equal(got, again) {
			t.Fatalf("ExpandHostlist(%q) is not deterministic", in)
		}
		if err != nil {
			if got != nil {
				t.Fatalf("ExpandHostlist(%q) gave hosts and an error", in)
			}
			return
		}
		if len(got) == 0 || len(got) > MaxHosts {
			t.Fatalf("ExpandHostlist(%q) gave %d hosts", in, len(got))
		}
		for _, h := range got {
			if h == "" || strings.ContainsAny(h, "[], \t\n\r") {
				t.Fatalf("ExpandHostlist(%q) gave host %q", in, h)
			}
		}
		if !strings.ContainsAny(in, "[]") {
			want := strings.FieldsFunc(in, func(r rune) bool { return strings.ContainsRune(", \t\n\r", r) })
			if !slices.Equal(got, want) {
				t.Fatalf("ExpandHostlist(%q) = %q, want %q", in, got, want)
			}
		}
	})
}

// FuzzParseTasksPerNode: an error or 1 to MaxHosts positive counts.
func FuzzParseTasksPerNode(f *testing.F) {
	for _, s := range []string{"2(x3),1", "8", "1(x65536)", "(x)", "3(x2),"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parseTasksPerNode(in)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > MaxHosts {
			t.Fatalf("parseTasksPerNode(%q) gave %d nodes", in, len(got))
		}
		for _, n := range got {
			if n < 1 {
				t.Fatalf("parseTasksPerNode(%q) gave count %d", in, n)
			}
		}
	})
}
