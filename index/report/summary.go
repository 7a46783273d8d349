package report

import (
	"fmt"
	"io"
)

// Summary counts what a command run on many record files (recfs info,
// verify, index with several operands) found; String is the line that
// ends its text output.
type Summary struct {
	Files   int    // record files the command ran on
	Bad     int    // of them, found bad (see BadWord)
	Failed  int    // of them, failed
	Other   int    // files skipped, not record files
	BadWord string // what a bad file is ("damaged"); "" leaves Bad out
}

// String returns the summary line, e.g. "3 record files: 1 ok, 1 damaged,
// 1 failed; 2 other files skipped": the files neither bad nor failed are
// ok, and the skipped files are named only when there are some.
func (s Summary) String() string {
	line := fmt.Sprintf("%d record %s: %d ok", s.Files, Plural(s.Files, "file", "files"), s.Files-s.Bad-s.Failed)
	if s.BadWord != "" {
		line += fmt.Sprintf(", %d %s", s.Bad, s.BadWord)
	}
	line += fmt.Sprintf(", %d failed", s.Failed)
	if s.Other > 0 {
		line += fmt.Sprintf("; %d other %s skipped", s.Other, Plural(s.Other, "file", "files"))
	}
	return line
}

// BlockWriter separates the outputs of many files written to W by a blank
// line: the first non-empty write after Next, when something was written
// before, starts with one. With Lines set (one line per file) it writes
// none.
type BlockWriter struct {
	W            io.Writer
	Lines        bool
	wrote, fresh bool
}

// Next starts the output of another file.
func (b *BlockWriter) Next() { b.fresh = true }

// Write writes p to b.W, after a blank line when p starts another file's
// output.
func (b *BlockWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.fresh && b.wrote && !b.Lines {
		if _, err := io.WriteString(b.W, "\n"); err != nil {
			return 0, err
		}
	}
	b.fresh, b.wrote = false, true
	return b.W.Write(p)
}
