package codec

import "hash/crc32"

// castagnoli is the CRC-32C table used by the leveldb log format.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcMaskDelta is added to the rotated CRC by leveldb's masking.
const crcMaskDelta = 0xa282ead8

// maskCRC disguises a CRC-32C the way every leveldb-family writer stores it.
func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + crcMaskDelta }

// unmaskCRC inverts maskCRC.
func unmaskCRC(m uint32) uint32 {
	r := m - crcMaskDelta
	return r>>17 | r<<15
}

// crc32c returns the CRC-32C of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// crc32cUpdate extends crc with b.
func crc32cUpdate(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// crcIEEE returns the CRC-32/IEEE of b, as grailbio recordio uses it.
func crcIEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
