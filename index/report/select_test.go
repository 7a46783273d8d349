package report

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
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

// TestSplitOperands: the files come first, up to the first word that is a
// selection; a malformed selection that names no file is a usage error
// naming it, one that names a file is a file, and a non-selection after
// the selections is a usage error that says the files come first.
func TestSplitOperands(t *testing.T) {
	files := []string{"a", "5-3", "last:0", "b"}
	stat := func(name string) (os.FileInfo, error) {
		if slices.Contains(files, name) {
			return nil, nil
		}
		return nil, fs.ErrNotExist
	}
	for _, c := range []struct {
		args []string
		want string // files and selections, or the error
	}{
		{nil, "[] []"},
		{[]string{"a"}, "[a] []"},
		{[]string{"7"}, "[7] []"},
		{[]string{"a", "b", "1", "2-4", "last:3"}, "[a b] [{1 2} {2 5} last:3]"},
		{[]string{"a", "5-3", "1"}, "[a 5-3] [{1 2}]"},
		{[]string{"a", "last:0"}, "[a last:0] []"},
		{[]string{"a", "nosuch", "1-"}, "[a nosuch] [{1 -1}]"},
		{[]string{"a", "4-2"}, `usage: bad record selection "4-2" (want N, A-B with A <= B, or A-)`},
		{[]string{"a", "-3"}, `usage: bad record selection "-3" (want N, A-B, A- or last:K)`},
		{[]string{"a", "last:x", "b"}, `usage: bad record selection "last:x" (want last:K with K >= 1)`},
		{[]string{"a", "1", "b"}, `usage: bad record selection "b" (want N, A-B, A- or last:K) (the files come first: FILE... SELECTION...)`},
	} {
		f, sel, err := SplitOperands(c.args, stat)
		got := fmt.Sprint(f, " ", sel)
		if err != nil {
			got = "error: " + err.Error()
			if IsUsage(err) {
				got = "usage: " + err.Error()
			}
		}
		if got != c.want {
			t.Errorf("SplitOperands(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

// FuzzSplitOperands: without an error, the files and the selections'
// words make up the command line, the first word is a file, and every
// error is a usage error.
func FuzzSplitOperands(f *testing.F) {
	for _, s := range []string{"a 1 2-4", "a 5-3", "x last:2 y", "a -1", "a b c"} {
		f.Add(s)
	}
	none := func(string) (os.FileInfo, error) { return nil, fs.ErrNotExist }
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		files, sel, err := SplitOperands(args, none)
		if err != nil {
			if !IsUsage(err) {
				t.Fatalf("SplitOperands(%q): %v is not a usage error", args, err)
			}
			return
		}
		if len(files)+len(sel) != len(args) || len(args) > 0 && (len(files) == 0 || files[0] != args[0]) {
			t.Fatalf("SplitOperands(%q) = %q, %v", args, files, sel)
		}
	})
}
