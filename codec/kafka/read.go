package kafka

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// ReadBatch reads the n-byte batch at file offset off (as a Scanner found
// it), checks that its header still says n bytes and that its checksum
// verifies, and returns its data, in which the positions of the Records a
// scan yielded for it count: the decompressed records of a compressed
// batch (at most limit bytes, else an error matching codec.ErrLimit), the
// file bytes from Batch.DataOff of an uncompressed one. The data is
// built in buf's space (buf[:0], grown as needed). A batch that no longer
// verifies is a *codec.CorruptError matching codec.ErrCorrupt. It is safe
// for concurrent use.
func ReadBatch(r io.ReaderAt, off, n int64, buf []byte, limit int64) ([]byte, error) {
	if n < LogHeaderSize+MessageV0Size || n > limit+BatchHeaderSize {
		if n > limit {
			return nil, fmt.Errorf("%w: kafka: batch at %d is %d bytes", codec.ErrLimit, off, n)
		}
		return nil, corrupt(off, ReasonLength, codec.ErrCorrupt)
	}
	raw := buf[:0]
	if int64(cap(raw)) < n {
		raw = make([]byte, n)
	}
	raw = raw[:n]
	if err := readFull(r, raw, off); err != nil {
		return nil, err
	}
	b, err := checkBatch(raw, off)
	if err != nil {
		return nil, err
	}
	if !b.Compressed() {
		return raw[b.DataOff()-off:], nil
	}
	src := raw[BatchHeaderSize:]
	if b.Magic < 2 {
		c := over(raw)
		m, ok := c.parseMessage()
		if !ok || m.valueLen < 0 {
			return nil, corrupt(off, ReasonRecords, codec.ErrCorrupt)
		}
		src = raw[m.valueOff : m.valueOff+m.valueLen]
	}
	// The compressed bytes sit in raw: decompress into a buffer of their own.
	out, err := Decompress(nil, b.Compression(), src, limit)
	if err != nil {
		if errors.Is(err, codec.ErrLimit) {
			return nil, err
		}
		return nil, corrupt(off, ReasonDecompress, codec.ErrCorrupt)
	}
	return out, nil
}

// checkBatch parses the header of the whole batch raw, read at off, and
// verifies its length and checksum.
func checkBatch(raw []byte, off int64) (Batch, error) {
	if len(raw) <= magicAt {
		return Batch{}, corrupt(off, ReasonTruncHeader, codec.ErrCorrupt)
	}
	b, why := parseHeader(raw, off)
	switch {
	case why != "":
		return b, corrupt(off, why, codec.ErrCorrupt)
	case b.Len != int64(len(raw)):
		return b, corrupt(off, ReasonLength, codec.ErrCorrupt)
	}
	var crc uint32
	if b.Magic == 2 {
		crc = crc32.Checksum(raw[v2crcFrom:], castagnoli)
	} else {
		crc = crc32.Checksum(raw[magicAt:], ieee)
	}
	if crc != b.CRC {
		return b, corrupt(off, ReasonCRC, codec.ErrCorrupt)
	}
	return b, nil
}

// verifyChunk is how much of a batch VerifyBatch reads at a time.
const verifyChunk = 1 << 20

var verifyPool = sync.Pool{New: func() any { b := make([]byte, verifyChunk); return &b }}

// VerifyBatch checks, reading it a MiB at a time, that the n-byte batch at
// off still has that length and its checksum, without holding it: for
// batches too large to read whole, whose bytes are then read in place. It
// is safe for concurrent use.
func VerifyBatch(r io.ReaderAt, off, n int64) error {
	bp := verifyPool.Get().(*[]byte)
	defer verifyPool.Put(bp)
	buf := *bp
	h := buf[:min(n, BatchHeaderSize)]
	if err := readFull(r, h, off); err != nil {
		return err
	}
	if len(h) <= magicAt {
		return corrupt(off, ReasonTruncHeader, codec.ErrCorrupt)
	}
	b, why := parseHeader(h, off)
	switch {
	case why != "":
		return corrupt(off, why, codec.ErrCorrupt)
	case b.Len != n:
		return corrupt(off, ReasonLength, codec.ErrCorrupt)
	}
	tab, at := castagnoli, off+v2crcFrom
	if b.Magic < 2 {
		tab, at = ieee, off+magicAt
	}
	crc := uint32(0)
	for end := off + n; at < end; {
		p := buf[:min(int64(len(buf)), end-at)]
		if err := readFull(r, p, at); err != nil {
			return err
		}
		crc = crc32.Update(crc, tab, p)
		at += int64(len(p))
	}
	if crc != b.CRC {
		return corrupt(off, ReasonCRC, codec.ErrCorrupt)
	}
	return nil
}

// readFull reads len(b) bytes at off; a short read is codec.ErrTruncated.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	return codec.ReadFullAt(r, b, off, codec.Kafka, ReasonTruncated)
}
