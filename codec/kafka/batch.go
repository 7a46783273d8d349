package kafka

import (
	"encoding/binary"
	"fmt"
)

// Layout of a v2 record batch header and of a v0/v1 log entry.
const (
	// LogHeaderSize is what every batch and message starts with: its
	// offset (int64) and the length (int32) of what follows.
	LogHeaderSize = 12
	// magicAt is where the magic byte sits, in both layouts.
	magicAt = 16
	// BatchHeaderSize is the v2 header up to the first record.
	BatchHeaderSize = 61
	// v2crcFrom is where the bytes a v2 CRC covers start.
	v2crcFrom = 21
	// MessageV0Size and MessageV1Size are the smallest v0 and v1 messages
	// (null key and value) after the log header.
	MessageV0Size = 4 + 1 + 1 + 4 + 4
	MessageV1Size = MessageV0Size + 8
)

// Attribute bits of a batch (v2) or message (v0/v1).
const (
	attrCompression   = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10 // v2 only
	attrControl       = 0x20 // v2 only
	attrDeleteHorizon = 0x40 // v2 only: baseTimestamp is a compaction delete horizon
	v2attrKnown       = attrCompression | attrLogAppendTime | attrTransactional | attrControl | attrDeleteHorizon
	v1attrKnown       = attrCompression | attrLogAppendTime
	v0attrKnown       = attrCompression
)

// Compression is the codec of a batch's records.
type Compression uint8

// The compression codecs of Kafka's attributes (bits 0–2).
const (
	None Compression = iota
	Gzip
	Snappy
	LZ4
	Zstd
)

var compressionNames = [...]string{None: "none", Gzip: "gzip", Snappy: "snappy", LZ4: "lz4", Zstd: "zstd"}

// String returns the codec's name as Kafka's compression.type spells it.
func (c Compression) String() string {
	if int(c) < len(compressionNames) {
		return compressionNames[c]
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// A Batch is one record batch (magic 2) or one top-level message (magic 0
// or 1: a plain message, or a wrapper of compressed inner messages) as it
// sits in the file, with its header fields. v0/v1 messages have no leader
// epoch, producer or sequence (-1).
type Batch struct {
	Off           int64 // file offset of the batch's first byte (its offset field)
	Len           int64 // bytes the batch takes in the file, log header included
	Magic         int8  // 0, 1 or 2
	Attr          int16 // attributes (v0/v1: the message's int8)
	BaseOffset    int64 // Kafka offset of the first record
	LastOffset    int64 // Kafka offset of the last record (v2: base + lastOffsetDelta)
	LeaderEpoch   int32 // partitionLeaderEpoch (v2), -1 before
	BaseTimestamp int64 // baseTimestamp (v2), the message timestamp (v1), -1 (v0)
	MaxTimestamp  int64 // maxTimestamp (v2), the message timestamp (v1), -1 (v0)
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Count         int32 // records the header announces (v0/v1: inner messages, or 1)
	CRC           uint32
}

// Compression returns the codec the batch's records are compressed with.
func (b Batch) Compression() Compression { return Compression(b.Attr & attrCompression) }

// Compressed reports whether the records are compressed.
func (b Batch) Compressed() bool { return b.Compression() != None }

// LogAppendTime reports whether the broker stamped the batch's records
// with its own time (MaxTimestamp for v2, the wrapper's for v1), not the
// producer's.
func (b Batch) LogAppendTime() bool { return b.Magic > 0 && b.Attr&attrLogAppendTime != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (b Batch) Transactional() bool { return b.Magic == 2 && b.Attr&attrTransactional != 0 }

// Control reports whether the batch holds control records (transaction
// markers and KRaft control records) instead of user records.
func (b Batch) Control() bool { return b.Magic == 2 && b.Attr&attrControl != 0 }

// End returns the file offset just past the batch: where the next starts.
func (b Batch) End() int64 { return b.Off + b.Len }

// DataOff returns the file offset of the batch's data when it is not
// compressed: the first record of a v2 batch, the batch itself (its one
// message) for v0/v1. Record positions of an uncompressed batch count from
// there; those of a compressed batch count in its decompressed records.
func (b Batch) DataOff() int64 {
	if b.Magic == 2 {
		return b.Off + BatchHeaderSize
	}
	return b.Off
}

// headerSize returns the bytes of a batch of magic m that must be present
// to read its header fields.
func headerSize(m int8) int {
	switch m {
	case 2:
		return BatchHeaderSize
	case 1:
		return LogHeaderSize + MessageV1Size
	}
	return LogHeaderSize + MessageV0Size
}

// peekMagic returns the magic byte and the entry length (log header
// included) of the batch whose first bytes are h (at least magicAt+1).
func peekMagic(h []byte) (magic int8, n int64) {
	return int8(h[magicAt]), LogHeaderSize + int64(int32(binary.BigEndian.Uint32(h[8:])))
}

// parseHeader reads the header of a batch at off whose first bytes are h
// (at least headerSize(magic)). It checks the fields that can be checked
// without the rest of the batch and returns a reason when one is
// impossible.
func parseHeader(h []byte, off int64) (Batch, string) {
	magic, n := peekMagic(h)
	b := Batch{Off: off, Len: n, Magic: magic, BaseOffset: int64(binary.BigEndian.Uint64(h)),
		LeaderEpoch: -1, BaseTimestamp: -1, MaxTimestamp: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Count: 1}
	if magic < 0 || magic > 2 {
		return b, ReasonMagic
	}
	if len(h) < headerSize(magic) {
		return b, ReasonTruncHeader
	}
	if magic != 2 {
		return b, b.legacyHeader(h)
	}
	return b, b.v2Header(h)
}

// legacyHeader fills b (Off, Len, Magic 0 or 1, BaseOffset set) from the
// header h of a v0/v1 message and returns why it is impossible, if it is.
func (b *Batch) legacyHeader(h []byte) string {
	n := b.Len
	b.CRC = binary.BigEndian.Uint32(h[12:])
	b.Attr = int16(h[17])
	b.LastOffset = b.BaseOffset
	min, known := int64(MessageV0Size), int16(v0attrKnown)
	if b.Magic == 1 {
		min, known = MessageV1Size, v1attrKnown
		b.BaseTimestamp = int64(binary.BigEndian.Uint64(h[18:]))
		b.MaxTimestamp = b.BaseTimestamp
	}
	keyLen := int64(int32(binary.BigEndian.Uint32(h[LogHeaderSize+min-8:])))
	switch {
	case n < LogHeaderSize+min:
		return ReasonLength
	case b.Attr&^known != 0 || b.Compression() > LZ4:
		return ReasonAttributes
	case b.BaseOffset < 0:
		return ReasonOffset
	case keyLen < -1 || keyLen > n-LogHeaderSize-min:
		return ReasonHeader
	}
	return ""
}

// v2Header fills b (Off, Len, Magic 2, BaseOffset set) from the header h
// of a v2 record batch and returns why it is impossible, if it is.
func (b *Batch) v2Header(h []byte) string {
	n := b.Len
	b.LeaderEpoch = int32(binary.BigEndian.Uint32(h[12:]))
	b.CRC = binary.BigEndian.Uint32(h[17:])
	b.Attr = int16(binary.BigEndian.Uint16(h[21:]))
	lastDelta := int32(binary.BigEndian.Uint32(h[23:]))
	b.LastOffset = b.BaseOffset + int64(lastDelta)
	b.BaseTimestamp = int64(binary.BigEndian.Uint64(h[27:]))
	b.MaxTimestamp = int64(binary.BigEndian.Uint64(h[35:]))
	b.ProducerID = int64(binary.BigEndian.Uint64(h[43:]))
	b.ProducerEpoch = int16(binary.BigEndian.Uint16(h[51:]))
	b.BaseSequence = int32(binary.BigEndian.Uint32(h[53:]))
	b.Count = int32(binary.BigEndian.Uint32(h[57:]))
	switch {
	case n < BatchHeaderSize:
		return ReasonLength
	case b.Attr&^v2attrKnown != 0 || b.Compression() > Zstd:
		return ReasonAttributes
	case b.BaseOffset < 0 || lastDelta < 0:
		return ReasonOffset
	case b.LeaderEpoch < -1 || b.ProducerID < -1 || b.ProducerEpoch < -1 || b.BaseSequence < -1:
		return ReasonHeader
	case b.Count < 0 || int64(b.Count) > int64(lastDelta)+1:
		return ReasonCount
	case !b.Compressed() && int64(b.Count)*minRecordSize > n-BatchHeaderSize:
		return ReasonCount
	}
	return ""
}

// minRecordSize is the fewest bytes a v2 record takes: a length, its
// attributes, timestamp and offset deltas, null key and value, no headers.
const minRecordSize = 7
