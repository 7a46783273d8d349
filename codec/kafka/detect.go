package kafka

import (
	"io"
	"strings"
)

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

// IsSegmentName reports whether name is a Kafka log segment's file name:
// its base offset in 20 decimal digits and ".log". A broker rolls a new
// segment as an empty file of that name, so such a file is an (empty)
// segment before it holds a byte.
func IsSegmentName(name string) bool {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || len(digits) != 20 {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}
