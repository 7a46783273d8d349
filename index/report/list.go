package report

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/recfs/recfs/index"
)

// ListLine is one line of `recfs ls --json` (JSON Lines: one object a
// line).
type ListLine struct {
	File   string `json:"file,omitempty"` // the file, when ls lists several
	N      int64  `json:"n"`              // record number
	Offset int64  `json:"offset"`         // file offset of the record's first framing byte
	Length int64  `json:"length"`         // payload length in bytes
	// KafkaOffset, for Kafka segments, is the record's Kafka offset.
	KafkaOffset *int64 `json:"kafka_offset,omitempty"`
}

// appendRight appends v in decimal, right-aligned in width columns.
func appendRight(b []byte, v int64, width int) []byte {
	var d [20]byte
	digits := strconv.AppendInt(d[:0], v, 10)
	for i := len(digits); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, digits...)
}

// lister writes the lines of `recfs ls FILE`.
type lister struct {
	t      *index.Table
	w      *bufio.Writer
	enc    *json.Encoder
	asJSON bool
	file   string
	nw, ow int // widths of the number and offset columns
	line   []byte
}

// List writes a line for each record of rs in t to out until ctx ends:
// number, file offset, length and, where the format numbers its records,
// that number, in aligned columns; with asJSON a JSON line each, with a
// "file" field when file is not empty.
func List(ctx context.Context, out io.Writer, t *index.Table, rs []Range, asJSON bool, file string) error {
	w := bufio.NewWriterSize(out, 64<<10)
	// Column widths from the largest possible values, so the output
	// streams without a first pass.
	l := &lister{t: t, w: w, enc: json.NewEncoder(w), asJSON: asJSON, file: file,
		nw: len(strconv.FormatInt(max(t.Len()-1, 0), 10)),
		ow: len(strconv.FormatInt(t.Info().FileSize, 10))}
	for _, r := range rs {
		for n := r.Lo; n < r.Hi; n++ {
			if n&0xfff == 0 && ctx.Err() != nil {
				w.Flush()
				return ctx.Err()
			}
			if err := l.write(n); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// write writes record n's line: number, offset, length and Kafka offset.
func (l *lister) write(n int64) error {
	t := l.t
	seq, hasSeq := t.Seq(n)
	if l.asJSON {
		j := ListLine{File: l.file, N: n, Offset: t.Offset(n), Length: t.Size(n)}
		if hasSeq {
			j.KafkaOffset = &seq
		}
		return l.enc.Encode(j)
	}
	line := appendRight(l.line[:0], n, l.nw)
	line = appendRight(append(line, "  "...), t.Offset(n), l.ow)
	line = strconv.AppendInt(append(line, "  "...), t.Size(n), 10)
	if hasSeq {
		line = strconv.AppendInt(append(line, "  "...), seq, 10)
	}
	l.line = append(line, '\n')
	_, err := l.w.Write(l.line)
	return err
}
