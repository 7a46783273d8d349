package etcddecode

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/internal/pbwire"
)

// field is one field of a protobuf message: its number, wire type, and
// its varint value or its bytes.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// fields calls f for each field of msg, in order; it fails (a misfit at
// base plus the offset in msg) on bytes that are not protobuf or when f
// fails.
func fields(msg []byte, base int, f func(fl field) error) error {
	for off := 0; off < len(msg); {
		num, typ, n := protowire.ConsumeTag(msg[off:])
		if n < 0 {
			return decode.Misfit(base+off, "bad protobuf tag")
		}
		fl := field{num: num, typ: typ}
		rest := msg[off+n:]
		var m int
		switch typ {
		case protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type:
			fl.v, m = pbwire.Scalar(rest, typ)
		case protowire.BytesType:
			fl.b, m = protowire.ConsumeBytes(rest)
		default:
			m = protowire.ConsumeFieldValue(num, typ, rest)
		}
		if m < 0 {
			return decode.Misfit(base+off, "bad protobuf field %d", num)
		}
		if err := f(fl); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}

// wrong is the misfit of a field of the wrong wire type.
func wrong(fl field) error {
	return decode.Misfit(-1, "field %d has wire type %d", fl.num, fl.typ)
}

// message holds the last value of each field numbered below 16 of a
// protobuf message, the fields a renderer reads by number: v its varint or
// fixed value, b its bytes (nil for a scalar field).
type message struct {
	v [16]uint64
	b [16][]byte
}

// readMessage reads the fields of b (see fields); those numbered 16 or
// above are checked and skipped.
func readMessage(b []byte) (message, error) {
	var m message
	err := fields(b, 0, func(f field) error {
		if f.num < 16 {
			m.v[f.num], m.b[f.num] = f.v, f.b
		}
		return nil
	})
	return m, err
}
