package codectest

import (
	"encoding/binary"
	"hash/crc32"
)

// Magic numbers of grailbio recordio (spec sections 2, 3.1 and 13), for
// tests that build or recognise framing by hand.
var (
	RIOHeaderMagic   = [8]byte{0xd9, 0xe1, 0xd9, 0x5c, 0xc2, 0x16, 0x04, 0xf7}
	RIOBodyMagic     = [8]byte{0x2e, 0x76, 0x47, 0xeb, 0x34, 0x07, 0x3c, 0x2e}
	RIOTrailerMagic  = [8]byte{0xfe, 0xba, 0x1a, 0xd7, 0xcb, 0xdf, 0x75, 0x3a}
	RIOUnpackedMagic = [8]byte{0xfc, 0xae, 0x95, 0x31, 0xf0, 0xd9, 0xbd, 0x20}
)

// Recordio chunk layout.
const (
	RIOChunkSize       = 32768
	RIOChunkHeader     = 28
	RIOMaxChunkPayload = RIOChunkSize - RIOChunkHeader
)

// RIOChunk returns one 32 KiB recordio chunk with the given header fields
// and payload and a correct checksum, built by hand (not by the writer).
func RIOChunk(magic [8]byte, size, total, index uint32, payload []byte) []byte {
	c := make([]byte, RIOChunkSize)
	copy(c, magic[:])
	binary.LittleEndian.PutUint32(c[16:], size)
	binary.LittleEndian.PutUint32(c[20:], total)
	binary.LittleEndian.PutUint32(c[24:], index)
	copy(c[RIOChunkHeader:], payload)
	n := min(int(size), RIOMaxChunkPayload)
	binary.LittleEndian.PutUint32(c[8:], crc32.ChecksumIEEE(c[12:RIOChunkHeader+n]))
	return c
}
