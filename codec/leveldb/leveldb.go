package leveldb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// Types and layout arithmetic shared by the leveldb log scanner, reader and
// writer.

// Chunk header sizes of the three leveldb-log flavours.
const (
	logHdrLegacy  = 7  // types 1..4
	logHdrRecycle = 11 // types 5..8: + log number
	logHdrWALSync = 19 // types 9..12: + log number + synced offset
)

// Chunk kinds, as (type-1)%4 within each flavour.
const (
	logKindFull = iota
	logKindFirst
	logKindMiddle
	logKindLast
)

// Damage reasons reported by the leveldb-log scanner: the words of their
// kinds, which is what the scanner compares.
var (
	logReasonChecksum   = codec.DamageChecksum.String()
	logReasonLength     = codec.DamageLength.String()
	logReasonType       = codec.DamageType.String()
	logReasonZeroHeader = codec.DamageZeroHeader.String()
	logReasonOrphan     = codec.DamageOrphan.String()
	logReasonCutShort   = codec.DamageCutShort.String()
	logReasonTruncChunk = codec.DamageTruncChunk.String()
	logReasonTruncHdr   = codec.DamageTruncHdr.String()
	logReasonFragmented = codec.DamageFragmented.String()
	logReasonStale      = codec.DamageStale.String()
)

// Options configure a leveldb-log scan or read.
type Options struct {
	// Strict stops at the first damage: Err then returns a *CorruptError.
	// By default damage is skipped and recorded as a Damage.
	Strict bool
	// Unmasked is for legacy files whose CRC-32C is stored unmasked. It is
	// never auto-detected.
	Unmasked bool
	// LogNum is the log's number as its file's name gives it (pebble and
	// RocksDB name a WAL NNNNNN.log), 0 when unknown. The database reads
	// the file as that log: recyclable chunks of a lower number met before
	// any of the log's own are the recycled file's previous life, stale,
	// whether the first chunk is damaged (a write torn in it) or intact
	// (no write of the live log reached the file). Only numbers within
	// 65536 below it are claimed so: a name far above the chunks' numbers
	// (a date or a time a copy was named by, 20261127.log) is no log
	// number. Chunks of a higher number overrule it (the file was renamed).
	// A file whose first chunk is intact and legacy is no recyclable log:
	// its name claims nothing.
	LogNum uint32
	// Start and End split a scan for parallel index builds; both 0 means the
	// whole file. Start must be a multiple of 32768 and End a multiple of
	// 32768 or the file size. The scanner then returns exactly the records
	// whose first (or only) chunk header starts in [Start, End), reading past
	// End as far as needed to finish (or fail) the last of them. Damage is
	// reported only for byte ranges that start in [Start, End), except the
	// "record cut short" kind for a record that began in [Start, End).
	// Continuation chunks met before the first record start of a split that
	// begins after 0 are returned by Lead, not reported as damage. End 0
	// means the file size.
	//
	// ScanParallel sets them and merges the parts into what a whole-file
	// scan reports.
	Start, End int64
}

// A Chunk is one chunk of a record: header offset and payload length.
type Chunk struct {
	Off int64 // file offset of the chunk header
	Len int32 // payload bytes
}

// A Record locates one record in a leveldb log.
type Record struct {
	Off int64 // file offset of the record's first chunk header
	Len int64 // payload length
	// Hdr is the header size of the record's chunks: 7 (types 1-4),
	// 11 (recyclable, types 5-8) or 19 (pebble WAL-sync, types 9-12).
	Hdr uint8
	// Chunks is nil when the chunks follow the canonical writer layout from
	// Off (see ChunkAt); otherwise it lists every chunk.
	Chunks []Chunk
}

// Info describes what a scan found out about the file's flavour.
type Info struct {
	Padded     bool   // zero-filled block tails or zero blocks seen (App Engine padding, preallocation)
	Recyclable bool   // RocksDB/pebble recyclable chunks (types 5-8) seen
	WALSync    bool   // pebble WAL-sync chunks (types 9-12) seen
	LogNum     uint32 // log number of the first recyclable/WAL-sync chunk
	EOFMarker  int64  // offset of pebble's end-of-log marker, or -1
	End        int64  // offset where the log ended: the file size unless an end marker, stale data or a strict error stopped the scan (also for split scans)
}

// logHdrSize returns the header size of chunk type t, or 0 for a type no
// supported flavour defines.
func logHdrSize(t byte) int {
	switch {
	case t >= 1 && t <= 4:
		return logHdrLegacy
	case t >= 5 && t <= 8:
		return logHdrRecycle
	case t >= 9 && t <= 12:
		return logHdrWALSync
	}
	return 0
}

// recHdr returns rec.Hdr, defaulting to the legacy 7.
func recHdr(rec Record) int64 {
	if rec.Hdr == 0 {
		return logHdrLegacy
	}
	return int64(rec.Hdr)
}

// ChunkAt returns the i-th chunk of rec: from rec.Chunks when it is set,
// otherwise from the canonical writer layout — the first chunk at rec.Off
// carrying min(rec.Len, room-Hdr) bytes, where room = 32768 - rec.Off%32768,
// and every next chunk at the next block start carrying
// min(remaining, 32768-Hdr). It returns false when i is past the last chunk
// (or negative, or rec cannot be canonical because it starts in the last
// Hdr-1 bytes of a block).
func ChunkAt(rec Record, i int) (Chunk, bool) {
	if i < 0 {
		return Chunk{}, false
	}
	if rec.Chunks != nil {
		if i >= len(rec.Chunks) {
			return Chunk{}, false
		}
		return rec.Chunks[i], true
	}
	hdr := recHdr(rec)
	room := logBlockSize - rec.Off%logBlockSize
	if rec.Off < 0 || rec.Len < 0 || room < hdr {
		return Chunk{}, false
	}
	first := min(rec.Len, room-hdr)
	if i == 0 {
		return Chunk{Off: rec.Off, Len: int32(first)}, true
	}
	per := logBlockSize - hdr
	start := first + int64(i-1)*per // payload offset of chunk i
	if int64(i-1) > rec.Len/per+1 || start >= rec.Len {
		return Chunk{}, false
	}
	off := rec.Off - rec.Off%logBlockSize + int64(i)*logBlockSize
	return Chunk{Off: off, Len: int32(min(per, rec.Len-start))}, true
}

// logBlockSize is the size of a leveldb log block.
const logBlockSize = 32768

// ProbeBlocks is how many block starts Probe tries, so that a log whose
// first chunk is damaged is still recognised.
const ProbeBlocks = 4

// Probe reports whether r (size bytes) looks like a leveldb log: a
// well-formed chunk with a correct checksum starts at one of the first
// ProbeBlocks block starts.
func Probe(r io.ReaderAt, size int64) bool {
	for b := int64(0); b < ProbeBlocks && b*logBlockSize < size; b++ {
		if validLogChunkAt(r, size, b*logBlockSize) {
			return true
		}
	}
	return false
}

// validLogChunkAt reports whether a well-formed leveldb chunk (legacy,
// recyclable or WAL-sync) with a correct masked CRC-32C starts at off.
func validLogChunkAt(r io.ReaderAt, size, off int64) bool {
	var hdr [19]byte
	avail := min(size-off, logBlockSize)
	if avail < 7 {
		return false
	}
	n, _ := r.ReadAt(hdr[:min(int64(len(hdr)), avail)], off)
	if n < 7 {
		return false
	}
	length := int64(binary.LittleEndian.Uint16(hdr[4:6]))
	typ := hdr[6]
	hs := int64(7)
	switch {
	case typ >= 1 && typ <= 4:
	case typ >= 5 && typ <= 8:
		hs = 11
	case typ >= 9 && typ <= 12:
		hs = 19
	default:
		return false
	}
	if int64(n) < hs || hs+length > avail {
		return false
	}
	buf := make([]byte, hs-6+length)
	if _, err := r.ReadAt(buf, off+6); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	if bytes.Count(hdr[:7], []byte{0}) == 7 {
		return false
	}
	return codec.MaskCRC(codec.CRC32C(buf)) == binary.LittleEndian.Uint32(hdr[0:4])
}
