package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// WriteDecoded writes the records rs of t (the file at path) decoded by s
// to w, each followed by m.Sep and labelled with m.Label under m.Number or
// m.JSON; then, when all records were asked for, the decoder's summary. It
// flushes w. Many records close together (all, or runs of CursorMin
// records on average) are read through a t.Cursor (large reads in file
// order); the others, and any the cursor cannot serve, are read alone.
func (m Mode) WriteDecoded(ctx context.Context, w *bufio.Writer, s *decode.Session, t *index.Table, path string, rs []Range, all bool) error {
	var out, lab []byte
	var cur *index.Cursor
	if all || Count(rs) >= CursorMin*int64(len(rs)) {
		cur = t.Cursor()
	}
	for _, r := range rs {
		for n := r.Lo; n < r.Hi; n++ {
			if err := ctx.Err(); err != nil {
				w.Flush()
				return err
			}
			var err error
			if raw, ok := cur.Payload(n, s.MaxRecord()); ok {
				out, err = s.RenderPayload(out[:0], t, 0, n, raw)
			} else {
				out, err = s.Render(out[:0], t, 0, n)
			}
			if m.Label != "" && (m.Number || m.JSON) {
				lab = LabelLines(lab[:0], out, m.Label, m.JSON)
				out, lab = lab, out
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
			if err != nil {
				w.Flush()
				return fmt.Errorf("%s: %w", path, err)
			}
			if _, err := w.WriteString(m.Sep); err != nil {
				return err
			}
		}
	}
	if all {
		var err error
		out, _, err = s.Summary(out[:0], t, 0)
		if _, werr := w.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return w.Flush()
}

// CursorMin is the fewest records per selected run, on average, that
// WriteDecoded reads through a cursor: a cursor's read is a megabyte, too
// much for a few records of a large file, or for many far apart.
const CursorMin = 64

// LabelLines appends out to dst with each line labelled: "label:" before
// text lines, a "file" field first in JSON lines.
func LabelLines(dst, out []byte, label string, asJSON bool) []byte {
	prefix := []byte(label + ":")
	if asJSON {
		f, _ := json.Marshal(label)
		prefix = append(append([]byte(`"file":`), f...), ',')
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line = out[:i+1]
		}
		out = out[len(line):]
		if asJSON && len(line) > 0 && line[0] == '{' {
			dst = append(append(append(dst, '{'), prefix...), line[1:]...)
			continue
		}
		if asJSON {
			dst = append(dst, line...)
			continue
		}
		dst = append(append(dst, prefix...), line...)
	}
	return dst
}
