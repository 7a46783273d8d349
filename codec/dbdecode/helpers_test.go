package dbdecode

import "encoding/binary"

// rec builds a record from parts: byte, int (a varint), string (a
// length-prefixed string) and []byte (raw bytes).
func rec(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case byte:
			b = append(b, v)
		case int:
			b = binary.AppendUvarint(b, uint64(v))
		case string:
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		default:
			panic("rec: bad part")
		}
	}
	return b
}

// hdr is a batch header.
func hdr(seq uint64, count uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, seq)
	return binary.LittleEndian.AppendUint32(b, count)
}

// ikey is an internal key.
func ikey(k string, seq uint64, kind byte) string {
	return string(binary.LittleEndian.AppendUint64([]byte(k), seq<<8|uint64(kind)))
}
