package report

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestParseRanges(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // fmt of the ranges, or "usage"
	}{
		{nil, "[]"},
		{[]string{"0"}, "[{0 1}]"},
		{[]string{"7", "2-4", "9-"}, "[{7 8} {2 5} {9 -1}]"},
		{[]string{"3-3"}, "[{3 4}]"},
		{[]string{"x"}, "usage"},
		{[]string{""}, "usage"},
		{[]string{"-3"}, "usage"},
		{[]string{"4-2"}, "usage"},
		{[]string{"1-x"}, "usage"},
		{[]string{"1-2-3"}, "usage"},
		{[]string{"9223372036854775807-9223372036854775807"}, "usage"},
		{[]string{"last:10", "0"}, "[last:10 {0 1}]"},
		{[]string{"last:0"}, "usage"},
		{[]string{"last:"}, "usage"},
		{[]string{"last:-2"}, "usage"},
	} {
		rs, err := ParseRanges(c.args)
		got := fmt.Sprint(rs)
		if err != nil {
			got = "usage"
			if !IsUsage(err) {
				t.Errorf("%q: error %v is not a usage error", c.args, err)
			}
		}
		if got != c.want {
			t.Errorf("ParseRanges(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

func TestResolveRanges(t *testing.T) {
	for _, c := range []struct {
		rs   []Range
		n    int64
		want string // fmt of the result, or the error
	}{
		{nil, 5, "[{0 5}]"},
		{nil, 0, "[{0 0}]"},
		{[]Range{{2, -1, 0}}, 5, "[{2 5}]"},
		{[]Range{{4, 5, 0}, {0, 1, 0}}, 5, "[{4 5} {0 1}]"},
		{[]Range{{5, 6, 0}}, 5, "record 5 is out of range: the file has 5 records (0-4)"},
		{[]Range{{3, 9, 0}}, 5, "record 5 is out of range: the file has 5 records (0-4)"},
		{[]Range{{5, -1, 0}}, 5, "record 5 is out of range: the file has 5 records (0-4)"},
		{[]Range{{0, 1, 0}}, 0, "record 0 is out of range: the file has no records"},
		{[]Range{{0, -1, 2}}, 5, "[{3 5}]"},
		{[]Range{{0, -1, 9}}, 5, "[{0 5}]"},
		{[]Range{{0, -1, 9}}, 0, "[{0 0}]"},
	} {
		rs, err := Resolve(c.rs, c.n)
		got := fmt.Sprint(rs)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Resolve(%v, %d) = %s, want %s", c.rs, c.n, got, c.want)
		}
	}
}

// FuzzParseRanges checks that any selection either is a usage error or
// yields well-formed ranges that print back to an equivalent selection.
func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{"0", "3-7", "9-", "-1", "x", "1-2-3", "18446744073709551616", "last:3", "last:0", "last:-1", "last:+2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRanges([]string{s})
		if err != nil {
			if !IsUsage(err) {
				t.Fatalf("%q: non-usage error %v", s, err)
			}
			return
		}
		if len(rs) != 1 {
			t.Fatalf("%q: %d ranges", s, len(rs))
		}
		r := rs[0]
		if r.Lo < 0 || (r.Hi >= 0 && r.Hi <= r.Lo) || r.Hi < -1 {
			t.Fatalf("%q: bad range %+v", s, r)
		}
		var back string
		switch {
		case r.Last > 0:
			back = LastPrefix + strconv.FormatInt(r.Last, 10)
		case r.Hi < 0:
			back = strconv.FormatInt(r.Lo, 10) + "-"
		case r.Hi == r.Lo+1 && !strings.Contains(s, "-"):
			back = strconv.FormatInt(r.Lo, 10)
		default:
			back = strconv.FormatInt(r.Lo, 10) + "-" + strconv.FormatInt(r.Hi-1, 10)
		}
		if again, err := ParseRanges([]string{back}); err != nil || again[0] != r {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, r, back, again, err)
		}
		// Resolving against a file never panics and stays in bounds.
		for _, n := range []int64{0, 1, 1000} {
			if out, err := Resolve(rs, n); err == nil && (out[0].Lo < 0 || out[0].Hi > n || out[0].Lo > out[0].Hi) {
				t.Fatalf("%q against %d records: %+v", s, n, out)
			}
		}
	})
}
