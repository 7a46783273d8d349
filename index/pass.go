package index

import (
	"context"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
)

// ErrNoPass says a source cannot be read by a Pass (its format, or
// options that need the whole file scanned first): build a table instead.
var ErrNoPass = errors.New("index: no one-pass reading for this source")

// A Pass reads every record of a source once, in file order, without
// building a table: the scan that finds a record hands over its payload,
// whose checksums it has just verified, so each byte is read and checked
// once. What a table would say only after the whole scan (the record
// count, the damage skipped) is known once Next has returned false. For a
// single pass over a whole file (cat of every record); only leveldb logs
// (WALs, MANIFESTs) in the default, non-strict mode have one. A Pass is
// not safe for concurrent use.
type Pass struct {
	r      io.ReaderAt
	size   int64
	sc     *leveldb.Scanner
	lo     leveldb.Options
	n      int64 // records found so far
	rec    leveldb.Record
	buf    []byte // payloads of several chunks, or read again
	err    error
	done   bool
	format codec.Format
}

// NewPass starts a pass over the first size bytes of r with o (the format
// detected as Build does). It fails with ErrNoPass when the format or o
// needs a table (strict mode, any format but a leveldb log), or with what
// detecting the format met. Once ctx is done, reads fail and the pass
// ends.
func NewPass(ctx context.Context, r io.ReaderAt, size int64, o Options) (*Pass, error) {
	r = interruptible(ctx, r)
	f := o.Format
	if f == codec.Unknown && size > 0 {
		var err error
		if f, err = Detect(r, size); err != nil {
			return nil, err
		}
	}
	if f != codec.Unknown && f != codec.LevelDB || o.Strict {
		return nil, ErrNoPass
	}
	lo := leveldb.Options{Unmasked: o.Unmasked, LogNum: o.LogNum}
	return &Pass{r: r, size: size, sc: leveldb.NewScanner(r, size, lo), lo: lo, format: codec.LevelDB}, nil
}

// Format returns the source's format.
func (p *Pass) Format() codec.Format { return p.format }

// MaxLen returns the most records the source can hold: an upper bound of
// Len at the end, known before the pass.
func (p *Pass) MaxLen() int64 { return p.size / minLogRecord }

// minLogRecord is the fewest bytes a leveldb log record takes: an empty
// payload in one chunk of the shortest header.
const minLogRecord = 7

// Next advances to the next record. It returns false at the end of the
// source or when the scan failed (see Err).
func (p *Pass) Next() bool {
	if p.done {
		return false
	}
	if !p.sc.Next() {
		p.done, p.err = true, p.sc.Err()
		return false
	}
	p.rec = p.sc.Record()
	p.n++
	return true
}

// N returns the number of the current record (its name in a mount).
func (p *Pass) N() int64 { return p.n - 1 }

// Len returns the number of records found so far: the source's record
// count once Next has returned false.
func (p *Pass) Len() int64 { return p.n }

// Size returns the payload length of the current record.
func (p *Pass) Size() int64 { return p.rec.Len }

// Payload returns the payload of the current record, valid until the next
// call of Next or Payload. A record the scan's buffer no longer holds
// whole is read again and checked as a table's read checks it.
func (p *Pass) Payload() ([]byte, error) {
	if p.rec.Len <= cursorWindow {
		if int64(cap(p.buf)) < p.rec.Len {
			p.buf = make([]byte, 0, max(p.rec.Len, 2*int64(cap(p.buf)), 4096)) // kept for the next records
		}
		if b, ok := p.sc.Payload(p.buf); ok {
			return b, nil
		}
	}
	b := p.buf
	if int64(cap(b)) < p.rec.Len {
		b = make([]byte, p.rec.Len) // not kept: a record this large is rare
	}
	b = b[:p.rec.Len]
	if k, err := leveldb.ReadRecord(p.r, p.rec, b, 0, p.lo); int64(k) < p.rec.Len {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// Done reports whether the pass reached the end of the source: then Len
// and Damage say what a table's would.
func (p *Pass) Done() bool { return p.done && p.err == nil }

// Err returns the error that ended the pass early: a failed read (or ctx
// done), nil at the end of the source.
func (p *Pass) Err() error { return p.err }

// Damage returns the byte ranges skipped so far, in offset order (all of
// them once Done), as Table.Damage lists them.
func (p *Pass) Damage() []codec.Damage { return p.sc.Damage() }
