package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"unicode/utf8"

	"github.com/recfs/recfs/index"
)

// CopyBufSize is the read size used to stream payloads: the size of a
// [Mode]'s Buf and of the writers callers put around standard output.
const CopyBufSize = 256 << 10

// MaxTextRecord is the largest record a JSON line with text data reads into
// memory to check it is UTF-8 (larger ones are streamed as base64), and the
// largest a [Follower] stages whole.
const MaxTextRecord = 64 << 20

// recordSize returns the size of record n of t, proven first: a table
// loaded from a saved one that lies about it is replaced by a scan (see
// index.Table.ReadAt), and the size given is the source's.
func recordSize(t *index.Table, n int64) (int64, error) {
	if _, err := t.ReadAt(n, nil, 0); err != nil {
		return 0, fmt.Errorf("record %d (file offset %d): %w", n, t.Offset(n), err)
	}
	return t.Size(n), nil
}

// CopyRecord writes record n of t to w, a buffer at a time until ctx
// ends.
func CopyRecord(ctx context.Context, w io.Writer, t *index.Table, n int64, buf []byte) error {
	size, err := recordSize(t, n)
	if err != nil {
		return err
	}
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := t.ReadAt(n, buf[:min(int64(len(buf)), size-off)], off)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return werr
			}
			off += int64(m)
		}
		if err != nil && (err != io.EOF || off < size) {
			return fmt.Errorf("record %d at byte %d (file offset of record %d): %w", n, off, t.Offset(n), err)
		}
		if m == 0 && err == nil {
			return fmt.Errorf("record %d: read returned no data at byte %d", n, off)
		}
	}
	return nil
}

// CopyTrailer writes the trailer of t to w.
func CopyTrailer(w io.Writer, t *index.Table) error {
	_, err := io.Copy(w, io.NewSectionReader(readerAtFunc(t.ReadTrailerAt), 0, t.TrailerSize()))
	if err != nil {
		return fmt.Errorf("trailer: %w", err)
	}
	return nil
}

// readerAtFunc adapts a function to io.ReaderAt.
type readerAtFunc func(p []byte, off int64) (int, error)

func (f readerAtFunc) ReadAt(p []byte, off int64) (int, error) { return f(p, off) }

// RecordLine is one line of `recfs cat --json`: a record.
type RecordLine struct {
	File     string `json:"file,omitempty"` // when several files are written
	N        int64  `json:"n"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	Data     string `json:"data"`
	Encoding string `json:"encoding"`
}

// appendSeqField appends `,"kafka_offset":N` (or "seq") for a record of
// a table whose format numbers its records, nothing otherwise.
func appendSeqField(b []byte, t *index.Table, n int64) []byte {
	seq, ok := t.Seq(n)
	if !ok {
		return b
	}
	b = append(b, `,"`+seqField(t)+`":`...)
	return strconv.AppendInt(b, seq, 10)
}

// writeRecordJSON writes record n of t as one JSON line
// {"file","n","offset","length","data","encoding"} (and "kafka_offset" or
// "seq" where the format numbers records): the payload as text when asked
// and valid UTF-8, else base64 (streamed, so a record of any size costs one
// buffer).
func writeRecordJSON(ctx context.Context, w *bufio.Writer, t *index.Table, n int64, buf []byte, text bool, file string) error {
	size, err := recordSize(t, n)
	if err != nil {
		return err
	}
	if text && size <= MaxTextRecord {
		var b bytes.Buffer
		b.Grow(int(size))
		if err := CopyRecord(ctx, &b, t, n, buf); err != nil {
			return err
		}
		if utf8.Valid(b.Bytes()) {
			line, err := json.Marshal(RecordLine{File: file, N: n, Offset: t.Offset(n), Length: size, Data: b.String(), Encoding: "text"})
			if err != nil {
				return err
			}
			line = append(appendSeqField(line[:len(line)-1], t, n), "}\n"...)
			_, err = w.Write(line)
			return err
		}
	}
	head := []byte{'{'}
	if file != "" {
		f, _ := json.Marshal(file)
		head = append(append(append(head, `"file":`...), f...), ',')
	}
	w.Write(appendSeqField(fmt.Appendf(head, `"n":%d,"offset":%d,"length":%d`, n, t.Offset(n), size), t, n))
	w.WriteString(`,"data":"`)
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if err := CopyRecord(ctx, enc, t, n, buf); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.WriteString(`","encoding":"base64"}` + "\n")
	return err
}

// Mode is how one record that is not decoded is written: its payload,
// after its number with Number, or a JSON line with JSON; then Sep (not
// after a JSON line).
type Mode struct {
	JSON, Number bool
	Text         bool   // with JSON: the payload as a string when it is valid UTF-8
	Sep          string // written after each record
	Label        string // the file, when several are written: before the number, in JSON lines
	Buf          []byte // copy buffer, CopyBufSize bytes
}

// Write writes record n of t to w as m says.
func (m Mode) Write(ctx context.Context, w *bufio.Writer, t *index.Table, n int64) error {
	var err error
	switch {
	case m.JSON:
		return writeRecordJSON(ctx, w, t, n, m.Buf, m.Text, m.Label)
	case m.Number:
		if _, err = w.WriteString(labelled(m.Label, RecordNumber(n, t.Len())) + "\t"); err == nil {
			err = CopyRecord(ctx, w, t, n, m.Buf)
		}
	default:
		err = CopyRecord(ctx, w, t, n, m.Buf)
	}
	if err != nil {
		return err
	}
	_, err = w.WriteString(m.Sep)
	return err
}

// WriteRanges writes the records rs of t to w as m says, until ctx ends,
// and flushes w.
func (m Mode) WriteRanges(ctx context.Context, w *bufio.Writer, t *index.Table, rs []Range) error {
	return m.WriteSeq(ctx, w, t, Records(rs))
}

// WriteSeq writes the records recs of t to w as m says, in the order recs
// yields them, until ctx ends, and flushes w.
func (m Mode) WriteSeq(ctx context.Context, w *bufio.Writer, t *index.Table, recs iter.Seq[int64]) error {
	for n := range recs {
		if err := ctx.Err(); err != nil {
			w.Flush()
			return err
		}
		if err := m.Write(ctx, w, t, n); err != nil {
			w.Flush()
			return err
		}
	}
	return w.Flush()
}

// Records returns the record numbers of rs, in order.
func Records(rs []Range) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for _, r := range rs {
			for n := r.Lo; n < r.Hi; n++ {
				if !yield(n) {
					return
				}
			}
		}
	}
}

// labelled returns "label:s", or s without a label.
func labelled(label, s string) string {
	if label == "" {
		return s
	}
	return label + ":" + s
}
