package codec

// Types and layout arithmetic shared by the leveldb log scanner, reader and
// writer (spec: shared/spec/leveldb-log.md).

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

// Damage reasons reported by the leveldb-log scanner.
const (
	logReasonChecksum   = "checksum mismatch"
	logReasonLength     = "bad chunk length"
	logReasonType       = "unknown chunk type"
	logReasonZeroHeader = "zero header before data"
	logReasonOrphan     = "orphan chunk"
	logReasonCutShort   = "record cut short"
	logReasonTruncChunk = "truncated chunk"
	logReasonTruncHdr   = "truncated header"
	logReasonFragmented = "record too fragmented"
	logReasonStale      = "stale data of a recycled log"
)

// LogOptions configure a leveldb-log scan or read.
type LogOptions struct {
	// Strict stops at the first damage: Err then returns a *CorruptError.
	// By default damage is skipped and recorded as a Damage.
	Strict bool
	// Unmasked is for legacy files whose CRC-32C is stored unmasked. It is
	// never auto-detected.
	Unmasked bool
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
	// To merge parts into what a whole-file scan reports: records in part
	// order; damage = MergeLogDamage of every part's Damage plus each part's
	// LeadDamage(the largest ConsumedEnd of the parts before it); a part
	// whose Info().End is below the file size ended the log (end marker or
	// stale recyclable data), so later parts are dropped.
	Start, End int64
}

// A LogChunk is one chunk of a record: header offset and payload length.
type LogChunk struct {
	Off int64 // file offset of the chunk header
	Len int32 // payload bytes
}

// A LogRecord locates one record in a leveldb log.
type LogRecord struct {
	Off int64 // file offset of the record's first chunk header
	Len int64 // payload length
	// Hdr is the header size of the record's chunks: 7 (types 1-4),
	// 11 (recyclable, types 5-8) or 19 (pebble WAL-sync, types 9-12).
	Hdr uint8
	// Chunks is nil when the chunks follow the canonical writer layout from
	// Off (see LogChunkAt); otherwise it lists every chunk.
	Chunks []LogChunk
}

// LogInfo describes what a scan found out about the file's flavour.
type LogInfo struct {
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
func recHdr(rec LogRecord) int64 {
	if rec.Hdr == 0 {
		return logHdrLegacy
	}
	return int64(rec.Hdr)
}

// LogChunkAt returns the i-th chunk of rec: from rec.Chunks when it is set,
// otherwise from the canonical writer layout — the first chunk at rec.Off
// carrying min(rec.Len, room-Hdr) bytes, where room = 32768 - rec.Off%32768,
// and every next chunk at the next block start carrying
// min(remaining, 32768-Hdr). It returns false when i is past the last chunk
// (or negative, or rec cannot be canonical because it starts in the last
// Hdr-1 bytes of a block).
func LogChunkAt(rec LogRecord, i int) (LogChunk, bool) {
	if i < 0 {
		return LogChunk{}, false
	}
	if rec.Chunks != nil {
		if i >= len(rec.Chunks) {
			return LogChunk{}, false
		}
		return rec.Chunks[i], true
	}
	hdr := recHdr(rec)
	room := logBlockSize - rec.Off%logBlockSize
	if rec.Off < 0 || rec.Len < 0 || room < hdr {
		return LogChunk{}, false
	}
	first := min(rec.Len, room-hdr)
	if i == 0 {
		return LogChunk{Off: rec.Off, Len: int32(first)}, true
	}
	per := logBlockSize - hdr
	start := first + int64(i-1)*per // payload offset of chunk i
	if int64(i-1) > rec.Len/per+1 || start >= rec.Len {
		return LogChunk{}, false
	}
	off := rec.Off - rec.Off%logBlockSize + int64(i)*logBlockSize
	return LogChunk{Off: off, Len: int32(min(per, rec.Len-start))}, true
}
