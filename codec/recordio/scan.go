package recordio

import (
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// Scanner walks a grailbio recordio file (v2 or legacy) once,
// verifying checksums and yielding item locations.
//
// By default damage is skipped: a v2 scanner resynchronises on the next
// chunk-aligned offset holding a valid first chunk of a body or trailer
// block, a legacy scanner on the next byte offset holding a valid legacy
// record header, and every skipped range is reported by Damage. With
// Options.Strict the first damage ends the scan and Err returns it
// as a *CorruptError.
//
// Choices beyond the reference: an incomplete final block (file cut inside
// or between its chunks) and a partial chunk at the end of the file (which
// the reference silently ignores) are both reported as ErrTruncated damage;
// bytes after a trailer block are ignored without damage.
type Scanner struct {
	peek        blockPeeker // header-only decoding of transformed blocks
	r           io.ReaderAt
	size        int64
	format      codec.Format
	opts        Options
	cr          chunkReader
	header      []HeaderEntry
	xforms      []string
	chain       []transformer
	pos         int64
	done        bool
	err         error
	damage      []codec.Damage
	blocks      int64
	blk         Block
	sizes       []int64
	item        int
	itemOff     int64
	loc         ItemLoc
	stored      []byte
	lostHeader  bool // the header block was damaged; chain guessed from the body
	lostTrailer bool // with lostHeader: the file ends in a valid trailer chunk
	// legacy state
	goodEnd     int64 // end of the last block that decoded cleanly (v2)
	legacyFlate bool
	legacyBuf   []byte
}

// NewScanner opens a v2 or legacy recordio file (format from Detect
// when f is Unknown) and parses the header. A 0-byte file is an empty file.
// An unknown transformer gives an error matching ErrUnsupported.
//
// A damaged v2 header block gives an error matching ErrCorrupt in strict
// mode only (the reference reader returns nothing then). By default the
// scanner reports the header block as Damage, finds the transformer chain
// from the body blocks themselves (see Transformers) and returns their
// items; Header is then empty and HasTrailer tells whether the file ends in
// a valid trailer block. A file too short to hold a body chunk after the
// header chunk has nothing to recover and still fails to open.
func NewScanner(r io.ReaderAt, size int64, f codec.Format, o Options) (*Scanner, error) {
	s := &Scanner{r: r, size: size, opts: o, cr: chunkReader{r: r, size: size}}
	if size == 0 {
		s.format = f
		if f == codec.Unknown {
			s.format = codec.RecordIO
		}
		s.done = true
		return s, nil
	}
	if f == codec.Unknown {
		var err error
		if f, err = detect(r, size); err != nil {
			return nil, err
		}
	}
	s.format = f
	switch f {
	case codec.RecordIO:
		if err := s.openV2(); err != nil {
			var ce *codec.CorruptError
			if o.Strict || !errors.As(err, &ce) || errors.Is(err, codec.ErrUnsupported) || size < 2*chunkSize {
				return nil, err
			}
			s.headerLost(ce)
		}
	case codec.RecordIOLegacy:
		switch o.LegacyTransform {
		case "":
		case "flate":
			s.legacyFlate = true
		default:
			return nil, fmt.Errorf("%w: legacy transform %q (only \"flate\")", codec.ErrUnsupported, o.LegacyTransform)
		}
	default:
		return nil, fmt.Errorf("%w: %s is not a recordio format", codec.ErrFormat, f)
	}
	if o.Start > s.pos {
		s.pos = min(o.Start, size)
	}
	return s, nil
}

func (s *Scanner) openV2() error {
	raw, chunks, f := s.readWholeBlock(0, isHeaderMagic)
	if f != nil {
		if f.io != nil {
			return f.io
		}
		return &codec.CorruptError{Format: codec.RecordIO, Off: f.off, Reason: "header block: " + f.reason, Err: f.err}
	}
	if chunks == 0 {
		return &codec.CorruptError{Format: codec.RecordIO, Off: 0, Reason: "header block has no header magic", Err: codec.ErrCorrupt}
	}
	p, err := parsePacked(raw)
	if err == nil && p.k != 1 {
		err = fmt.Errorf("wrong # of items in header block, %d", p.k)
	}
	if err != nil {
		return &codec.CorruptError{Format: codec.RecordIO, Off: 0, Reason: "header block: " + err.Error(), Err: codec.ErrCorrupt}
	}
	h, err := decodeHeaderItem(raw[p.hdrLen:])
	if err != nil {
		return &codec.CorruptError{Format: codec.RecordIO, Off: 0, Reason: "header item: " + err.Error(), Err: codec.ErrCorrupt}
	}
	xf, err := headerTransformers(h)
	if err != nil {
		return &codec.CorruptError{Format: codec.RecordIO, Off: 0, Reason: "header item: " + err.Error(), Err: codec.ErrCorrupt}
	}
	chain, err := parseTransformers(xf, false)
	if err != nil {
		return err
	}
	s.header, s.xforms, s.chain = h, xf, chain
	s.pos = int64(chunks) * chunkSize
	s.goodEnd = s.pos
	return nil
}

// readWholeBlock reads the block at off into memory (stored bytes, not
// untransformed). chunks == 0 with a nil failure means the magic was not
// wanted.
func (s *Scanner) readWholeBlock(off int64, want func([8]byte) bool) ([]byte, int, *failure) {
	return readWholeBlock(&s.cr, off, want, s.opts.maxBlock(), &s.stored)
}

func readWholeBlock(cr *chunkReader, off int64, want func([8]byte) bool, limit int64, buf *[]byte) ([]byte, int, *failure) {
	b := (*buf)[:0]
	_, chunks, _, f := cr.block(off, want, func(p []byte) error {
		if int64(len(b)+len(p)) > limit {
			return corruptAt(off, codec.ErrLimit, "stored block larger than %d bytes", limit)
		}
		b = append(b, p...)
		return nil
	})
	*buf = b
	return b, chunks, f
}

// Next advances to the next item and reports whether there is one.
func (s *Scanner) Next() bool {
	for {
		if s.sizes != nil && s.item+1 < len(s.sizes) {
			s.item++
			if s.item > 0 {
				s.itemOff += s.sizes[s.item-1]
			}
			s.loc = ItemLoc{Block: s.blk.Off, Item: s.item, Off: s.itemOff, Len: s.sizes[s.item]}
			return true
		}
		if s.done {
			return false
		}
		if s.format == codec.RecordIOLegacy {
			s.nextLegacy()
		} else {
			s.nextV2()
		}
	}
}

// setBlock makes p the current block's item list.
func (s *Scanner) setBlock(b Block, p *packedHdr, dataOff int64) {
	s.blk = b
	s.sizes = p.sizes
	s.item = -1
	s.itemOff = dataOff
	s.blocks++
}

// addDamage records d; in strict mode it ends the scan with d as the error.
func (s *Scanner) addDamage(d codec.Damage) {
	s.damage = append(s.damage, d)
	if s.opts.Strict {
		s.err = d.AsError(s.format)
		s.done = true
	}
}

// endsBefore reports whether the scan ends at pos because fewer than need
// bytes are left, and then marks it done: cleanly at the end of the file,
// otherwise with the rest of the file reported as truncated (reason).
func (s *Scanner) endsBefore(pos, need int64, reason string) bool {
	if pos < s.size && s.size-pos >= need {
		return false
	}
	if pos < s.size {
		s.addDamage(codec.Damage{Off: pos, Len: s.size - pos, Reason: reason, Err: codec.ErrTruncated})
	}
	s.done = true
	return true
}

// nextV2 loads the next body block, skipping damage; it sets done at the end.
func (s *Scanner) nextV2() {
	s.sizes = nil
	for !s.done {
		pos := s.pos
		if s.endsBefore(pos, chunkSize, "partial chunk at end of file") {
			return
		}
		b, p, f := s.decodeBodyBlock(pos)
		if f == nil && b.Chunks == 0 {
			// Not a body block: a trailer ends the data; anything else is damage.
			var m [8]byte
			_, _ = readFullAt(s.r, m[:], pos)
			if m == trailerMagic {
				s.done = true
				return
			}
			f = corruptAt(pos, codec.ErrCorrupt, "invalid magic number % x", m)
		}
		if f == nil {
			s.pos = pos + int64(b.Chunks)*chunkSize
			s.goodEnd = s.pos
			s.setBlock(b, p, p.hdrLen)
			return
		}
		if f.io != nil {
			s.err, s.done = f.io, true
			return
		}
		if errors.Is(f.err, codec.ErrTruncated) {
			s.addDamage(codec.Damage{Off: pos, Len: s.size - pos, Reason: "truncated block: " + f.reason, Err: codec.ErrTruncated})
			s.done = true
			return
		}
		next := s.resyncV2(pos + chunkSize)
		s.addDamage(codec.Damage{Off: pos, Len: next - pos, Reason: f.reason, Err: f.err})
		s.pos = next
	}
}

// decodeBodyBlock reads and decodes the body block at pos. A block with
// another valid magic returns Chunks == 0 and no failure.
func (s *Scanner) decodeBodyBlock(pos int64) (Block, *packedHdr, *failure) {
	limit := s.opts.maxBlock()
	if len(s.chain) == 0 {
		// An untransformed block is bounded by the file itself: it is
		// never held in memory whole (the header is parsed as the chunks
		// stream by, and reads fetch single chunks), so the decoded-block
		// cap does not apply. grailbio's defaults make blocks of 16385
		// items, which is a gigabyte for 64 KiB items.
		p := &packedHdr{bound: s.size}
		_, chunks, stored, f := s.cr.block(pos, isBodyMagic, func(b []byte) error {
			if err := p.feed(b); err != nil {
				return corruptAt(pos, codec.ErrCorrupt, "%v", err)
			}
			return nil
		})
		if f != nil || chunks == 0 {
			return Block{}, nil, f
		}
		if err := p.finish(stored); err != nil {
			return Block{}, nil, corruptAt(pos, codec.ErrCorrupt, "%v", err)
		}
		return Block{Off: pos, Chunks: chunks, Items: len(p.sizes), RawLen: stored}, p, nil
	}
	// The stored bytes stream from the file chunk by chunk into the
	// decoders; only the header is decoded unless VerifyBlocks asks for
	// the whole block (decoded and discarded as it streams by).
	if s.cr.buf == nil {
		s.cr.buf = make([]byte, chunkSize)
	}
	bs := newBlockStream(s.r, s.size, pos, isBodyMagic, s.cr.buf)
	if !bs.begin() {
		return Block{}, nil, bs.fail // nil when not a body block
	}
	p, rawLen, err := s.peek.header(s.chain, bs, limit, s.opts.streamWindow(), s.opts.VerifyBlocks)
	// Every chunk is verified, and a damaged chunk is what gets reported.
	if f := bs.drain(); f != nil {
		return Block{}, nil, f
	}
	if err != nil {
		return Block{}, nil, corruptAt(pos, errKind(err), "undecodable block: %v", err)
	}
	return Block{Off: pos, Chunks: int(bs.total), Items: len(p.sizes), RawLen: rawLen, Transformed: true}, p, nil
}

// resyncV2 returns the first chunk-aligned offset at or after from holding
// a valid first chunk of a body or trailer block, or the file size.
func (s *Scanner) resyncV2(from int64) int64 {
	for off := from; off+chunkSize <= s.size; off += chunkSize {
		var hb [chunkHeader]byte
		if n, err := readFullAt(s.r, hb[:], off); err != nil || n < len(hb) {
			break
		}
		h := parseChunkHdr(hb[:])
		if h.index != 0 || (h.magic != bodyMagic && h.magic != trailerMagic) {
			continue
		}
		if _, _, f := s.cr.chunk(off); f == nil {
			return off
		}
	}
	return s.size
}

// Item returns the location of the current item.
func (s *Scanner) Item() ItemLoc { return s.loc }

// Err returns the error that ended the scan: an I/O error, or in strict
// mode the first damage as a *CorruptError. Damage skipped in the default
// mode is reported by Damage, not Err.
func (s *Scanner) Err() error { return s.err }

// Damage returns the byte ranges skipped so far.
func (s *Scanner) Damage() []codec.Damage { return s.damage }

// Header returns the header entries in file order, duplicates kept (empty
// for legacy files).
func (s *Scanner) Header() []HeaderEntry { return s.header }

// Transformers returns the header's "transformer" entries in order.
func (s *Scanner) Transformers() []string { return s.xforms }

// Format returns the format being scanned.
func (s *Scanner) Format() codec.Format { return s.format }

// HasTrailer reports whether the header promises a trailer (its first
// "trailer" entry is bool true), or, when the header block was lost, whether
// the file ends in a valid trailer chunk.
func (s *Scanner) HasTrailer() bool {
	if s.lostHeader {
		return s.lostTrailer
	}
	return headerHasTrailer(s.header)
}

// HeaderLost reports whether the v2 header block was damaged and skipped:
// Header is then empty and Transformers was found from the body blocks.
func (s *Scanner) HeaderLost() bool { return s.lostHeader }

// Blocks returns the number of body blocks (legacy: records) decoded so far.
func (s *Scanner) Blocks() int64 { return s.blocks }

// Block describes the block of the current item.
func (s *Scanner) Block() Block { return s.blk }

// Trailer finds the trailer in constant time from the end of the file
// (spec 8.1). It returns ok == false and a nil error when the header does
// not promise a trailer, and an error matching ErrCorrupt or ErrTruncated
// when it does but the file does not end with a valid trailer block. The
// returned location's Block is the trailer block's offset.
func (s *Scanner) Trailer() (ItemLoc, bool, error) {
	if s.format != codec.RecordIO || !s.HasTrailer() {
		return ItemLoc{}, false, nil
	}
	loc, err := findTrailer(s.r, s.size, s.chain, s.opts.maxBlock(), s.opts.streamWindow())
	if err != nil {
		return ItemLoc{}, false, err
	}
	return loc, true, nil
}

// findTrailer implements spec 8.1 and decodes the trailer block.
func findTrailer(r io.ReaderAt, size int64, chain []transformer, limit, window int64) (ItemLoc, error) {
	bad := func(off int64, kind error, format string, a ...any) error {
		return &codec.CorruptError{Format: codec.RecordIO, Off: off, Reason: fmt.Sprintf(format, a...), Err: kind}
	}
	if size < 2*chunkSize {
		return ItemLoc{}, bad(max(size, 0), codec.ErrTruncated, "missing trailer: file too short")
	}
	cr := chunkReader{r: r, size: size}
	last := size - chunkSize
	h, _, f := cr.chunk(last)
	if f != nil {
		if f.io != nil {
			return ItemLoc{}, f.io
		}
		return ItemLoc{}, bad(f.off, f.err, "missing trailer: %s", f.reason)
	}
	if h.magic != trailerMagic {
		return ItemLoc{}, bad(last, codec.ErrCorrupt, "missing magic trailer; found % x", h.magic)
	}
	start := last - int64(h.index)*chunkSize
	if start < chunkSize || h.index+1 != h.total {
		return ItemLoc{}, bad(last, codec.ErrCorrupt, "failed to read trailer: bad chunk index %d of %d", h.index, h.total)
	}
	bs := newBlockStream(r, size, start, isTrailerMagic, cr.buf)
	if !bs.begin() {
		f = bs.fail
		if f == nil {
			f = corruptAt(start, codec.ErrCorrupt, "trailer block has wrong magic")
		}
	}
	var (
		p   *packedHdr
		err error
	)
	if f == nil {
		// Decoded as a stream and discarded: only the length matters.
		var bp blockPeeker
		p, _, err = bp.header(chain, bs, limit, window, true)
		f = bs.drain()
	}
	if f != nil {
		if f.io != nil {
			return ItemLoc{}, f.io
		}
		return ItemLoc{}, bad(f.off, f.err, "failed to read trailer: %s", f.reason)
	}
	if err != nil {
		kind := codec.ErrCorrupt
		if errors.Is(err, codec.ErrLimit) {
			kind = codec.ErrLimit
		}
		return ItemLoc{}, bad(start, kind, "failed to read trailer: %v", err)
	}
	if len(p.sizes) != 1 {
		return ItemLoc{}, bad(start, codec.ErrCorrupt, "trailer: expect exactly one trailer item, but found %d", len(p.sizes))
	}
	return ItemLoc{Block: start, Item: 0, Off: p.hdrLen, Len: p.sizes[0]}, nil
}
