package codectest

import "google.golang.org/protobuf/encoding/protowire"

// Message builds a protobuf message by hand from (field number, value)
// pairs, in order: a []byte or string value is length-delimited (a nested
// message is a []byte from Message), a uint64 a varint, a uint32 a
// fixed32. It panics on a value of another type.
func Message(kv ...any) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		num := protowire.Number(kv[i].(int))
		switch v := kv[i+1].(type) {
		case []byte:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		case string:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, v)
		case uint64:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, v)
		case uint32:
			b = protowire.AppendTag(b, num, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, v)
		default:
			panic("codectest.Message: a value of another type")
		}
	}
	return b
}
