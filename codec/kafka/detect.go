package kafka

import "io"

// Probe reports whether the first size bytes of r look like a Kafka log
// segment: a record batch (v2) or a message (v0/v1) at offset 0 whose
// header is possible, which fits in the file, and whose checksum verifies.
// A segment whose first batch is damaged or still being written is not
// recognised; it can still be scanned when its format is known.
func Probe(r io.ReaderAt, size int64) bool {
	var h [BatchHeaderSize]byte
	n, _ := r.ReadAt(h[:min(size, BatchHeaderSize)], 0)
	if n <= magicAt {
		return false
	}
	if m := int8(h[magicAt]); m < 0 || m > 2 || n < headerSize(m) {
		return false
	}
	b, why := parseHeader(h[:n], 0)
	if why != "" || b.End() > size {
		return false
	}
	return VerifyBatch(r, 0, b.Len) == nil
}
