package leveldb

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// logChunkPool holds block-sized buffers for ReadRecord.
var logChunkPool = sync.Pool{New: func() any { return new([logBlockSize]byte) }}

// ReadRecord reads bytes [off, off+len(p)) of rec's payload into p. It
// touches only the chunks that cover those bytes (one ReadAt each) and
// verifies each touched chunk's header and checksum; a mismatch yields a
// *CorruptError wrapping ErrCorrupt with the chunk's offset. As with
// io.ReaderAt, n < len(p) only with an error, io.EOF when the read runs past
// the end of the record. It is safe for concurrent use.
func ReadRecord(r io.ReaderAt, rec Record, p []byte, off int64, o Options) (int, error) {
	want, ok, err := codec.ClipRead(p, off, rec.Len)
	if !ok {
		return 0, err
	}
	i, start, ok := logChunkIndex(rec, off)
	if !ok {
		return 0, &codec.CorruptError{Format: codec.LevelDB, Off: rec.Off, Reason: "record layout does not cover offset", Err: codec.ErrCorrupt}
	}
	hdr := int(recHdr(rec))
	bufp := logChunkPool.Get().(*[logBlockSize]byte)
	defer logChunkPool.Put(bufp)
	n := 0
	for n < len(want) {
		c, ok := ChunkAt(rec, i)
		if !ok {
			return n, &codec.CorruptError{Format: codec.LevelDB, Off: rec.Off, Reason: "record layout ends early", Err: codec.ErrCorrupt}
		}
		m := int64(hdr) + int64(c.Len)
		if c.Len < 0 || m > logBlockSize {
			return n, &codec.CorruptError{Format: codec.LevelDB, Off: c.Off, Reason: logReasonLength, Err: codec.ErrCorrupt}
		}
		b := bufp[:m]
		if k, err := r.ReadAt(b, c.Off); int64(k) < m {
			if err == nil || errors.Is(err, io.EOF) {
				return n, &codec.CorruptError{Format: codec.LevelDB, Off: c.Off, Reason: logReasonTruncChunk, Err: codec.ErrTruncated}
			}
			return n, err
		}
		if err := logCheckChunk(b, hdr, rec, i, o.Unmasked); err != nil {
			err.Off = c.Off
			return n, err
		}
		in := off + int64(n) - start // offset inside this chunk's payload
		n += copy(want[n:], b[int64(hdr)+in:])
		start += int64(c.Len)
		i++
	}
	return n, codec.ShortRead(n, len(p))
}

// logChunkIndex finds the chunk holding payload byte off of rec, and the
// payload offset at which that chunk starts.
func logChunkIndex(rec Record, off int64) (int, int64, bool) {
	if rec.Chunks == nil {
		c0, ok := ChunkAt(rec, 0)
		if !ok {
			return 0, 0, false
		}
		first := int64(c0.Len)
		if off < first {
			return 0, 0, true
		}
		per := logBlockSize - recHdr(rec)
		k := (off - first) / per
		return int(k) + 1, first + k*per, true
	}
	var start int64
	for i, c := range rec.Chunks {
		if off < start+int64(c.Len) {
			return i, start, true
		}
		start += int64(c.Len)
	}
	return 0, 0, false
}

// logCheckChunk verifies the chunk read into b as chunk i of rec: its type,
// length field and checksum.
func logCheckChunk(b []byte, hdr int, rec Record, i int, unmasked bool) *codec.CorruptError {
	typ := b[6]
	if logHdrSize(typ) != hdr {
		return &codec.CorruptError{Format: codec.LevelDB, Reason: logReasonType, Err: codec.ErrCorrupt}
	}
	_, more := ChunkAt(rec, i+1)
	kind := int(typ-1) % 4
	var okKind bool
	switch {
	case i == 0 && !more:
		okKind = kind == logKindFull
	case i == 0:
		okKind = kind == logKindFirst
	case !more:
		okKind = kind == logKindLast
	default:
		okKind = kind == logKindMiddle
	}
	if !okKind {
		return &codec.CorruptError{Format: codec.LevelDB, Reason: "unexpected chunk type", Err: codec.ErrCorrupt}
	}
	ln := len(b) - hdr
	if int(binary.LittleEndian.Uint16(b[4:])) != ln {
		return &codec.CorruptError{Format: codec.LevelDB, Reason: logReasonLength, Err: codec.ErrCorrupt}
	}
	if !logCRCOK(b, hdr, ln, unmasked) {
		return &codec.CorruptError{Format: codec.LevelDB, Reason: logReasonChecksum, Err: codec.ErrCorrupt}
	}
	return nil
}
