package codec

import (
	"fmt"
	"io"
	"sync"
)

// chunkBufPool recycles the 32 KiB buffers of chunk reads.
var chunkBufPool = sync.Pool{New: func() any { b := make([]byte, rioChunkSize); return &b }}

// RecordIOReader reads items at random, with a bounded LRU cache of decoded
// blocks so reading the items of one block in order decodes it once. It is
// safe for concurrent use.
//
// Untransformed v2 blocks are never decoded whole: ReadItem maps the wanted
// byte range onto the chunks that hold it (chunk i of a block carries raw
// block bytes [i*32740, (i+1)*32740)) and reads and CRC-verifies only those,
// caching verified chunk payloads. Transformed blocks and flate-packed legacy
// records are read whole, verified, untransformed (capped at MaxBlockSize)
// and cached. Plain legacy records carry no payload checksum, so their items
// are read straight from the file.
type RecordIOReader struct {
	r      io.ReaderAt
	size   int64
	format Format
	opts   RecordIOOptions
	chain  []rioTransformer
	cache  *blockCache // decoded blocks
	chunks *blockCache // verified chunk payloads
}

// NewRecordIOReader makes a reader for a file whose header (for v2) listed
// transformers. cacheBlocks bounds the cached decoded blocks; 0 or less
// disables the cache.
func NewRecordIOReader(r io.ReaderAt, size int64, f Format, transformers []string, o RecordIOOptions, cacheBlocks int) (*RecordIOReader, error) {
	if f == Unknown {
		var err error
		if f, err = Detect(r, size); err != nil {
			return nil, err
		}
	}
	if f != RecordIO && f != RecordIOLegacy {
		return nil, fmt.Errorf("%w: %s is not a recordio format", ErrFormat, f)
	}
	if f == RecordIOLegacy && o.LegacyTransform != "" && o.LegacyTransform != "flate" {
		return nil, fmt.Errorf("%w: legacy transform %q (only \"flate\")", ErrUnsupported, o.LegacyTransform)
	}
	chain, err := parseTransformers(transformers, false)
	if err != nil {
		return nil, err
	}
	n := max(cacheBlocks, 0)
	return &RecordIOReader{r: r, size: size, format: f, opts: o, chain: chain,
		cache: newBlockCache(n, max(int64(n), 1)*o.maxBlock()),
		// Verified chunk payloads of untransformed blocks: a few per block.
		chunks: newBlockCache(4*n, int64(4*n)*rioMaxChunkPayload)}, nil
}

// ReadItem reads bytes of the item at loc into p starting at offset off
// within the item, with io.ReaderAt semantics: it returns io.EOF when fewer
// than len(p) bytes remain. Corruption found on the way is a *CorruptError.
func (rd *RecordIOReader) ReadItem(loc ItemLoc, p []byte, off int64) (int, error) {
	if off < 0 || loc.Len < 0 || loc.Off < 0 || loc.Block < 0 {
		return 0, fmt.Errorf("codec: invalid item location %+v or offset %d", loc, off)
	}
	if off >= loc.Len {
		return 0, io.EOF
	}
	want := p
	if rem := loc.Len - off; int64(len(want)) > rem {
		want = want[:rem]
	}
	var err error
	switch {
	case rd.format == RecordIOLegacy:
		err = rd.readLegacy(loc, want, off)
	case len(rd.chain) == 0:
		err = rd.readPlain(loc, want, off)
	default:
		err = rd.readDecoded(loc, want, off)
	}
	if err != nil {
		return 0, err
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(want), nil
}

func (rd *RecordIOReader) corrupt(off int64, kind error, format string, a ...any) error {
	return &CorruptError{Format: rd.format, Off: off, Reason: fmt.Sprintf(format, a...), Err: kind}
}

func (rd *RecordIOReader) failErr(f *rioFail) error {
	if f.io != nil {
		return f.io
	}
	return &CorruptError{Format: rd.format, Off: f.off, Reason: f.reason, Err: f.err}
}

// chunkPayload returns the verified payload of chunk idx of the block at
// blockOff.
func (rd *RecordIOReader) chunkPayload(blockOff int64, idx int64) ([]byte, error) {
	co := blockOff + idx*rioChunkSize
	if b, ok := rd.chunks.get(cacheKey{off: co, chunk: true}); ok {
		return b, nil
	}
	bp := chunkBufPool.Get().(*[]byte)
	defer chunkBufPool.Put(bp)
	cr := rioChunkReader{r: rd.r, size: rd.size, buf: *bp}
	h, p, f := cr.chunk(co)
	if f != nil {
		return nil, rd.failErr(f)
	}
	if h.magic != rioBodyMagic && h.magic != rioTrailerMagic {
		return nil, rd.corrupt(co, ErrCorrupt, "chunk has no body or trailer magic")
	}
	if int64(h.index) != idx {
		return nil, rd.corrupt(co, ErrCorrupt, "chunk index mismatch, got %d, expect %d", h.index, idx)
	}
	b := append([]byte(nil), p...)
	rd.chunks.put(cacheKey{off: co, chunk: true}, b)
	return b, nil
}

// readPlain serves an item of an untransformed v2 block chunk by chunk.
func (rd *RecordIOReader) readPlain(loc ItemLoc, p []byte, off int64) error {
	raw := loc.Off + off // position in the raw block
	for len(p) > 0 {
		idx := raw / rioMaxChunkPayload
		in := raw % rioMaxChunkPayload
		if loc.Block+(idx+1)*rioChunkSize > rd.size {
			return rd.corrupt(loc.Block+idx*rioChunkSize, ErrTruncated, "item runs past the end of the file")
		}
		c, err := rd.chunkPayload(loc.Block, idx)
		if err != nil {
			return err
		}
		if in >= int64(len(c)) {
			return rd.corrupt(loc.Block+idx*rioChunkSize, ErrCorrupt, "item byte %d not in chunk of %d payload bytes", in, len(c))
		}
		n := copy(p, c[in:])
		p = p[n:]
		raw += int64(n)
	}
	return nil
}

// readDecoded serves an item of a transformed v2 block from the cache.
func (rd *RecordIOReader) readDecoded(loc ItemLoc, p []byte, off int64) error {
	raw, ok := rd.cache.get(cacheKey{off: loc.Block})
	if !ok {
		cr := rioChunkReader{r: rd.r, size: rd.size}
		var buf []byte
		want := func(m [8]byte) bool { return m == rioBodyMagic || m == rioTrailerMagic }
		stored, chunks, f := readWholeBlock(&cr, loc.Block, want, rd.size, &buf)
		if f != nil {
			return rd.failErr(f)
		}
		if chunks == 0 {
			return rd.corrupt(loc.Block, ErrCorrupt, "block has no body or trailer magic")
		}
		var err error
		raw, err = undoTransformers(rd.chain, stored, rd.opts.maxBlock())
		if err != nil {
			return rd.corrupt(loc.Block, kindOf(err), "undecodable block: %v", err)
		}
		ph, err := parsePacked(raw)
		if err != nil {
			return rd.corrupt(loc.Block, ErrCorrupt, "%v", err)
		}
		// The block must hold the item where the caller's table says: a
		// block of another version of the file is refused, not served.
		if !ph.holds(loc) {
			return rd.corrupt(loc.Block, ErrCorrupt, "block has no item %d of %d bytes at %d", loc.Item, loc.Len, loc.Off)
		}
		rd.cache.put(cacheKey{off: loc.Block}, raw)
	}
	if loc.Off+off+int64(len(p)) > int64(len(raw)) {
		return rd.corrupt(loc.Block, ErrCorrupt, "item range past the end of its %d-byte block", len(raw))
	}
	copy(p, raw[loc.Off+off:])
	return nil
}

// readLegacy serves an item of a legacy record.
func (rd *RecordIOReader) readLegacy(loc ItemLoc, p []byte, off int64) error {
	var hb [legacyHeaderLen]byte
	if n, err := readFullAt(rd.r, hb[:], loc.Block); err != nil {
		return err
	} else if n < legacyHeaderLen {
		return rd.corrupt(loc.Block, ErrTruncated, "truncated legacy record header")
	}
	h, reason := parseLegacyHdr(hb[:], loc.Block, rd.size)
	if reason != "" {
		return rd.corrupt(loc.Block, ErrCorrupt, "%s", reason)
	}
	payloadOff := loc.Block + legacyHeaderLen
	if payloadOff+h.length > rd.size {
		return rd.corrupt(loc.Block, ErrTruncated, "truncated legacy record")
	}
	if !h.packed || rd.opts.LegacyTransform == "" {
		if loc.Off+off+int64(len(p)) > h.length {
			return rd.corrupt(loc.Block, ErrCorrupt, "item range past the end of its %d-byte record", h.length)
		}
		n, err := readFullAt(rd.r, p, payloadOff+loc.Off+off)
		if err != nil {
			return err
		}
		if n < len(p) {
			return rd.corrupt(payloadOff, ErrTruncated, "truncated legacy record")
		}
		return nil
	}
	data, ok := rd.cache.get(cacheKey{off: loc.Block})
	if !ok {
		payload := make([]byte, h.length)
		if n, err := readFullAt(rd.r, payload, payloadOff); err != nil {
			return err
		} else if int64(n) < h.length {
			return rd.corrupt(payloadOff, ErrTruncated, "truncated legacy record")
		}
		lp, err := parseLegacyPacked(payload, rd.opts.maxBlock())
		if err != nil {
			return rd.corrupt(loc.Block, ErrCorrupt, "%v", err)
		}
		data, err = flateDecompress(payload[lp.dataOff:], rd.opts.maxBlock())
		if err != nil {
			return rd.corrupt(loc.Block, kindOf(err), "%v", err)
		}
		rd.cache.put(cacheKey{off: loc.Block}, data)
	}
	if loc.Off+off+int64(len(p)) > int64(len(data)) {
		return rd.corrupt(loc.Block, ErrCorrupt, "item range past the end of its %d-byte record data", len(data))
	}
	copy(p, data[loc.Off+off:])
	return nil
}

// kindOf picks the sentinel classifying a decode error.
func kindOf(err error) error {
	for _, k := range []error{ErrLimit, ErrUnsupported, ErrTruncated} {
		if isErr(err, k) {
			return k
		}
	}
	return ErrCorrupt
}

// holds reports whether the packed block p describes has item loc.Item at
// raw offset loc.Off with length loc.Len.
func (p *packedHdr) holds(loc ItemLoc) bool {
	if loc.Item < 0 || loc.Item >= len(p.sizes) || p.sizes[loc.Item] != loc.Len {
		return false
	}
	off := p.hdrLen
	for _, sz := range p.sizes[:loc.Item] {
		off += sz
	}
	return off == loc.Off
}
