package kafka

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/recfs/recfs/codec"
)

// A Record is one record of a batch: its Kafka offset and timestamp, and
// where its parts sit in the batch's data (see Batch.DataOff: the file for
// an uncompressed batch, the decompressed records for a compressed one).
// A null key or value has length -1.
type Record struct {
	Offset    int64 // Kafka offset
	Timestamp int64 // milliseconds since the Unix epoch; -1 for v0 messages, which have none

	Pos int64 // position of the record's first byte in the batch's data
	Len int64 // its length there (for v0/v1: the whole log entry)

	KeyOff, KeyLen     int64
	ValueOff, ValueLen int64
	// HeadersOff is the position of the header count (v2), Headers the
	// number of headers; v0/v1 messages have none.
	HeadersOff int64
	Headers    int32
}

// maxVarintLen is the longest varlong Kafka writes.
const maxVarintLen = binary.MaxVarintLen64

// ieee is the CRC-32 table of v0/v1 messages.
var ieee = crc32.IEEETable

// cursor reads a batch's data: a slice holding all of it, or the file
// through fill (the scanner's window). Positions are in the batch's data
// (file offsets for a file-backed cursor).
type cursor struct {
	b    []byte                        // the data, when held in memory
	pos  int64                         // read position
	end  int64                         // end of the data
	fill func(pos int64, n int) []byte // bytes from pos, n of them unless the file ends first; nil on a read error
}

// over returns a cursor over data held in memory.
func over(b []byte) cursor { return cursor{b: b, end: int64(len(b))} }

// avail returns the bytes of the data at the read position, at least n
// unless the data ends first; nil after a read error.
func (c *cursor) avail(n int) []byte {
	rest := c.end - c.pos
	if rest < 0 {
		return nil
	}
	if c.fill == nil {
		return c.b[c.pos:]
	}
	b := c.fill(c.pos, n)
	if int64(len(b)) > rest {
		b = b[:rest]
	}
	return b
}

// varint reads a zigzag varint of at most maxVarintLen bytes.
func (c *cursor) varint() (int64, bool) {
	b := c.avail(maxVarintLen)
	v, k := binary.Varint(b[:min(len(b), maxVarintLen)])
	if k <= 0 {
		return 0, false
	}
	c.pos += int64(k)
	return v, true
}

// varint32 reads a varint that must fit an int32.
func (c *cursor) varint32() (int64, bool) {
	v, ok := c.varint()
	return v, ok && v == int64(int32(v))
}

// skip moves over n bytes, which must lie within limit.
func (c *cursor) skip(n, limit int64) bool {
	if n < 0 || n > limit-c.pos {
		return false
	}
	c.pos += n
	return true
}

// bytesField reads a varint length (-1 for null) and skips that many
// bytes within limit, returning where they start and how many there are.
func (c *cursor) bytesField(limit int64, nullable bool) (off, n int64, ok bool) {
	n, ok = c.varint32()
	if !ok || (n < 0 && (n != -1 || !nullable)) {
		return 0, 0, false
	}
	off = c.pos
	if n > 0 && !c.skip(n, limit) {
		return 0, 0, false
	}
	return off, n, true
}

// recordV2 parses the v2 record at the cursor into r, given its batch's
// header; it checks that the record's fields fill exactly the length it
// declares and that its offset lies in the batch after prev (the previous
// record's offset, or BaseOffset-1).
func (c *cursor) recordV2(b *Batch, prev int64, r *Record) bool {
	if c.fill == nil && c.end == int64(len(c.b)) {
		return c.recordV2Mem(b, prev, r)
	}
	r.Pos = c.pos
	n, ok := c.varint32()
	if !ok || n < minRecordSize-1 {
		return false
	}
	body := c.pos
	limit := body + n
	if limit > c.end {
		return false
	}
	if !c.skip(1, limit) { // attributes: unused
		return false
	}
	tsDelta, ok1 := c.varint()
	offDelta, ok2 := c.varint32()
	if !ok1 || !ok2 || !b.place(r, prev, offDelta, tsDelta) {
		return false
	}
	if r.KeyOff, r.KeyLen, ok = c.bytesField(limit, true); !ok {
		return false
	}
	if r.ValueOff, r.ValueLen, ok = c.bytesField(limit, true); !ok {
		return false
	}
	r.HeadersOff = c.pos
	h, ok := c.varint32()
	if !ok || h < 0 || h > (limit-c.pos)/2 {
		return false
	}
	r.Headers = int32(h)
	for range h {
		if _, _, ok := c.bytesField(limit, false); !ok {
			return false
		}
		if _, _, ok := c.bytesField(limit, true); !ok {
			return false
		}
	}
	r.Len = c.pos - r.Pos
	return c.pos == limit
}

// place sets r's offset and timestamp from a v2 record's deltas and
// reports whether the offset lies in b after prev.
func (b *Batch) place(r *Record, prev, offDelta, tsDelta int64) bool {
	r.Offset = b.BaseOffset + offDelta
	if offDelta < 0 || r.Offset <= prev || r.Offset > b.LastOffset {
		return false
	}
	r.Timestamp = b.BaseTimestamp + tsDelta
	if b.LogAppendTime() {
		r.Timestamp = b.MaxTimestamp
	}
	return true
}

// recordV2Mem is recordV2 for a cursor over all of its data in memory:
// the same checks in the same order on a local position, with the
// one-byte varints that nearly every length and delta of a record is
// read inline.
func (c *cursor) recordV2Mem(b *Batch, prev int64, r *Record) bool {
	d, i := c.b, c.pos
	r.Pos = i
	n, i, ok := memVarint32(d, i)
	if !ok || n < minRecordSize-1 {
		return false
	}
	limit := i + n
	if limit > c.end {
		return false
	}
	i++ // attributes: unused (n leaves room for them)
	tsDelta, i, ok1 := memVarint(d, i)
	offDelta, i, ok2 := memVarint32(d, i)
	if !ok1 || !ok2 || !b.place(r, prev, offDelta, tsDelta) {
		return false
	}
	if r.KeyOff, r.KeyLen, i, ok = memBytes(d, i, limit, true); !ok {
		return false
	}
	if r.ValueOff, r.ValueLen, i, ok = memBytes(d, i, limit, true); !ok {
		return false
	}
	r.HeadersOff = i
	h, i, ok := memVarint32(d, i)
	if !ok || h < 0 || h > (limit-i)/2 {
		return false
	}
	r.Headers = int32(h)
	for range h {
		if _, _, i, ok = memBytes(d, i, limit, false); !ok {
			return false
		}
		if _, _, i, ok = memBytes(d, i, limit, true); !ok {
			return false
		}
	}
	r.Len = i - r.Pos
	c.pos = i
	return i == limit
}

// memVarint reads the zigzag varint at d[i:] (at most maxVarintLen
// bytes) and returns it and the position after it.
func memVarint(d []byte, i int64) (int64, int64, bool) {
	if i < 0 || i > int64(len(d)) {
		return 0, i, false
	}
	if i < int64(len(d)) && d[i] < 0x80 {
		u := int64(d[i])
		return u>>1 ^ -(u & 1), i + 1, true
	}
	if i+1 < int64(len(d)) && d[i+1] < 0x80 {
		// Two bytes (lengths and deltas up to 8191), as binary.Varint
		// reads them.
		u := int64(d[i]&0x7f) | int64(d[i+1])<<7
		return u>>1 ^ -(u & 1), i + 2, true
	}
	v, k := binary.Varint(d[i:min(int64(len(d)), i+maxVarintLen)])
	if k <= 0 {
		return 0, i, false
	}
	return v, i + int64(k), true
}

// memVarint32 is memVarint for a varint that must fit an int32.
func memVarint32(d []byte, i int64) (int64, int64, bool) {
	v, i, ok := memVarint(d, i)
	return v, i, ok && v == int64(int32(v))
}

// memBytes is bytesField over d at position i: a varint length (-1 for
// null when nullable) and that many bytes within limit. It returns where
// they start, how many there are and the position after them.
func memBytes(d []byte, i, limit int64, nullable bool) (off, n, next int64, ok bool) {
	n, i, ok = memVarint32(d, i)
	if !ok || (n < 0 && (n != -1 || !nullable)) {
		return 0, 0, i, false
	}
	if n > 0 {
		if n > limit-i {
			return 0, 0, i, false
		}
		return i, n, i + n, true
	}
	return i, n, i, true
}

// message is a v0/v1 message's fields after its log header, as parsed by
// parseMessage.
type message struct {
	offset   int64
	magic    int8
	attr     int8
	ts       int64
	crc      uint32
	keyOff   int64 // position of the key length
	keyLen   int64
	valueOff int64
	valueLen int64
	end      int64 // position just past the message
}

// parseMessage parses the v0/v1 log entry at the cursor (offset, size,
// crc, magic, attributes, timestamp, key, value) without checking its
// CRC; the entry must fill exactly the size it declares.
func (c *cursor) parseMessage() (message, bool) {
	var m message
	h := c.avail(LogHeaderSize + MessageV1Size)
	if len(h) < LogHeaderSize+MessageV0Size {
		return m, false
	}
	m.offset = int64(binary.BigEndian.Uint64(h))
	size := int64(int32(binary.BigEndian.Uint32(h[8:])))
	m.crc = binary.BigEndian.Uint32(h[12:])
	m.magic, m.attr = int8(h[16]), int8(h[17])
	start := c.pos
	m.end = start + LogHeaderSize + size
	if size < MessageV0Size || m.end > c.end || m.magic < 0 || m.magic > 1 {
		return m, false
	}
	at := int64(18)
	if m.magic == 1 {
		if size < MessageV1Size {
			return m, false
		}
		m.ts = int64(binary.BigEndian.Uint64(h[18:]))
		at += 8
	} else {
		m.ts = -1
	}
	c.pos = start + at
	var ok bool
	if m.keyOff, m.keyLen, ok = c.int32Bytes(m.end); !ok {
		return m, false
	}
	if m.valueOff, m.valueLen, ok = c.int32Bytes(m.end); !ok {
		return m, false
	}
	return m, c.pos == m.end
}

// int32Bytes reads an int32 length (-1 for null) and skips that many
// bytes within limit.
func (c *cursor) int32Bytes(limit int64) (off, n int64, ok bool) {
	b := c.avail(4)
	if len(b) < 4 || c.pos+4 > limit {
		return 0, 0, false
	}
	n = int64(int32(binary.BigEndian.Uint32(b)))
	c.pos += 4
	off = c.pos
	if n < -1 || (n > 0 && !c.skip(n, limit)) {
		return 0, 0, false
	}
	return off, n, true
}

// crcOver returns the CRC (of table) of data positions [from, to), read
// through the cursor; false after a read error.
func (c *cursor) crcOver(tab *crc32.Table, from, to int64) (uint32, bool) {
	crc := uint32(0)
	c.pos = from
	for c.pos < to {
		b := c.avail(int(min(to-c.pos, 1<<20)))
		if len(b) == 0 {
			return 0, false
		}
		b = b[:min(int64(len(b)), to-c.pos)]
		crc = crc32.Update(crc, tab, b)
		c.pos += int64(len(b))
	}
	return crc, true
}

// Header is one record header. A null value is nil.
type Header struct {
	Key, Value []byte
}

// AppendHeaders appends the headers of r, a record of a batch whose data
// is data (as ReadBatch returns it), to dst; the keys and values alias
// data. Records of v0/v1 messages have none.
func AppendHeaders(dst []Header, data []byte, r Record) ([]Header, error) {
	if r.Headers == 0 {
		return dst, nil
	}
	end := r.Pos + r.Len
	if r.HeadersOff < 0 || end > int64(len(data)) || r.HeadersOff > end {
		return dst, corrupt(r.Pos, ReasonRecords, codec.ErrCorrupt)
	}
	c := over(data[:end])
	c.pos = r.HeadersOff
	n, ok := c.varint32()
	if !ok || n != int64(r.Headers) {
		return dst, corrupt(r.Pos, ReasonRecords, codec.ErrCorrupt)
	}
	for range n {
		ko, kn, ok1 := c.bytesField(end, false)
		vo, vn, ok2 := c.bytesField(end, true)
		if !ok1 || !ok2 {
			return dst, corrupt(r.Pos, ReasonRecords, codec.ErrCorrupt)
		}
		h := Header{Key: data[ko : ko+kn]}
		if vn >= 0 {
			h.Value = data[vo : vo+vn]
		}
		dst = append(dst, h)
	}
	return dst, nil
}
