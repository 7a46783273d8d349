package main

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"unicode/utf8"
)

func TestUnescape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""}, {"plain", "plain"}, {`\n`, "\n"}, {`\t|\t`, "\t|\t"}, {`\x1e`, "\x1e"},
		{`\000`, "\x00"}, {`\0`, "\x00"}, {`a\0b`, "a\x00b"}, {`\08`, "\x008"}, {`\\`, `\`}, {`\xff\"\'`, "\xff\"'"}, {"\xff\\n", "\xff\n"}, {`é\n`, "é\n"}, {`\u00e9`, "é"},
	} {
		got, err := unescape(c.in)
		if err != nil || got != c.want {
			t.Errorf("unescape(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`\q`, `\x1`, `a\`} {
		if _, err := unescape(bad); exitCode(err) != exitUsage {
			t.Errorf("unescape(%q): err %v, want a usage error", bad, err)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{usagef("bad"), 2},
		{fmt.Errorf("wrapped: %w", usagef("bad")), 2},
		{&exitError{code: 1, silent: true, err: errDamaged}, 1},
		{errors.New(`unknown command "x" for "recfs"`), 2},
		{errors.New("unknown shorthand flag: 'q' in -q"), 2},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// FuzzUnescape checks that quoting any valid UTF-8 string with Go escapes
// and unescaping it gives the string back, and that no input panics.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"", "\n", "a\tb", "\x00\xff", "é", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = unescape(s)
		if !utf8.ValidString(s) {
			return
		}
		q := strconv.Quote(s)
		got, err := unescape(q[1 : len(q)-1])
		if err != nil || got != s {
			t.Fatalf("unescape(%s) = %q, %v; want %q", q, got, err, s)
		}
	})
}
