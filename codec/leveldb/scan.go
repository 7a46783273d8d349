package leveldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/recfs/recfs/codec"
)

// logMaxExplicitChunks bounds the chunk list of a record that does not
// follow the writer's layout (16 MiB of Chunk values).
const logMaxExplicitChunks = 1 << 20

// logWindowBlocks is how many 32 KiB blocks the scanner reads per ReadAt.
const logWindowBlocks = 8

// A Scanner walks a leveldb log block by block and yields the location of
// every intact record. It verifies every chunk checksum, never copies
// payloads, and records what it had to skip as Damage. The end of a
// recycled log (RocksDB, pebble), where the bytes of the file's previous
// life begin, is recorded as a Damage of kind ErrStale, which is not damage
// and never fails a strict scan. Create one with NewScanner; it is not
// safe for concurrent use.
type Scanner struct {
	r     io.ReaderAt
	size  int64
	o     Options
	start int64
	end   int64

	liveEnd int64 // end of the last intact chunk of this log (not of a previous life)

	win    []byte // window of consecutive blocks read with one ReadAt (or sliced from a ByteSlicer)
	buf    []byte // the scanner's own window buffer; win may point into mapped memory instead
	winOff int64  // file offset of win[0]
	blk    []byte // current block (a slice of win)
	bOff   int64  // file offset of the current block, -1 before the first
	pos    int    // next header position inside blk

	inRec  bool
	recOff int64
	recLen int64
	// canon says the chunks so far follow the writer's layout; then only
	// nChunks, firstLen and lastOff are kept, else chunks lists them all.
	canon    bool
	nChunks  int
	firstLen int32
	lastOff  int64
	recHdr   int
	chunks   []Chunk

	cur     Record
	lead    []Chunk
	leadHdr []uint8
	leading bool
	damage  []codec.Damage
	info    Info
	numSet  bool
	// claim is the log number the live log has before any intact chunk of
	// it is met: Options.LogNum from the start, else the number in a
	// damaged first chunk's header; claimBy says whence, if set. See
	// claimFirst and claimOlder.
	claim    uint32
	claimBy  claimSource
	err      error
	done     bool
	consumed int64
}

// NewScanner returns a scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, o Options) *Scanner {
	s := &Scanner{r: r, size: max(size, 0), o: o, bOff: -1}
	s.info.EOFMarker = -1
	s.start, s.end = o.Start, o.End
	if s.end == 0 {
		s.end = s.size
	}
	s.end = min(s.end, s.size)
	s.info.End = s.size
	switch {
	case s.start < 0 || s.start%logBlockSize != 0:
		s.err = fmt.Errorf("codec: leveldb split start %d is not a multiple of %d", s.start, logBlockSize)
		s.done = true
	case s.start >= s.end:
		s.done = true // an empty split
	}
	if o.LogNum != 0 {
		s.claim, s.claimBy = o.LogNum, claimName
	}
	s.consumed = s.start
	s.leading = s.start > 0
	if s.leading && !s.done {
		s.probeLogNum()
	}
	return s
}

// probeLogNum learns the file's log number from the valid chunks at the
// start of block 0, so that a split scan agrees with a whole-file scan about
// which recyclable chunks are stale.
func (s *Scanner) probeLogNum() {
	n := min(s.size, logBlockSize)
	b := make([]byte, n)
	if m, _ := s.r.ReadAt(b, 0); int64(m) < n {
		return
	}
	for p := 0; p+logHdrLegacy <= len(b); {
		hs := logHdrSize(b[p+6])
		if hs == 0 {
			hs = logHdrLegacy // an unknown type: skipped as a legacy chunk when valid, as step does
		}
		ln := int(binary.LittleEndian.Uint16(b[p+4:]))
		if p+hs+ln > len(b) || !s.crcOK(b[p:], hs, ln) {
			if p == 0 {
				s.claimFirst(b)
			}
			return
		}
		if p == 0 && logHdrSize(b[6]) == logHdrLegacy {
			s.dropNameClaim() // as chunk does
		}
		if hs > logHdrLegacy {
			num := binary.LittleEndian.Uint32(b[p+7:])
			if s.claimOlder(num) {
				num = s.claim // the file's previous life, as ownLog decides
			}
			s.setLogNum(num, hs)
			return
		}
		p += hs + ln
	}
}

func (s *Scanner) setLogNum(n uint32, hs int) {
	s.info.LogNum, s.numSet = n, true
	s.flagFlavour(hs)
}

func (s *Scanner) flagFlavour(hs int) {
	switch hs {
	case logHdrRecycle:
		s.info.Recyclable = true
	case logHdrWALSync:
		s.info.WALSync = true
	}
}

// crcOK verifies the checksum of the chunk at the start of c.
func (s *Scanner) crcOK(c []byte, hs, ln int) bool {
	return logCRCOK(c, hs, ln, s.o.Unmasked)
}

func logCRCOK(c []byte, hs, ln int, unmasked bool) bool {
	stored := binary.LittleEndian.Uint32(c)
	sum := codec.CRC32C(c[6 : hs+ln])
	if unmasked {
		return stored == sum
	}
	return stored == codec.MaskCRC(sum)
}

// Next advances to the next intact record. It returns false at the end of
// the log (or of the split), after a strict-mode damage, or on an I/O error.
func (s *Scanner) Next() bool {
	for !s.done {
		if s.bOff < 0 || s.pos >= len(s.blk) || s.pos+logHdrLegacy > logBlockSize {
			s.nextBlock()
			continue
		}
		if s.step() {
			return true
		}
	}
	return false
}

// nextBlock moves to the next block, or ends the scan.
func (s *Scanner) nextBlock() {
	nb := s.start
	if s.bOff >= 0 {
		nb = s.bOff + logBlockSize
	}
	if nb >= s.size {
		if s.inRec {
			s.cutShort(s.size, codec.ErrTruncated)
		}
		s.staleAtEOF()
		s.done = true
		return
	}
	if !s.inRec && nb >= s.end {
		s.done = true
		return
	}
	if nb < s.winOff || nb+min(logBlockSize, s.size-nb) > s.winOff+int64(len(s.win)) {
		if !s.load(nb) {
			return
		}
	}
	lo := nb - s.winOff
	s.blk = s.win[lo:min(lo+logBlockSize, int64(len(s.win)))]
	s.bOff = nb
	s.pos = 0
}

// windowLen returns how many bytes a window starting at nb should hold: a
// whole window, but no further than the file, or than the split's end unless
// a record in progress must be followed past it.
func (s *Scanner) windowLen(nb int64) int64 {
	n := min(int64(logWindowBlocks*logBlockSize), s.size-nb)
	if !s.inRec && s.end < s.size {
		n = min(n, max(s.end-nb, logBlockSize))
	}
	return max(n, 0)
}

// load reads the window starting at block nb. It reports false (and ends
// the scan) on a read error.
func (s *Scanner) load(nb int64) bool {
	n := s.windowLen(nb)
	if bs, ok := s.r.(codec.ByteSlicer); ok {
		if b, err := bs.Slice(nb, n); err == nil && int64(len(b)) == n {
			s.win, s.winOff = b, nb
			return true
		}
	}
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	s.win = s.buf[:n]
	m, err := s.r.ReadAt(s.win, nb)
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("codec: leveldb log: read %d bytes at offset %d, want %d: %w", m, nb, n, io.ErrUnexpectedEOF)
		}
		s.err = err
		s.done = true
		s.win = s.win[:0]
		return false
	}
	s.winOff = nb
	return true
}

// step handles the chunk (or trailer, padding, damage) at s.pos, handing
// each outcome of its header to a method of its own. It reports whether a
// record was completed into s.cur.
func (s *Scanner) step() bool {
	hdrOff := s.bOff + int64(s.pos)
	if !s.inRec && hdrOff >= s.end {
		s.done = true
		return false
	}
	b := s.blk[s.pos:]
	if len(b) < logHdrLegacy {
		s.shortHeader(b, hdrOff)
		return false
	}
	typ := b[6]
	if typ == 0 && binary.LittleEndian.Uint32(b) == 0 && b[4] == 0 && b[5] == 0 {
		s.zeroHeader(b, hdrOff)
		return false
	}
	hs := logHdrSize(typ)
	if hs == 0 {
		s.unknownChunk(b, hdrOff)
		return false
	}
	ln := int(binary.LittleEndian.Uint16(b[4:]))
	if dk, err := s.overrun(b, hs, ln); err != nil {
		s.dropBlock(hdrOff, dk, err)
		return false
	}
	if hs > logHdrLegacy && s.endMarker(b, hdrOff, hs, ln) {
		return false
	}
	if !s.crcOK(b, hs, ln) {
		s.dropBlock(hdrOff, codec.DamageChecksum, codec.ErrCorrupt)
		return false
	}
	if hs > logHdrLegacy && !s.ownLog(b, hdrOff, hs) {
		return false
	}
	return s.chunk(int(typ-1)%4, hdrOff, hs, ln)
}

// lastBlock reports whether the current block ends the file.
func (s *Scanner) lastBlock() bool { return s.bOff+int64(len(s.blk)) == s.size }

// dropBlock records damage from off to the end of the block, which the
// scan then skips: after a bad header nothing in the block can be trusted.
func (s *Scanner) dropBlock(off int64, dk codec.DamageKind, kind error) {
	if off == 0 {
		s.claimFirst(s.blk)
	}
	s.fail(off, s.bOff+int64(len(s.blk))-off, dk, kind)
	s.pos = len(s.blk)
}

// shortHeader handles a header cut by the end of the file (b, the rest of
// the file's last block, is shorter than any header): zeros are padding,
// anything else a truncated header.
func (s *Scanner) shortHeader(b []byte, hdrOff int64) {
	if !codec.AllZero(b) {
		s.dropBlock(hdrOff, codec.DamageTruncHdr, codec.ErrTruncated)
		return
	}
	s.padding(hdrOff, len(b), true)
	s.pos = len(s.blk)
}

// zeroHeader handles an all-zero header: the block's padding when the rest
// of the block is zero too, else a zeroed header in front of data.
func (s *Scanner) zeroHeader(b []byte, hdrOff int64) {
	if hdrOff == 0 {
		s.claimFirst(b) // as the probe of a split scan does
	}
	if !codec.AllZero(b[logHdrLegacy:]) {
		s.dropBlock(hdrOff, codec.DamageZeroHeader, codec.ErrCorrupt)
		return
	}
	s.padding(hdrOff, len(b), s.lastBlock())
	s.pos = len(s.blk)
}

// overrun classifies a chunk of an hs-byte header and ln bytes of payload
// at the start of b (the rest of the block) that does not fit: a length
// running past the block is a bad length (or, in the file's last block
// when b cannot even hold the header, a truncated header); one running past
// the bytes the block holds is a chunk (or header) cut by the end of the
// file. Its error is nil when the chunk fits.
func (s *Scanner) overrun(b []byte, hs, ln int) (codec.DamageKind, error) {
	cutHdr := len(b) < hs
	switch {
	case s.pos+hs+ln > logBlockSize:
		if cutHdr && s.lastBlock() {
			return codec.DamageTruncHdr, codec.ErrTruncated
		}
		return codec.DamageLength, codec.ErrCorrupt
	case hs+ln <= len(b):
		return 0, nil
	case cutHdr:
		return codec.DamageTruncHdr, codec.ErrTruncated
	}
	return codec.DamageTruncChunk, codec.ErrTruncated
}

// endMarker reports whether the recyclable chunk at the start of b is
// pebble's end-of-log marker (type 5, no payload, checksum 0, the log's
// number plus one), and then ends the log there. The marker is recognized
// before its checksum is verified, as pebble writes it with none.
func (s *Scanner) endMarker(b []byte, hdrOff int64, hs, ln int) bool {
	num := binary.LittleEndian.Uint32(b[7:])
	if b[6] != 5 || ln != 0 || binary.LittleEndian.Uint32(b) != 0 || (s.numSet && num != s.info.LogNum+1) {
		return false
	}
	if !s.numSet && num > 0 && s.claimOlder(num-1) {
		s.setLogNum(s.claim, hs)
		s.staleAt(hdrOff) // the end marker of the file's previous life
		return true
	}
	if !s.numSet {
		s.setLogNum(num-1, hs)
	}
	s.stopAt(hdrOff)
	s.info.EOFMarker = hdrOff
	return true
}

// claimFirst notes, when the file's first chunk (at the start of b, block
// 0) is damaged and no name claims (Options.LogNum), the number in the
// chunk's recyclable header. The first chunk starts the live log, and a
// write torn in it spoils its tail (a write torn in its header leaves
// only the name to tell): intact chunks after it whose number is lower
// belong to the recycled file's previous life (log numbers only grow) and
// are stale, not the live log. A higher number overrules the claim.
func (s *Scanner) claimFirst(b []byte) {
	if !s.numSet && s.claimBy == claimNone && len(b) >= logHdrRecycle && logHdrSize(b[6]) > logHdrLegacy {
		s.claim, s.claimBy = binary.LittleEndian.Uint32(b[7:]), claimHeader
	}
}

// dropNameClaim withdraws the name's claim (Options.LogNum) when the file's
// first chunk is intact and legacy: a recyclable log's first chunk is
// always recyclable, so the file is a legacy log (leveldb, goleveldb), where
// a name says nothing about stale chunks, and a torn tail is damage. Only
// the first chunk decides: a recyclable log may follow a legacy previous
// life later in the file.
func (s *Scanner) dropNameClaim() {
	if s.claimBy == claimName {
		s.claim, s.claimBy = 0, claimNone
	}
}

// claimSource says where a claimed log number comes from.
type claimSource uint8

const (
	claimNone   claimSource = iota
	claimName               // Options.LogNum: the file's name, from the start
	claimHeader             // the damaged first chunk's own header
)

// maxRecycleGap bounds how far below a claimed number a previous life's
// log number may lie: pebble reuses the file of a log that became obsolete
// moments before, a few file numbers back, while a flipped high bit in a
// damaged header's number, or a name that is no log number (a date or a
// time a collector named a copy by: 20261127.log), would make every intact
// chunk of a healthy log look older.
const maxRecycleGap = 1 << 16

// claimOlder reports whether an intact chunk of log num, met before any
// intact chunk of the live log, is of the file's previous life by the
// claim: a lower number than the claimed one, within maxRecycleGap of it.
func (s *Scanner) claimOlder(num uint32) bool {
	return s.claimBy != claimNone && num < s.claim && s.claim-num < maxRecycleGap
}

// ownLog checks the log number of an intact recyclable chunk at the start
// of b: the first one met sets the log's number; one of another number is
// data from the file's previous life, where the log ends. It reports
// whether the chunk belongs to this log.
func (s *Scanner) ownLog(b []byte, hdrOff int64, hs int) bool {
	num := binary.LittleEndian.Uint32(b[7:])
	if !s.numSet && s.claimOlder(num) {
		s.setLogNum(s.claim, hs)
	}
	if !s.numSet {
		s.setLogNum(num, hs)
	} else if num != s.info.LogNum {
		s.staleAt(hdrOff)
		return false
	}
	s.flagFlavour(hs)
	return true
}

// chunk handles an intact chunk of this log, of the given kind (full,
// first, middle or last). It reports whether a record was completed.
func (s *Scanner) chunk(kind int, hdrOff int64, hs, ln int) bool {
	s.liveEnd = hdrOff + int64(hs+ln)
	if hdrOff == 0 && hs == logHdrLegacy {
		s.dropNameClaim()
	}
	if s.inRec && hs != s.recHdr && s.endedPastEnd(hdrOff, codec.ErrCorrupt) {
		return false
	}
	switch {
	case kind == logKindFull || kind == logKindFirst:
		return s.recordStart(kind, hdrOff, hs, ln)
	case !s.inRec:
		s.orphan(hdrOff, hs, ln)
		return false
	}
	return s.recordMore(kind, hdrOff, hs, ln)
}

// recordStart handles a FULL chunk (a whole record: it reports true) or a
// FIRST one (a record begins), dropping any record in progress.
func (s *Scanner) recordStart(kind int, hdrOff int64, hs, ln int) bool {
	if s.inRec && s.endedPastEnd(hdrOff, codec.ErrCorrupt) {
		return false
	}
	s.leading = false
	s.pos += hs + ln
	s.consumed = hdrOff + int64(hs+ln)
	if kind == logKindFull {
		s.cur = Record{Off: hdrOff, Len: int64(ln), Hdr: uint8(hs)}
		return true
	}
	s.inRec, s.recOff, s.recLen, s.recHdr = true, hdrOff, int64(ln), hs
	s.nChunks, s.firstLen, s.lastOff = 1, int32(ln), hdrOff
	s.chunks = s.chunks[:0]
	// A FIRST of the writer's layout fills its block.
	s.canon = int64(ln) == logBlockSize-hdrOff%logBlockSize-int64(hs)
	if !s.canon {
		s.chunks = append(s.chunks, Chunk{Off: hdrOff, Len: int32(ln)})
	}
	return false
}

// orphan handles a MIDDLE or LAST chunk that continues no record: at the
// start of a split it may continue a record of an earlier split (kept in
// Lead), else it is damage.
func (s *Scanner) orphan(hdrOff int64, hs, ln int) {
	s.pos += hs + ln
	if s.leading {
		s.lead = append(s.lead, Chunk{Off: hdrOff, Len: int32(ln)})
		s.leadHdr = append(s.leadHdr, uint8(hs))
		return
	}
	s.addDamage(logDamage(hdrOff, int64(hs+ln), codec.DamageOrphan, codec.ErrCorrupt))
}

// recordMore handles a MIDDLE or LAST chunk of the record in progress. It
// reports whether the record was completed (by a LAST).
func (s *Scanner) recordMore(kind int, hdrOff int64, hs, ln int) bool {
	s.consumed = hdrOff + int64(hs+ln)
	s.recLen += int64(ln)
	if s.canon && !s.writerLayout(kind, hdrOff, hs, ln) {
		s.listChunks(hs)
	}
	s.pos += hs + ln
	s.nChunks++
	s.lastOff = hdrOff
	if !s.canon {
		if len(s.chunks) >= logMaxExplicitChunks {
			// A hostile file could make one record of millions of tiny
			// chunks; refuse to list them.
			s.inRec = false
			s.addDamage(logDamage(s.recOff, s.consumed-s.recOff, codec.DamageFragmented, codec.ErrLimit))
			return false
		}
		s.chunks = append(s.chunks, Chunk{Off: hdrOff, Len: int32(ln)})
	}
	if kind == logKindMiddle {
		return false
	}
	s.inRec = false
	s.cur = Record{Off: s.recOff, Len: s.recLen, Hdr: uint8(s.recHdr)}
	if !s.canon {
		s.cur.Chunks = s.chunks
	}
	return true
}

// writerLayout reports whether a continuation chunk (at s.pos, not yet
// consumed) sits where the writer puts it: at the start of the block after
// the previous chunk's, a MIDDLE filling its block, a LAST carrying
// 1..32768-hs bytes.
func (s *Scanner) writerLayout(kind int, hdrOff int64, hs, ln int) bool {
	return s.pos == 0 && hdrOff == s.lastOff-s.lastOff%logBlockSize+logBlockSize &&
		(ln == logBlockSize-hs || kind == logKindLast && ln > 0)
}

// listChunks leaves the writer's layout for the record in progress: the
// chunks so far, which the layout implied, are listed in s.chunks.
func (s *Scanner) listChunks(hs int) {
	per := logBlockSize - hs
	s.canon = false
	s.chunks = append(s.chunks, Chunk{Off: s.recOff, Len: s.firstLen})
	for j := 1; j < s.nChunks; j++ {
		s.chunks = append(s.chunks, Chunk{Off: s.recOff - s.recOff%logBlockSize + int64(j)*logBlockSize, Len: int32(per)})
	}
}

// unknownChunk handles the chunk at s.pos whose type no flavour defines.
// Like leveldb C++ (log_reader.cc), it reads the header as a legacy one (in
// a recyclable or WAL-sync log, first as one of the log's own flavour with
// the log's number): a length running past the block or the file, or a
// checksum mismatch, drops the rest of the block as for any chunk; a chunk
// whose checksum holds is skipped alone, reported as "unknown chunk type",
// and the chunks after it in the block are still read. A record in progress
// is dropped, as leveldb C++ drops it.
func (s *Scanner) unknownChunk(b []byte, hdrOff int64) {
	hs := logHdrLegacy
	ln := int(binary.LittleEndian.Uint16(b[4:]))
	if s.numSet {
		fh := logHdrRecycle
		if s.info.WALSync {
			fh = logHdrWALSync
		}
		if s.pos+fh+ln <= logBlockSize && fh+ln <= len(b) &&
			binary.LittleEndian.Uint32(b[7:]) == s.info.LogNum && s.crcOK(b, fh, ln) {
			hs = fh
		}
	}
	switch {
	case s.pos+hs+ln > logBlockSize:
		s.dropBlock(hdrOff, codec.DamageLength, codec.ErrCorrupt)
	case hs+ln > len(b):
		s.dropBlock(hdrOff, codec.DamageTruncChunk, codec.ErrTruncated)
	case !s.crcOK(b, hs, ln):
		s.dropBlock(hdrOff, codec.DamageChecksum, codec.ErrCorrupt)
	case s.inRec && s.endedPastEnd(hdrOff, codec.ErrCorrupt):
	default:
		s.leading = false
		s.pos += hs + ln
		s.liveEnd = hdrOff + int64(hs+ln)
		s.addDamage(logDamage(hdrOff, int64(hs+ln), codec.DamageType, codec.ErrCorrupt))
	}
}

// endedPastEnd discards the record in progress because a chunk at off
// cannot continue it. It reports whether the scan stopped because off lies
// past the split's end (the next split handles that chunk).
func (s *Scanner) endedPastEnd(off int64, kind error) bool {
	s.cutShort(off, kind)
	if off >= s.end {
		s.done = true
		return true
	}
	return s.done
}

// cutShort discards the record in progress, reporting it unless it was
// empty (leveldb C++ tolerates an empty FIRST silently).
func (s *Scanner) cutShort(off int64, kind error) {
	if !s.inRec {
		return
	}
	s.inRec = false
	if s.recLen == 0 {
		return
	}
	s.addDamage(logDamage(s.recOff, off-s.recOff, codec.DamageCutShort, kind))
}

// fail records damage of n bytes at off, dropping the record in progress.
func (s *Scanner) fail(off, n int64, dk codec.DamageKind, kind error) {
	if s.inRec {
		k := codec.ErrCorrupt
		if errors.Is(kind, codec.ErrTruncated) {
			k = codec.ErrTruncated
		}
		if s.endedPastEnd(off, k) {
			return
		}
	}
	s.leading = false
	s.addDamage(logDamage(off, n, dk, kind))
}

// padding handles a zero run of n bytes at off reaching the block end (or
// the end of the file when atEOF).
func (s *Scanner) padding(off int64, n int, atEOF bool) {
	if s.inRec {
		kind := codec.ErrCorrupt
		if atEOF {
			kind = codec.ErrTruncated
		}
		if s.endedPastEnd(off, kind) {
			return
		}
	}
	s.leading = false
	limit := logHdrLegacy
	if s.info.WALSync {
		limit = logHdrWALSync
	} else if s.info.Recyclable {
		limit = logHdrRecycle
	}
	if n >= limit {
		s.info.Padded = true
	}
}

// stopAt ends the log at off (end marker or stale data).
func (s *Scanner) stopAt(off int64) {
	if s.inRec {
		s.cutShort(off, codec.ErrTruncated)
	}
	s.done = true
	if s.err == nil {
		s.info.End = off
	}
}

// staleAt ends the log at off, an intact chunk of another log number: the
// file was recycled, and from off (or from the garbage just before it, see
// settleStale) on it holds its previous life. That tail is reported as a
// Damage of its own kind, ErrStale, even in strict mode.
func (s *Scanner) staleAt(off int64) {
	s.stopAt(off)
	if s.err != nil {
		return
	}
	s.damage = settleStale(append(s.damage, logDamage(off, s.size-off, codec.DamageStale, codec.ErrStale)))
	s.info.End = s.damage[len(s.damage)-1].Off
}

// staleProbeChecks bounds the checksums staleAtEOF computes.
const staleProbeChecks = 64

// staleAtEOF handles a recycled log whose scan ends in damage reaching the
// end of the file, after every intact chunk of the live log: no block start
// follows to show a stale chunk, so it looks inside the damaged part of the
// file's last block for proof that the damage is the file's previous life,
// which then becomes the stale tail. Proof is the end-of-log marker of
// another log (pebble's, checksum 0) as the file's last 11 bytes, or an
// intact chunk of another log number (at most staleProbeChecks candidates
// are checksummed).
func (s *Scanner) staleAtEOF() {
	n := len(s.damage)
	if (!s.numSet && s.claimBy == claimNone) || s.err != nil || n == 0 || s.bOff < 0 || s.bOff+int64(len(s.blk)) != s.size {
		return
	}
	// Before any intact chunk of the live log, its claimed number stands
	// for it, and only lower numbers are proof (see claimFirst).
	live, claimOnly := s.info.LogNum, !s.numSet
	if claimOnly {
		live = s.claim
	}
	d := s.damage[n-1]
	if d.Off < s.liveEnd || d.Off+d.Len != s.size || !staleRemains(d.Kind) {
		return
	}
	lo := int(max(d.Off, s.bOff)-s.bOff) + 1 // where proof may start in s.blk
	p, hs, ok := s.staleMarker(lo, live, claimOnly)
	if !ok {
		p, hs, ok = s.staleChunk(lo, live, claimOnly)
	}
	if !ok {
		return
	}
	if claimOnly {
		s.setLogNum(live, hs)
	}
	at := s.bOff + int64(p)
	s.damage[n-1].Len = at - d.Off
	s.damage = settleStale(append(s.damage, logDamage(at, s.size-at, codec.DamageStale, codec.ErrStale)))
	s.info.End = s.damage[len(s.damage)-1].Off
}

// staleMarker is staleAtEOF's first proof: pebble's end-of-log marker of
// an older log as the last block's last bytes, at or after lo-1; it
// returns the marker's offset in the block and header size. Right where
// the damage starts (the live log ended exactly where the marker begins,
// and its zero checksum is the damage) only a marker of an older log
// counts: one of a later log is a bad chunk.
func (s *Scanner) staleMarker(lo int, live uint32, claimOnly bool) (int, int, bool) {
	b := s.blk
	m := len(b) - logHdrRecycle
	if m < lo-1 || !codec.AllZero(b[m:m+6]) || b[m+6] != 5 {
		return 0, 0, false
	}
	num := binary.LittleEndian.Uint32(b[m+7:])
	older := num < live
	switch {
	case claimOnly:
		older = num > 0 && s.claimOlder(num-1) // the marker of log num-1
	case m >= lo:
		older = num != live && num != live+1
	}
	return m, logHdrRecycle, older
}

// staleChunk is staleAtEOF's second proof: an intact recyclable chunk of
// another log number (an older one before any chunk of the live log) at
// or after lo in the last block, checksumming at most staleProbeChecks
// candidates; it returns the chunk's offset in the block and header size.
func (s *Scanner) staleChunk(lo int, live uint32, claimOnly bool) (int, int, bool) {
	b := s.blk
	checks := 0
	for p := lo; p+logHdrRecycle <= len(b); p++ {
		hs := logHdrSize(b[p+6])
		if hs <= logHdrLegacy || p+hs > len(b) {
			continue
		}
		ln := int(binary.LittleEndian.Uint16(b[p+4:]))
		if num := binary.LittleEndian.Uint32(b[p+7:]); p+hs+ln > len(b) || num == live || (claimOnly && !s.claimOlder(num)) {
			continue
		}
		if checks++; checks > staleProbeChecks {
			return 0, 0, false
		}
		if s.crcOK(b[p:], hs, ln) {
			return p, hs, true
		}
	}
	return 0, 0, false
}

// settleStale finishes a damage list whose last entry is a stale tail. The
// live log of a recycled file ends where its writer stopped, usually inside
// a chunk of the previous life, whose remains fail to parse until the next
// block start brings an intact stale chunk. So the damage ranges right
// before the stale tail (touching it, no intact chunk between) of the kinds
// such remains give (bad checksum or length, a zero header, a truncated
// chunk or header) are stale bytes too and join it; a record cut short just
// before them is the live log's torn last write and becomes ErrTruncated,
// as at the end of any file. Damage at the file's start is never stale:
// the first chunk is the live log's, so there it is the live log's only
// write, torn (ErrTruncated), and a verify still fails on it. Other lists
// are returned as they are.
func settleStale(ds []codec.Damage) []codec.Damage {
	n := len(ds)
	if n == 0 || !ds[n-1].Stale() {
		return ds
	}
	st := ds[n-1]
	end := st.Off + st.Len
	i := n - 1
	for i > 0 && ds[i-1].Off+ds[i-1].Len == st.Off && staleRemains(ds[i-1].Kind) && ds[i-1].Off > 0 {
		st.Off = ds[i-1].Off
		i--
	}
	st.Len = end - st.Off
	if prev := i - 1; prev >= 0 && ds[prev].Off+ds[prev].Len == st.Off &&
		(ds[prev].Kind == codec.DamageCutShort || (ds[prev].Off == 0 && staleRemains(ds[prev].Kind))) {
		ds[prev].Err = codec.ErrTruncated
	}
	return append(ds[:i], st)
}

// staleRemains reports whether damage of this reason can be the unparsable
// remains of a recycled file's previous life (no intact chunk in it).
func staleRemains(k codec.DamageKind) bool {
	switch k {
	case codec.DamageChecksum, codec.DamageLength, codec.DamageZeroHeader, codec.DamageTruncChunk, codec.DamageTruncHdr:
		return true
	}
	return false
}

// addDamage records d, joining it to the previous damage when they touch and
// are of the same kind, so that a run of tiny bad chunks costs one entry.
func (s *Scanner) addDamage(d codec.Damage) {
	if s.o.Strict && s.err == nil {
		s.err = d.AsError(codec.LevelDB)
		s.done = true
		s.info.End = d.Off
	}
	if n := len(s.damage); n > 0 && logDamageJoins(s.damage[n-1], d) {
		s.damage[n-1].Len += d.Len
		return
	}
	s.damage = append(s.damage, d)
}

// logDamageJoins reports whether b continues a: same kind, touching.
func logDamageJoins(a, b codec.Damage) bool {
	return a.Kind == b.Kind && a.Err == b.Err && a.Off+a.Len == b.Off
}

// MergeDamage combines the damage of the parts of a split scan (each
// part's Damage plus its LeadDamage): it sorts by offset, joins touching
// ranges of the same kind and lets a stale tail take in the remains before
// it, as a whole-file scan reports them.
func MergeDamage(ds []codec.Damage) []codec.Damage {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Off < ds[j].Off })
	out := ds[:0]
	for _, d := range ds {
		if n := len(out); n > 0 && logDamageJoins(out[n-1], d) {
			out[n-1].Len += d.Len
			continue
		}
		out = append(out, d)
	}
	return settleStale(out)
}

// Record returns the record found by the last successful Next. Its Chunks
// slice is reused by the following Next.
func (s *Scanner) Record() Record { return s.cur }

// Err returns the error that ended the scan: nil at a clean end (even with
// damage, unless Strict), a *CorruptError in strict mode, or an I/O error.
func (s *Scanner) Err() error { return s.err }

// Damage returns the byte ranges skipped so far, in offset order.
func (s *Scanner) Damage() []codec.Damage { return s.damage }

// Info returns what the scan has found out about the file's flavour.
func (s *Scanner) Info() Info { return s.info }

// Lead returns, for a split scan starting after offset 0, the continuation
// (MIDDLE/LAST) chunks met before the split's first record start, damage or
// padding. They belong to a record of an earlier split, or are orphans.
func (s *Scanner) Lead() []Chunk { return s.lead }

// LeadDamage returns the "orphan chunk" damage a whole-file scan reports for
// the lead chunks at offsets >= consumedEnd (the largest ConsumedEnd of the
// earlier splits), in offset order.
func (s *Scanner) LeadDamage(consumedEnd int64) []codec.Damage {
	var ds []codec.Damage
	for i, c := range s.lead {
		if c.Off >= consumedEnd {
			ds = append(ds, logDamage(c.Off, int64(s.leadHdr[i])+int64(c.Len), codec.DamageOrphan, codec.ErrCorrupt))
		}
	}
	return ds
}

// ConsumedEnd returns, for a split scan, the offset just past the last chunk
// that joined a record (complete or not); it may exceed End. Before any such
// chunk it is Start.
func (s *Scanner) ConsumedEnd() int64 { return s.consumed }

// logDamage is damage of kind k, with the kind's words as its reason.
func logDamage(off, n int64, k codec.DamageKind, err error) codec.Damage {
	return codec.Damage{Off: off, Len: n, Kind: k, Reason: k.String(), Err: err}
}
