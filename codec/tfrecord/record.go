package tfrecord

import "encoding/binary"

// Framing sizes.
const (
	// HeaderSize is the length field plus its checksum.
	HeaderSize = 12
	// FooterSize is the data checksum.
	FooterSize = 4
	// Overhead is the framing around each record's data.
	Overhead = HeaderSize + FooterSize
)

// A Record is where one record lives in the file (or in the decompressed
// stream of a compressed file).
type Record struct {
	Off int64 // offset of the record's length field
	Len int64 // length of its data
}

// DataOff returns the offset of the record's first data byte.
func (r Record) DataOff() int64 { return r.Off + HeaderSize }

// End returns the offset just past the record's data checksum: where the
// next record starts.
func (r Record) End() int64 { return r.Off + Overhead + r.Len }

// EncodedLen returns how many bytes a record of n data bytes takes.
func EncodedLen(n int64) int64 { return n + Overhead }

// PutHeader fills h with the length field and masked length checksum of a
// record of n data bytes.
func PutHeader(h *[HeaderSize]byte, n uint64) {
	binary.LittleEndian.PutUint64(h[:8], n)
	binary.LittleEndian.PutUint32(h[8:], maskCRC(crc32c(h[:8])))
}

// ParseHeader returns the length a 12-byte header carries, and whether its
// checksum verifies.
func ParseHeader(h []byte) (n uint64, ok bool) {
	_ = h[HeaderSize-1]
	n = binary.LittleEndian.Uint64(h)
	return n, binary.LittleEndian.Uint32(h[8:]) == maskCRC(crc32c(h[:8]))
}

// AppendRecord appends the encoding of one record holding data to dst and
// returns the extended slice; appending writers can build their bytes with
// it and write them with one WriteAt.
func AppendRecord(dst, data []byte) []byte {
	// The header is built in dst: a local array would escape through the
	// CRC and cost an allocation per record.
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(data)))
	dst = binary.LittleEndian.AppendUint32(dst, maskCRC(crc32c(dst[len(dst)-8:])))
	dst = append(dst, data...)
	return binary.LittleEndian.AppendUint32(dst, maskCRC(crc32c(data)))
}
