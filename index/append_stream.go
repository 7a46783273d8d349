package index

import (
	"bufio"
	"context"
	"io"
	"math"
)

// A RecordStream yields the records an append writes, one at a time, in
// the shape of bufio.Scanner: Next advances to the next record and reports
// whether there is one, Record returns it (valid only until the next call
// of Next), and Err, once Next has returned false, the error that ended the
// stream (nil at a clean end).
type RecordStream interface {
	Next() bool
	Record() []byte
	Err() error
}

// AppendStream is Append for records read from rs while they are written:
// the leveldb and TFRecord writers frame each record straight into their
// block-sized buffers and write a buffer each time one fills, so the
// records are never all in memory (recordio appends, which pack whole
// blocks, gather them first). It returns the number of the first new
// record and how many were appended. If rs fails (Err is not nil), the
// file is put back exactly as it was and nothing is appended.
func (t *Table) AppendStream(ctx context.Context, rs RecordStream, o AppendOptions) (first, n int64, err error) {
	c := &countedStream{rs: rs}
	first, err = t.appendRecords(ctx, appendReq{each: c, o: o})
	if err != nil {
		return 0, 0, err
	}
	return first, c.n, nil
}

// countedStream is a RecordStream that counts the records it yielded and
// their bytes, for the check after the append.
type countedStream struct {
	rs       RecordStream
	n, bytes int64
}

func (c *countedStream) Next() bool {
	if !c.rs.Next() {
		return false
	}
	c.n++
	c.bytes += int64(len(c.rs.Record()))
	return true
}

func (c *countedStream) Record() []byte { return c.rs.Record() }
func (c *countedStream) Err() error     { return c.rs.Err() }

// lineChunk is the size of the reads LineRecords makes.
const lineChunk = 256 << 10

// LineRecords returns a RecordStream of the lines of each of rs in turn,
// without their "\n" (or "\r\n"): a final line without a newline counts,
// an empty input has none. It reads lineChunk bytes at a time and hands
// out lines in place, allocating nothing per line; a line longer than
// its buffer grows it.
func LineRecords(rs ...io.Reader) RecordStream {
	return &lineStream{rs: rs}
}

// lineStream is LineRecords' stream.
type lineStream struct {
	rs  []io.Reader
	sc  *bufio.Scanner
	buf []byte
	err error
}

func (l *lineStream) Next() bool {
	for {
		if l.sc == nil {
			if len(l.rs) == 0 || l.err != nil {
				return false
			}
			if l.buf == nil {
				l.buf = make([]byte, lineChunk)
			}
			l.sc = bufio.NewScanner(l.rs[0])
			l.sc.Buffer(l.buf, math.MaxInt)
			l.rs = l.rs[1:]
		}
		if l.sc.Scan() {
			return true
		}
		if l.err = l.sc.Err(); l.err != nil {
			return false
		}
		l.sc = nil
	}
}

func (l *lineStream) Record() []byte { return l.sc.Bytes() }
func (l *lineStream) Err() error     { return l.err }
