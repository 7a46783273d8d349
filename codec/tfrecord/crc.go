package tfrecord

import "hash/crc32"

// castagnoli is the CRC-32C table TFRecord checksums use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcMaskDelta is added to the rotated CRC by the masking TFRecord shares
// with leveldb.
const crcMaskDelta = 0xa282ead8

// MaskCRC disguises a CRC-32C the way TFRecord writers store it: rotated
// right by 15 bits, plus 0xa282ead8.
func MaskCRC(c uint32) uint32 { return (c>>15 | c<<17) + crcMaskDelta }

// UnmaskCRC inverts MaskCRC.
func UnmaskCRC(m uint32) uint32 {
	r := m - crcMaskDelta
	return r>>17 | r<<15
}

// crc32c returns the CRC-32C of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// crc32cUpdate extends crc with b.
func crc32cUpdate(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }
