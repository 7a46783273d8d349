package kafka

import (
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// ParseRecord parses the record at position pos of a batch's data (as
// ReadBatch returns it), magic being its batch's: a v2 record for 2, else
// a v0 or v1 message (its own magic byte says which; a plain message's
// data is its batch, at position 0). Its
// Offset and Timestamp hold the record's own fields: for v2 the deltas
// from its batch's base offset and base timestamp (see
// Batch.RecordTimestamp), for v0/v1 the message's offset and timestamp
// (-1 for v0).
func ParseRecord(data []byte, pos int64, magic int8) (Record, error) {
	c := over(data)
	c.pos = pos
	return c.parseAt(magic)
}

// ParseRecordAt is ParseRecord for the data of an uncompressed batch read
// in place: data position 0 is file offset base of r, and the data ends
// at end. It reads only the record's framing, never its key or value.
func ParseRecordAt(r io.ReaderAt, base, end, pos int64, magic int8) (Record, error) {
	var buf [2 * (LogHeaderSize + MessageV1Size)]byte
	var err error
	c := cursor{pos: pos, end: end, fill: func(p int64, n int) []byte {
		k, rerr := r.ReadAt(buf[:min(int64(len(buf)), end-p)], base+p)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			err = rerr
		}
		return buf[:k]
	}}
	rec, perr := c.parseAt(magic)
	if err != nil {
		return rec, err
	}
	return rec, perr
}

// parseAt parses the record at the cursor.
func (c *cursor) parseAt(magic int8) (Record, error) {
	at := c.pos
	var r Record
	if magic == 2 {
		// Offsets and timestamps as deltas: a batch that starts at 0
		// and never ends, whose records' timestamps are their own.
		b := Batch{Magic: 2, LastOffset: maxOffset}
		if !c.recordV2(&b, -1, &r) {
			return r, corrupt(at, ReasonRecords, codec.ErrCorrupt)
		}
		return r, nil
	}
	m, ok := c.parseMessage()
	if !ok {
		return r, corrupt(at, ReasonRecords, codec.ErrCorrupt)
	}
	return Record{Offset: m.offset, Timestamp: m.ts, Pos: at, Len: m.end - at, KeyOff: m.keyOff, KeyLen: m.keyLen,
		ValueOff: m.valueOff, ValueLen: m.valueLen, HeadersOff: m.end}, nil
}

// RecordTimestamp returns the timestamp of a record of b whose own
// timestamp field (as ParseRecord returns it) is ts: the base timestamp
// plus ts for v2, the batch's (wrapper's) for log-append time, ts itself
// for v0/v1 messages otherwise.
func (b Batch) RecordTimestamp(ts int64) int64 {
	switch {
	case b.LogAppendTime():
		return b.MaxTimestamp
	case b.Magic == 2:
		return b.BaseTimestamp + ts
	}
	return ts
}
