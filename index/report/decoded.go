package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// WriteDecoded writes the records rs of t (the file at path) decoded by s
// to w, each followed by m.Sep and labelled with m.Label under m.Number or
// m.JSON; then, when all records were asked for, the decoder's summary. It
// flushes w. Many records close together (all, or runs of CursorMin
// records on average) are read through a t.Cursor (large reads in file
// order); the others, and any the cursor cannot serve, are read alone.
// Many records close together whose decoder learns nothing (see
// [decode.Session.Learns]) are rendered on GOMAXPROCS goroutines, a chunk
// of the file each, and written in order: the output is the same.
func (m Mode) WriteDecoded(ctx context.Context, w *bufio.Writer, s *decode.Session, t *index.Table, path string, rs []Range, all bool) error {
	r := renderer{m: m, s: s, t: t, path: path}
	if n := Count(rs); all || n >= CursorMin*int64(len(rs)) {
		if workers := runtime.GOMAXPROCS(0); workers > 1 && !s.Learns() && n >= ParallelMin {
			if err := r.writePar(ctx, w, rs, workers); err != nil {
				return err
			}
			return r.writeSummary(w, all)
		}
		r.cur = t.Cursor()
	}
	var out []byte
	for _, rg := range rs {
		for n := rg.Lo; n < rg.Hi; n++ {
			if err := ctx.Err(); err != nil {
				w.Flush()
				return err
			}
			var err error
			out, err = r.record(out[:0], n)
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
			if err != nil {
				w.Flush()
				return err
			}
		}
	}
	return r.writeSummary(w, all)
}

// CursorMin is the fewest records per selected run, on average, that
// WriteDecoded reads through a cursor: a cursor's read is a megabyte, too
// much for a few records of a large file, or for many far apart.
const CursorMin = 64

// ParallelMin is the fewest records read through a cursor that
// WriteDecoded renders on several goroutines.
const ParallelMin = 1024

// renderer renders records of t with s as m says, reading through cur
// when it is not nil. A renderer is used by one goroutine at a time.
type renderer struct {
	m    Mode
	s    *decode.Session
	t    *index.Table
	cur  *index.Cursor
	path string
	lab  []byte // labelling's scratch
}

// record appends the view of record n to dst, labelled and followed by
// the separator. On error it appends what the decoder wrote before the
// fault (labelled, without the separator) and returns the error naming
// the file.
func (r *renderer) record(dst []byte, n int64) ([]byte, error) {
	start := len(dst)
	var err error
	if raw, ok := r.cur.Payload(n, r.s.MaxRecord()); ok {
		dst, err = r.s.RenderPayload(dst, r.t, 0, n, raw)
	} else {
		dst, err = r.s.Render(dst, r.t, 0, n)
	}
	if m := r.m; m.Label != "" && (m.Number || m.JSON) {
		r.lab = LabelLines(r.lab[:0], dst[start:], m.Label, m.JSON)
		dst = append(dst[:start], r.lab...)
	}
	if err != nil {
		return dst, fmt.Errorf("%s: %w", r.path, err)
	}
	return append(dst, r.m.Sep...), nil
}

// run appends the views of the records rs to dst, up to the first that
// fails (its partial view included) or until ctx is done.
func (r *renderer) run(ctx context.Context, dst []byte, rs []Range) ([]byte, error) {
	for _, rg := range rs {
		for n := rg.Lo; n < rg.Hi; n++ {
			if err := ctx.Err(); err != nil {
				return dst, err
			}
			var err error
			if dst, err = r.record(dst, n); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// writeSummary writes the decoder's summary when all records were
// written, and flushes w.
func (r *renderer) writeSummary(w *bufio.Writer, all bool) error {
	if all {
		out, _, err := r.s.Summary(nil, r.t, 0)
		if _, werr := w.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("%s: %w", r.path, err)
		}
	}
	return w.Flush()
}

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
