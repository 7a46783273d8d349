package tfrecord

import "github.com/recfs/recfs/codec"

// crc32c returns the CRC-32C of b.
func crc32c(b []byte) uint32 { return codec.CRC32C(b) }

// crc32cUpdate extends crc with b.
func crc32cUpdate(crc uint32, b []byte) uint32 { return codec.CRC32CUpdate(crc, b) }

// maskCRC masks a CRC-32C as TFRecord stores it (leveldb's masking).
func maskCRC(c uint32) uint32 { return codec.MaskCRC(c) }
