package wlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/recfs/recfs/codec"
)

// windowPages is how many pages the scanner reads per ReadAt;
// slicePages, per window sliced from a ByteSlicer (no copy).
const (
	windowPages = 8
	slicePages  = 32
)

// aheadPages is the fewest pages of a window one goroutine checks ahead
// of the scan (see checkAhead).
const aheadPages = 4

// maxFragments bounds the fragment list of a record that does not follow
// the writer's layout (16 MiB of Fragment values).
const maxFragments = 1 << 20

// headBytes is how many stored bytes of a compressed record the scanner
// keeps to learn its decompressed size: a snappy block starts with it as a
// uvarint, a zstd frame header holds it in at most 18 bytes.
const headBytes = 18

// A Scanner walks a segment page by page and yields the location of every
// intact record. It verifies every fragment checksum, never copies
// payloads (it keeps the first bytes of a compressed record to learn its
// size), and records what it skipped as Damage. Create one with
// NewScanner; it is not safe for concurrent use.
type Scanner struct {
	r    io.ReaderAt
	size int64
	o    Options

	win    []byte // consecutive pages read with one ReadAt (or sliced from a ByteSlicer)
	buf    []byte // the scanner's own window buffer
	winOff int64  // file offset of win[0]
	pg     []byte // the current page: a slice of win, short at the end of the file
	pOff   int64  // file offset of the current page, -1 before the first
	pos    int    // next header position in pg
	procs  int    // processors to check pages ahead on (checkAhead)
	valid  []int  // per page of win: end of its intact fragment chain (checkAhead)
	pgOK   int    // the current page's: fragments ending by it are checked

	inRec    bool
	recOff   int64
	recLen   int64
	comp     Compression
	canon    bool // the fragments so far follow the writer's layout
	nFrags   int
	firstLen int32
	lastOff  int64
	frags    []Fragment // every fragment, when not canon
	head     []byte     // first stored bytes of a compressed record

	cur    Record
	damage codec.DamageLog
	info   Info
	err    error
	done   bool
}

// NewScanner returns a scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, o Options) *Scanner {
	s := &Scanner{r: r, size: max(size, 0), o: o, pOff: -1, procs: runtime.GOMAXPROCS(0),
		damage: codec.DamageLog{Format: codec.PrometheusWAL, Strict: o.Strict, Join: true}}
	if o.Start < 0 || o.Start > s.size {
		s.err = fmt.Errorf("codec: prometheus WAL scan start %d outside the %d-byte segment", o.Start, s.size)
		s.done = true
	}
	s.info.LastEnd = o.Start
	return s
}

// Next advances to the next intact record. It returns false at the end of
// the segment, after a strict-mode damage, or on an I/O error.
func (s *Scanner) Next() bool {
	for !s.done {
		if s.pOff < 0 || s.pos >= len(s.pg) {
			s.nextPage()
			continue
		}
		if s.step() {
			return true
		}
	}
	return false
}

// nextPage moves to the next page (the one holding Options.Start at
// first), or ends the scan.
func (s *Scanner) nextPage() {
	np, pos := s.o.Start-s.o.Start%PageSize, int(s.o.Start%PageSize)
	if s.pOff >= 0 {
		np, pos = s.pOff+PageSize, 0
	}
	if np >= s.size {
		if s.inRec {
			s.cutShort(s.size, codec.ErrTruncated)
		}
		s.done = true
		return
	}
	if np < s.winOff || np+min(PageSize, s.size-np) > s.winOff+int64(len(s.win)) {
		if !s.load(np) {
			return
		}
	}
	lo := np - s.winOff
	s.pg = s.win[lo:min(lo+PageSize, int64(len(s.win)))]
	s.pOff, s.pos, s.pgOK = np, pos, 0
	if pos == 0 && len(s.valid) > 0 {
		s.pgOK = s.valid[lo/PageSize]
	}
}

// load reads the window of pages starting at np. It reports false (and
// ends the scan) on a read error.
func (s *Scanner) load(np int64) bool {
	if bs, ok := s.r.(codec.ByteSlicer); ok {
		n := min(int64(slicePages*PageSize), s.size-np)
		if b, err := bs.Slice(np, n); err == nil && int64(len(b)) == n {
			s.win, s.winOff = b, np
			s.checkAhead()
			return true
		}
	}
	n := min(int64(windowPages*PageSize), s.size-np)
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	s.win = s.buf[:n]
	m, err := s.r.ReadAt(s.win, np)
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("codec: prometheus WAL: read %d bytes at offset %d, want %d: %w", m, np, n, io.ErrUnexpectedEOF)
		}
		s.err, s.done, s.win = err, true, s.win[:0]
		return false
	}
	s.winOff = np
	s.checkAhead()
	return true
}

// checkAhead checks the checksums of the window's pages on every
// processor but one at once: for each page, the chain of intact fragments
// from its start. A scan that enters a page at its start meets exactly
// that chain (it stops where the chain stops), so step skips the
// checksums of the fragments that end within it. With one processor, or
// a window too small to share, nothing is checked ahead.
func (s *Scanner) checkAhead() {
	pages := (len(s.win) + PageSize - 1) / PageSize
	workers := min(s.procs, pages/aheadPages)
	s.valid = s.valid[:0]
	if workers < 2 {
		return
	}
	for range pages {
		s.valid = append(s.valid, 0)
	}
	per := (pages + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := per; lo < pages; lo += per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.checkPages(lo, min(lo+per, pages))
		}()
	}
	s.checkPages(0, per)
	wg.Wait()
}

// checkPages sets valid[i] for the pages lo..hi-1 of the window.
func (s *Scanner) checkPages(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.valid[i] = chainEnd(s.win[i*PageSize : min((i+1)*PageSize, len(s.win))])
	}
}

// chainEnd returns where the run of intact fragments from pg's start
// ends: at padding, a header or fragment past the page, or a checksum
// that does not match.
func chainEnd(pg []byte) int {
	pos := 0
	for pos+HeaderSize <= len(pg) && pg[pos] != kindPageTerm {
		end := pos + HeaderSize + int(binary.BigEndian.Uint16(pg[pos+1:]))
		if end > len(pg) || codec.CRC32C(pg[pos+HeaderSize:end]) != binary.BigEndian.Uint32(pg[pos+3:]) {
			break
		}
		pos = end
	}
	return pos
}

// step handles the fragment (or padding, or damage) at s.pos. It reports
// whether a record was completed into s.cur.
func (s *Scanner) step() bool {
	hdrOff := s.pOff + int64(s.pos)
	b := s.pg[s.pos:]
	pageEnd := s.pOff + int64(len(s.pg))
	if b[0] == kindPageTerm {
		// The rest of the page is padding. Prometheus's reader accepts
		// padding even inside a record, so a record in progress goes on.
		if !codec.AllZero(b[1:]) {
			s.fail(hdrOff, pageEnd-hdrOff, codec.DamageZeroHeader, codec.ErrCorrupt)
		} else if len(b) > 1 {
			s.info.Padded = true
		}
		s.pos = len(s.pg)
		return false
	}
	if len(b) < HeaderSize {
		if pageEnd == s.size && len(s.pg) < PageSize {
			s.fail(hdrOff, pageEnd-hdrOff, codec.DamageTruncHdr, codec.ErrTruncated)
		} else {
			s.fail(hdrOff, pageEnd-hdrOff, codec.DamageLength, codec.ErrCorrupt) // a header across a page end
		}
		s.pos = len(s.pg)
		return false
	}
	typ := b[0]
	ln := int(binary.BigEndian.Uint16(b[1:]))
	switch {
	case s.pos+HeaderSize+ln > PageSize:
		s.fail(hdrOff, pageEnd-hdrOff, codec.DamageLength, codec.ErrCorrupt)
	case HeaderSize+ln > len(b):
		s.fail(hdrOff, pageEnd-hdrOff, codec.DamageTruncChunk, codec.ErrTruncated)
	case s.pos+HeaderSize+ln > s.pgOK && codec.CRC32C(b[HeaderSize:HeaderSize+ln]) != binary.BigEndian.Uint32(b[3:]):
		s.fail(hdrOff, pageEnd-hdrOff, codec.DamageChecksum, codec.ErrCorrupt)
	default:
		return s.fragment(hdrOff, typ, b[HeaderSize:HeaderSize+ln])
	}
	s.pos = len(s.pg)
	return false
}

// fragment takes in the intact fragment at hdrOff of type typ carrying
// data, and reports whether it completed a record.
func (s *Scanner) fragment(hdrOff int64, typ byte, data []byte) bool {
	ln := len(data)
	s.pos += HeaderSize + ln
	kind := typ & kindMask
	comp, flagsOK := compressionOf(typ)
	if kind < kindFull || kind > kindLast || !flagsOK {
		// Intact, but of a kind no writer makes: skipped alone.
		s.cutShort(hdrOff, codec.ErrCorrupt)
		s.addDamage(damage(hdrOff, int64(HeaderSize+ln), codec.DamageType, codec.ErrCorrupt))
		return false
	}
	if kind == kindFull || kind == kindFirst {
		s.cutShort(hdrOff, codec.ErrCorrupt)
		s.inRec, s.recOff, s.recLen, s.comp = true, hdrOff, int64(ln), comp
		s.nFrags, s.firstLen, s.lastOff = 1, int32(ln), hdrOff
		s.head = s.head[:0]
		s.keepHead(data)
		if kind == kindFull {
			s.canon = true
			return s.finish()
		}
		// A FIRST of the writer's layout fills its page.
		s.canon = int64(ln) == PageSize-hdrOff%PageSize-HeaderSize
		s.frags = s.frags[:0]
		if !s.canon {
			s.frags = append(s.frags, Fragment{Off: hdrOff, Len: int32(ln)})
		}
		return false
	}
	if !s.inRec || comp != s.comp {
		s.cutShort(hdrOff, codec.ErrCorrupt)
		s.addDamage(damage(hdrOff, int64(HeaderSize+ln), codec.DamageOrphan, codec.ErrCorrupt))
		return false
	}
	s.recLen += int64(ln)
	if s.canon {
		// The writer puts every later fragment at the next page start; a
		// MIDDLE fills its page, a LAST carries 1..PageSize-7 bytes.
		const per = PageSize - HeaderSize
		ok := hdrOff%PageSize == 0 && hdrOff == s.lastOff-s.lastOff%PageSize+PageSize &&
			(ln == per || kind == kindLast && ln > 0)
		if !ok {
			s.canon = false
			s.frags = append(s.frags[:0], Fragment{Off: s.recOff, Len: s.firstLen})
			for j := 1; j < s.nFrags; j++ {
				s.frags = append(s.frags, Fragment{Off: s.recOff - s.recOff%PageSize + int64(j)*PageSize, Len: per})
			}
		}
	}
	s.nFrags++
	s.lastOff = hdrOff
	if !s.canon {
		if len(s.frags) >= maxFragments {
			s.inRec = false
			s.addDamage(damage(s.recOff, hdrOff+int64(HeaderSize+ln)-s.recOff, codec.DamageFragmented, codec.ErrLimit))
			return false
		}
		s.frags = append(s.frags, Fragment{Off: hdrOff, Len: int32(ln)})
	}
	s.keepHead(data)
	if kind == kindMiddle {
		return false
	}
	return s.finish()
}

// keepHead keeps the first headBytes stored bytes of a compressed record.
func (s *Scanner) keepHead(data []byte) {
	if s.comp != None && len(s.head) < headBytes {
		s.head = append(s.head, data[:min(len(data), headBytes-len(s.head))]...)
	}
}

// finish completes the record in progress into s.cur, learning its
// decompressed size. It reports false when that size is unreadable or past
// the limit (the record is then damage).
func (s *Scanner) finish() bool {
	s.inRec = false
	end := s.pOff + int64(s.pos)
	rec := Record{Off: s.recOff, Len: s.recLen, Size: s.recLen, Comp: s.comp}
	if !s.canon {
		rec.Frags = s.frags
	}
	if rec.Comp != None && rec.Len > 0 {
		size, err := decodedSize(s.r, rec, s.head, s.o.maxRecord())
		if err != nil {
			var ce *codec.CorruptError
			if !errors.As(err, &ce) {
				s.err, s.done = err, true
				return false
			}
			k := codec.DamageOther
			s.addDamage(codec.Damage{Off: rec.Off, Len: end - rec.Off, Kind: k, Reason: ce.Reason, Err: ce.Err})
			return false
		}
		rec.Size = size
	}
	s.cur = rec
	s.info.LastEnd = end
	s.info.Records++
	switch rec.Comp {
	case Snappy:
		s.info.Snappy++
	case Zstd:
		s.info.Zstd++
	}
	return true
}

// cutShort discards the record in progress, if any, as damage from its
// start to off of the given kind.
func (s *Scanner) cutShort(off int64, kind error) {
	if !s.inRec {
		return
	}
	s.inRec = false
	s.addDamage(damage(s.recOff, off-s.recOff, codec.DamageCutShort, kind))
}

// fail records damage of n bytes at off, dropping the record in progress.
func (s *Scanner) fail(off, n int64, dk codec.DamageKind, kind error) {
	k := codec.ErrCorrupt
	if errors.Is(kind, codec.ErrTruncated) {
		k = codec.ErrTruncated
	}
	s.cutShort(off, k)
	s.addDamage(damage(off, n, dk, kind))
}

// addDamage records d, joining it to the previous damage when they touch
// and are of the same kind.
func (s *Scanner) addDamage(d codec.Damage) {
	if err := s.damage.Add(d); err != nil && s.err == nil {
		s.err, s.done = err, true
	}
}

// Record returns the record found by the last successful Next. Its Frags
// slice is reused by the following Next.
func (s *Scanner) Record() Record { return s.cur }

// Err returns the error that ended the scan: nil at a clean end (even with
// damage, unless Strict), a *codec.CorruptError in strict mode, or an I/O
// error.
func (s *Scanner) Err() error { return s.err }

// Damage returns the byte ranges skipped so far, in offset order.
func (s *Scanner) Damage() []codec.Damage { return s.damage.Ranges() }

// Info returns what the scan has found so far.
func (s *Scanner) Info() Info { return s.info }
