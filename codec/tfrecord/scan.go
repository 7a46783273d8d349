package tfrecord

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// DefaultWindow is how many bytes a Scanner reads per ReadAt unless
// Options.Window says otherwise.
const DefaultWindow = 1 << 20

// resyncSlack is what resynchronisation may read beyond resyncPasses
// passes of the file (see Scanner.syncLeft).
const (
	resyncPasses = 4
	resyncSlack  = 16 << 20
)

// Options configure a Scanner.
type Options struct {
	// Start and End make the scanner cover one part of the file, for
	// parallel builds. With Start > 0 the scan begins at the first
	// position at or after Start that carries a valid length checksum, a
	// length that fits in the file and a data checksum that verifies (the
	// resync rule); the bytes before it belong to the previous part and are
	// not damage. The scan returns the records that start before End (0:
	// the end of the file), following the last one past End.
	Start, End int64
	// Aligned says Start is known to be where a record starts (the end of
	// the last intact record of an earlier scan, when a grown file is
	// scanned from there): the scan begins at Start itself, and what it
	// cannot trust there is damage, not another part's bytes.
	Aligned bool
	// Strict ends the scan at the first damage, with a *codec.CorruptError as
	// Err, instead of skipping it.
	Strict bool
	// Window is the number of bytes read per ReadAt (DefaultWindow if 0).
	// It bounds the scanner's memory, whatever the record lengths.
	Window int
}

// Info describes what a scan found, beyond the records.
type Info struct {
	// First is the offset of the first record the scan returned or synced
	// on, -1 if none.
	First int64
	// Next is where the scan stopped: the end of the file, or for a scan
	// with End, the offset of the first record at or after End (the
	// record the next part must start with).
	Next int64
	// LastEnd is the end of the last intact record returned (Start when
	// none was): where a record appended after a torn tail belongs.
	LastEnd int64
	// Records is the number of records returned.
	Records int64
}

// A Scanner walks a TFRecord file (or its decompressed stream) and yields
// the location of every intact record, verifying both checksums of each.
// It reads the file in windows of Options.Window bytes and never holds a
// record's data, so its memory is bounded whatever the lengths claim. It is
// not safe for concurrent use.
type Scanner struct {
	size int64
	o    Options
	end  int64
	w    codec.Window

	// syncLeft is how many more bytes resynchronisation may spend
	// checking candidates whose data checksum then fails: every valid
	// length field in damage is a candidate whose check reads its data,
	// so a hostile file of many would otherwise cost one pass of the file
	// per field. Once it is spent, the rest of the file is damage.
	syncLeft int64

	pos    int64
	cur    Record
	info   Info
	damage codec.DamageLog
	err    error
	done   bool
}

// NewScanner returns a scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, o Options) *Scanner {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	o.Window = max(o.Window, 64)
	s := &Scanner{size: max(size, 0), o: o, w: codec.NewWindow(r, size, o.Window),
		damage: codec.DamageLog{Format: codec.TFRecord, Strict: o.Strict}}
	s.syncLeft = resyncPasses*s.size + resyncSlack
	s.end = o.End
	if s.end <= 0 || s.end > s.size {
		s.end = s.size
	}
	s.info = Info{First: -1, Next: s.size, LastEnd: max(o.Start, 0)}
	switch {
	case o.Start < 0:
		s.err = fmt.Errorf("tfrecord: negative split start %d", o.Start)
		s.done = true
	case o.Start >= s.end:
		s.info.Next = o.Start
		s.done = true
	case o.Start > 0 && o.Aligned:
		s.pos = o.Start
	case o.Start > 0:
		q, ok := s.sync(o.Start)
		s.pos = q
		if ok {
			s.info.First = q
		} else {
			s.info.Next = q
			s.done = true
		}
	}
	return s
}

// Next advances to the next intact record. It returns false at the end of
// the file (or of the part), after a strict-mode damage, or on an I/O error.
func (s *Scanner) Next() bool {
	for !s.done {
		if s.pos >= s.end {
			s.stop()
			return false
		}
		if s.step() {
			return true
		}
	}
	return false
}

// stop ends the scan at s.pos.
func (s *Scanner) stop() {
	s.done = true
	s.info.Next = s.pos
}

// step looks at the record at s.pos: it either returns it (true) or
// records damage and moves on.
func (s *Scanner) step() bool {
	p := s.pos
	h := s.ensure(p, HeaderSize)
	if s.err != nil {
		return false
	}
	if len(h) < HeaderSize {
		s.skip(p, s.size, ReasonTruncated, codec.ErrTruncated)
		return false
	}
	n, ok := ParseHeader(h)
	if !ok {
		s.recover(p, ReasonLengthCRC, codec.ErrCorrupt)
		return false
	}
	if !s.fits(p, n) {
		// A valid length field running past the end is a record cut
		// short: a torn tail. What follows is its partial data, even
		// where that looks like records (a record holding TFRecord
		// framing), as a reference reader, which stops here, sees it.
		s.skip(p, s.size, ReasonTruncated, codec.ErrTruncated)
		return false
	}
	rec := Record{Off: p, Len: int64(n)}
	if !s.verify(rec) {
		if s.err == nil {
			s.skip(p, rec.End(), ReasonDataCRC, codec.ErrCorrupt)
		}
		return false
	}
	if s.info.First < 0 {
		s.info.First = p
	}
	s.cur = rec
	s.pos = rec.End()
	s.info.LastEnd = s.pos
	s.info.Records++
	return true
}

// fits reports whether a record of n data bytes at p ends inside the file.
func (s *Scanner) fits(p int64, n uint64) bool {
	left := s.size - p - Overhead
	return left >= 0 && n <= uint64(left)
}

// recover skips damage starting at p up to the next position the resync
// rule accepts, or to the end of the file.
func (s *Scanner) recover(p int64, reason string, kind error) {
	q, _ := s.sync(p + 1)
	if s.err != nil {
		return
	}
	s.skip(p, q, reason, kind)
}

// skip records [from, to) as damage and continues at to.
func (s *Scanner) skip(from, to int64, reason string, kind error) {
	s.pos = to
	if err := s.damage.Add(codec.Damage{Off: from, Len: to - from, Kind: damageKind(reason, to == s.size), Reason: reason, Err: kind}); err != nil {
		s.err, s.done, s.info.Next = err, true, from
	}
}

// sync returns the first position at or after from that carries a valid
// length checksum, a length that fits in the file and a data checksum that
// verifies; the end of the file and false if there is none, or if the
// candidates checked so far used up s.syncLeft.
func (s *Scanner) sync(from int64) (int64, bool) {
	q := from
	for q+Overhead <= s.size {
		b := s.ensure(q, s.o.Window)
		if s.err != nil {
			return s.size, false
		}
		last := len(b) - Overhead // a record needs 16 bytes at least
		hit := -1
		for i := 0; i <= last; i++ {
			n := binary.LittleEndian.Uint64(b[i:])
			if !s.fits(q+int64(i), n) {
				continue
			}
			if binary.LittleEndian.Uint32(b[i+8:]) == maskCRC(crc32c(b[i:i+8])) {
				hit = i
				break
			}
		}
		if hit < 0 {
			q += int64(last + 1)
			continue
		}
		c := q + int64(hit)
		n := binary.LittleEndian.Uint64(b[hit:])
		if s.syncLeft <= 0 {
			return s.size, false
		}
		winEnd := q + int64(len(b)) // b: the window from q
		if s.verify(Record{Off: c, Len: int64(n)}) {
			return c, true
		}
		if s.err != nil {
			return s.size, false
		}
		s.syncLeft -= int64(n) + Overhead
		if c+Overhead+int64(n) > winEnd {
			// Coming back to c costs a reader that only reads forward
			// (a decompressed stream) the bytes up to c again.
			s.syncLeft -= c
		}
		q = c + 1
	}
	return s.size, false
}

// verify checks the data checksum of rec, whose header is known good and
// which fits in the file, reading its data a window at a time.
func (s *Scanner) verify(rec Record) bool {
	crc := uint32(0)
	o, end := rec.DataOff(), rec.DataOff()+rec.Len
	for o < end {
		b := s.ensure(o, int(min(int64(s.o.Window), end-o)))
		if s.err != nil || len(b) == 0 {
			return false
		}
		b = b[:min(int64(len(b)), end-o)]
		crc = crc32cUpdate(crc, b)
		o += int64(len(b))
	}
	f := s.ensure(end, FooterSize)
	if len(f) < FooterSize {
		return false
	}
	return binary.LittleEndian.Uint32(f) == maskCRC(crc)
}

// ensure returns the bytes at off, at least n unless the file ends first
// (n must not exceed the window). On a read error it ends the scan and
// returns nil.
func (s *Scanner) ensure(off int64, n int) []byte {
	b, err := s.w.At(off, n)
	if err != nil {
		s.err = err
		s.done = true
		s.info.Next = off
	}
	return b
}

// Record returns the record Next found.
func (s *Scanner) Record() Record { return s.cur }

// Err returns the I/O error, or in strict mode the *codec.CorruptError, that
// ended the scan; nil at a normal end.
func (s *Scanner) Err() error { return s.err }

// Damage returns the ranges skipped so far, in file order.
func (s *Scanner) Damage() []codec.Damage { return s.damage.Ranges() }

// Info returns what the scan found; complete once Next returned false.
func (s *Scanner) Info() Info { return s.info }
