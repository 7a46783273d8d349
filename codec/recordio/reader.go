package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// chunkBufPool recycles the 32 KiB buffers of chunk reads.
var chunkBufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// Reader reads items at random. It is safe for concurrent use.
//
// Decoded data lives in a BlockCache shared by every reader of the process
// (Options.Cache, else DefaultBlockCache), so memory is bounded per
// process, not per file; each reader has its own identity in it, so a
// reader never sees another's entries.
//
// Untransformed v2 blocks are never decoded whole: ReadItem maps the wanted
// byte range onto the chunks that hold it (chunk i of a block carries raw
// block bytes [i*32740, (i+1)*32740)) and reads and CRC-verifies only those,
// caching verified chunk payloads. Transformed blocks and flate-packed legacy
// records are decoded as streams, page by page (1 MiB), up to the page a
// read needs; pages are cached, and the stream decoder stays positioned, so
// reading an item in order decodes its block once whatever its size. A read
// before the position restarts the stream. Decoded blocks are capped at
// MaxBlockSize. Plain legacy records carry no payload checksum, so their
// items are read straight from the file.
type Reader struct {
	r       io.ReaderAt
	size    int64
	format  codec.Format
	opts    Options
	chain   []transformer
	id      uint64 // identity in the cache
	cache   *BlockCache
	caching bool // keep decoded pages and verified chunks in cache
	layouts layouts
}

// NewReader makes a reader for a file whose header (for v2) listed
// transformers. With cacheBlocks > 0 the reader keeps decoded pages and
// verified chunks in the shared cache (o.Cache, or DefaultBlockCache); with
// 0 or less it keeps none (reads in order still continue one stream).
func NewReader(r io.ReaderAt, size int64, f codec.Format, transformers []string, o Options, cacheBlocks int) (*Reader, error) {
	if f == codec.Unknown {
		var err error
		if f, err = detect(r, size); err != nil {
			return nil, err
		}
	}
	if f != codec.RecordIO && f != codec.RecordIOLegacy {
		return nil, fmt.Errorf("%w: %s is not a recordio format", codec.ErrFormat, f)
	}
	if f == codec.RecordIOLegacy && o.LegacyTransform != "" && o.LegacyTransform != "flate" {
		return nil, fmt.Errorf("%w: legacy transform %q (only \"flate\")", codec.ErrUnsupported, o.LegacyTransform)
	}
	chain, err := parseTransformers(transformers, false)
	if err != nil {
		return nil, err
	}
	return &Reader{r: r, size: size, format: f, opts: o, chain: chain,
		id: readerIDs.Add(1), cache: o.cache(), caching: cacheBlocks > 0}, nil
}

// ReadItem reads bytes of the item at loc into p starting at offset off
// within the item, with io.ReaderAt semantics: it returns io.EOF when fewer
// than len(p) bytes remain. Corruption found on the way is a *CorruptError.
func (rd *Reader) ReadItem(loc ItemLoc, p []byte, off int64) (int, error) {
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
	case rd.format == codec.RecordIOLegacy:
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

func (rd *Reader) corrupt(off int64, kind error, format string, a ...any) error {
	return &codec.CorruptError{Format: rd.format, Off: off, Reason: fmt.Sprintf(format, a...), Err: kind}
}

func (rd *Reader) failErr(f *failure) error {
	if f.io != nil {
		return f.io
	}
	return &codec.CorruptError{Format: rd.format, Off: f.off, Reason: f.reason, Err: f.err}
}

// chunkPayload returns the verified payload of chunk idx of the block at
// blockOff.
func (rd *Reader) chunkPayload(blockOff int64, idx int64) ([]byte, error) {
	co := blockOff + idx*chunkSize
	key := cacheKey{rd: rd.id, off: co, chunk: true}
	if b, ok := rd.cache.get(key); ok {
		return b, nil
	}
	bp := chunkBufPool.Get().(*[]byte)
	defer chunkBufPool.Put(bp)
	cr := chunkReader{r: rd.r, size: rd.size, buf: *bp}
	h, p, f := cr.chunk(co)
	if f != nil {
		return nil, rd.failErr(f)
	}
	if h.magic != bodyMagic && h.magic != trailerMagic {
		return nil, rd.corrupt(co, codec.ErrCorrupt, "chunk has no body or trailer magic")
	}
	if int64(h.index) != idx {
		return nil, rd.corrupt(co, codec.ErrCorrupt, "chunk index mismatch, got %d, expect %d", h.index, idx)
	}
	b := append([]byte(nil), p...)
	if rd.caching {
		rd.cache.put(key, b)
	}
	return b, nil
}

// readPlain serves an item of an untransformed v2 block chunk by chunk.
func (rd *Reader) readPlain(loc ItemLoc, p []byte, off int64) error {
	raw := loc.Off + off // position in the raw block
	for len(p) > 0 {
		idx := raw / maxChunkPayload
		in := raw % maxChunkPayload
		if loc.Block+(idx+1)*chunkSize > rd.size {
			return rd.corrupt(loc.Block+idx*chunkSize, codec.ErrTruncated, "item runs past the end of the file")
		}
		c, err := rd.chunkPayload(loc.Block, idx)
		if err != nil {
			return err
		}
		if in >= int64(len(c)) {
			return rd.corrupt(loc.Block+idx*chunkSize, codec.ErrCorrupt, "item byte %d not in chunk of %d payload bytes", in, len(c))
		}
		n := copy(p, c[in:])
		p = p[n:]
		raw += int64(n)
	}
	return nil
}

// readDecoded serves an item of a transformed v2 block (legacy: of a
// flate-packed record's data) page by page.
func (rd *Reader) readDecoded(loc ItemLoc, p []byte, off int64) error {
	if err := rd.checkLayout(loc); err != nil {
		return err
	}
	pos := loc.Off + off
	for len(p) > 0 {
		idx := pos / decodePage
		var n int
		err := rd.page(loc.Block, idx, func(pg []byte) error {
			in := pos - idx*decodePage
			if in >= int64(len(pg)) {
				return rd.corrupt(loc.Block, codec.ErrCorrupt, "item range past the end of its %d-byte block", idx*decodePage+int64(len(pg)))
			}
			n = copy(p, pg[in:])
			return nil
		})
		if err != nil {
			return err
		}
		p = p[n:]
		pos += int64(n)
	}
	return nil
}

// page passes page idx of the decoded block at block to use: from the
// cache, else by continuing (or restarting) a stream decoder of the block.
// A page past the end of the block is empty. use must not keep the page:
// pages that are not cached live in a buffer the decoder reuses.
func (rd *Reader) page(block, idx int64, use func([]byte) error) error {
	key := cacheKey{rd: rd.id, off: block, page: idx}
	if b, ok := rd.cache.get(key); ok {
		return use(b)
	}
	cu := rd.cache.acquire(rd.id, block, idx*decodePage)
	defer rd.cache.release(cu)
	if b, ok := rd.cache.get(key); ok { // decoded while we waited
		return use(b)
	}
	if cu.covers(rd.id, block, idx*decodePage) && cu.lastIdx == idx {
		return use(cu.last)
	}
	if !cu.covers(rd.id, block, idx*decodePage) {
		if err := rd.openCursor(cu, block); err != nil {
			cu.reset()
			return err
		}
	}
	limit := rd.opts.maxBlock()
	// The pages of a block past a quarter of the LRU are not cached: a
	// huge block read in order would only flush everything else out.
	share := rd.cache.blockShare()
	for {
		if cu.end {
			return use(nil)
		}
		pi := cu.pos / decodePage
		keep := rd.caching && cu.pos < share
		var buf []byte
		if keep {
			buf = make([]byte, decodePage)
		} else {
			buf = scratchPage(cu)
			cu.last, cu.lastIdx = nil, -1 // the scratch page is overwritten
		}
		n, err := io.ReadFull(cu.r, buf)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			cu.end = true
			if keep {
				buf = append([]byte(nil), buf[:n]...)
			} else {
				buf = buf[:n]
			}
		case err != nil:
			e := rd.streamFail(cu, block, err)
			cu.reset()
			return e
		}
		cu.pos += int64(n)
		if cu.pos > limit {
			cu.reset()
			return rd.corrupt(block, codec.ErrLimit, "block decodes past %d bytes", limit)
		}
		if keep && n > 0 {
			rd.cache.put(cacheKey{rd: rd.id, off: block, page: pi}, buf)
		}
		if pi == idx {
			cu.last, cu.lastIdx = buf, idx
			return use(buf)
		}
	}
}

// scratchPage returns a page-sized buffer the cursor reuses for pages that
// are decoded only to be skipped.
func scratchPage(cu *blockCursor) []byte {
	if cu.scratch == nil {
		cu.scratch = make([]byte, decodePage)
	}
	return cu.scratch
}

// streamFail turns an error of a cursor's stream into the reader's error.
func (rd *Reader) streamFail(cu *blockCursor, block int64, err error) error {
	if cu.src != nil && cu.src.fail != nil {
		return rd.failErr(cu.src.fail)
	}
	var rf *failure
	if errors.As(err, &rf) {
		return rd.failErr(rf)
	}
	e := streamErr(err, rd.opts.streamWindow())
	return rd.corrupt(block, kindOf(e), "undecodable block: %v", e)
}

// openCursor positions cu at the start of the decoded block at block.
func (rd *Reader) openCursor(cu *blockCursor, block int64) error {
	cu.reset()
	rd.cache.opens.Add(1)
	window := rd.opts.streamWindow()
	var src io.Reader
	var chain []transformer
	if rd.format == codec.RecordIOLegacy {
		data, err := rd.legacyData(block)
		if err != nil {
			return err
		}
		cu.hold = data
		src = bytes.NewReader(data)
		chain = []transformer{{spec: "flate", name: "flate"}}
	} else {
		if len(cu.buf) < chunkSize {
			cu.buf = make([]byte, chunkSize)
		}
		bs := newBlockStream(rd.r, rd.size, block, func(m [8]byte) bool { return m == bodyMagic || m == trailerMagic }, cu.buf[:chunkSize])
		cu.src = bs
		src = bs
		chain = rd.chain
	}
	r, err := cu.dec.open(chain, src, window)
	if err != nil {
		return rd.corrupt(block, kindOf(err), "undecodable block: %v", err)
	}
	cu.owner, cu.block, cu.r = rd.id, block, r
	return nil
}

// legacyData reads the flate-compressed data of the packed legacy record at
// block, checking its header.
func (rd *Reader) legacyData(block int64) ([]byte, error) {
	var hb [legacyHeaderLen]byte
	if n, err := readFullAt(rd.r, hb[:], block); err != nil {
		return nil, err
	} else if n < legacyHeaderLen {
		return nil, rd.corrupt(block, codec.ErrTruncated, "truncated legacy record header")
	}
	h, reason := parseLegacyHdr(hb[:], block, rd.size)
	if reason != "" {
		return nil, rd.corrupt(block, codec.ErrCorrupt, "%s", reason)
	}
	payloadOff := block + legacyHeaderLen
	if payloadOff+h.length > rd.size {
		return nil, rd.corrupt(block, codec.ErrTruncated, "truncated legacy record")
	}
	payload := make([]byte, h.length)
	if n, err := readFullAt(rd.r, payload, payloadOff); err != nil {
		return nil, err
	} else if int64(n) < h.length {
		return nil, rd.corrupt(payloadOff, codec.ErrTruncated, "truncated legacy record")
	}
	lp, err := parseLegacyPacked(payload, rd.opts.maxBlock())
	if err != nil {
		return nil, rd.corrupt(block, codec.ErrCorrupt, "%v", err)
	}
	return payload[lp.dataOff:], nil
}

// readLegacy serves an item of a legacy record.
func (rd *Reader) readLegacy(loc ItemLoc, p []byte, off int64) error {
	var hb [legacyHeaderLen]byte
	if n, err := readFullAt(rd.r, hb[:], loc.Block); err != nil {
		return err
	} else if n < legacyHeaderLen {
		return rd.corrupt(loc.Block, codec.ErrTruncated, "truncated legacy record header")
	}
	h, reason := parseLegacyHdr(hb[:], loc.Block, rd.size)
	if reason != "" {
		return rd.corrupt(loc.Block, codec.ErrCorrupt, "%s", reason)
	}
	payloadOff := loc.Block + legacyHeaderLen
	if payloadOff+h.length > rd.size {
		return rd.corrupt(loc.Block, codec.ErrTruncated, "truncated legacy record")
	}
	if !h.packed || rd.opts.LegacyTransform == "" {
		if loc.Off+off+int64(len(p)) > h.length {
			return rd.corrupt(loc.Block, codec.ErrCorrupt, "item range past the end of its %d-byte record", h.length)
		}
		n, err := readFullAt(rd.r, p, payloadOff+loc.Off+off)
		if err != nil {
			return err
		}
		if n < len(p) {
			return rd.corrupt(payloadOff, codec.ErrTruncated, "truncated legacy record")
		}
		return nil
	}
	return rd.readDecoded(loc, p, off)
}

// kindOf picks the sentinel classifying a decode error.
func kindOf(err error) error {
	for _, k := range []error{codec.ErrLimit, codec.ErrUnsupported, codec.ErrTruncated} {
		if errors.Is(err, k) {
			return k
		}
	}
	return codec.ErrCorrupt
}
