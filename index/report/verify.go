package report

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/recfs/recfs/index"
)

// Verification is what `recfs verify` prints about a table, and the object
// of `recfs verify --json`.
type Verification struct {
	Path         string      `json:"path"`
	Format       string      `json:"format"`
	Flavor       string      `json:"flavor"`
	Size         int64       `json:"size"`
	Records      int64       `json:"records"`       // records found by the scan
	PayloadBytes int64       `json:"payload_bytes"` // bytes read back through the index
	TrailerBytes int64       `json:"trailer_bytes"` // trailer bytes read back; 0 if none
	Damage       []Damage    `json:"damage"`        // ranges the scan skipped (kind "stale": a recycled log's end, not damage)
	ReadErrors   []ReadError `json:"read_errors"`   // records that failed on read-back
	OK           bool        `json:"ok"`            // no damage (a stale tail is none) and no read errors
}

// ReadError is a record (N >= 0) or the trailer (N = -1) whose bytes could
// not be read back.
type ReadError struct {
	N      int64  `json:"n"`
	Offset int64  `json:"offset"` // file offset of the record's framing
	Error  string `json:"error"`
}

// countingDiscard counts the bytes written to it.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// Verify reads every record and the trailer of t (the file at path) back
// through the index until ctx ends, and reports what failed. progress, if
// not nil, gets payload bytes read so far out of the total.
func Verify(ctx context.Context, path string, t *index.Table, progress func(done, total int64)) (Verification, error) {
	inf := t.Info()
	v := Verification{
		Path: path, Format: inf.Format.String(), Flavor: inf.Flavor, Size: inf.FileSize,
		Records: t.Len(), Damage: damageList(t.Damage()), ReadErrors: []ReadError{},
	}
	buf := make([]byte, CopyBufSize)
	var sink countingDiscard
	for n := int64(0); n < t.Len(); n++ {
		if err := ctx.Err(); err != nil {
			return v, err
		}
		before := sink.n
		if err := CopyRecord(ctx, &sink, t, n, buf); err != nil {
			v.ReadErrors = append(v.ReadErrors, ReadError{N: n, Offset: t.Offset(n), Error: err.Error()})
		} else if got := sink.n - before; got != t.Size(n) {
			v.ReadErrors = append(v.ReadErrors, ReadError{N: n, Offset: t.Offset(n),
				Error: fmt.Sprintf("read %d bytes of a %d-byte record", got, t.Size(n))})
		}
		if progress != nil {
			progress(sink.n, inf.Bytes)
		}
	}
	v.PayloadBytes = sink.n
	if t.HasTrailer() {
		var tr countingDiscard
		if err := CopyTrailer(&tr, t); err != nil {
			v.ReadErrors = append(v.ReadErrors, ReadError{N: -1, Offset: -1, Error: err.Error()})
		}
		v.TrailerBytes = tr.n
	}
	damage, _ := splitStale(v.Damage)
	v.OK = len(damage) == 0 && len(v.ReadErrors) == 0
	return v, nil
}

// WriteText writes the human-readable report of v.
func (v Verification) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "file:     %s\n", v.Path)
	fmt.Fprintf(&b, "format:   %s\n", v.Format)
	if v.Flavor != "" && v.Flavor != v.Format {
		fmt.Fprintf(&b, "flavor:   %s\n", v.Flavor)
	}
	fmt.Fprintf(&b, "records:  %d, %d payload bytes read back\n", v.Records, v.PayloadBytes)
	if v.TrailerBytes > 0 {
		fmt.Fprintf(&b, "trailer:  %d bytes read back\n", v.TrailerBytes)
	}
	writeDamageText(&b, "damage", v.Damage)
	for _, e := range v.ReadErrors {
		if e.N < 0 {
			fmt.Fprintf(&b, "unreadable trailer: %s\n", e.Error)
		} else {
			fmt.Fprintf(&b, "unreadable record %d (file offset %d): %s\n", e.N, e.Offset, e.Error)
		}
	}
	if v.OK {
		b.WriteString("OK\n")
	} else {
		fmt.Fprintf(&b, "DAMAGED\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
