package recordio

import "encoding/binary"

// AppendLegacyRecord appends to dst one legacy recordio record (the
// format's section 13): magic, the payload's length as a little-endian
// uint64, the CRC-32/IEEE of those 8 bytes, then the payload.
func AppendLegacyRecord(dst []byte, magic [8]byte, payload []byte) []byte {
	dst = append(dst, magic[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, crcIEEE(dst[len(dst)-8:]))
	return append(dst, payload...)
}

// AppendLegacyPacked appends items to dst as legacy packed records of at
// most perRecord items each (perRecord < 1 means 1), the bytes the legacy
// packed writer makes with MaxItems = perRecord and no transform: each
// payload is the CRC-32/IEEE of its varints, the item count and sizes as
// uvarints, then the items.
func AppendLegacyPacked(dst []byte, items [][]byte, perRecord int) []byte {
	perRecord = max(perRecord, 1)
	for len(items) > 0 {
		k := min(perRecord, len(items))
		var v []byte
		v = binary.AppendUvarint(v, uint64(k))
		for _, it := range items[:k] {
			v = binary.AppendUvarint(v, uint64(len(it)))
		}
		p := binary.LittleEndian.AppendUint32(nil, crcIEEE(v))
		p = append(p, v...)
		for _, it := range items[:k] {
			p = append(p, it...)
		}
		dst = AppendLegacyRecord(dst, bodyMagic, p)
		items = items[k:]
	}
	return dst
}
