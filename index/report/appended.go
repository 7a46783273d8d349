package report

import (
	"fmt"
	"io"

	"github.com/recfs/recfs/index"
)

// Appended is what `recfs append` prints: the records it appended to a
// file. It is also the one-line object of --json, whose fields are in name
// order.
type Appended struct {
	File    string  `json:"file"`    // the FILE argument
	First   int64   `json:"first"`   // number of the first record appended
	Last    int64   `json:"last"`    // of the last one (First-1 when none was)
	Moved   []Moved `json:"moved"`   // the tails moved out of the file first ([] when none)
	Records int64   `json:"records"` // records appended
	Status  string  `json:"status"`  // "appended"
	Total   int64   `json:"total"`   // records in the file after the append
}

// AppendedOf is what an append of count records to the file at path,
// numbered from first on, says (it went at the end, under the file's lock:
// the file now holds first+count); moved are the tails it moved out first.
func AppendedOf(path string, first, count int64, moved []Moved) Appended {
	total := first + count
	return Appended{File: path, First: first, Last: total - 1, Moved: moved, Records: count, Status: "appended", Total: total}
}

// WriteText writes a as one line: "appended 2 record(s) to F as
// 000010..000011" (numbered as the records' names in a mount), without
// the numbers when none was appended.
func (a Appended) WriteText(w io.Writer) error {
	if a.Records == 0 {
		_, err := fmt.Fprintf(w, "appended 0 record(s) to %s\n", a.File)
		return err
	}
	_, err := fmt.Fprintf(w, "appended %d record(s) to %s as %s..%s\n", a.Records, a.File,
		RecordNumber(a.First, a.Total), RecordNumber(a.Last, a.Total))
	return err
}

// Moved is a tail an append moved out of a file (see index.MovedTail), as
// --json lists it; String is the line on standard error.
type Moved struct {
	Offset  int64  `json:"offset"`
	Bytes   int64  `json:"bytes"`
	SavedTo string `json:"saved_to"` // "" when a recordio journal rolled back an interrupted append
	Reason  string `json:"reason"`

	path string // the file, for the line
}

// MovedOf is what m says.
func MovedOf(m index.MovedTail) Moved {
	return Moved{Offset: m.Off, Bytes: m.Len, SavedTo: m.SavedTo, Reason: m.Reason, path: m.Path}
}

// String says what was moved out of the file and where it went: "moved
// the 10 bytes at offset 4096 out of F (a torn record); saved in DIR/F.1".
func (m Moved) String() string {
	s := fmt.Sprintf("moved the %d bytes at offset %d out of %s (%s)", m.Bytes, m.Offset, m.path, m.Reason)
	if m.SavedTo != "" {
		s += "; saved in " + m.SavedTo
	}
	return s
}
