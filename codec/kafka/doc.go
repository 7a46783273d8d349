// Package kafka reads Kafka log segments: the BASEOFFSET.log files a
// broker keeps per partition, whose bytes are the protocol's record
// batches (message format v2) or, in segments written before Kafka 0.11,
// message sets (v0 and v1).
//
// A v2 record batch is a 61-byte header and its records:
//
//	baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2)
//	crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
//	maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32
//	records count int32 | records…
//
// big-endian, the CRC a CRC-32C (Castagnoli) of everything after it. The
// attributes say how the records are compressed (bits 0–2: none, gzip,
// snappy, lz4, zstd, compressed together), the timestamp type (bit 3:
// create or log-append time), and whether the batch is transactional (bit
// 4) or a control batch of transaction markers (bit 5). Each record is a
// varint length, then attributes int8, timestampDelta varlong, offsetDelta
// varint, key and value (varint length, -1 for null, then the bytes) and
// headers (varint count, then key/value pairs of the same shape); varints
// are zigzag-encoded.
//
// A v0/v1 message is a log entry (offset int64, size int32) around crc
// uint32 (CRC-32 IEEE of the rest), magic int8, attributes int8, a
// timestamp int64 (v1 only), key and value (int32 length, -1 for null). A
// compressed message is a wrapper whose value is a compressed message set
// of inner messages; in v1 the inner offsets count from 0 and the
// wrapper's offset is that of the last inner message.
//
// As for the other formats of package codec, a [Scanner] takes an
// [io.ReaderAt] and a size, verifies every checksum, and yields record
// locations ([Record]: offset, timestamp and where the key, value and
// headers sit in the batch's data), never copies. Compressed batches are
// decompressed with gzip and zstd of github.com/klauspost/compress, snappy
// (raw blocks, and the xerial framing Kafka's Java clients write) with its
// s2 package and lz4 frames with github.com/pierrec/lz4/v4, always within a
// limit on the decoded size. Damage is data: a batch whose checksum fails,
// whose fields are impossible or whose records do not parse is skipped up
// to the next batch that verifies and reported as a [codec.Damage]; a batch
// cut short at the end of the file (a broker writing its active segment) is
// the truncation kind. [ReadBatch] reads one batch's data back, verified
// and decompressed, for random reads.
package kafka
