package index

import "github.com/recfs/recfs/codec/leveldb"

// cursorWindow is how much of the source one read of a Cursor takes.
const cursorWindow = 1 << 20

// spanner is a driver whose records can be taken out of one large read of
// the source holding many of them.
type spanner interface {
	// span returns the file range [off, end) holding record k's framing
	// and payload; ok is false when its layout says none.
	span(k int64) (off, end int64, ok bool)
	// recordIn returns record k's payload from buf, the source's bytes at
	// file offset base, checked as readAt checks it; ok is false when it
	// is not all in buf or fails a check. dst may hold the payload.
	recordIn(buf []byte, base, k int64, dst []byte) (payload []byte, ok bool)
}

// A Cursor reads the payloads of a table's records in file order through
// reads of a megabyte or more, instead of a lookup and a read per record:
// for a pass over many records (cat of a whole file). It serves only
// records checked as ReadAt checks them (each chunk's checksum, the
// table's proof, the source's identity after each read of a window: a
// change made after that read is seen at the next window, or by ReadAt,
// so what it serves is the version the table describes); for anything
// else (a format without
// the capability, a record that fails a check, a table refreshed since
// the cursor was made) Payload says no and the caller reads the record
// with ReadAt, which reports the failure. A Cursor is not safe for
// concurrent use.
type Cursor struct {
	t    *Table
	s    *snapshot
	sp   spanner
	buf  []byte // the source's bytes at base
	base int64
	dst  []byte // room for the payload of a record of many chunks
}

// Cursor returns a cursor over the records of t as they are now.
func (t *Table) Cursor() *Cursor {
	s := t.s()
	sp, _ := s.tab.(spanner)
	return &Cursor{t: t, s: s, sp: sp}
}

// Payload returns the payload of record n when the cursor can serve it
// and it is at most limit bytes; it stays valid until the next call. A nil
// Cursor serves nothing.
func (c *Cursor) Payload(n, limit int64) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	s := c.s
	if c.sp == nil || c.t.s() != s || n < 0 || n >= s.n || s.size1(n) > limit {
		return nil, false
	}
	if c.t.prove(s, n) != nil {
		return nil, false
	}
	off, end, ok := c.sp.span(n)
	if !ok {
		return nil, false
	}
	if off < c.base || end > c.base+int64(len(c.buf)) {
		if !c.fill(off, end) {
			return nil, false
		}
	}
	if size := s.size1(n); int64(cap(c.dst)) < size && size <= cursorWindow {
		c.dst = make([]byte, 0, max(size, 2*int64(cap(c.dst)), 4096)) // kept for the next records
	}
	return c.sp.recordIn(c.buf, c.base, n, c.dst)
}

// fill reads the source from off: a window, or all of [off, end) when
// that is longer.
func (c *Cursor) fill(off, end int64) bool {
	want := max(end-off, cursorWindow)
	if int64(cap(c.buf)) < want {
		c.buf = make([]byte, want)
	}
	k, _ := c.t.src(c.s).ReadAt(c.buf[:want], off)
	c.buf, c.base = c.buf[:k], off
	// As after every read of a record: a local file must still be the
	// version the table describes. A window that fails either check is
	// dropped, so no later record is taken out of it.
	if int64(k) < end-off || c.t.checkSource(c.s, true) != nil {
		c.buf = c.buf[:0]
		return false
	}
	return true
}

func (t *logTable) span(k int64) (off, end int64, ok bool) {
	r := t.get(k)
	end = leveldb.RecordEnd(r)
	return r.Off, end, end > r.Off
}

func (t *logTable) recordIn(buf []byte, base, k int64, dst []byte) ([]byte, bool) {
	return leveldb.RecordIn(buf, base, t.get(k), dst, leveldb.Options{Unmasked: t.unmask})
}
