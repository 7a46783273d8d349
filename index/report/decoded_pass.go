package report

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// WritePass writes every record of p, a pass over the file at path,
// decoded by s to w, as WriteDecoded writes all the records of a table
// (the same bytes, the decoder's summary last) and flushes w. Each record
// is rendered as the pass finds it: the output starts before the end of
// the file is known. After a record that fails to render, the pass goes
// on to the end of the file unrendered, so that p.Damage is complete
// (p.Done) as it is after a table's build; a failed read or ctx ends it
// early. m.Number needs the record count's width: the caller's Output
// says it.
func (m Mode) WritePass(ctx context.Context, w *bufio.Writer, s *decode.Session, p *index.Pass, path string) error {
	e := emitter{m: m, w: w, path: path}
	src := passRecords{p}
	for p.Next() {
		if err := ctx.Err(); err != nil {
			w.Flush()
			return err
		}
		var rerr error
		e.out, rerr = renderPass(e.out[:0], s, p, src)
		if err := e.record(rerr); err != nil {
			if rerr != nil && errors.Is(err, rerr) {
				for p.Next() { // to the end, for the damage
				}
			}
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		w.Flush()
		return err
	}
	if err := p.Err(); err != nil {
		w.Flush()
		return fmt.Errorf("%s: %w", path, err)
	}
	return e.summary(s, src)
}

// renderPass appends the rendering of p's current record. A record that
// is too large for s, or that the pass fails to read, goes through
// s.Render, which says what is wrong as it does for a table's record.
func renderPass(dst []byte, s *decode.Session, p *index.Pass, src passRecords) ([]byte, error) {
	if p.Size() <= s.MaxRecord() {
		if raw, err := p.Payload(); err == nil {
			return s.RenderPayload(dst, src, 0, p.N(), raw)
		}
	}
	return s.Render(dst, src, 0, p.N())
}

// passRecords is a Pass as the decode.Records of a session: its records
// so far, of which only the current one can be read.
type passRecords struct{ p *index.Pass }

// errPassed: a pass reads its current record only.
var errPassed = errors.New("report: a pass has moved on from this record")

func (r passRecords) Len() int64 { return r.p.Len() }

func (r passRecords) Size(n int64) int64 {
	if n != r.p.N() {
		return -1
	}
	return r.p.Size()
}

func (r passRecords) ReadAt(n int64, b []byte, off int64) (int, error) {
	if n != r.p.N() {
		return 0, errPassed
	}
	if len(b) == 0 {
		return 0, nil
	}
	raw, err := r.p.Payload()
	if err != nil {
		return 0, err
	}
	if off >= int64(len(raw)) {
		return 0, io.EOF
	}
	k := copy(b, raw[off:])
	if k < len(b) {
		return k, io.EOF
	}
	return k, nil
}
