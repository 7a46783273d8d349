package etcdwal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// windowBytes is how much of the file the scanner reads per ReadAt.
const windowBytes = 256 << 10

// Info sums up what a scan found.
type Info struct {
	Records int64 // intact records
	Entries int64 // of which entries
	// LastEnd is the end of the last intact record: where etcd would
	// write next.
	LastEnd int64
	// ZeroTail is the offset from which the file holds only zeros
	// (preallocated space); the file size when it does not end in zeros.
	ZeroTail int64
}

// A Scanner walks a WAL file frame by frame and yields the location of
// every record whose crc continues the chain. Create one with NewScanner;
// it is not safe for concurrent use.
type Scanner struct {
	r    io.ReaderAt
	size int64
	o    Options

	win    []byte
	buf    []byte
	winOff int64
	big    []byte // a record larger than the window

	off      int64  // next frame
	seed     uint32 // the chain's value before the frame at off
	chained  bool   // seed is known
	zeroTail int64  // -1 until computed

	cur    Record
	damage codec.DamageLog
	info   Info
	err    error
	done   bool
}

// NewScanner returns a scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, o Options) *Scanner {
	s := &Scanner{r: r, size: max(size, 0), o: o, zeroTail: -1,
		damage: codec.DamageLog{Format: codec.EtcdWAL, Strict: o.Strict, Join: true}}
	s.info.ZeroTail = s.size
	return s
}

// Next advances to the next intact record. It returns false at the end of
// the log, after a strict-mode damage, or on an I/O error.
func (s *Scanner) Next() bool {
	for !s.done {
		if s.step() {
			return true
		}
	}
	return false
}

// frame is a frame read at some offset.
type frame struct {
	off int64
	n   int64 // record bytes
	pad uint8
	rec WALRecord
}

func (f frame) end() int64 { return f.off + frameHeader + f.n + int64(f.pad) }

// Frame outcomes.
const (
	frameOK   = iota
	frameZero // a zero length field
	frameTrunc
	frameLen
	frameBad
	frameIOErr
)

// readFrame reads and parses the frame at off. canon asks for etcd's exact
// encoding (for resynchronisation, where any parse is suspect).
func (s *Scanner) readFrame(off int64, canon bool) (frame, int) {
	f := frame{off: off}
	if s.size-off < frameHeader {
		return f, frameTrunc
	}
	h, err := s.bytes(off, frameHeader)
	if err != nil {
		return f, frameIOErr
	}
	lf := binary.LittleEndian.Uint64(h)
	if lf == 0 {
		return f, frameZero
	}
	f.n, f.pad = frameSize(lf)
	if f.n < 0 || f.n > DefaultMaxRecord {
		return f, frameLen
	}
	if f.end() > s.size {
		return f, frameTrunc
	}
	b, err := s.bytes(off+frameHeader, f.n)
	if err != nil {
		return f, frameIOErr
	}
	if canon && !canonical(b) {
		return f, frameBad
	}
	if f.rec, err = ParseRecord(b); err != nil || !knownType(f.rec.Type) {
		return f, frameBad
	}
	return f, frameOK
}

// step handles the frame at s.off; it reports whether a record was found.
func (s *Scanner) step() bool {
	f, st := s.readFrame(s.off, false)
	switch st {
	case frameIOErr:
		return false
	case frameZero:
		if s.tail() <= s.off {
			s.done = true // the end of the log: preallocated zeros follow
			return false
		}
		s.resync(codec.DamageZeroHeader)
		return false
	case frameTrunc:
		if s.off >= s.size || s.tail() <= s.off {
			s.done = true
			return false
		}
		s.resync(codec.DamageTruncChunk)
		return false
	case frameLen:
		s.resync(codec.DamageLength)
		return false
	case frameBad:
		s.resync(codec.DamageType)
		return false
	}
	return s.accept(f)
}

// accept takes in the parsed frame f at s.off: a record if its crc
// continues the chain (a crc record always is one), else damage; the
// chain goes on from the crc it stored either way.
func (s *Scanner) accept(f frame) bool {
	s.off = f.end()
	seed, ok := s.seed, s.chained
	s.seed, s.chained = f.rec.CRC, true
	if f.rec.Type == CrcType {
		if ok && f.rec.CRC != seed {
			// A file boundary whose saved chain is not the one that led
			// here: etcd's reader refuses it; the records on verify
			// against it.
			s.addDamage(damage(f.off, f.end()-f.off, codec.DamageChecksum, codec.ErrCorrupt))
		}
		return s.found(f, f.rec.CRC)
	}
	if !ok || chain(seed, f.rec.Data) != f.rec.CRC {
		s.addDamage(damage(f.off, f.end()-f.off, codec.DamageChecksum, codec.ErrCorrupt))
		return false
	}
	return s.found(f, seed)
}

// found makes f, whose crc continued seed, the current record.
func (s *Scanner) found(f frame, seed uint32) bool {
	s.cur = Record{Off: f.off, Len: f.n, Pad: f.pad, Type: f.rec.Type, Seed: seed}
	s.info.Records++
	if f.rec.Type == EntryType {
		s.info.Entries++
	}
	s.info.LastEnd = f.end()
	return true
}

// resync skips damage (of kind k) at s.off: it looks, 8 bytes at a time,
// for the next frame that is etcd's exact encoding and is either a crc
// record or is followed by a frame whose crc continues from its own. The
// skipped bytes, with that frame unless it is a crc record (its own crc
// cannot be checked), are damage; the chain goes on from there. With no
// such frame, everything up to the zero tail is damage.
func (s *Scanner) resync(k codec.DamageKind) {
	start := s.off
	end := s.tail()
	for p := start + 8; p < end; p += 8 {
		f, st := s.readFrame(p, true)
		if st == frameIOErr {
			return
		}
		if st != frameOK {
			continue
		}
		if f.rec.Type == CrcType {
			s.addDamage(damage(start, p-start, k, codec.ErrCorrupt))
			s.off, s.chained = p, false
			return
		}
		g, st := s.readFrame(f.end(), true)
		if st == frameIOErr {
			return
		}
		if st == frameOK && g.rec.Type != CrcType && chain(f.rec.CRC, g.rec.Data) == g.rec.CRC {
			s.addDamage(damage(start, f.end()-start, k, codec.ErrCorrupt))
			s.off, s.seed, s.chained = f.end(), f.rec.CRC, true
			return
		}
	}
	s.addDamage(damage(start, max(end, start+1)-start, k, codec.ErrCorrupt))
	s.off = max(end, start+1)
	s.done = s.off >= s.size || s.tail() <= s.off
}

// tail returns where the file's final run of zeros starts (computed once).
func (s *Scanner) tail() int64 {
	if s.zeroTail >= 0 {
		return s.zeroTail
	}
	end := s.size
	buf := make([]byte, windowBytes)
	for end > 0 {
		n := min(int64(len(buf)), end)
		b := buf[:n]
		if k, err := s.r.ReadAt(b, end-n); int64(k) < n && (err == nil || !errors.Is(err, io.EOF)) {
			break
		}
		i := len(b) - 1
		for i >= 0 && b[i] == 0 {
			i--
		}
		if i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	s.zeroTail = end
	s.info.ZeroTail = end
	return end
}

// bytes returns n bytes of the file at off, from the window (reloaded as
// needed) or, for a record larger than the window, a buffer of their own.
// The slice is valid until the next call.
func (s *Scanner) bytes(off, n int64) ([]byte, error) {
	if off >= s.winOff && off+n <= s.winOff+int64(len(s.win)) {
		return s.win[off-s.winOff : off-s.winOff+n], nil
	}
	if bs, ok := s.r.(codec.ByteSlicer); ok {
		if b, err := bs.Slice(off, n); err == nil && int64(len(b)) == n {
			return b, nil
		}
	}
	if n > windowBytes/2 {
		if int64(cap(s.big)) < n {
			s.big = make([]byte, n)
		}
		return s.read(s.big[:n], off)
	}
	w := min(windowBytes, s.size-off)
	if s.buf == nil {
		s.buf = make([]byte, windowBytes)
	}
	b, err := s.read(s.buf[:w], off)
	if err != nil {
		s.win = nil
		return nil, err
	}
	s.win, s.winOff = b, off
	return b[:n], nil
}

// read fills b from off, ending the scan on an error.
func (s *Scanner) read(b []byte, off int64) ([]byte, error) {
	k, err := s.r.ReadAt(b, off)
	if k < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("codec: etcd WAL: read %d bytes at offset %d, want %d: %w", k, off, len(b), io.ErrUnexpectedEOF)
		}
		s.err, s.done = err, true
		return nil, err
	}
	return b, nil
}

// settle classifies the last damage: followed only by zeros or the end of
// the file, it is the torn last write of a crashed etcd, of the truncation
// kind.
func (s *Scanner) settle() {
	d := s.damage.Last()
	if d == nil || s.err != nil {
		return
	}
	if d.Off >= s.info.LastEnd && d.Off+d.Len >= s.tail() {
		d.Kind, d.Reason, d.Err = codec.DamageTruncChunk, "torn last write", codec.ErrTruncated
	}
}

// addDamage records d, joining it to the previous damage when they touch
// and are of the same kind.
func (s *Scanner) addDamage(d codec.Damage) {
	if err := s.damage.Add(d); err != nil && s.err == nil {
		s.err, s.done = err, true
	}
}

// Record returns the record found by the last successful Next.
func (s *Scanner) Record() Record { return s.cur }

// Err returns the error that ended the scan: nil at a clean end (even with
// damage, unless Strict), a *codec.CorruptError in strict mode, or an I/O
// error.
func (s *Scanner) Err() error { return s.err }

// Damage returns the byte ranges skipped, in offset order. Call it after
// Next returned false to have the last one classified.
func (s *Scanner) Damage() []codec.Damage {
	if s.done {
		s.settle()
	}
	return s.damage.Ranges()
}

// Info returns what the scan has found so far.
func (s *Scanner) Info() Info { return s.info }

// Probe reports whether r (size bytes) looks like an etcd WAL file: it
// starts with a crc record in etcd's exact encoding, followed by a record
// whose crc continues from it, or by zeros.
func Probe(r io.ReaderAt, size int64) bool {
	s := NewScanner(r, size, Options{})
	f, st := s.readFrame(0, true)
	if st != frameOK || f.rec.Type != CrcType {
		return false
	}
	g, st := s.readFrame(f.end(), true)
	switch st {
	case frameOK:
		return g.rec.Type != CrcType && chain(f.rec.CRC, g.rec.Data) == g.rec.CRC
	case frameZero:
		return true
	}
	return false
}
