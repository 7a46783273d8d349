package codectest

import (
	"encoding/binary"
	"hash/crc32"
)

// KafkaRecord is one record of a batch that KafkaBatch builds. A nil Key
// or Value is null; header values may be nil (null) too.
type KafkaRecord struct {
	Key, Value     []byte
	Headers        []KafkaHeader
	TimestampDelta int64
	// OffsetDelta is the record's offset delta; KafkaBatch numbers
	// records 0, 1, 2… when every record of the batch leaves it 0.
	OffsetDelta int32
}

// KafkaHeader is one record header.
type KafkaHeader struct {
	Key   string
	Value []byte
}

// KafkaBatchSpec describes a v2 record batch for KafkaBatch.
type KafkaBatchSpec struct {
	BaseOffset    int64
	LeaderEpoch   int32
	Attr          int16 // attributes; bits 0-2 name the codec Compress applies
	BaseTimestamp int64
	MaxTimestamp  int64 // 0: BaseTimestamp plus the largest delta
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// LastOffsetDelta, when not 0, overrides the last record's delta.
	LastOffsetDelta int32
	Records         []KafkaRecord
	// Compress, when set, compresses the encoded records.
	Compress func([]byte) []byte
}

// KafkaBatch returns a Kafka v2 record batch (magic 2, CRC-32C), built by
// hand from the format's description, not by a client library.
func KafkaBatch(s KafkaBatchSpec) []byte {
	numbered := true
	for _, r := range s.Records {
		numbered = numbered && r.OffsetDelta == 0
	}
	var recs []byte
	last, maxDelta := int32(0), int64(0)
	for i, r := range s.Records {
		d := r.OffsetDelta
		if numbered {
			d = int32(i)
		}
		last = max(last, d)
		maxDelta = max(maxDelta, r.TimestampDelta)
		recs = AppendKafkaRecord(recs, r, d)
	}
	if s.LastOffsetDelta != 0 {
		last = s.LastOffsetDelta
	}
	if s.Compress != nil {
		recs = s.Compress(recs)
	}
	if s.MaxTimestamp == 0 {
		s.MaxTimestamp = s.BaseTimestamp + maxDelta
	}
	b := make([]byte, 61, 61+len(recs))
	be := binary.BigEndian
	be.PutUint64(b, uint64(s.BaseOffset))
	be.PutUint32(b[8:], uint32(49+len(recs)))
	be.PutUint32(b[12:], uint32(s.LeaderEpoch))
	b[16] = 2
	be.PutUint16(b[21:], uint16(s.Attr))
	be.PutUint32(b[23:], uint32(last))
	be.PutUint64(b[27:], uint64(s.BaseTimestamp))
	be.PutUint64(b[35:], uint64(s.MaxTimestamp))
	be.PutUint64(b[43:], uint64(s.ProducerID))
	be.PutUint16(b[51:], uint16(s.ProducerEpoch))
	be.PutUint32(b[53:], uint32(s.BaseSequence))
	be.PutUint32(b[57:], uint32(len(s.Records)))
	b = append(b, recs...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// AppendKafkaRecord appends the v2 encoding of r, with offset delta d, to
// dst.
func AppendKafkaRecord(dst []byte, r KafkaRecord, d int32) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, r.TimestampDelta)
	body = binary.AppendVarint(body, int64(d))
	body = appendVarBytes(body, r.Key)
	body = appendVarBytes(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = appendVarBytes(body, []byte(h.Key))
		body = appendVarBytes(body, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// appendVarBytes appends a varint length (-1 for nil) and b.
func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// KafkaMessage returns a v0 or v1 log entry (offset, size, CRC-32 IEEE,
// magic, attributes, timestamp for v1, key, value), built by hand. A nil
// key or value is null.
func KafkaMessage(magic int8, offset int64, attr int8, ts int64, key, value []byte) []byte {
	be := binary.BigEndian
	b := make([]byte, 12, 12+26+len(key)+len(value))
	be.PutUint64(b, uint64(offset))
	b = append(b, 0, 0, 0, 0, byte(magic), byte(attr))
	if magic == 1 {
		b = be.AppendUint64(b, uint64(ts))
	}
	b = appendInt32Bytes(b, key)
	b = appendInt32Bytes(b, value)
	be.PutUint32(b[8:], uint32(len(b)-12))
	be.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// appendInt32Bytes appends an int32 length (-1 for nil) and b.
func appendInt32Bytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, ^uint32(0))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
