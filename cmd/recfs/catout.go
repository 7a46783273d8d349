package main

import (
	"bufio"
	"context"

	"github.com/recfs/recfs/index"
)

// catMode is how cat writes one record that is not decoded: its payload,
// after its number with --number, or a JSON line with --json; then the
// separator (not after a JSON line).
type catMode struct {
	asJSON, number, text bool
	sep                  string
	buf                  []byte // copy buffer of copyBufSize bytes
}

// write writes record n of t to w as m says.
func (m catMode) write(ctx context.Context, w *bufio.Writer, t *index.Table, n int64) error {
	var err error
	switch {
	case m.asJSON:
		return writeRecordJSON(ctx, w, t, n, m.buf, m.text)
	case m.number:
		if _, err = w.WriteString(recordNumber(n, t.Len()) + "\t"); err == nil {
			err = copyRecord(ctx, w, t, n, m.buf)
		}
	default:
		err = copyRecord(ctx, w, t, n, m.buf)
	}
	if err != nil {
		return err
	}
	_, err = w.WriteString(m.sep)
	return err
}
