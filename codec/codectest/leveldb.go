package codectest

import (
	"encoding/binary"
	"hash/crc32"
)

// LogChunk returns one leveldb log chunk of any type typ (7-byte header,
// masked CRC-32C over type and payload), built by hand (not by the writer),
// as no reference writer would for an unknown type.
func LogChunk(typ byte, p []byte) []byte {
	b := make([]byte, 7, 7+len(p))
	b[6] = typ
	return finishLogChunk(append(b, p...), len(p))
}

// RecycledChunk returns a FULL recyclable leveldb log chunk (type 5, an
// 11-byte header carrying log number num) of payload p, built by hand.
func RecycledChunk(num uint32, p []byte) []byte {
	b := make([]byte, 11, 11+len(p))
	b[6] = 5
	binary.LittleEndian.PutUint32(b[7:], num)
	return finishLogChunk(append(b, p...), len(p))
}

// finishLogChunk fills in the checksum (over the header bytes after the
// length, then the payload) and the payload length n of the chunk b.
func finishLogChunk(b []byte, n int) []byte {
	c := crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(b, (c>>15|c<<17)+0xa282ead8)
	binary.LittleEndian.PutUint16(b[4:], uint16(n))
	return b
}

// PutBatch returns a leveldb WriteBatch (the payload of a WAL record)
// holding one put of key and value at sequence number seq: the 12-byte
// header (sequence, count 1), the put tag, then key and value, each
// after its uvarint length.
func PutBatch(seq uint64, key, value string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = append(b, 1) // put
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}
