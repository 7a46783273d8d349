package report

import (
	"bytes"
	"fmt"
	"testing"
)

// TestSummary: the line that ends a multi-file command's text output.
func TestSummary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Files: 1}, "1 record file: 1 ok, 0 failed"},
		{Summary{Files: 3, Failed: 1, Other: 1}, "3 record files: 2 ok, 1 failed; 1 other file skipped"},
		{Summary{Files: 3, Bad: 1, Failed: 1, Other: 2, BadWord: "damaged"}, "3 record files: 1 ok, 1 damaged, 1 failed; 2 other files skipped"},
		{Summary{Files: 2, BadWord: "damaged"}, "2 record files: 2 ok, 0 damaged, 0 failed"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

// TestBlockWriter: a blank line between files' outputs, none before the
// first, none for a file that wrote nothing, none with Lines.
func TestBlockWriter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lines bool
		files []string // each file's output, "" for none
		want  string
	}{
		{false, []string{"a\n", "b\n"}, "a\n\nb\n"},
		{false, []string{"", "a\n", "", "b\n"}, "a\n\nb\n"},
		{true, []string{"a\n", "b\n"}, "a\nb\n"},
	} {
		var out bytes.Buffer
		b := &BlockWriter{W: &out, Lines: c.lines}
		for _, f := range c.files {
			b.Next()
			fmt.Fprint(b, f)
		}
		if out.String() != c.want {
			t.Errorf("lines %v, files %q: %q, want %q", c.lines, c.files, out.String(), c.want)
		}
	}
}
