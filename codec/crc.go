package codec

import "hash/crc32"

// castagnoli is the CRC-32C table of the leveldb family of formats.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcMaskDelta is added to the rotated CRC by leveldb's masking.
const crcMaskDelta = 0xa282ead8

// MaskCRC disguises a CRC-32C the way every leveldb-family writer (leveldb
// logs, TFRecord) stores it, so that a CRC of data holding CRCs is not
// degenerate.
func MaskCRC(c uint32) uint32 { return (c>>15 | c<<17) + crcMaskDelta }

// UnmaskCRC inverts MaskCRC.
func UnmaskCRC(m uint32) uint32 {
	r := m - crcMaskDelta
	return r>>17 | r<<15
}

// CRC32C returns the CRC-32C (Castagnoli) of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// CRC32CUpdate extends the CRC-32C crc with b.
func CRC32CUpdate(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }
