package codec

import "encoding/binary"

// AllZero reports whether b holds only zero bytes (padding, preallocated
// space), eight bytes at a time.
func AllZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AddDamage appends d to ds, joining it to the last range instead when
// the two touch and are of the same kind and class, so that a run of
// small bad pieces costs one entry.
func AddDamage(ds []Damage, d Damage) []Damage {
	if n := len(ds); n > 0 {
		if p := &ds[n-1]; p.Kind == d.Kind && p.Err == d.Err && p.Off+p.Len == d.Off {
			p.Len += d.Len
			return ds
		}
	}
	return append(ds, d)
}
