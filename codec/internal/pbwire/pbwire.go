// Package pbwire holds the protobuf wire reads that the protobuf-based
// decoders (pbdecode, etcddecode) share.
package pbwire

import "google.golang.org/protobuf/encoding/protowire"

// Varint reads a varint at the start of b as protoc does: at most ten
// bytes, the bits past 64 dropped. It returns the value and its length,
// or a length of -1 when b ends inside the varint or ten bytes all carry
// the continuation bit.
func Varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// Scalar reads one value of wire type typ (varint, fixed32 or fixed64) at
// the start of b, widened to a uint64, with protowire's rules (a varint
// overflowing 64 bits is an error). It returns the value and its length,
// or a length below 0 for bytes that are not such a value or any other
// wire type.
func Scalar(b []byte, typ protowire.Type) (uint64, int) {
	switch typ {
	case protowire.VarintType:
		return protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		return uint64(v), n
	case protowire.Fixed64Type:
		return protowire.ConsumeFixed64(b)
	}
	return 0, -1
}
