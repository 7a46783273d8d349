package recordio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// Limits of the recordio reader and writer.
const (
	// DefaultMaxBlockSize caps a decoded (untransformed) block when
	// Options.MaxBlockSize is 0.
	DefaultMaxBlockSize = 256 << 20
	// DefaultMaxItems is the reference writer's default MaxItems;
	// blocks then hold MaxItems+1 = 16385 items.
	DefaultMaxItems = 16384
	// maxRecordIOMaxItems is the reference's clamp of MaxItems.
	maxRecordIOMaxItems = 10485760
)

// Options tunes NewScanner and NewReader.
type Options struct {
	Strict          bool   // stop at the first damage instead of resyncing
	LegacyTransform string // "flate" for .grail-rpk-gz legacy files (nothing in the file says so); "" otherwise
	MaxBlockSize    int64  // cap on a block decoded from transformed (compressed) bytes; 0 = default 256 MiB; exceeding → ErrLimit (decompression bombs). Untransformed blocks are bounded by the file size only.

	// VerifyBlocks makes the scanner decompress every transformed block in
	// full and check that it holds exactly what its item sizes claim. By
	// default the scanner decompresses only the start of each block, where
	// the item count and sizes live: every chunk checksum is still verified,
	// and the rest of a block is checked when it is first read.
	VerifyBlocks bool

	// Cache holds what readers decode, within its byte budget; nil means
	// DefaultBlockCache, shared by the whole process. Its StreamWindow is
	// also the largest zstd window the scanner accepts.
	Cache *BlockCache

	// Start, when past the header, makes the scan begin there: at the
	// first chunk of a v2 block, or the header of a legacy record, whose
	// offset a scan from the start found (the header block is still read
	// for the transformers).
	Start int64
}

// streamWindow is the largest zstd window the scanner and readers accept:
// the cache's, and no more than the block cap (at least 1 MiB).
func (o Options) streamWindow() int64 {
	return min(o.cache().StreamWindow(), max(o.maxBlock(), 1<<20))
}

func (o Options) cache() *BlockCache {
	if o.Cache == nil {
		return DefaultBlockCache()
	}
	return o.Cache
}

func (o Options) maxBlock() int64 {
	if o.MaxBlockSize <= 0 {
		return DefaultMaxBlockSize
	}
	return o.MaxBlockSize
}

// ItemLoc locates one item: the block holding it and where it lies in the
// decoded block.
//
// For v2 files Off is the offset in the raw (untransformed) block. For legacy
// files Block is the record's offset; Off is the offset from the start of the
// record payload for unpacked and untransformed packed records (so the item's
// bytes sit at file offset Block+20+Off), and the offset in the decompressed
// item data for flate-packed records.
type ItemLoc struct {
	Block int64 // file offset of the block's first chunk (v2) or of the legacy record
	Item  int   // 0-based index of the item in its block
	Off   int64 // offset of the item's first byte in the decoded block (raw block for v2, payload data for legacy)
	Len   int64 // item length
}

// Block describes one body block (or legacy record).
type Block struct {
	Off         int64 // file offset of the block's first chunk, or of the legacy record
	Chunks      int   // chunks in the block (0 for legacy records)
	Items       int   // items in the block
	RawLen      int64 // length of the decoded block (legacy: payload length, or decoded data length when transformed)
	Transformed bool  // the stored bytes went through a transformer chain
}

// chunkHdr is the decoded 28-byte chunk header (spec 3.1).
type chunkHdr struct {
	magic [8]byte
	crc   uint32
	size  uint32
	total uint32
	index uint32
}

func parseChunkHdr(b []byte) chunkHdr {
	var h chunkHdr
	copy(h.magic[:], b[:8])
	h.crc = binary.LittleEndian.Uint32(b[8:])
	h.size = binary.LittleEndian.Uint32(b[16:])
	h.total = binary.LittleEndian.Uint32(b[20:])
	h.index = binary.LittleEndian.Uint32(b[24:])
	return h
}

// failure says why a block could not be read.
type failure struct {
	off    int64 // file offset of the offending chunk
	reason string
	err    error // ErrCorrupt, ErrTruncated, ErrLimit or ErrUnsupported
	io     error // a non-format I/O error, if any
}

// Error makes a *failure usable as an error inside block sinks.
func (f *failure) Error() string { return f.reason }

func corruptAt(off int64, err error, format string, a ...any) *failure {
	return &failure{off: off, reason: fmt.Sprintf(format, a...), err: err}
}

// readFullAt reads len(b) bytes at off; a short read is reported as
// (n, nil) so callers can tell truncation from I/O failure.
func readFullAt(r io.ReaderAt, b []byte, off int64) (int, error) {
	n, err := r.ReadAt(b, off)
	if n == len(b) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return n, err
}

// chunkReader reads and verifies whole chunks.
type chunkReader struct {
	r    io.ReaderAt
	size int64
	buf  []byte
}

// chunk reads the chunk at off and verifies its size field and CRC. The
// returned payload aliases the reader's buffer.
func (c *chunkReader) chunk(off int64) (chunkHdr, []byte, *failure) {
	if c.buf == nil {
		c.buf = make([]byte, chunkSize)
	}
	if off+chunkSize > c.size {
		return chunkHdr{}, nil, corruptAt(off, codec.ErrTruncated, "file ends inside chunk")
	}
	n, err := readFullAt(c.r, c.buf, off)
	if err != nil {
		return chunkHdr{}, nil, &failure{off: off, reason: "read error", err: codec.ErrCorrupt, io: err}
	}
	if n < chunkSize {
		return chunkHdr{}, nil, corruptAt(off, codec.ErrTruncated, "file ends inside chunk")
	}
	h := parseChunkHdr(c.buf)
	if h.size > maxChunkPayload {
		return h, nil, corruptAt(off, codec.ErrCorrupt, "invalid chunk size %d", h.size)
	}
	if got := crcIEEE(c.buf[12 : chunkHeader+h.size]); got != h.crc {
		return h, nil, corruptAt(off, codec.ErrCorrupt, "chunk checksum mismatch (computed %#x, stored %#x)", got, h.crc)
	}
	if h.total == 0 {
		return h, nil, corruptAt(off, codec.ErrCorrupt, "chunk with totalChunks 0")
	}
	if h.index >= h.total {
		return h, nil, corruptAt(off, codec.ErrCorrupt, "chunk index %d not below totalChunks %d", h.index, h.total)
	}
	return h, c.buf[chunkHeader : chunkHeader+h.size], nil
}

// block reads the block whose first chunk is at off, verifying every
// chunk (spec 3.5). Each chunk's payload is passed to sink. If the first
// chunk's magic is not in want, it stops early and returns that magic with
// a nil failure and chunks == 0.
func (c *chunkReader) block(off int64, want func([8]byte) bool, sink func([]byte) error) (magic [8]byte, chunks int, stored int64, f *failure) {
	h, p, f := c.chunk(off)
	if f != nil {
		return h.magic, 0, 0, f
	}
	if h.index != 0 {
		return h.magic, 0, 0, corruptAt(off, codec.ErrCorrupt, "block starts with chunk index %d", h.index)
	}
	if !want(h.magic) {
		return h.magic, 0, 0, nil
	}
	total := int64(h.total)
	for i := int64(0); ; i++ {
		if err := sink(p); err != nil {
			var rf *failure
			if errors.As(err, &rf) {
				return h.magic, 0, 0, rf
			}
			return h.magic, 0, 0, corruptAt(off, codec.ErrCorrupt, "%v", err)
		}
		stored += int64(len(p))
		if i+1 == total {
			return h.magic, int(total), stored, nil
		}
		co := off + (i+1)*chunkSize
		var g chunkHdr
		g, p, f = c.chunk(co)
		if f != nil {
			return h.magic, 0, 0, f
		}
		switch {
		case g.magic != h.magic:
			return h.magic, 0, 0, corruptAt(co, codec.ErrCorrupt, "magic changed in the middle of a chunk sequence")
		case int64(g.index) != i+1:
			return h.magic, 0, 0, corruptAt(co, codec.ErrCorrupt, "chunk index mismatch, got %d, expect %d", g.index, i+1)
		case g.total != h.total:
			return h.magic, 0, 0, corruptAt(co, codec.ErrCorrupt, "chunk nchunk mismatch, got %d, expect %d", g.total, h.total)
		}
	}
}

// packedHdr incrementally parses the count and size varints at the start of
// a raw block (spec section 4).
type packedHdr struct {
	bound   int64 // upper bound of the raw block length
	state   int   // 0 count, 1 sizes, 2 done
	k       uint64
	sizes   []int64
	sum     int64
	hdrLen  int64
	partial [binary.MaxVarintLen64]byte
	np      int
}

// feed consumes b, parsing varints until the size list is complete.
func (p *packedHdr) feed(b []byte) error {
	for len(b) > 0 && p.state < 2 {
		// Assemble one varint, possibly across calls.
		var v uint64
		var n int
		if p.np == 0 {
			v, n = binary.Uvarint(b)
			if n > 0 {
				b = b[n:]
			}
		}
		if p.np > 0 || n == 0 {
			for len(b) > 0 && n == 0 {
				if p.np == len(p.partial) {
					return fmt.Errorf("varint overflow at raw block byte %d", p.hdrLen)
				}
				p.partial[p.np] = b[0]
				p.np++
				b = b[1:]
				v, n = binary.Uvarint(p.partial[:p.np])
				if n < 0 {
					return fmt.Errorf("varint overflow at raw block byte %d", p.hdrLen)
				}
			}
			if n == 0 {
				return nil // need more bytes
			}
			p.np = 0
		}
		if n < 0 {
			return fmt.Errorf("varint overflow at raw block byte %d", p.hdrLen)
		}
		p.hdrLen += int64(n)
		if p.state == 0 {
			if v > uint64(p.bound) {
				return fmt.Errorf("block claims %d items in at most %d bytes", v, p.bound)
			}
			p.k = v
			p.sizes = make([]int64, 0, min(v, 1<<14))
			p.state = 1
		} else {
			if v > uint64(p.bound) || p.sum+int64(v) > p.bound {
				return fmt.Errorf("size of packed item %d (%d) exceeds the block", len(p.sizes), v)
			}
			p.sizes = append(p.sizes, int64(v))
			p.sum += int64(v)
		}
		if p.state == 1 && uint64(len(p.sizes)) == p.k {
			p.state = 2
		}
	}
	return nil
}

// finish checks that the raw block of rawLen bytes was consumed exactly.
func (p *packedHdr) finish(rawLen int64) error {
	if p.state != 2 {
		if p.state == 0 {
			return errors.New("failed to read number of packed items")
		}
		return fmt.Errorf("failed to read size of packed item %d", len(p.sizes))
	}
	if p.hdrLen+p.sum != rawLen {
		return fmt.Errorf("corrupt block header, got block size %d, expected %d", rawLen, p.hdrLen+p.sum)
	}
	return nil
}

// parsePacked parses a whole raw block.
func parsePacked(raw []byte) (*packedHdr, error) {
	p := &packedHdr{bound: int64(len(raw))}
	if err := p.feed(raw); err != nil {
		return nil, err
	}
	return p, p.finish(int64(len(raw)))
}

func isBodyMagic(m [8]byte) bool    { return m == bodyMagic }
func isTrailerMagic(m [8]byte) bool { return m == trailerMagic }
func isHeaderMagic(m [8]byte) bool  { return m == headerMagic }
