package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Entry is one line of `recfs ls DIR` or `recfs ls s3://bucket/prefix/`:
// a file or object with its record format, or a directory or prefix.
type Entry struct {
	Name   string `json:"name"`
	Dir    bool   `json:"dir"`
	Size   int64  `json:"size"`
	Format string `json:"format"` // a record format, "other", "?" or "dir"
	// Published, for an S3 object, tells whether its index is published
	// beside it (NAME.recfs-idx, see `recfs index --publish`); nil for a
	// local file, whose line has no such column or field.
	Published *bool `json:"published_index,omitempty"`
}

// EntryWriter writes the lines of a listing: aligned columns (format,
// size, the published column where Published is set, name; a directory's
// size is "-" and its name ends in "/"), or JSON Lines.
type EntryWriter struct {
	w      *bufio.Writer
	enc    *json.Encoder
	asJSON bool
}

// NewEntryWriter returns a writer of listing lines to out, buffered until
// Flush.
func NewEntryWriter(out io.Writer, asJSON bool) *EntryWriter {
	w := bufio.NewWriter(out)
	return &EntryWriter{w: w, enc: json.NewEncoder(w), asJSON: asJSON}
}

// Write writes e's line.
func (ew *EntryWriter) Write(e Entry) error {
	if ew.asJSON {
		return ew.enc.Encode(e)
	}
	size, name := fmt.Sprint(e.Size), e.Name
	if e.Dir {
		size, name = "-", name+"/"
	}
	if e.Published == nil {
		_, err := fmt.Fprintf(ew.w, "%-15s %12s  %s\n", e.Format, size, name)
		return err
	}
	pub := "-"
	if *e.Published && !e.Dir {
		pub = "published"
	}
	_, err := fmt.Fprintf(ew.w, "%-15s %12s  %-9s  %s\n", e.Format, size, pub, name)
	return err
}

// Flush writes out what is buffered.
func (ew *EntryWriter) Flush() error { return ew.w.Flush() }

// WriteEntries writes the lines of ents to out (see EntryWriter).
func WriteEntries(out io.Writer, ents []Entry, asJSON bool) error {
	w := NewEntryWriter(out, asJSON)
	for _, e := range ents {
		if err := w.Write(e); err != nil {
			return err
		}
	}
	return w.Flush()
}
