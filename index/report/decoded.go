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
	e := emitter{m: m, w: w, path: path}
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
				e.out, err = s.RenderPayload(e.out[:0], t, 0, n, raw)
			} else {
				e.out, err = s.Render(e.out[:0], t, 0, n)
			}
			if err := e.record(err); err != nil {
				return err
			}
		}
	}
	if all {
		return e.summary(s, t)
	}
	return w.Flush()
}

// emitter writes the renderings of records, labelled as its Mode says,
// reusing its buffers from record to record.
type emitter struct {
	m        Mode
	w        *bufio.Writer
	path     string
	out, lab []byte // the record's rendering; room for its labelled lines
}

// record writes e.out, the rendering of a record whose error was rerr:
// then m.Sep, or, when it failed, the error naming the file (w flushed).
func (e *emitter) record(rerr error) error {
	if e.m.Label != "" && (e.m.Number || e.m.JSON) {
		e.lab = LabelLines(e.lab[:0], e.out, e.m.Label, e.m.JSON)
		e.out, e.lab = e.lab, e.out
	}
	if _, err := e.w.Write(e.out); err != nil {
		return err
	}
	if rerr != nil {
		e.w.Flush()
		return fmt.Errorf("%s: %w", e.path, rerr)
	}
	_, err := e.w.WriteString(e.m.Sep)
	return err
}

// summary writes the decoder's summary of src and flushes w.
func (e *emitter) summary(s *decode.Session, src decode.Records) error {
	out, _, err := s.Summary(e.out[:0], src, 0)
	if _, werr := e.w.Write(out); werr != nil {
		return werr
	}
	if err != nil {
		e.w.Flush()
		return fmt.Errorf("%s: %w", e.path, err)
	}
	return e.w.Flush()
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
