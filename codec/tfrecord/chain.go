package tfrecord

import "encoding/binary"

// chain follows the records of a decompressed stream as it goes by, in one
// pass and without looking back: each record's header checksum, then its
// data checksum, then the next record right after it. It finds what a
// Scanner finds as long as the records are intact; at the first record
// that does not check (or that the stream ends inside) it stops, and the
// caller scans on from there with a Scanner, which needs to look back and
// to know where the stream ends.
type chain struct {
	pos    int64 // offset of the record being read (its header)
	hdr    [HeaderSize]byte
	hn     int   // header bytes seen
	left   int64 // data bytes still to come; -1 while in the header
	n      int64 // the record's data length
	crc    uint32
	ftr    [FooterSize]byte
	fn     int // footer bytes seen
	broken bool
	stop   bool // emit asked to stop

	emit func(Record) bool
	last int64 // end of the last record emitted
	recs int64
	from int64 // first record offset
}

func newChain(start int64, emit func(Record) bool) *chain {
	return &chain{pos: start, left: -1, emit: emit, last: start, from: -1}
}

// feed passes the chain the stream's bytes b, which start at offset off.
// Bytes before the chain's position are ignored.
func (c *chain) feed(off int64, b []byte) {
	if skip := c.pos - off; skip > 0 && c.hn == 0 && c.left < 0 {
		if skip >= int64(len(b)) {
			return
		}
		b = b[skip:]
	}
	for len(b) > 0 && !c.broken && !c.stop {
		switch {
		case c.left < 0: // header
			k := copy(c.hdr[c.hn:], b)
			c.hn += k
			b = b[k:]
			if c.hn < HeaderSize {
				return
			}
			n, ok := ParseHeader(c.hdr[:])
			if !ok || n > 1<<62 {
				c.broken = true
				return
			}
			c.n, c.left, c.crc, c.fn = int64(n), int64(n), 0, 0
		case c.left > 0: // data
			k := min(int64(len(b)), c.left)
			c.crc = crc32cUpdate(c.crc, b[:k])
			c.left -= k
			b = b[k:]
		default: // footer
			k := copy(c.ftr[c.fn:], b)
			c.fn += k
			b = b[k:]
			if c.fn < FooterSize {
				return
			}
			if binary.LittleEndian.Uint32(c.ftr[:]) != maskCRC(c.crc) {
				c.broken = true
				return
			}
			rec := Record{Off: c.pos, Len: c.n}
			c.pos = rec.End()
			c.last = c.pos
			c.hn, c.left = 0, -1
			c.recs++
			if c.from < 0 {
				c.from = rec.Off
			}
			if !c.emit(rec) {
				c.stop = true
			}
		}
	}
}

// whole reports whether the chain ended at a record boundary with every
// record intact: nothing is left for a Scanner.
func (c *chain) whole() bool { return !c.broken && c.hn == 0 && c.left < 0 }
