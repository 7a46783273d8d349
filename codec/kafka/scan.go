package kafka

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/recfs/recfs/codec"
)

// DefaultWindow is how many bytes a Scanner reads per ReadAt unless
// Options.Window says otherwise.
const DefaultWindow = 1 << 20

// Resynchronisation budget (see Scanner.syncLeft): candidates that fail
// may cost this many passes of the file plus the slack, no more.
const (
	resyncPasses = 4
	resyncSlack  = 16 << 20
)

// MaxProducers bounds the producer IDs a scan lists in Info.
const MaxProducers = 1024

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options configure a Scanner.
type Options struct {
	// Start makes the scan begin at Start, which must be where a batch
	// starts (the Info.LastEnd of an earlier scan of a file that has
	// grown since); what the scan cannot trust there is damage. With
	// Sync, Start may be anywhere: the scan begins at the first batch at
	// or after it that verifies (Info.First), the bytes before it
	// belonging to the part of the file before (parallel scans).
	Start int64
	Sync  bool
	// End, when above 0, ends the scan at the first batch that starts at
	// or after End (Info.Next), for parallel scans of parts.
	End int64
	// Prev is, for a scan with Start > 0, the last Kafka offset before
	// Start: offsets must go on after it. Ignored when Start is 0.
	Prev int64
	// Strict ends the scan at the first damage, with a *codec.CorruptError
	// as Err, instead of skipping it.
	Strict bool
	// Window is the number of bytes read per ReadAt (DefaultWindow if 0).
	// It bounds the scanner's memory for uncompressed batches, whatever
	// their lengths.
	Window int
	// MaxDecoded bounds a compressed batch: its compressed and its
	// decompressed records (DefaultMaxDecoded if 0). A batch past it is
	// damage of the limit kind.
	MaxDecoded int64
}

// Info describes what a scan found, beyond the records.
type Info struct {
	// First is where the scan began: Options.Start, or for a scan with
	// Sync the first batch it found (-1: none).
	First int64
	// Next is where the scan stopped: the end of the file, the first
	// batch at or after Options.End, or where a strict scan met damage or
	// a read failed.
	Next int64
	// LastEnd is the end of the last intact batch (Options.Start when
	// none was): where the batches a writer appends next begin.
	LastEnd int64
	// Batches counts intact batches (v0/v1: top-level messages), empty
	// and control batches included; Records the records yielded, control
	// records included.
	Batches, Records int64
	// ControlBatches and ControlRecords count transaction markers and
	// KRaft control records; Commits and Aborts the transaction markers
	// by type. TransactionalBatches counts batches of transactions
	// (their markers included).
	ControlBatches, ControlRecords int64
	Commits, Aborts                int64
	TransactionalBatches           int64
	// Magic counts batches per message format version (0, 1, 2).
	Magic [3]int64
	// Codecs counts batches per compression codec.
	Codecs [Zstd + 1]int64
	// FirstOffset and LastOffset are the Kafka offsets of the first and
	// last intact batch's first and last record (-1 when none).
	FirstOffset, LastOffset int64
	// FirstTimestamp and LastTimestamp are the timestamps of the first and
	// last record yielded; MaxTimestamp the largest (-1 when none).
	FirstTimestamp, LastTimestamp, MaxTimestamp int64
	// OutOfOrder counts batches that verify but whose offsets do not
	// follow the batch before (offsets are outside the checksum):
	// their records are yielded with the offsets their bytes say.
	OutOfOrder int64
	// Prev is the last offset of the last batch in order (-1: none): the
	// Options.Prev of a scan of what follows LastEnd.
	Prev int64
	// Producers lists the distinct producer IDs of the batches (v2, IDs
	// >= 0), in order of appearance, at most MaxProducers; MoreProducers
	// says there were more.
	Producers     []int64
	MoreProducers bool
}

// A Scanner walks a Kafka log segment and yields every record of every
// intact batch, control records included, with its batch. It verifies
// each batch's checksum (and each inner message's, for v0/v1 wrappers)
// and that its records parse and fill it exactly, decompressing a
// compressed batch once, before yielding any of its records. It reads the
// file in windows and holds at most one compressed batch and its
// decompressed records, so its memory is bounded by Options.Window and
// Options.MaxDecoded whatever the lengths claim. It is not safe for
// concurrent use.
type Scanner struct {
	r    io.ReaderAt
	size int64
	end  int64 // Options.End, or the file's size
	o    Options
	w    codec.Window

	cbuf []byte // compressed records of the current batch, when not in the window
	dbuf []byte // decompressed records of the current batch

	// syncLeft is how many more bytes resynchronisation may spend on
	// candidates whose checksum then fails; once spent, the rest of the
	// file is damage.
	syncLeft int64

	pos  int64 // where the next batch starts
	prev int64 // last offset of the last intact batch, -1 before any

	batch    Batch
	data     cursor   // the current batch's data, at the next record to yield
	origin   int64    // position in data coordinates of the batch's data (file-backed batches)
	left     int32    // records of the current batch still to yield
	recPrev  int64    // offset of the last record yielded from the batch
	inner    bool     // the records are a v1/v0 wrapper's inner messages
	recs     []Record // the current v2 batch's first records, as checked (at most maxKept)
	yi       int      // index of the next record to yield
	inWindow bool     // the current batch is read from the window, in memory
	innerAt  int64    // v1 wrapper: absolute offset = innerAt + inner offset
	cur      Record
	run      []Record // the run NextRun found: part of recs, or of own
	own      []Record // records of runs parsed one by one (at most maxKept)

	producers map[int64]bool
	ensures   int64 // calls of ensure, for tests
	keptRuns  int64 // runs NextRun handed out as load kept them, for tests
	info      Info
	damage    codec.DamageLog
	err       error
	done      bool
}

// NewScanner returns a scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, o Options) *Scanner { return newScanner(r, size, o, nil) }

// newScanner is NewScanner reading into buf, the window buffer of a
// finished scan (see codec.NewWindowBuf), when it is large enough.
func newScanner(r io.ReaderAt, size int64, o Options, buf []byte) *Scanner {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	o.Window = max(o.Window, 2*BatchHeaderSize)
	if o.MaxDecoded <= 0 {
		o.MaxDecoded = DefaultMaxDecoded
	}
	s := &Scanner{r: r, size: max(size, 0), o: o, prev: -1, producers: map[int64]bool{}, w: codec.NewWindowBuf(r, size, o.Window, buf),
		damage: codec.DamageLog{Format: codec.Kafka, Strict: o.Strict}}
	s.syncLeft = resyncPasses*s.size + resyncSlack
	s.end = s.size
	if o.End > 0 {
		s.end = min(o.End, s.size)
	}
	s.info = Info{First: max(o.Start, 0), Next: s.size, LastEnd: max(o.Start, 0), FirstOffset: -1, LastOffset: -1,
		FirstTimestamp: -1, LastTimestamp: -1, MaxTimestamp: -1, Prev: -1}
	switch {
	case o.Start < 0:
		s.err = fmt.Errorf("kafka: negative scan start %d", o.Start)
		s.done = true
	case o.Start > 0 && o.Sync:
		q, ok := s.sync(o.Start)
		s.pos, s.info.LastEnd = q, q
		if !ok {
			s.info.First, s.info.Next, s.done = -1, q, true
		} else {
			s.info.First = q
		}
	case o.Start > 0:
		s.pos, s.prev = o.Start, o.Prev
	}
	return s
}

// Next advances to the next record. It returns false at the end of the
// file, after a strict-mode damage, or on an I/O error.
func (s *Scanner) Next() bool {
	if !s.advance() {
		return false
	}
	s.left--
	if s.yield() {
		return true
	}
	s.changed()
	return false
}

// advance moves on to the next batch with records left to yield, unless
// the current one has some; false at the end of the scan.
func (s *Scanner) advance() bool {
	for !s.done {
		if s.left > 0 {
			return true
		}
		if s.pos >= s.end {
			s.done = true
			s.info.Next = s.pos
			return false
		}
		s.step()
	}
	return false
}

// changed ends the scan when the records of the current batch, verified a
// moment ago, no longer parse: the bytes changed under the scan.
func (s *Scanner) changed() {
	s.fail(s.batch.Off, fmt.Errorf("%w: batch at %d changed during the scan", codec.ErrCorrupt, s.batch.Off))
}

// Record returns the record Next found.
func (s *Scanner) Record() Record { return s.cur }

// Batch returns the batch of the record Next found.
func (s *Scanner) Batch() Batch { return s.batch }

// Current returns the batch and the record Next found, as Batch and
// Record do but without copying them: pointers into the scanner, valid
// until the next call of Next and not to be changed. For loops that take
// every record of a large segment.
func (s *Scanner) Current() (*Batch, *Record) { return &s.batch, &s.cur }

// Decompressed returns the decompressed records of the batch of the record
// Next found, as ReadBatch returns them (nil when the batch is not
// compressed). The bytes are the scanner's: valid until Next moves to
// another batch, and not to be changed.
func (s *Scanner) Decompressed() []byte {
	if !s.batch.Compressed() {
		return nil
	}
	return s.dbuf
}

// Err returns the I/O error, or in strict mode the *codec.CorruptError, that
// ended the scan; nil at a normal end.
func (s *Scanner) Err() error { return s.err }

// Damage returns the ranges skipped so far, in file order.
func (s *Scanner) Damage() []codec.Damage { return s.damage.Ranges() }

// Info returns what the scan found; complete once Next returned false.
func (s *Scanner) Info() Info {
	in := s.info
	in.Prev = s.prev
	return in
}

// step looks at the batch at s.pos: it either makes it the current batch,
// whose records Next then yields, or records damage and moves on.
func (s *Scanner) step() {
	p := s.pos
	h := s.ensure(p, BatchHeaderSize)
	if s.err != nil {
		return
	}
	if len(h) <= magicAt {
		s.tail(p, ReasonTruncHeader)
		return
	}
	if m, _ := peekMagic(h); m >= 0 && m <= 2 && len(h) < headerSize(m) {
		s.tail(p, ReasonTruncHeader)
		return
	}
	b, why := parseHeader(h, p)
	switch {
	case why != "":
		s.recover(p, why)
	case b.End() > s.size:
		// A batch running past the end: a broker's write cut short,
		// unless a batch that verifies follows (then the length was
		// damaged).
		q, ok := s.sync(p + 1)
		if s.err != nil {
			return
		}
		if ok {
			s.skip(p, q, ReasonLength)
		} else {
			s.tail(p, ReasonTruncated)
		}
	default:
		why = s.load(&b)
		if s.err != nil {
			return
		}
		if why != "" {
			s.recover(p, why)
			return
		}
		s.accept(&b)
	}
}

// accept makes b, verified and loaded, the current batch.
func (s *Scanner) accept(b *Batch) {
	s.batch = *b
	s.left = b.Count
	s.yi = 0
	s.recPrev = b.BaseOffset - 1
	s.pos = b.End()
	in := &s.info
	if s.inOrder(b) {
		s.prev = b.LastOffset
	} else if s.prev >= 0 {
		// Its checksum verifies, but its offsets do not follow: the
		// offset fields are outside the checksum. Its records are
		// served as the bytes say; offsets go on from the last batch
		// in order.
		in.OutOfOrder++
	}
	in.LastEnd = s.pos
	in.Batches++
	in.Magic[b.Magic]++
	in.Codecs[b.Compression()]++
	if b.Control() {
		in.ControlBatches++
	}
	if b.Transactional() {
		in.TransactionalBatches++
	}
	if in.FirstOffset < 0 {
		in.FirstOffset = b.BaseOffset
	}
	in.LastOffset = b.LastOffset
	if b.Magic == 2 && b.ProducerID >= 0 && !s.producers[b.ProducerID] {
		if len(s.producers) < MaxProducers {
			s.producers[b.ProducerID] = true
			in.Producers = append(in.Producers, b.ProducerID)
		} else {
			in.MoreProducers = true
		}
	}
}

// load verifies the batch b whose header was parsed, decompresses its
// records when they are compressed, checks that they parse, and leaves
// s.data at its first record. It returns why b cannot be trusted ("" when
// it can); a read error sets s.err.
func (s *Scanner) load(b *Batch) string {
	c := s.fileCursor(b.End())
	tab, from := castagnoli, b.Off+v2crcFrom
	if b.Magic < 2 {
		tab, from = ieee, b.Off+magicAt
	}
	var crc uint32
	if w := s.ensure(b.Off, int(min(b.Len, int64(s.o.Window)))); int64(len(w)) >= b.Len {
		// The whole batch is in the window (as it is from a mapped file,
		// but for batches larger than the window): read it in memory.
		c = over(w[:b.Len])
		c.pos, c.end = 0, b.Len
		crc = crc32.Checksum(w[from-b.Off:b.Len], tab)
		s.inWindow = true
	} else {
		var ok bool
		if crc, ok = c.crcOver(tab, from, b.End()); !ok {
			return ""
		}
		s.inWindow = false
	}
	if crc != b.CRC {
		return ReasonCRC
	}
	s.inner = false
	var why string
	if b.Magic == 2 {
		why = s.loadV2(b, c)
	} else {
		why = s.loadV1(b, c)
	}
	return why
}

// loadV2 readies a verified v2 batch's records and checks them.
func (s *Scanner) loadV2(b *Batch, c cursor) string {
	if b.Compressed() {
		src, why := s.bytesAt(b.Off+BatchHeaderSize, b.End())
		if why != "" {
			return why
		}
		if why = s.decompress(b.Compression(), src); why != "" {
			return why
		}
		s.data, s.origin = over(s.dbuf), 0
	} else if s.inWindow {
		// c holds the batch from its first byte: its data from
		// BatchHeaderSize, positions counted from there.
		s.data, s.origin = over(c.b[BatchHeaderSize:]), 0
	} else {
		c.pos = b.DataOff()
		s.data, s.origin = c, b.DataOff()
	}
	d := s.data
	prev := b.BaseOffset - 1
	s.recs = s.recs[:0]
	var r Record
	for range b.Count {
		if !d.recordV2(b, prev, &r) {
			return ReasonRecords
		}
		prev = r.Offset
		if len(s.recs) < maxKept {
			s.recs = append(s.recs, r)
		}
	}
	if d.pos != d.end {
		return ReasonCount
	}
	return ""
}

// maxKept bounds the records of a batch a scan keeps from checking them to
// yielding them; those past it are parsed again.
const maxKept = 1 << 14

// loadV1 readies a verified v0/v1 message: a plain one is its own record,
// a wrapper's inner messages are decompressed and checked.
func (s *Scanner) loadV1(b *Batch, c cursor) string {
	base := b.Off // positions of c: file offsets, or from the batch in the window
	if s.inWindow {
		base = 0
	}
	c.pos = base
	m, ok := c.parseMessage()
	if !ok {
		return ReasonRecords
	}
	if !b.Compressed() {
		c.pos = base
		s.data, s.origin = c, base
		return ""
	}
	if m.valueLen < 0 {
		return ReasonRecords
	}
	var src []byte
	if s.inWindow {
		src = c.b[m.valueOff : m.valueOff+m.valueLen]
	} else {
		var why string
		if src, why = s.bytesAt(m.valueOff, m.valueOff+m.valueLen); why != "" {
			return why
		}
	}
	if why := s.decompress(b.Compression(), src); why != "" {
		return why
	}
	d := over(s.dbuf)
	count, first, last := int64(0), int64(0), int64(-1)
	for d.pos < d.end {
		at := d.pos
		im, ok := d.parseMessage()
		switch {
		case !ok || im.magic != b.Magic || im.offset <= last:
			return ReasonRecords
		case im.attr&attrCompression != 0:
			return ReasonNested
		case crc32.Checksum(s.dbuf[at+magicAt:im.end], ieee) != im.crc:
			return ReasonInnerCRC
		}
		if count == 0 {
			first = im.offset
		}
		last = im.offset
		count++
	}
	if count == 0 || count > int64(^uint32(0)>>1) {
		return ReasonRecords
	}
	s.inner, s.innerAt = true, 0
	if b.Magic == 1 {
		// Inner offsets count from 0; the wrapper's is the last one's.
		s.innerAt = b.BaseOffset - last
	}
	b.Count = int32(count)
	b.LastOffset = s.innerAt + last
	b.BaseOffset = s.innerAt + first
	if b.BaseOffset < 0 {
		return ReasonOffset
	}
	s.data, s.origin = over(s.dbuf), 0
	return ""
}

// bytesAt returns the file bytes [from, to) of a compressed batch, from
// the window when they are in it, else read into s.cbuf (at most
// MaxDecoded of them).
func (s *Scanner) bytesAt(from, to int64) ([]byte, string) {
	n := to - from
	if n > s.o.MaxDecoded {
		return nil, ReasonTooLarge
	}
	if n <= int64(s.o.Window) {
		b := s.ensure(from, int(n))
		if int64(len(b)) < n {
			return nil, ""
		}
		return b[:n], ""
	}
	if int64(cap(s.cbuf)) < n {
		s.cbuf = make([]byte, n)
	}
	b := s.cbuf[:n]
	if err := readFull(s.r, b, from); err != nil {
		s.fail(from, err)
		return nil, ""
	}
	return b, ""
}

// decompress decodes src into s.dbuf within the limit.
func (s *Scanner) decompress(c Compression, src []byte) string {
	out, err := Decompress(s.dbuf, c, src, s.o.MaxDecoded)
	switch {
	case errors.Is(err, codec.ErrLimit):
		return ReasonTooLarge
	case err != nil:
		return ReasonDecompress
	}
	s.dbuf = out
	return ""
}

// yield parses the next record of the current batch into s.cur.
func (s *Scanner) yield() bool {
	b := &s.batch
	r := &s.cur
	d := &s.data
	switch {
	case b.Magic == 2 && s.yi < len(s.recs):
		*r = s.recs[s.yi]
		d.pos = r.Pos + r.Len
		s.recPrev = r.Offset
	case b.Magic == 2:
		if !d.recordV2(b, s.recPrev, r) {
			return false
		}
		s.recPrev = r.Offset
	case !s.inner:
		at := d.pos
		m, ok := d.parseMessage()
		if !ok {
			return false
		}
		*r = Record{Offset: b.BaseOffset, Timestamp: m.ts, Pos: at, Len: b.Len,
			KeyOff: m.keyOff, KeyLen: m.keyLen, ValueOff: m.valueOff, ValueLen: m.valueLen, HeadersOff: m.end}
	default:
		at := d.pos
		m, ok := d.parseMessage()
		if !ok {
			return false
		}
		ts := m.ts
		if b.LogAppendTime() {
			ts = b.MaxTimestamp
		}
		*r = Record{Offset: s.innerAt + m.offset, Timestamp: ts, Pos: at, Len: m.end - at,
			KeyOff: m.keyOff, KeyLen: m.keyLen, ValueOff: m.valueOff, ValueLen: m.valueLen, HeadersOff: m.end}
	}
	if s.origin != 0 {
		r.Pos -= s.origin
		r.KeyOff -= s.origin
		r.ValueOff -= s.origin
		r.HeadersOff -= s.origin
	}
	s.count(r)
	s.yi++
	return true
}

// count adds the record r, just yielded, to the scan's Info.
func (s *Scanner) count(r *Record) {
	in := &s.info
	in.Records++
	if in.FirstTimestamp < 0 && in.Records == 1 {
		in.FirstTimestamp = r.Timestamp
	}
	in.LastTimestamp = r.Timestamp
	in.MaxTimestamp = max(in.MaxTimestamp, r.Timestamp)
	if s.batch.Control() {
		s.countControl(r)
	}
}

// countControl adds the control record r, just yielded, to the scan's
// Info.
func (s *Scanner) countControl(r *Record) {
	in := &s.info
	in.ControlRecords++
	if r.KeyLen == 4 {
		d := s.data
		d.pos = r.KeyOff + s.origin
		if k := d.avail(4); len(k) >= 4 {
			switch ParseControlType(k) {
			case ControlAbort:
				in.Aborts++
			case ControlCommit:
				in.Commits++
			}
		}
	}
}

// tail records [p, end of file) as the torn (or never written) end of a
// segment being written: the truncation kind, whose reason says whether
// the bytes are zero.
func (s *Scanner) tail(p int64, why string) { s.tailAs(p, why) }

// tailAs records [p, end of file) as damage of the given reason, or as a
// zeroed tail (the truncation kind) when every byte of it is 0: the space
// a crashed file system or a preallocating broker left unwritten.
func (s *Scanner) tailAs(p int64, why string) {
	if s.zeroFrom(p) {
		why = ReasonZeroTail
	}
	if s.err == nil {
		s.skip(p, s.size, why)
	}
}

// zeroFrom reports whether every byte from p to the end of the file is 0.
func (s *Scanner) zeroFrom(p int64) bool {
	for p < s.size {
		b := s.ensure(p, int(min(int64(s.o.Window), s.size-p)))
		if len(b) == 0 || !codec.AllZero(b) {
			return false
		}
		p += int64(len(b))
	}
	return true
}

// recover skips damage starting at p up to the next batch that verifies,
// or to the end of the file.
func (s *Scanner) recover(p int64, why string) {
	q, ok := s.sync(p + 1)
	if s.err != nil {
		return
	}
	if !ok {
		s.tailAs(p, why)
		return
	}
	s.skip(p, q, why)
}

// skip records [from, to) as damage and continues at to.
func (s *Scanner) skip(from, to int64, why string) {
	s.pos = to
	if err := s.damage.Add(codec.Damage{Off: from, Len: to - from, Kind: damageKind(why), Reason: why, Err: errKind(why)}); err != nil {
		s.err, s.done, s.info.Next = err, true, from
	}
}

// sync returns the first position at or after from where a batch starts
// whose header is possible, which fits in the file, and whose checksum
// verifies; the end of the file and false if there is none, or once
// candidates that failed used up s.syncLeft.
func (s *Scanner) sync(from int64) (int64, bool) {
	for q := from; q+LogHeaderSize+MessageV0Size <= s.size; q++ {
		h := s.ensure(q, BatchHeaderSize)
		if s.err != nil {
			return s.size, false
		}
		if k := impossibleMagics(h[magicAt:]); k > 0 {
			// Positions whose magic byte is no version's, skipped in
			// one pass over the window rather than one ensure each.
			q += int64(k) - 1
			continue
		}
		if m := int8(h[magicAt]); len(h) < headerSize(m) {
			continue
		}
		// The offsets are outside the checksum: a batch in the
		// damage whose offset field was hit verifies, and must not
		// make the batches after it unreachable. The header checks
		// leave random bytes a chance well under 1e-6 a position.
		b, why := parseHeader(h, q)
		if why != "" || b.End() > s.size || b.BaseOffset >= maxOffset {
			continue
		}
		if s.syncLeft <= 0 {
			return s.size, false
		}
		tab, at := castagnoli, b.Off+v2crcFrom
		if b.Magic < 2 {
			tab, at = ieee, b.Off+magicAt
		}
		c := s.fileCursor(b.End())
		crc, ok := c.crcOver(tab, at, b.End())
		if !ok {
			return s.size, false
		}
		if crc == b.CRC {
			return q, true
		}
		s.syncLeft -= b.Len
	}
	return s.size, false
}

// impossibleMagics returns how many bytes at the start of b are no
// message format's magic byte (0, 1 or 2).
func impossibleMagics(b []byte) int {
	for i, c := range b {
		if c <= 2 {
			return i
		}
	}
	return len(b)
}

// Bounds on the offsets of a batch in order: the gap after the last
// batch in order (compaction makes gaps, never of billions), and any
// offset (no partition holds 2^48 records).
const (
	maxOffsetGap = 1 << 32
	maxOffset    = 1 << 48
)

// inOrder reports whether b's offsets follow the last batch in order.
func (s *Scanner) inOrder(b *Batch) bool {
	if s.prev < 0 {
		return b.BaseOffset < maxOffset
	}
	return b.BaseOffset > s.prev && b.BaseOffset-s.prev <= maxOffsetGap
}

// fileCursor returns a cursor over the file up to end, positions being
// file offsets, reading through the scanner's window.
func (s *Scanner) fileCursor(end int64) cursor {
	return cursor{end: end, fill: func(pos int64, n int) []byte { return s.ensure(pos, min(n, s.o.Window)) }}
}

// ensure returns the bytes at off, at least n unless the file ends first
// (n must not exceed the window). On a read error it ends the scan and
// returns nil.
func (s *Scanner) ensure(off int64, n int) []byte {
	if s.err != nil {
		return nil
	}
	s.ensures++
	b, err := s.w.At(off, n)
	if err != nil {
		s.fail(off, err)
	}
	return b
}

// fail ends the scan with err, stopping at off.
func (s *Scanner) fail(off int64, err error) {
	s.err = err
	s.done = true
	s.left = 0
	s.info.Next = off
}

// ProducerIDs returns a sorted copy of the producer IDs in in.
func (in Info) ProducerIDs() []int64 {
	out := slices.Clone(in.Producers)
	slices.Sort(out)
	return out
}
